//! The attention part of a transformer block: its parameter tensors, the width of what it
//! caches per token for inference, and its score FLOPs.
//!
//! Covers multi-head, grouped-query and multi-query attention with an explicit head width
//! (Mistral-Nemo: 128 ≠ 5120/32), Q/K/V and output biases, one fused QKV matrix (GPT-2
//! `c_attn`, Phi-3 `qkv_proj`, GPT-NeoX/Falcon `query_key_value`), q/k norms (Qwen3 and
//! Gemma-3 per head, OLMo-2 and Cohere over the full width), sliding-window layers
//! (Mistral, Gemma-2/3, gpt-oss), soft-capped logits (Gemma-2), learned attention sinks
//! (gpt-oss) and Multi-head Latent Attention (DeepSeek-V2 §2.1, `modeling_deepseek_v3.py`).

use serde::{Deserialize, Serialize};

use super::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::error::InputError;

const Q: &[LinearKind] = &[LinearKind::Q];
const K: &[LinearKind] = &[LinearKind::K];
const V: &[LinearKind] = &[LinearKind::V];
const O: &[LinearKind] = &[LinearKind::O];
const QKV: &[LinearKind] = &[LinearKind::Q, LinearKind::K, LinearKind::V];
const KV: &[LinearKind] = &[LinearKind::K, LinearKind::V];

/// Where a q/k norm sits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QkNorm {
    #[default]
    None,
    /// One `head_dim` RMSNorm shared by all heads (Qwen3 `q_norm`/`k_norm`, Gemma-3).
    PerHead,
    /// A norm over each head's `head_dim` with weights of its own per head (Cohere's
    /// `use_qk_norm`: a·d and g·d weights).
    PerHeadWeights,
    /// A norm over the whole projection (OLMo-2: `q_norm` of a·d and `k_norm` of g·d).
    Full,
}

/// Multi-head Latent Attention (DeepSeek-V2 §2.1.2): queries and keys/values pass through
/// low-rank latents; only the key/value latent and a shared rotary key are cached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatentAttention {
    /// Query latent rank (0: DeepSeek-V2-Lite's direct `q_proj`).
    pub q_lora_rank: u64,
    pub kv_lora_rank: u64,
    /// Per-head query/key width without rotary embedding.
    pub qk_nope_dim: u64,
    /// Rotary width (per head for queries, shared by all heads for the key).
    pub qk_rope_dim: u64,
    /// Per-head value width.
    pub v_head_dim: u64,
}

impl Default for LatentAttention {
    /// DeepSeek-V3's shapes.
    fn default() -> Self {
        LatentAttention { q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_dim: 128, qk_rope_dim: 64, v_head_dim: 128 }
    }
}

/// The head width and key/value heads of the full-attention blocks, where they differ from
/// the sliding-window blocks' (the fields of [`AttentionPart`] then describe the sliding ones).
/// Gemma 4 (transformers 5.25 `configuration_gemma4.py` lines 205–220: `global_head_dim`,
/// `num_global_key_value_heads` when `attention_k_eq_v`, as `per_layer_config` overrides of
/// the `full_attention` layers; `modeling_gemma4.py` lines 1152–1189 build each layer's
/// projections from its `per_layer_config`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindShape {
    pub head_dim: u64,
    pub kv_heads: u64,
    /// No `v_proj`: the key projection's output is also the values
    /// ([`AttentionPart::values_are_keys`]).
    pub values_are_keys: bool,
}

