//! What the attention part saves for backward, per block and micro-batch.
//!
//! Kernels (torch 2.15 `sdp_utils.cpp` on CUDA; `parts_report.md` §5):
//! - SDPA runs flash when there is no mask, the dtype is 16-bit and q, k and v share a head
//!   width ≤ 256; it saves q, k, v, the output and an fp32 logsumexp of b·a·s.
//! - Otherwise the memory-efficient kernel, which also takes grouped or single K/V heads
//!   (`supports_gqa`) and masks: the same tensors, the logsumexp padded to a multiple of 32,
//!   and a mask, which transformers passes as a bool and aten turns into a new float mask in
//!   q's dtype on every call (b·s²·x; T5's position bias a·s²·x). With a mask transformers
//!   repeats k and v to all heads first (`repeat_kv`).
//! - Eager attention saves q and k, v repeated to all heads, the softmax output (fp32 in the
//!   Llama family and under autocast), its cast or dropout output and a 1-byte dropout mask: the
//!   5as²b term of Korthikanti et al. 2022 §4.1. Soft-capping (Gemma-2) adds the tanh output;
//!   gpt-oss's sinks add a column and keep the softmax in the model dtype with int64 max indices.
//! - q/k norms save what their norm kind saves, per head row or per token.
//! - MLA (DeepSeek) saves its latent norms and up-projection inputs; its v is a view of the
//!   whole `kv_b_proj` output.

use super::lora::{adapter_inputs, adapter_masks};
use super::norm::{linear_inputs, norm_in_run, norm_saved, weight_operand};
use super::term::{push, push_core, push_input_gradient_only, ActTerm, Ctx, LoraCtx, Place, Split};
use crate::model::arch::{AttentionPart, LinearKind, NormKind, QkNorm, Scope, TransformerArch};
use crate::model::dtype::{BOOL, F32, HALF, INT64};
use crate::model::inputs::{Attention, Checkpointing, Training};

/// The attention implementation that really runs: soft-capped logits (Gemma-2) and learned
/// sinks (gpt-oss) have no SDPA path in transformers 5.24, which then runs eager.
pub fn effective_attention(t: &TransformerArch, training: &Training) -> Attention {
    if t.attention.softcap || t.attention.sinks {
        Attention::Eager
    } else {
        training.attention
    }
}

/// What SDPA runs for one attention, and the mask it saves.
struct SdpaKernel {
    flash: bool,
    /// Bytes of the float mask saved per attention call.
    mask: f64,
    /// k and v repeated to every query head: transformers does it when a mask is passed,
    /// LitGPT always (`Techniques::litgpt_modules`).
    repeated_kv: bool,
}

/// The SDPA kernel of a block (sliding layers counted apart by the caller).
fn sdpa_kernel(a: &AttentionPart, training: &Training, c: &Ctx, sliding_masked: bool) -> SdpaKernel {
    let relative_bias = a.relative_buckets > 0;
    let masked = a.always_masked || relative_bias || sliding_masked;
    // Flash needs one head width for q, k and v, at most 256 (MLA's q/k and v widths differ).
    let head_width = match &a.latent {
        Some(m) if m.qk_nope_dim + m.qk_rope_dim != m.v_head_dim => None,
        Some(m) => Some(m.v_head_dim),
        None => Some(a.head_dim),
    };
    let flash_ok = training.attention == Attention::Flash || (c.x == HALF && !masked && head_width.is_some_and(|w| w <= 256));
    let mask = if !masked || flash_ok {
        0.0
    } else if relative_bias {
        c.x * a.heads as f64 * c.s * c.s_full
    } else {
        c.x * c.b * c.s * c.s_full
    };
    let grouped = a.kv_heads < a.heads;
    let transformers_repeat = masked && !flash_ok && !a.always_masked && a.kv_heads > 1 && grouped;
    SdpaKernel { flash: flash_ok, mask, repeated_kv: transformers_repeat || (training.techniques.litgpt_modules && grouped) }
}

