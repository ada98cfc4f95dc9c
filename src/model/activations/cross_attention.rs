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
//!   after the text-row mask;
//! - with `use_cache` and no checkpointing, the cache transformers builds in the training
//!   forward keeps each layer's k and v (`DynamicLayer.update`'s copies).
//!
//! Once per micro-batch, whatever the number of cross-attention layers: the vision states
//! (the projector's output, every k_proj and v_proj's input), the cross-attention mask in the
//! parameters' dtype (`_prepare_cross_attention_mask`, lines 53–78, b·s·v; SDPA keeps it) and the
//! text-row mask. Measured on CPU in `mllama.json` (`tests/mllama.rs`).

use super::norm::{linear_inputs, norm_in_run};
use super::term::{push, ActTerm, Ctx, Place, Split};
use crate::model::arch::{NormKind, Scope, TransformerArch};
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
    let norms = norm_in_run(NormKind::Rmsnorm, c, c.tokens * heads, d, x, false) + norm_in_run(NormKind::Rmsnorm, c, b * v * kv_heads, d, x, false);
    push(out, "cross-attention q_proj input and q/k norms", linear_inputs(c, h, 1.0) + norms, Split::Tensor, place);
    let repeated = 2.0 * x * b * v * q;
    let core = match training.attention {
        Attention::Eager => {
            let scores = b * heads * s * v;
            let cast = if x == F32 { 0.0 } else { x * scores };
            x * c.tokens * q + repeated + F32 * scores + cast + x * c.tokens * q
        }
        Attention::Sdpa | Attention::Flash => x * c.tokens * q + repeated + x * c.tokens * q + F32 * b * heads * (s / 32.0).ceil() * 32.0,
    };
    push(out, "cross-attention q, k, v, output and logsumexp", core, Split::Tensor, place);
    let scalar = if c.mixed { F32 } else { x };
    push(out, "cross-attention gate inputs", 2.0 * x * c.tokens * h + 2.0 * scalar, Split::Sequence, place);
    if t.use_cache && training.checkpointing == Checkpointing::None {
        push(out, "cross-attention cache (training forward)", 2.0 * x * b * v * kv, Split::Tensor, place);
    }
    let mask = if training.attention == Attention::Eager { 0.0 } else { scalar * b * s * v };
    push(out, "cross-attention vision states and masks", x * b * v * h + mask + scalar * b * s, Split::Sequence, Place::Input);
}