/// The attention of one block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AttentionPart {
    /// Query heads a.
    pub heads: u64,
    /// Key/value heads g (g = a without grouped-query attention, 1 for multi-query).
    pub kv_heads: u64,
    /// Per-head width d.
    pub head_dim: u64,
    pub qkv_bias: bool,
    pub out_bias: bool,
    /// Q, K and V in one matrix.
    pub fused_qkv: bool,
    pub qk_norm: QkNorm,
    /// Rotary width per head (0: learned or relative positions, no rotary).
    pub rotary_dim: u64,
    /// Keys attended to by sliding-window layers (0: every layer attends to everything).
    pub sliding_window: u64,
    /// How many of the blocks use the sliding window.
    pub sliding_layers: u64,
    /// Attention logits soft-capped with tanh (Gemma-2 `attn_logit_softcapping`).
    pub softcap: bool,
    /// One learned sink logit per head (gpt-oss).
    pub sinks: bool,
    /// T5's relative position buckets (0: none); the bias lives in the first block of each stack.
    pub relative_buckets: u64,
    /// Multi-head Latent Attention instead of separate Q/K/V projections.
    pub latent: Option<LatentAttention>,
    /// The implementation broadcasts K and V to every query head before attention and the
    /// cache (transformers' Falcon with `new_decoder_architecture`: `num_kv_heads =
    /// self.num_heads`, `modeling_falcon.py` `FalconAttention.forward`).
    pub cache_all_heads: bool,
    /// Rotary embedding applied with `torch.cat([rotated, passed])` (Phi, Phi-3, GPT-NeoX): q
    /// comes out head-major, so SDPA's output is too and `transpose(1, 2).contiguous()` copies
    /// it before the output projection.
    pub rotary_cat: bool,
    /// The implementation always passes an attention mask (Falcon: `allow_is_causal_skip=False`),
    /// so SDPA never runs the flash kernel.
    pub always_masked: bool,
    /// Whether the family's eager attention computes (and saves) its softmax in fp32 in a pure
    /// 16-bit run, as measured per family in `tests/fixtures/measured/eager_softmax.json`
    /// (`import::eager_softmax`); `None`: the rule that holds for most families, fp32 with rotary
    /// positions (Llama's `eager_attention_forward`: `softmax(..., dtype=torch.float32)`), the
    /// model dtype without (GPT-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eager_softmax_fp32: Option<bool>,
    /// A sigmoid gate on the attention output, projected by `q_proj` beside the queries
    /// (Qwen3-Next / Qwen3.5 `attn_output_gate`: `q_proj` is a·d·2 wide,
    /// `modeling_qwen3_next.py` `Qwen3NextAttention`).
    pub output_gate: bool,
    /// No `v_proj`: the values are the key projection's output (Gemma 4's
    /// `attention_k_eq_v` on full-attention layers: `v_proj` is `None` and `value_states =
    /// key_states` before the norms, `modeling_gemma4.py` lines 1154, 1178–1184, 1218).
    pub values_are_keys: bool,
    /// A weightless RMSNorm over each value head (Gemma 3n's and Gemma 4's `v_norm`,
    /// `with_scale=False`: no parameters, but saved tensors).
    pub v_norm: bool,
    /// The full-attention blocks' own head width and key/value heads (Gemma 4's global
    /// layers); `None`: every block has this shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_layers: Option<KindShape>,
}

impl Default for AttentionPart {
    /// Llama-3-8B's attention.
    fn default() -> Self {
        AttentionPart {
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            qkv_bias: false,
            out_bias: false,
            fused_qkv: false,
            qk_norm: QkNorm::None,
            rotary_dim: 128,
            sliding_window: 0,
            sliding_layers: 0,
            softcap: false,
            sinks: false,
            relative_buckets: 0,
            latent: None,
            cache_all_heads: false,
            rotary_cat: false,
            always_masked: false,
            eager_softmax_fp32: None,
            output_gate: false,
            values_are_keys: false,
            v_norm: false,
            full_layers: None,
        }
    }
}

impl AttentionPart {
    /// Whether eager attention keeps its softmax in fp32 in a pure 16-bit run, where `rotary`
    /// says whether this attention applies rotary positions: the family's measured answer
    /// ([`AttentionPart::eager_softmax_fp32`]), else fp32 with rotary positions and no learned
    /// sinks (gpt-oss's sink softmax runs in the logits' dtype).
    pub fn eager_softmax_in_fp32(&self, rotary: bool) -> bool {
        self.eager_softmax_fp32.unwrap_or(rotary && !self.sinks)
    }

