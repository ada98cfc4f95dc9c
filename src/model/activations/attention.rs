//! What the attention part saves for backward, per block and micro-batch.
//!
//! - SDPA on CUDA runs the flash kernel (16-bit, equal head widths ≤ 256) or the
//!   memory-efficient kernel (fp32, or unequal q/v widths as in DeepSeek's MLA): it saves
//!   q, k, v, the output (also the o_proj input) and an fp32 logsumexp of b·a·s (padded to a
//!   multiple of 32 for the efficient kernel) — torch `_scaled_dot_product_{flash,efficient}_attention`
//!   derivatives.
//! - Eager attention saves q and k, v repeated to all heads (`repeat_kv`), the fp32 softmax
//!   output (b·a·s²·4), its cast or dropout output and a 1-byte dropout mask: the 5as²b term
//!   of Korthikanti et al. 2022 §4.1. Soft-capping (Gemma-2) adds the tanh output.
//! - q/k norms save what their norm kind saves, per head row.
//! - MLA (DeepSeek) saves its latent norms' inputs and the up-projection inputs.

use super::norm::{linear_inputs, norm_saved};
use super::transformer::{push, push_core, Ctx};
use super::{ActTerm, Place, Split};
use crate::model::arch::{NormKind, QkNorm, Scope, Stack, TransformerArch};
use crate::model::precision::Precision;
use crate::model::inputs::{Attention, Training};

/// The attention kernel that really runs. On CUDA, SDPA in fp32 with grouped key/value heads
/// (GQA) falls back to the math kernel: flash has no fp32 and the memory-efficient kernel
/// rejects grouped heads, so PyTorch materialises the scores as eager attention does
/// (measured: llama-tiny-sdpa-fp32 saves exactly what llama-tiny-eager-fp32 saves).
/// Soft-capped logits (Gemma-2) and T5's position bias need eager attention.
pub fn effective_attention(t: &TransformerArch, training: &Training) -> Attention {
    let fp32 = training.precision == Precision::Fp32;
    let a = &t.attention;
    let needs_eager = a.softcap || a.relative_buckets > 0;
    match training.attention {
        _ if needs_eager => Attention::Eager,
        Attention::Sdpa | Attention::Flash if fp32 && a.kv_heads < a.heads && a.latent.is_none() => Attention::Eager,
        other => other,
    }
}

/// The projection inputs, q/k norms and attention core of one attention in `scope`
/// (`Layer` for self-attention, `Cross` for T5's cross-attention, whose keys and values
/// come from the encoder output).
pub fn attention_terms(t: &TransformerArch, training: &Training, c: &Ctx, scope: Scope, out: &mut Vec<ActTerm>) {
    let a = &t.attention;
    let place = Place::Block(scope);
    let h = t.hidden as f64;
    let tok = c.tokens;
    let (qd, kd, vd, od) = (a.q_width() as f64, a.k_width() as f64, a.v_width() as f64, a.out_width() as f64);
    let heads = a.heads as f64;

    // Projection inputs, and the latent path of MLA.
    if let Some(m) = &a.latent {
        let consumers = 2.0; // q_a_proj (or q_proj) and kv_a_proj_with_mqa read the norm output.
        push(out, "q/kv projection inputs", linear_inputs(c, h, consumers), Split::Sequence, place);
        let (q_rank, kv_rank) = (m.q_lora_rank as f64, m.kv_lora_rank as f64);
        let mut latent = norm_saved(NormKind::Rmsnorm, c, tok, kv_rank) + c.x * tok * kv_rank;
        if m.q_lora_rank > 0 {
            latent += norm_saved(NormKind::Rmsnorm, c, tok, q_rank) + c.x * tok * q_rank;
        }
        push(out, "MLA latent norms and up-projection inputs", latent, Split::Sequence, place);
    } else {
        let consumers = if a.fused_qkv { 1.0 } else { 3.0 };
        push(out, "q/k/v projection inputs", linear_inputs(c, h, consumers), Split::Sequence, place);
    }
    match a.qk_norm {
        QkNorm::None => {}
        // Per head: one row per (token, head); over the full width: one row per token.
        QkNorm::PerHead => push(
            out,
            "q/k norms",
            norm_saved(t.norm.kind, c, tok * heads, a.head_dim as f64) + norm_saved(t.norm.kind, c, tok * a.kv_heads as f64, a.head_dim as f64),
            Split::Tensor,
            place,
        ),
        QkNorm::Full => push(out, "q/k norms", norm_saved(t.norm.kind, c, tok, qd) + norm_saved(t.norm.kind, c, tok, kd), Split::Tensor, place),
    }

    let rotary = t.rotary() && scope == Scope::Layer;
    match effective_attention(t, training) {
        Attention::Sdpa | Attention::Flash => {
            let qkv = if a.fused_qkv && !rotary {
                // GPT-2: q is a view of the fused c_attn output; k and v are contiguous copies.
                c.x * tok * (qd + kd + vd) + c.x * tok * (kd + vd)
            } else {
                // Rotary models save the rotated q and k; others the projection outputs.
                c.x * tok * (qd + kd + vd)
            };
            push(out, "attention q, k, v", qkv, Split::Tensor, place);
            push(out, "attention output", c.x * tok * od, Split::Tensor, place);
            let efficient_kernel = (c.x == 4.0 && training.attention == Attention::Sdpa) || a.latent.is_some();
            let lse_len = if efficient_kernel { (c.s / 32.0).ceil() * 32.0 } else { c.s };
            push(out, "attention logsumexp", 4.0 * c.b * heads * lse_len, Split::Tensor, place);
        }
        Attention::Eager => {
            // q, and k, v repeated to all heads (repeat_kv), as the batched matmuls save them.
            // With GPT-2's fused c_attn and a micro-batch of 1 the reshaped q stays a view of
            // the whole c_attn output (measured: gpt2 eager s1024 b1), pinning 3·h.
            let all_heads_kv = if a.latent.is_some() { kd + vd } else { qd + od };
            let qkv = if a.fused_qkv && !rotary && c.b == 1.0 { c.x * tok * (qd + kd + vd) + c.x * tok * all_heads_kv } else { c.x * tok * (qd + all_heads_kv) };
            push(out, "attention q, k, v", qkv, Split::Tensor, place);
            push(out, "attention output (o_proj input)", c.x * tok * od, Split::Tensor, place);
            // Cross-attention attends to the encoder's tokens (as many as the decoder's here).
            let scores = c.b * heads * c.s * c.s_full;
            // Softmax runs in fp32 under autocast, in Llama-family eager attention and in T5.
            let softmax_bytes = if c.bf16 && !rotary && t.stack != Stack::EncoderDecoder { 2.0 } else { 4.0 };
            let probs = if c.dropout {
                1.0 + c.x
            } else if softmax_bytes != c.x {
                c.x
            } else {
                0.0
            };
            let softcap = if a.softcap { c.x } else { 0.0 };
            push_core(out, "attention softmax and probabilities", (softmax_bytes + probs + softcap) * scores, place);
        }
    }
    if c.dropout {
        push(out, "attention residual dropout mask", tok * h, Split::Sequence, place);
    }
}