/// The projection inputs, q/k norms and attention core of one attention in `scope`
/// (`Layer` for self-attention, `Cross` for T5's cross-attention, whose keys and values
/// come from the encoder output), averaged over the blocks: each group of blocks of one
/// attention shape and key/value source (`TransformerArch::attention_groups`: Gemma 4's two
/// kinds, Gemma 3n's and 4's shared-KV blocks) weighted by its share of the blocks.
pub fn attention_terms(t: &TransformerArch, training: &Training, c: &Ctx, scope: Scope, out: &mut Vec<ActTerm>) {
    let groups = if scope == Scope::Cross { vec![(t.attention.clone(), t.layers, true)] } else { t.attention_groups() };
    let layers = t.layers.max(1) as f64;
    for (a, blocks, own_kv) in &groups {
        let mut group = Vec::new();
        group_terms(t, a, *blocks, *own_kv, training, c, scope, &mut group);
        let share = if groups.len() == 1 { 1.0 } else { *blocks as f64 / layers };
        for term in group {
            match out.iter_mut().find(|o| o.name == term.name && o.place == term.place && o.split == term.split) {
                Some(o) if groups.len() > 1 => o.bytes += share * term.bytes,
                _ => out.push(ActTerm { bytes: share * term.bytes, ..term }),
            }
        }
    }
}

/// One group of `blocks` blocks with attention `a`; `own_kv`: they compute their keys and
/// values (shared-KV blocks read an earlier block's: no k/v projection inputs or norms, and
/// SDPA keeps the same k and v storages as the block that made them).
#[allow(clippy::too_many_arguments)]
fn group_terms(t: &TransformerArch, a: &AttentionPart, blocks: u64, own_kv: bool, training: &Training, c: &Ctx, scope: Scope, out: &mut Vec<ActTerm>) {
    let place = Place::Block(scope);
    let h = t.hidden as f64;
    let tok = c.tokens;
    let (qd, od) = (a.q_width() as f64, a.out_width() as f64);
    // Falcon's new architecture broadcasts K and V to every head before attention.
    let (kd, vd) = if a.cache_all_heads { (qd, od) } else { (a.k_width() as f64, a.v_width() as f64) };

    projection_inputs(a, c, t.attention_input_width() as f64, own_kv, training.techniques.litgpt_modules, place, out);
    qk_norms(t, a, c, own_kv, place, out);
    if a.output_gate {
        output_gate(a, effective_attention(t, training) == Attention::Eager, c, place, out);
    }

    let rotary = t.rotary() && scope != Scope::Cross;
    // Without the training-time KV cache, a fused projection's v stays a view of the whole
    // fused output (with the cache, k and v are the cache's own copies).
    let cache = t.use_cache && training.checkpointing == Checkpointing::None;
    let vd = if a.fused_qkv && rotary && !cache { qd + kd + vd } else { vd };
    match effective_attention(t, training) {
        Attention::Sdpa | Attention::Flash => {
            // Sliding-window layers get a mask once the sequence is longer than the window.
            let sliding_share = if a.sliding_window > 0 && c.s_full > a.sliding_window as f64 { a.sliding_layers.min(blocks) as f64 / blocks.max(1) as f64 } else { 0.0 };
            let mut core = 0.0;
            for (share, sliding) in [(1.0 - sliding_share, false), (sliding_share, true)] {
                if share > 0.0 {
                    core += share * sdpa_core(a, training, c, (qd, kd, vd, od), rotary, sliding, cache, own_kv);
                }
            }
            push(out, "attention q, k, v, output and logsumexp", core, Split::Tensor, place);
        }
        Attention::Eager => eager_core(a, c, (qd, kd, vd, od), rotary, place, out),
    }
    if let Some(l) = &c.lora {
        // o_proj's adapters: SDPA saves its output anyway; eager attention's output is saved only
        // by o_proj (`lora.rs`).
        let saved = effective_attention(t, training) != Attention::Eager;
        push(out, "o_proj adapter inputs (LoRA)", adapter_inputs(c, l, od, l.adapted(&[LinearKind::O], false), saved), Split::Tensor, place);
    }
    if c.dropout {
        push(out, "attention residual dropout mask", BOOL * tok * h, Split::Sequence, place);
    }
}