    pub(super) fn check(&self) -> Result<(), InputError> {
        check_dim("heads", self.heads)?;
        check_dim("kv_heads", self.kv_heads)?;
        check_dim("head_dim", self.head_dim)?;
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(InputError::new("kv_heads", format!("{} must divide heads ({})", self.kv_heads, self.heads)));
        }
        if let Some(full) = &self.full_layers {
            check_dim("full_layers.head_dim", full.head_dim)?;
            check_dim("full_layers.kv_heads", full.kv_heads)?;
            if !self.heads.is_multiple_of(full.kv_heads) {
                return Err(InputError::new("full_layers.kv_heads", format!("{} must divide heads ({})", full.kv_heads, self.heads)));
            }
            if self.latent.is_some() || self.fused_qkv {
                return Err(InputError::new("full_layers", "is not supported with latent attention or a fused QKV projection"));
            }
        }
        if let Some(m) = &self.latent {
            check_dim("kv_lora_rank", m.kv_lora_rank)?;
            check_dim("qk_nope_dim", m.qk_nope_dim)?;
            check_dim("qk_rope_dim", m.qk_rope_dim)?;
            check_dim("v_head_dim", m.v_head_dim)?;
            if m.q_lora_rank > super::param::MAX_DIM {
                return Err(InputError::new("q_lora_rank", "is too large"));
            }
        }
        Ok(())
    }

    /// The blocks' attention by kind, each as a part of one shape: (`Some(full)` and the part
    /// for each of the two kinds where [`AttentionPart::full_layers`] sets the full blocks'
    /// shape, the sliding part keeping its window on all its blocks and the full part none;
    /// else `None` and this part, for every block.
    pub fn kinds(&self) -> Vec<(Option<bool>, AttentionPart)> {
        let Some(full) = &self.full_layers else {
            return vec![(None, self.clone())];
        };
        let sliding = AttentionPart { full_layers: None, values_are_keys: false, ..self.clone() };
        let full = AttentionPart {
            head_dim: full.head_dim,
            kv_heads: full.kv_heads,
            rotary_dim: full.head_dim,
            values_are_keys: full.values_are_keys,
            sliding_window: 0,
            sliding_layers: 0,
            full_layers: None,
            ..self.clone()
        };
        vec![(Some(false), sliding), (Some(true), full)]
    }

    /// Width of all query heads (a·d; a·(nope + rope) for MLA).
    pub fn q_width(&self) -> u64 {
        match &self.latent {
            Some(m) => self.heads * (m.qk_nope_dim + m.qk_rope_dim),
            None => self.heads * self.head_dim,
        }
    }

    /// Width of all key heads as attention sees them (g·d; a·(nope + rope) for MLA).
    pub fn k_width(&self) -> u64 {
        match &self.latent {
            Some(m) => self.heads * (m.qk_nope_dim + m.qk_rope_dim),
            None => self.kv_heads * self.head_dim,
        }
    }

    /// Width of all value heads (g·d; a·v_head_dim for MLA).
    pub fn v_width(&self) -> u64 {
        match &self.latent {
            Some(m) => self.heads * m.v_head_dim,
            None => self.kv_heads * self.head_dim,
        }
    }

    /// Width of the attention output that `o_proj` reads.
    pub fn out_width(&self) -> u64 {
        match &self.latent {
            Some(m) => self.heads * m.v_head_dim,
            None => self.heads * self.head_dim,
        }
    }

    /// Elements cached per token per block for generation: K and V of every KV head
    /// (2·g·d, Pope et al. 2022 §2), or for MLA the key/value latent plus the shared rotary
    /// key (kv_lora_rank + qk_rope_dim, DeepSeek-V2 §2.1.2 — what vLLM and SGLang cache).
    pub fn cached_per_token(&self) -> u64 {
        match &self.latent {
            Some(m) => m.kv_lora_rank + m.qk_rope_dim,
            None if self.cache_all_heads => 2 * self.heads * self.head_dim,
            None => 2 * self.kv_heads * self.head_dim,
        }
    }

    /// Keys a query of a block attends to, averaged over blocks: sliding-window layers see
    /// at most `sliding_window` keys.
    pub fn mean_keys(&self, keys: f64, layers: u64) -> f64 {
        self.mean_over_layers(keys, self.sliding_window as f64, layers)
    }

    /// Tokens the KV cache keeps per sequence, averaged over blocks: transformers'
    /// `DynamicSlidingWindowLayer` keeps the last `sliding_window − 1` (the current token is
    /// appended when attention runs; `cache_utils.py`, measured in `kv_cache.json`).
    pub fn mean_cached_tokens(&self, tokens: f64, layers: u64) -> f64 {
        self.mean_over_layers(tokens, self.sliding_window.saturating_sub(1).max(1) as f64, layers)
    }

    fn mean_over_layers(&self, n: f64, window: f64, layers: u64) -> f64 {
        if self.sliding_window == 0 || layers == 0 {
            return n;
        }
        let sliding = self.sliding_layers.min(layers) as f64;
        (sliding * n.min(window) + (layers as f64 - sliding) * n) / layers as f64
    }

    /// Forward FLOPs of the score and value products per query token and attended key, as
    /// Kaplan et al. 2020 Table 1 count them: a·(d_qk + d_v), 2·d_attn for multi-head
    /// attention. QKᵀ and AV take 2·a·(d_qk + d_v) per key (Narayanan et al. 2021's 4·B·s²·h
    /// per block); a causal query sees half the keys on average, which Kaplan's count is.
    pub fn flops_per_query_key(&self) -> f64 {
        (self.q_width() + self.out_width()) as f64
    }

    /// Short label: "GQA 32/8", "MQA", "MHA", "MLA".
    pub fn label(&self) -> &'static str {
        if self.latent.is_some() {
            "MLA"
        } else if self.kv_heads == self.heads {
            "MHA"
        } else if self.kv_heads == 1 {
            "MQA"
        } else {
            "GQA"
        }
    }

    /// Parameter tensors of one attention (self-attention in `Scope::Layer`, T5's
    /// cross-attention in `Scope::Cross`), following `modeling_llama.py`,
    /// `modeling_gpt2.py` (`c_attn`), `modeling_phi3.py` (`qkv_proj`), `modeling_qwen3.py`,
    /// `modeling_olmo2.py`, `modeling_gpt_oss.py` and `modeling_deepseek_v3.py`.
    pub fn param_tensors(&self, h: u64, scope: Scope, out: &mut Vec<ParamTensor>) {
        use TpSplit::*;
        let (a, g, d) = (self.heads, self.kv_heads, self.head_dim);
        if let Some(m) = &self.latent {
            let qk = m.qk_nope_dim + m.qk_rope_dim;
            if m.q_lora_rank > 0 {
                out.push(ParamTensor::linear("q_a_proj", Q, m.q_lora_rank, h, scope));
                out.push(ParamTensor::vector("q_a_layernorm", m.q_lora_rank, scope, Replicated));
                out.push(ParamTensor::linear("q_b_proj", Q, a * qk, m.q_lora_rank, scope));
            } else {
                out.push(ParamTensor::linear("q_proj", Q, a * qk, h, scope));
            }
            out.push(ParamTensor::linear("kv_a_proj_with_mqa", KV, m.kv_lora_rank + m.qk_rope_dim, h, scope));
            out.push(ParamTensor::vector("kv_a_layernorm", m.kv_lora_rank, scope, Replicated));
            out.push(ParamTensor::linear("kv_b_proj", KV, a * (m.qk_nope_dim + m.v_head_dim), m.kv_lora_rank, scope));
            if self.qkv_bias {
                if m.q_lora_rank > 0 {
                    out.push(ParamTensor::vector("q_a_proj.bias", m.q_lora_rank, scope, Replicated));
                }
                out.push(ParamTensor::vector("kv_a_proj_with_mqa.bias", m.kv_lora_rank + m.qk_rope_dim, scope, Replicated));
            }
        } else if self.fused_qkv {
            let width = a * d + 2 * g * d;
            out.push(ParamTensor::linear("qkv_proj", QKV, width, h, scope));
            if self.qkv_bias {
                out.push(ParamTensor::vector("qkv_proj.bias", width, scope, Sharded));
            }
        } else {
            let gate = if self.output_gate { 2 } else { 1 };
            out.push(ParamTensor::linear("q_proj", Q, gate * a * d, h, scope));
            out.push(ParamTensor::linear("k_proj", K, g * d, h, scope));
            if !self.values_are_keys {
                out.push(ParamTensor::linear("v_proj", V, g * d, h, scope));
            }
            if self.qkv_bias {
                out.push(ParamTensor::vector("q_proj.bias", a * d, scope, Sharded));
                out.push(ParamTensor::vector("k_proj.bias", g * d, scope, Sharded));
                if !self.values_are_keys {
                    out.push(ParamTensor::vector("v_proj.bias", g * d, scope, Sharded));
                }
            }
        }
        match self.qk_norm {
            QkNorm::None => {}
            QkNorm::PerHead => {
                out.push(ParamTensor::vector("q_norm", d, scope, Replicated));
                out.push(ParamTensor::vector("k_norm", d, scope, Replicated));
            }
            QkNorm::Full | QkNorm::PerHeadWeights => {
                out.push(ParamTensor::vector("q_norm", a * d, scope, Sharded));
                out.push(ParamTensor::vector("k_norm", g * d, scope, Sharded));
            }
        }
        if self.sinks {
            out.push(ParamTensor::vector("sinks", a, scope, Sharded));
        }
        out.push(ParamTensor::linear("o_proj", O, h, self.out_width(), scope));
        if self.out_bias {
            out.push(ParamTensor::vector("o_proj.bias", h, scope, Replicated));
        }
    }
}
