//! Gemma 3n's additions to a Gemma-3-shaped decoder: per-layer input embeddings, AltUp's
//! parallel residual streams, LAuReL's low-rank residual, and shared-KV layers that compute
//! no keys or values of their own.
//!
//! transformers 5.25 `models/gemma3n/modeling_gemma3n.py`:
//! - `Gemma3nTextModel.__init__` (lines 1569–1610): `embed_tokens_per_layer`
//!   (`vocab_size_per_layer_input` × L·`hidden_size_per_layer_input`), `per_layer_model_projection`
//!   (h → L·p, no bias), `per_layer_projection_norm` (p), and `altup_num_inputs` − 1
//!   `altup_projections` and as many `altup_unembed_projections` (h → h, no bias).
//! - `Gemma3nTextDecoderLayer.__init__` (lines 1249–1268): besides Gemma-3's four norms,
//!   `altup` (`Gemma3nTextAltUp`, lines 988–995: `correct_output_scale` h, `correction_coefs`
//!   n → n, `prediction_coefs` n → n², `modality_router` h → n, `router_norm` h), `laurel`
//!   (`Gemma3nTextLaurelBlock`, lines 923–929: h → r → h and `post_laurel_norm` h),
//!   `per_layer_input_gate` (h → p), `per_layer_projection` (p → h) and
//!   `post_per_layer_input_norm` (h).
//! - `Gemma3nTextAttention.__init__` (lines 1165–1182): a layer whose `kv_sharing_modes` entry
//!   is "reuse" (the last `num_kv_shared_layers`, `configuration_gemma3n.py` lines 206–231) has
//!   no `k_proj`, `v_proj`, `k_norm` or `v_norm` (`v_norm` has no weight anyway) and keeps no
//!   cache: it reads the keys and values of the last earlier layer of its type
//!   (`Scope::KvLayer` counts the others).
//!
//!
//! Gemma 4 (`modeling_gemma4.py`) keeps the per-layer inputs and the shared-KV layers without
//! AltUp or LAuReL (`altup_inputs` and `laurel_rank` 0): `Gemma4TextModel.__init__` (lines
//! 1566–1580) builds the same three model-level tensors, `Gemma4TextDecoderLayer.__init__`
//! (lines 1346–1351) the gate, projection and norm, all only when `hidden_size_per_layer_input`
//! is above 0 (`width` 0: none); with `use_double_wide_mlp` the shared layers' MLP is twice as
//! wide (`Gemma4TextMLP.__init__`, lines 1052–1063).
//!
//! Counts checked against transformers in `tests/fixtures/measured/gemma3n.json`
//! (`tests/gemma3n.rs`) and `gemma4.json` (`tests/gemma4.rs`).

use serde::{Deserialize, Serialize};

use super::param::{check_dim, BlockSubset, ParamTensor, Scope, TpSplit};
use crate::error::InputError;

/// Gemma 3n's and Gemma 4's per-layer inputs, AltUp, LAuReL and KV sharing (each absent at 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerLayerInputs {
    /// Width of each layer's input embedding (`hidden_size_per_layer_input`; 0: none).
    pub width: u64,
    /// Rows of the per-layer embedding table (`vocab_size_per_layer_input`).
    pub vocab: u64,
    /// AltUp's parallel streams (`altup_num_inputs`; 0: no AltUp, Gemma 4).
    pub altup_inputs: u64,
    /// LAuReL's rank (`laurel_rank`; 0: no LAuReL, Gemma 4).
    pub laurel_rank: u64,
    /// Trailing layers that reuse an earlier layer's keys and values (`num_kv_shared_layers`).
    pub kv_shared_layers: u64,
    /// How many of those shared layers use the sliding window.
    pub kv_shared_sliding: u64,
    /// Layers whose MLP applies the Gaussian top-k to its gate (`activation_sparsity_pattern`
    /// entries above 0; `Gemma3nTextMLP._gaussian_topk`, lines 957–973).
    #[serde(default)]
    pub sparse_layers: u64,
    /// The shared-KV layers' MLP is twice as wide (Gemma 4's `use_double_wide_mlp`).
    #[serde(default)]
    pub wide_shared_mlp: bool,
}

