//! The text encoders of diffusion pipelines, frozen, as transformers builds them from a
//! pipeline's `text_encoder*/config.json` (the class its `architectures` names):
//! - `CLIPTextModel` (`modeling_clip.py`, `CLIPTextTransformer`): token and position
//!   embeddings, `num_hidden_layers` pre-LayerNorm blocks with q/k/v/out projections and a
//!   two-layer MLP (biases everywhere), a final LayerNorm; SD 1.5's CLIP ViT-L/14 text tower,
//!   SD 2.x's OpenCLIP ViT-H, Flux's and HunyuanVideo's CLIP-L.
//! - `CLIPTextModelWithProjection` (`CLIPTextModelWithProjection`): the same and a bias-free
//!   `text_projection` (`projection_dim` × hidden); SDXL's second encoder (OpenCLIP bigG), SD3's
//!   two CLIPs.
//! - `T5EncoderModel` (`modeling_t5.py`): the `shared` embedding, `num_layers` blocks of
//!   bias-free q/k/v/o (width `num_heads · d_kv`) and a ReLU or gated-GELU feed-forward
//!   (`feed_forward_proj`), RMS LayerNorms (weight only), the relative position bias table
//!   (`relative_attention_num_buckets` × heads) in the first block only, a final norm; T5 v1.1
//!   XXL in SD3, Flux, CogVideoX, LTX-Video.
//! - `UMT5EncoderModel` (`modeling_umt5.py`): T5's encoder with a relative position bias table
//!   in every block (`UMT5Attention(has_relative_attention_bias=True)` for each layer); Wan's
//!   umT5-XXL.
//! - `LlamaModel` and `Gemma2Model` (`modeling_llama.py`, `modeling_gemma2.py`): the decoder
//!   stacks of the causal LMs without their `lm_head`, read by Headroom's own LLM importer
//!   (`import/families.rs`, whose `param_count` is checked against transformers for every
//!   family); HunyuanVideo's llava-llama-3-8b text tower and Sana's gemma-2-2b-it.
//!
//! The pipelines run them under `torch.no_grad()` once per prompt; what they hold while they
//! run is [`TextEncoder::forward_peak`].

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor, Scope, TpSplit};
use crate::model::arch::transformer::TransformerArch;
use crate::model::dtype::INT64;

/// Which transformers class a text encoder is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextEncoderKind {
    Clip,
    ClipWithProjection,
    T5,
    Umt5,
    Llama,
    Gemma2,
}

impl TextEncoderKind {
    /// The transformers class name, as a config's `architectures` gives it.
    pub fn class(self) -> &'static str {
        match self {
            TextEncoderKind::Clip => "CLIPTextModel",
            TextEncoderKind::ClipWithProjection => "CLIPTextModelWithProjection",
            TextEncoderKind::T5 => "T5EncoderModel",
            TextEncoderKind::Umt5 => "UMT5EncoderModel",
            TextEncoderKind::Llama => "LlamaModel",
            TextEncoderKind::Gemma2 => "Gemma2Model",
        }
    }
}

/// One frozen text encoder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextEncoder {
    pub kind: TextEncoderKind,
    pub hidden: u64,
    pub layers: u64,
    pub heads: u64,
    /// Width of one head (T5's `d_kv`; `hidden / heads` for CLIP).
    pub head_dim: u64,
    /// Feed-forward width (`intermediate_size`, T5's `d_ff`).
    pub ffn: u64,
    /// T5's gated feed-forward (`gated-gelu`: `wi_0`, `wi_1`, `wo`).
    pub gated: bool,
    pub vocab: u64,
    /// CLIP's learned positions (`max_position_embeddings`); T5's relative buckets.
    pub positions: u64,
    /// CLIP's `projection_dim` (with projection only).
    pub projection: u64,
    /// CLIP's `quick_gelu` activation (OpenAI's CLIP-L) rather than `gelu` (OpenCLIP).
    pub quick_gelu: bool,
    /// Tokens the pipeline encodes (CLIP's 77; T5's `max_sequence_length`, e.g. 512 in Flux).
    pub max_tokens: u64,
    /// `LlamaModel`/`Gemma2Model`: the decoder stack as the LLM importer reads it (its
    /// `lm_head`, which these classes do not build, is left out of the tensors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder: Option<Box<TransformerArch>>,
}

