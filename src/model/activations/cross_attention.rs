//! What Llama 3.2 Vision's (mllama) cross-attention layers save for backward, per block and
//! micro-batch (`arch/cross_attention.rs`; transformers 5.25 `modeling_mllama.py`, lines
//! 400–480 and 672–720). Their norms and MLP are every block's (`block.rs`); this adds the
//! cross-attention over the `v` vision tokens of a sample:
//! - q_proj's input (the norm output), `q_norm` over each head's q row and `k_norm` over each
//!   key-value head's k row (RMSNorms: `norm.rs`);
//! - SDPA with the cross-attention mask, so transformers repeats k and v to every head
//!   (`sdpa_attention.py` `use_gqa_in_sdpa`: no GQA with a mask) and CUDA runs the
//!   memory-efficient kernel: q, the repeated k and v (v rows each), the output and the fp32
//!   logsumexp padded to a multiple of 32; eager (from the source, not measured): q, the repeated
//!   k and v, the fp32 softmax and its cast;
//! - the two tanh gates, which keep what they multiply: o_proj's output and the MLP's output
//!   after the text-row mask (fp32 under autocast: the mask is in the parameters' dtype);
//! - under autocast, SDPA's 16-bit copy of the cross-attention mask (autocast casts every
//!   floating argument of SDPA, per call);
//! - with `use_cache` and no checkpointing, the cache transformers builds in the training
//!   forward keeps each layer's k and v (`DynamicLayer.update`'s copies; the keys fp32 under
//!   autocast, k_norm's fp32 weight promoting them).
//!
//! Under LoRA (PEFT, `lora.rs`) the frozen projections keep nothing, the adapters their inputs
//! (q's the norm output, k's and v's the vision states) and their `lora_A` outputs (text rows for
//! q and o, vision rows for k and v); the k path keeps nothing unless k is adapted; the frozen
//! gates keep only their tanh.
//!
//! Once per micro-batch, whatever the number of cross-attention layers: the vision states
//! (the projector's output, every k_proj and v_proj's input, or their adapters'), the
//! cross-attention mask in the parameters' dtype (`_prepare_cross_attention_mask`, lines 53–78,
//! b·s·v; SDPA keeps it, except under autocast) and the text-row mask. Measured on CPU in
//! `mllama.json` (`tests/mllama.rs`; fp32, pure bf16, CPU autocast, PEFT LoRA).

use super::lora::{adapter_inputs, adapter_intermediates};
use super::norm::{linear_inputs, norm_in_run};
use super::term::{push, ActTerm, Ctx, Place, Split};
use crate::model::arch::{LinearKind, NormKind, Scope, TransformerArch};
use crate::model::dtype::F32;
use crate::model::inputs::{Attention, Checkpointing, Training};

