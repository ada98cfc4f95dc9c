//! Llama 3.2 Vision's (mllama) cross-attention layers in the language model
//! (`models/mllama/modeling_mllama.py`, transformers 5.25).
//!
//! The layers listed in `cross_attention_layers` are `MllamaCrossAttentionDecoderLayer`s (lines
//! 672–720) instead of self-attention layers: the same input and post-attention RMSNorms and
//! MLP, and a cross-attention (`MllamaTextCrossAttention`, lines 400–480) with q/k/v/o
//! projections of a self-attention's shapes, per-head RMSNorms on q and k (`q_norm`, `k_norm`,
//! head_dim each), whose keys and values are projected from the vision states (the projector's
//! output), and two scalar gates (`cross_attn_attn_gate`, `cross_attn_mlp_gate`): 2 · head_dim + 2
//! parameters beyond a self-attention layer. They have no rotary positions. Their cache holds
//! the vision states' keys and values (after `k_norm`), whatever the text's length.

use serde::{Deserialize, Serialize};

use super::attention::AttentionPart;
use super::param::{ParamTensor, Scope, TpSplit};

/// The language model's cross-attention layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VisionCrossAttention {
    /// `len(cross_attention_layers)`.
    pub layers: u64,
}

impl VisionCrossAttention {
    /// The cross-attention's tensors of one cross-attention layer (`Scope::Cross`): q/k/v/o,
    /// the q and k norms and the two gates. The layer's norms and MLP are every layer's.
    pub fn param_tensors(&self, attention: &AttentionPart, hidden: u64, out: &mut Vec<ParamTensor>) {
        let d = attention.head_dim;
        attention.param_tensors(hidden, Scope::Cross, out);
        out.push(ParamTensor::vector("cross_attn.q_norm", d, Scope::Cross, TpSplit::Replicated));
        out.push(ParamTensor::vector("cross_attn.k_norm", d, Scope::Cross, TpSplit::Replicated));
        out.push(ParamTensor::vector("cross_attn_attn_gate", 1, Scope::Cross, TpSplit::Replicated));
        out.push(ParamTensor::vector("cross_attn_mlp_gate", 1, Scope::Cross, TpSplit::Replicated));
    }
}