impl TextEncoder {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("hidden_size", self.hidden)?;
        check_dim("num_hidden_layers", self.layers)?;
        super::check_blocks("num_hidden_layers", self.layers)?;
        check_dim("num_attention_heads", self.heads)?;
        check_dim("head_dim", self.head_dim)?;
        check_dim("intermediate_size", self.ffn)?;
        check_dim("vocab_size", self.vocab)?;
        check_dim("max_position_embeddings", self.positions)?;
        check_dim("max_tokens", self.max_tokens)
    }

    /// A long-text encoder (T5, umT5 or an LLM), as opposed to CLIP.
    pub fn is_long(&self) -> bool {
        !matches!(self.kind, TextEncoderKind::Clip | TextEncoderKind::ClipWithProjection)
    }

    fn is_t5(&self) -> bool {
        matches!(self.kind, TextEncoderKind::T5 | TextEncoderKind::Umt5)
    }

    /// Every parameter tensor, in scope [`Scope::TextEncoder`], one entry per block's tensor.
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, f, inner) = (self.hidden, self.ffn, self.heads * self.head_dim);
        let s = Scope::TextEncoder;
        let r = TpSplit::Replicated;
        if let Some(arch) = &self.decoder {
            return decoder_tensors(arch);
        }
        let mut out = Vec::with_capacity(16 * self.layers as usize + 8);
        out.push(ParamTensor::table("text encoder token embedding", self.vocab, h, s, r));
        if self.is_t5() {
            for layer in 0..self.layers {
                for name in ["text encoder q", "text encoder k", "text encoder v"] {
                    out.push(ParamTensor::new(name, &[inner, h], s, r));
                }
                out.push(ParamTensor::new("text encoder o", &[h, inner], s, r));
                if layer == 0 || self.kind == TextEncoderKind::Umt5 {
                    out.push(ParamTensor::table("text encoder relative position bias", self.positions, self.heads, s, r));
                }
                out.push(ParamTensor::vector("text encoder attention norm", h, s, r));
                out.push(ParamTensor::new("text encoder wi", &[f, h], s, r));
                if self.gated {
                    out.push(ParamTensor::new("text encoder wi_1", &[f, h], s, r));
                }
                out.push(ParamTensor::new("text encoder wo", &[h, f], s, r));
                out.push(ParamTensor::vector("text encoder feed-forward norm", h, s, r));
            }
            out.push(ParamTensor::vector("text encoder final norm", h, s, r));
        } else {
            out.push(ParamTensor::table("text encoder position embedding", self.positions, h, s, r));
            for _ in 0..self.layers {
                for name in ["text encoder q", "text encoder k", "text encoder v", "text encoder o"] {
                    out.push(ParamTensor::new(name, &[h, h], s, r));
                    out.push(ParamTensor::vector("text encoder projection bias", h, s, r));
                }
                out.push(ParamTensor::new("text encoder fc1", &[f, h], s, r));
                out.push(ParamTensor::vector("text encoder fc1 bias", f, s, r));
                out.push(ParamTensor::new("text encoder fc2", &[h, f], s, r));
                out.push(ParamTensor::vector("text encoder fc2 bias", h, s, r));
                out.push(ParamTensor::new("text encoder layer norms", &[4, h], s, r));
            }
            out.push(ParamTensor::new("text encoder final layer norm", &[2, h], s, r));
            if self.kind == TextEncoderKind::ClipWithProjection {
                out.push(ParamTensor::new("text encoder text projection", &[self.projection, h], s, r));
            }
        }
        out
    }

    /// A `LlamaModel`/`Gemma2Model` encode's live tensors with or without
    /// `output_hidden_states` (0 for the other kinds); see `decoder_peak`.
    pub fn decoder_encode_peak(&self, batch: u64, bytes: f64, hidden_states: bool) -> f64 {
        self.decoder.as_ref().map_or(0.0, |arch| decoder_peak(arch, self.kind, batch, self.max_tokens as f64, bytes, hidden_states))
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }

    /// The live tensors of one `torch.no_grad()` encode of `batch` prompts of
    /// [`Self::max_tokens`] tokens, beyond the weights, in `bytes` per element, at the encode's
    /// largest moment (measured op by op in `diffusion_text_encoders.json`):
    /// - CLIP (`modeling_clip.py` `CLIPEncoderLayer`): the block input, the residual after
    ///   attention and the normed input beside the MLP's `fc1` output and its activation
    ///   (`quick_gelu` is `x * sigmoid(1.702 x)`: three buffers; `gelu` two); with
    ///   `output_hidden_states` (SDXL and SD3 read the penultimate layer) every earlier
    ///   layer's output stays too.
    /// - T5 / umT5 (`modeling_t5.py` `T5Attention`, SDPA with the position bias as its mask):
    ///   the largest of the bucket computation (`_relative_position_bucket`: six int64 s × s
    ///   tensors; umT5 does it in every block, beside the b × s × s extended mask), attention (the bias and the bias plus mask, heads × s² each, beside q, k,
    ///   v and the stream) and the gated feed-forward (four d_ff buffers: `wi_0`'s output,
    ///   two of `gelu_new`'s temporaries, `wi_1`'s output; T5 keeps block 0's bias through
    ///   every later block, umT5 recomputes its own).
    pub fn forward_peak(&self, batch: u64, bytes: f64, hidden_states: bool) -> f64 {
        let s = self.max_tokens as f64;
        let tokens = batch as f64 * s;
        let (h, f, inner) = (self.hidden as f64, self.ffn as f64, (self.heads * self.head_dim) as f64);
        if self.decoder.is_some() {
            // HunyuanVideo's pipeline reads a hidden state below the last (Llama); Sana's the
            // last one (Gemma 2).
            return self.decoder_encode_peak(batch, bytes, hidden_states && self.kind == TextEncoderKind::Llama);
        }
        if !self.is_t5() {
            let stream = if hidden_states { self.layers as f64 + 2.0 } else { 4.0 };
            let activation = if self.quick_gelu { 3.0 } else { 2.0 };
            return tokens * (stream * h + activation * f) * bytes;
        }
        let bias = self.heads as f64 * s * s * bytes;
        // umT5 computes its buckets inside every block, beside the extended attention mask
        // (b × s × s) and the previous block's output; T5 once, before the first block.
        let buckets = if self.kind == TextEncoderKind::Umt5 {
            6.0 * s * s * INT64 + batch as f64 * s * s * bytes + 6.0 * tokens * h * bytes
        } else {
            6.0 * s * s * INT64 + 5.0 * tokens * h * bytes
        };
        let attention = 2.0 * bias + tokens * (4.0 * h + 3.0 * inner) * bytes;
        let kept_bias = if self.kind == TextEncoderKind::T5 { bias } else { 0.0 };
        let ffn = kept_bias + tokens * (4.0 * f + 4.0 * h) * bytes;
        buckets.max(attention).max(ffn)
    }
}