/// The cross-attention layers' terms for one micro-batch; none without a vision tower (the
/// layers are then skipped: `MllamaTextModel.forward`, lines 1135–1139).
pub(super) fn terms(t: &TransformerArch, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let v = t.vision_kv_tokens(training.visual()) as f64;
    if v == 0.0 {
        return;
    }
    let a = &t.attention;
    let place = Place::Block(Scope::Cross);
    let (h, heads, kv_heads, d) = (t.hidden as f64, a.heads as f64, a.kv_heads as f64, a.head_dim as f64);
    let (b, s, x) = (c.b, c.s, c.x);
    let (q, kv) = (heads * d, kv_heads * d);
    // The vision tokens of the micro-batch, as the k/v projections read them.
    let vc = Ctx { tokens: b * v, lora: None, ..*c };
    let lora = c.lora.as_ref();
    let adapted = |kinds: &[LinearKind]| lora.map_or(0.0, |l| l.adapted(kinds, false));
    // Trained, q_proj keeps its input (the norm output); under LoRA the frozen base keeps nothing
    // and q's adapter keeps it. The k path needs a gradient only when k_proj is trained or
    // adapted: the vision states come from a frozen projector under LoRA.
    let q_input = match lora {
        Some(l) => adapter_inputs(c, l, h, adapted(&[LinearKind::Q]), false),
        None => linear_inputs(c, h, 1.0),
    };
    let k_grad = lora.is_none() || adapted(&[LinearKind::K]) > 0.0;
    let k_norm = if k_grad { norm_in_run(NormKind::Rmsnorm, c, b * v * kv_heads, d, x, false) } else { 0.0 };
    let norms = norm_in_run(NormKind::Rmsnorm, c, c.tokens * heads, d, x, false) + k_norm;
    push(out, "cross-attention q_proj input and q/k norms", q_input + norms, Split::Tensor, place);
    let repeated = 2.0 * x * b * v * q;
    let core = match training.attention {
        Attention::Eager => {
            let scores = b * heads * s * v;
            let cast = if x == F32 { 0.0 } else { x * scores };
            // The output is kept by o_proj (trained) or o's adapter.
            let output = if lora.is_none() || adapted(&[LinearKind::O]) > 0.0 { x * c.tokens * q } else { 0.0 };
            x * c.tokens * q + repeated + F32 * scores + cast + output
        }
        // mllama has no flash-attention path (`_supports_flash_attn = False`, line 783): SDPA.
        Attention::Sdpa | Attention::Flash => x * c.tokens * q + repeated + x * c.tokens * q + F32 * b * heads * (s / 32.0).ceil() * 32.0,
    };
    push(out, "cross-attention q, k, v, output and logsumexp", core, Split::Tensor, place);
    let scalar = if c.mixed { F32 } else { x };
    // Each gate keeps its tanh for the gated tensor's gradient, and the gated tensor for its own
    // (none when LoRA freezes it): o_proj's output, and the MLP's output times the text-row mask,
    // which the mask (fp32 under autocast: the parameters' dtype) promotes to fp32.
    let gated = if lora.is_none() { x * c.tokens * h + scalar * c.tokens * h } else { 0.0 };
    push(out, "cross-attention gate inputs", gated + 2.0 * scalar, Split::Sequence, place);
    if t.use_cache && training.checkpointing == Checkpointing::None {
        // The keys after k_norm, whose fp32 weight makes them fp32 under autocast; the values.
        push(out, "cross-attention cache (training forward)", (scalar + x) * b * v * kv, Split::Tensor, place);
    }
    // SDPA keeps the mask it reads: the model's own, once, or under autocast (which casts every
    // floating argument of SDPA to 16 bits per call) each layer's 16-bit copy.
    let sdpa_mask = training.attention != Attention::Eager;
    if sdpa_mask && c.mixed {
        push(out, "cross-attention mask (autocast copy)", x * b * s * v, Split::Sequence, place);
    }
    // Under full checkpointing the model's own mask is a checkpointed layer's argument, kept.
    let kept = (sdpa_mask && !c.mixed) || training.checkpointing == Checkpointing::Full;
    let mask = if kept { scalar * b * s * v } else { 0.0 };
    let states = match lora {
        None => x * vc.tokens * h,
        Some(l) => {
            let (n_q, n_kv) = (adapted(&[LinearKind::Q, LinearKind::O]), adapted(&[LinearKind::K, LinearKind::V]));
            push(out, "cross-attention adapter intermediates (LoRA)", adapter_intermediates(c, l, n_q) + adapter_intermediates(&vc, l, n_kv), Split::Sequence, place);
            // The k/v adapters read the vision states: one shared tensor when they read it as it
            // is (`lora.rs`), else each adapter its own copy in every layer.
            let shared = !c.mixed && (x == F32 || !l.fp32) && !l.dropout;
            if shared {
                adapter_inputs(&vc, l, h, n_kv, false)
            } else {
                push(out, "cross-attention k/v adapter inputs (LoRA)", adapter_inputs(&vc, l, h, n_kv, false), Split::Sequence, place);
                0.0
            }
        }
    };
    // Under full checkpointing the vision states are every cross-attention layer's argument, kept.
    let states = if training.checkpointing == Checkpointing::Full { x * vc.tokens * h } else { states };
    push(out, "cross-attention vision states and masks", states + mask + scalar * b * s, Split::Sequence, Place::Input);
}
