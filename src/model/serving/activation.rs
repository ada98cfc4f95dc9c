//! The transient memory of an engine's profile run: one forward over a scheduled batch of
//! tokens (the chunked-prefill size), then the sampler over one row of logits per request.
//!
//! Serving engines run fused, in-place kernels: vLLM's `RMSNorm` with a residual adds in
//! place (`fused_add_rms_norm`), `QKVParallelLinear` and `MergedColumnParallelLinear` write one
//! fused output, `SiluAndMul` halves the gate/up output (vLLM `model_executor/models/llama.py`
//! `LlamaMLP.forward`, `LlamaAttention.forward`). So a block's live tensors per token are the
//! hidden state and the residual plus the larger of the two halves:
//! - attention: the fused q/k/v output, the attention output, `o_proj`'s output;
//! - MLP: the fused gate/up output (2f), its activated product (f), `down_proj`'s output (h);
//!   a mixture-of-experts block the same per routed copy of a token (`fused_moe`'s
//!   `intermediate_cache1..3`: topk·2f_e, topk·f_e, topk·h).

use crate::model::arch::TransformerArch;

/// Elements per token alive at once in one block of an engine's forward on one GPU.
pub fn forward_elements_per_token(t: &TransformerArch, tp: f64) -> f64 {
    let h = t.hidden as f64;
    let a = &t.attention;
    let attention = (a.q_width() + a.k_width() + a.v_width() + a.out_width()) as f64 / tp + h;
    let has_dense = t.moe.as_ref().is_none_or(|m| m.moe_blocks(t.layers) < t.layers);
    let dense = if has_dense { 3.0 * t.mlp.ffn as f64 / tp + h } else { 0.0 };
    let moe = t.moe.as_ref().map_or(0.0, |m| {
        let k = m.top_k as f64;
        k * (3.0 * m.expert_ffn as f64 / tp + h) + m.experts as f64 + 3.0 * m.shared_ffn as f64 / tp
    });
    2.0 * h + attention.max(dense).max(moe)
}

/// Bytes of one forward over `tokens` tokens at its busiest block, `bytes` per element.
pub fn forward_peak(t: &TransformerArch, tp: f64, tokens: u64, bytes: f64) -> f64 {
    tokens as f64 * forward_elements_per_token(t, tp) * bytes
}