/// A decoder's tensors as the `*Model` class builds them: one entry per block's tensor (the
/// importer lists a block's tensors once, in a per-block scope), no `lm_head`, every tensor
/// frozen in [`Scope::TextEncoder`].
fn decoder_tensors(arch: &TransformerArch) -> Vec<ParamTensor> {
    let mut out = Vec::new();
    for t in arch.param_tensors() {
        if t.name.starts_with("lm_head") {
            continue;
        }
        let copies = arch.blocks(t.scope);
        let mut frozen = t;
        frozen.scope = Scope::TextEncoder;
        frozen.tp = TpSplit::Replicated;
        frozen.linear = None;
        frozen.lora_dims = None;
        out.extend(std::iter::repeat_n(frozen, copies as usize));
    }
    out
}

/// The live tensors of one no-grad `LlamaModel`/`Gemma2Model` encode of `batch` prompts of
/// `s` tokens beyond the weights, padded to `s` with the attention mask the pipelines pass
/// (measured op by op in `diffusion_video_parts.json`, `encode_peaks`):
/// - held through the stack (`modeling_llama.py` `LlamaModel.forward`, `modeling_gemma2.py`):
///   the input embeddings (Gemma's scaled by √h), the current block's input, with
///   `output_hidden_states` every earlier block's output (HunyuanVideo reads layer −3,
///   `num_hidden_layers_to_skip=2`; Sana reads the last hidden state), the `DynamicCache` of
///   every block's keys and values so far (`use_cache` is on in both Hub configs and the
///   pipelines do not turn it off), the rotary `cos`/`sin` (one prompt's, s × head_dim each),
///   `cache_position`, and the 4-D mask (`create_causal_mask`: b × s × s booleans for SDPA;
///   Gemma 2's eager attention builds a full and a sliding one in the run's dtype);
/// - a block's feed-forward (`LlamaMLP`/`Gemma2MLP`: `down_proj(act(gate_proj(x)) *
///   up_proj(x))`): the residual after attention and the normed input beside the activated
///   gate, the up projection and their product, three `ffn`-wide buffers;
/// - Gemma 2's eager attention (`eager_attention_forward`): the normed input, the rotated
///   queries, `repeat_kv`'s copies of the keys and values (when heads ≠ KV heads) and two
///   heads × s × s score buffers at once (the scaled scores beside the soft-capped ones; in
///   16-bit the masked scores beside their fp32 copy and the fp32 softmax).
///
/// Llama's SDPA attention is never the larger moment at these widths.
fn decoder_peak(arch: &TransformerArch, kind: TextEncoderKind, batch: u64, s: f64, bytes: f64, hidden_states: bool) -> f64 {
    let b = batch as f64;
    let tokens = b * s;
    let a = &arch.attention;
    let (h, f, l) = (arch.hidden as f64, arch.mlp.ffn as f64, arch.layers as f64);
    let (heads, kv, d) = (a.heads as f64, a.kv_heads as f64, a.head_dim as f64);
    let eager = kind == TextEncoderKind::Gemma2;
    let stream = if arch.layers == 1 {
        1.0
    } else if hidden_states {
        l
    } else {
        2.0
    };
    let cache = if arch.use_cache { 2.0 * l * kv * d * tokens * bytes } else { 0.0 };
    let masks = if eager { 2.0 * b * s * s * bytes } else { b * s * s };
    let held = tokens * stream * h * bytes + cache + 2.0 * s * d * bytes + 8.0 * s + masks;
    let mlp = held + tokens * (2.0 * h + 3.0 * f) * bytes;
    if !eager {
        return mlp;
    }
    let repeated = if a.heads != a.kv_heads { 2.0 * heads * d } else { 0.0 };
    let scores = b * heads * s * s * (bytes + if bytes < 4.0 { 8.0 } else { 4.0 });
    let attention = held + tokens * (h + heads * d + repeated) * bytes + scores;
    mlp.max(attention)
}