/// The input projections a block has: q, k and v; q and k where the values are the keys
/// (Gemma 4's full layers); q alone in a shared-KV block.
fn own_projections(a: &AttentionPart, own_kv: bool) -> &'static [LinearKind] {
    match (own_kv, a.values_are_keys) {
        (false, _) => &[LinearKind::Q],
        (true, true) => &[LinearKind::Q, LinearKind::K],
        (true, false) => &[LinearKind::Q, LinearKind::K, LinearKind::V],
    }
}

/// What LitGPT's `LoRAQKVLinear.zero_pad` keeps when some but not all of q, k and v are adapted
/// (`litgpt/lora.py` 288–326, LitGPT 0.5.13): `index_copy_` of the adapted parts' update into
/// a zero tensor keeps that update (the adapted widths, in the adapters' 16-bit dtype: LitGPT's
/// adapters are the model's) and the int64 index of those columns. Measured in
/// `litgpt_lora.json` (q and v adapted: b·s·(q + v widths)·2 B and 8 B per column).
fn zero_pad_saved(a: &AttentionPart, c: &Ctx, l: &LoraCtx) -> f64 {
    let widths = [(LinearKind::Q, a.q_width()), (LinearKind::K, a.k_width()), (LinearKind::V, a.v_width())];
    let adapted: u64 = widths.iter().filter(|(k, _)| l.targets.contains(k)).map(|(_, w)| w).sum();
    let all: u64 = widths.iter().map(|(_, w)| w).sum();
    if adapted == 0 || adapted == all {
        return 0.0;
    }
    let x = if c.mixed { HALF } else { c.x };
    x * c.tokens * adapted as f64 + INT64 * adapted as f64
}

/// LoRA-adapted attention linears per block, averaged over the blocks' attention groups
/// (`TransformerArch::attention_groups`): a shared-KV block has no k or v projection to adapt,
/// a block whose values are its keys no v projection.
pub fn adapted_attention_linears(t: &TransformerArch, l: &LoraCtx) -> f64 {
    let groups = t.attention_groups();
    let layers = t.layers.max(1) as f64;
    let per_group = |a: &AttentionPart, own_kv: bool| l.adapted(own_projections(a, own_kv), a.fused_qkv) + l.adapted(&[LinearKind::O], false);
    match groups.as_slice() {
        [(a, _, own_kv)] => per_group(a, *own_kv),
        _ => groups.iter().map(|(a, blocks, own_kv)| per_group(a, *own_kv) * *blocks as f64 / layers).sum(),
    }
}

/// Inputs of the q/k/v projections, and MLA's latent path; `litgpt_zero_pad`: LitGPT's fused
/// QKV adapter ([`zero_pad_saved`]).
fn projection_inputs(a: &AttentionPart, c: &Ctx, h: f64, own_kv: bool, litgpt_zero_pad: bool, place: Place, out: &mut Vec<ActTerm>) {
    let tok = c.tokens;
    if let Some(m) = &a.latent {
        // q_a_proj (or q_proj) and kv_a_proj_with_mqa read the norm output.
        push(out, "q/kv projection inputs", linear_inputs(c, h, 2.0), Split::Sequence, place);
        let (q_rank, kv_rank) = (m.q_lora_rank as f64, m.kv_lora_rank as f64);
        let mut latent = norm_in_run(NormKind::Rmsnorm, c, tok, kv_rank, c.x, false) + c.x * tok * kv_rank;
        if m.q_lora_rank > 0 {
            latent += norm_in_run(NormKind::Rmsnorm, c, tok, q_rank, c.x, false) + c.x * tok * q_rank;
        }
        push(out, "MLA latent norms and up-projection inputs", latent, Split::Sequence, place);
    } else if let Some(l) = &c.lora {
        // Frozen q/k/v keep no input; their adapters do (`lora.rs`), and their dropout masks
        // only for the gradient of the block's input.
        let n = l.adapted(own_projections(a, own_kv), a.fused_qkv);
        let masks = adapter_masks(c, l, h, n);
        push(out, "q/k/v projection inputs", adapter_inputs(c, l, h, n, false) - masks, Split::Sequence, place);
        push_input_gradient_only(out, "q/k/v adapter dropout masks (LoRA)", masks, Split::Sequence, place);
        if litgpt_zero_pad {
            push(out, "fused QKV adapter update (LitGPT zero padding)", zero_pad_saved(a, c, l), Split::Tensor, place);
        }
    } else {
        let consumers = if a.fused_qkv || !own_kv {
            1.0
        } else if a.values_are_keys {
            2.0
        } else {
            3.0
        };
        push(out, "q/k/v projection inputs", linear_inputs(c, h, consumers), Split::Sequence, place);
    }
}