impl PerLayerInputs {
    pub(super) fn check(&self, layers: u64) -> Result<(), InputError> {
        if self.width > 0 {
            check_dim("hidden_size_per_layer_input", self.width)?;
            check_dim("vocab_size_per_layer_input", self.vocab)?;
        }
        for (name, value) in [("altup_num_inputs", self.altup_inputs), ("laurel_rank", self.laurel_rank)] {
            if value > 0 {
                check_dim(name, value)?;
            }
        }
        if self.sparse_layers > layers {
            return Err(InputError::new("activation_sparsity_pattern", format!("names {} sparse layers, but only {layers} layers exist", self.sparse_layers)));
        }
        if self.kv_shared_layers >= layers {
            return Err(InputError::new("num_kv_shared_layers", format!("is {}, but only {layers} layers exist: one must compute its own keys and values", self.kv_shared_layers)));
        }
        Ok(())
    }

    /// Layers that compute and cache their own keys and values.
    pub fn kv_layers(&self, layers: u64) -> u64 {
        layers.saturating_sub(self.kv_shared_layers)
    }

    /// The model-level tensors (`Scope::Input`) and each layer's (`Scope::Layer`), as in the
    /// module doc; a stack of `layers` blocks `h` wide.
    pub fn param_tensors(&self, h: u64, layers: u64, out: &mut Vec<ParamTensor>) {
        use TpSplit::*;
        let (p, n, r) = (self.width, self.altup_inputs, self.laurel_rank);
        let l = Scope::Layer;
        if p > 0 {
            out.push(ParamTensor::table("embed_tokens_per_layer", self.vocab, layers * p, Scope::Input, Sharded));
            out.push(ParamTensor::new("per_layer_model_projection", &[layers * p, h], Scope::Input, Replicated));
            out.push(ParamTensor::vector("per_layer_projection_norm", p, Scope::Input, Replicated));
            out.push(ParamTensor::new("per_layer_input_gate", &[p, h], l, Replicated));
            out.push(ParamTensor::new("per_layer_projection", &[h, p], l, Replicated));
            out.push(ParamTensor::vector("post_per_layer_input_norm", h, l, Replicated));
        }
        if n > 0 {
            for _ in 1..n {
                out.push(ParamTensor::new("altup_projections", &[h, h], Scope::Input, Replicated));
                out.push(ParamTensor::new("altup_unembed_projections", &[h, h], Scope::Input, Replicated));
            }
            out.push(ParamTensor::vector("altup.correct_output_scale", h, l, Replicated));
            out.push(ParamTensor::new("altup.correction_coefs", &[n, n], l, Replicated));
            out.push(ParamTensor::new("altup.prediction_coefs", &[n * n, n], l, Replicated));
            out.push(ParamTensor::new("altup.modality_router", &[n, h], l, Replicated));
            out.push(ParamTensor::vector("altup.router_norm", h, l, Replicated));
        }
        if r > 0 {
            out.push(ParamTensor::new("laurel.linear_left", &[r, h], l, Replicated));
            out.push(ParamTensor::new("laurel.linear_right", &[h, r], l, Replicated));
            out.push(ParamTensor::vector("laurel.post_laurel_norm", h, l, Replicated));
        }
    }

    /// The dense MLP's tensors where the shared-KV layers' MLP is twice as wide: moved to the
    /// blocks with their own keys and values, and pushed again at `2·ffn` for the others.
    pub fn widen_shared_mlp(&self, mlp: &super::mlp::MlpPart, h: u64, out: &mut Vec<ParamTensor>) {
        if !self.wide_shared_mlp || self.kv_shared_layers == 0 {
            return;
        }
        for t in out.iter_mut().filter(|t| t.scope == Scope::DenseMlp) {
            t.scope = Scope::Subset(BlockSubset { full: None, own_kv: Some(true) });
        }
        mlp.param_tensors(h, 2 * mlp.ffn, Scope::Subset(BlockSubset { full: None, own_kv: Some(false) }), out);
    }

    /// Moves the attention's key and value tensors to `Scope::KvLayer` (or, per attention
    /// kind, to the kind's blocks with their own keys and values): the shared layers do not
    /// build them.
    pub fn scope_kv(tensors: &mut [ParamTensor]) {
        const KV: [&str; 5] = ["k_proj", "v_proj", "k_norm", "k_proj.bias", "v_proj.bias"];
        for t in tensors.iter_mut().filter(|t| KV.contains(&t.name)) {
            t.scope = match t.scope {
                Scope::Layer => Scope::KvLayer,
                Scope::Subset(BlockSubset { full, own_kv: None }) => Scope::Subset(BlockSubset { full, own_kv: Some(true) }),
                other => other,
            };
        }
    }
}