/// q/k norms: per head (a row per token and head) or over the whole projection; shared-KV
/// blocks norm only q. Gemma 3n's and 4's weightless `v_norm` ([`AttentionPart::v_norm`])
/// keeps what a norm keeps without its weight's operand; where the values are the keys
/// (`values_are_keys`) in fp32 it reads the storage `k_norm` keeps already.
fn qk_norms(t: &TransformerArch, a: &AttentionPart, c: &Ctx, own_kv: bool, place: Place, out: &mut Vec<ActTerm>) {
    let (tok, d) = (c.tokens, a.head_dim as f64);
    let (heads, kv_heads) = (a.heads as f64, if own_kv { a.kv_heads as f64 } else { 0.0 });
    let kind = t.norm.kind;
    let mut bytes = match a.qk_norm {
        QkNorm::None => return,
        QkNorm::PerHead | QkNorm::PerHeadWeights => norm_in_run(kind, c, tok * heads, d, c.x, false) + norm_in_run(kind, c, tok * kv_heads, d, c.x, false),
        QkNorm::Full => norm_in_run(kind, c, tok, heads * d, c.x, false) + norm_in_run(kind, c, tok, kv_heads * d, c.x, false),
    };
    if a.v_norm && own_kv {
        let rows = tok * kv_heads;
        bytes += norm_saved(kind, rows, d, c.x) - weight_operand(kind, rows, d, c.x);
        if a.values_are_keys && c.x == F32 {
            bytes -= F32 * rows * d;
        }
    }
    push(out, "q/k norms", bytes, Split::Tensor, place);
}

/// Qwen3-Next's and Qwen3.5's gated output (`attn_output_gate`; transformers 5.25
/// `modeling_qwen3_next.py` 270–301): `attn_output * torch.sigmoid(gate)` keeps sigmoid's
/// output and the attention output (SDPA's own, counted with the core; eager's, which a
/// frozen `o_proj` keeps otherwise not), and `o_proj`'s input is the product, kept where
/// `o_proj` trains or (with SDPA, whose output the adapters were counted as sharing) carries
/// adapters. In a pure fp32 run the q norm's `x.float()` is the view of the double-wide
/// `q_proj` output, which it keeps whole (a·d more than `qk_norms` counts).
fn output_gate(a: &AttentionPart, eager: bool, c: &Ctx, place: Place, out: &mut Vec<ActTerm>) {
    let (tok, qd, od) = (c.tokens, a.q_width() as f64, a.out_width() as f64);
    let product = match &c.lora {
        None => 1.0,
        Some(l) if !eager => l.adapted(&[LinearKind::O], false).min(1.0),
        Some(_) => 0.0,
    };
    let attention_output = if eager && c.lora.is_some() { 1.0 } else { 0.0 };
    let wide_q = if c.x == F32 && !c.mixed && a.qk_norm != QkNorm::None { qd } else { 0.0 };
    push(out, "attention output gate", c.x * tok * (od * (1.0 + product + attention_output) + wide_q), Split::Tensor, place);
}

/// One SDPA call's saved tensors: q, k, v, output, logsumexp, mask, and the copies some
/// implementations make.
#[allow(clippy::too_many_arguments)]
fn sdpa_core(a: &AttentionPart, training: &Training, c: &Ctx, (qd, kd, vd, od): (f64, f64, f64, f64), rotary: bool, sliding: bool, cache: bool, own_kv: bool) -> f64 {
    let tok = c.tokens;
    let kernel = sdpa_kernel(a, training, c, sliding);
    let (mut kd, mut vd) = (kd, vd);
    if kernel.repeated_kv {
        (kd, vd) = (qd, od);
    } else if !own_kv {
        // The k and v storages of the block that computed them, counted there.
        (kd, vd) = (0.0, 0.0);
    }
    if let Some(m) = &a.latent {
        // v is a view of the whole kv_b_proj output (nope keys and values of every head).
        vd = (a.heads * (m.qk_nope_dim + m.v_head_dim)) as f64;
    }
    let mut bytes = if a.fused_qkv && !rotary {
        // GPT-2: q is a view of the fused c_attn output; k and v are the training-time KV
        // cache's contiguous copies, or views of it too without the cache (`use_cache: false`,
        // measured in compile.json).
        let copies = if cache { c.x * tok * (kd + vd) } else { 0.0 };
        c.x * tok * (qd + kd + vd) + copies
    } else {
        // Rotary models save the rotated q and k (or the cache's copies); others the projections.
        c.x * tok * (qd + kd + vd)
    };
    bytes += c.x * tok * od;
    if a.rotary_cat && rotary {
        // Head-major output copied by transpose(1, 2).contiguous() before o_proj.
        bytes += c.x * tok * od;
    }
    let efficient = !kernel.flash || (c.x == F32 && training.attention == Attention::Sdpa);
    let lse_len = if efficient { (c.s / 32.0).ceil() * 32.0 } else { c.s };
    // fp32 logsumexp per query and head.
    bytes + F32 * c.b * a.heads as f64 * lse_len + kernel.mask
}

/// Eager attention: q, k and v repeated to all heads, the materialised scores.
fn eager_core(a: &AttentionPart, c: &Ctx, (qd, kd, vd, od): (f64, f64, f64, f64), rotary: bool, place: Place, out: &mut Vec<ActTerm>) {
    let tok = c.tokens;
    let heads = a.heads as f64;
    // q, and k, v repeated to all heads (repeat_kv), as the batched matmuls save them. With
    // GPT-2's fused c_attn and a micro-batch of 1 the reshaped q stays a view of the whole
    // c_attn output (measured: gpt2 eager s1024 b1), pinning 3·h.
    let all_heads_kv = if a.latent.is_some() { kd + vd } else { qd + od };
    let qkv = if a.fused_qkv && !rotary && c.b == 1.0 { c.x * tok * (qd + kd + vd) + c.x * tok * all_heads_kv } else { c.x * tok * (qd + all_heads_kv) };
    push(out, "attention q, k, v", qkv, Split::Tensor, place);
    if c.lora.is_none() {
        // Under LoRA the frozen o_proj keeps no input; its adapters do (`attention_terms`).
        push(out, "attention output (o_proj input)", c.x * tok * od, Split::Tensor, place);
    }
    // Cross-attention attends to the encoder's tokens (as many as the decoder's here).
    let scores = c.b * heads * c.s * c.s_full;
    if a.sinks {
        // gpt-oss: the softmax over the keys and the sink column stays in the model dtype; the
        // row max subtracted first saves its int64 indices.
        let with_sink = c.b * heads * c.s * (c.s_full + 1.0);
        let softmax = if a.eager_softmax_in_fp32(rotary) { F32 } else { c.x };
        push_core(out, "attention softmax with sinks", softmax * with_sink + INT64 * c.b * heads * c.s, place);
        return;
    }
    // Softmax runs in fp32 under autocast and where the family's eager code asks for it: the
    // Llama family's (rotary) by default, each family as measured where it differs
    // (`AttentionPart::eager_softmax_fp32`).
    let softmax_bytes = if c.mixed || a.eager_softmax_in_fp32(rotary) { F32 } else { c.x };
    let probs = if c.dropout {
        BOOL + c.x
    } else if softmax_bytes != c.x {
        c.x
    } else {
        0.0
    };
    let softcap = if a.softcap { c.x } else { 0.0 };
    push_core(out, "attention softmax and probabilities", (softmax_bytes + probs + softcap) * scores, place);
}
