//! Tensors a Hugging Face transformer block saves for backward, for one micro-batch.
//!
//! Each term names the tensor(s) as autograd saves them in transformers 5.x with PyTorch
//! 2.x on CUDA (see `tests/measure/saved_tensors_report.md` for the op-by-op listing):
//! - LayerNorm saves its input and fp32 mean/rstd (8 B per token); `LlamaRMSNorm` saves an
//!   fp32 copy of its input, the fp32 rsqrt and the normalised tensor.
//! - Under autocast each linear makes its own 16-bit copy of an fp32 input, so separate
//!   q/k/v (or gate/up) projections save several copies of the same norm output.
//! - SDPA on CUDA runs the flash kernel (16-bit) or the memory-efficient kernel (fp32):
//!   it saves q, k, v, the output (also the o_proj input) and an fp32 logsumexp of
//!   b·a·s (padded to a multiple of 32 for the efficient kernel) — torch
//!   `_scaled_dot_product_{flash,efficient}_attention` derivatives.
//! - Eager attention saves the fp32 softmax output (b·a·s²·4), its cast or dropout output
//!   and a 1-byte dropout mask: the 5as²b term of Korthikanti et al. 2022 §4.1.
//! - GPT-2's `gelu_new` is written op by op and saves five f-wide tensors.
//! - Dropout saves a 1-byte bool mask.
//! Dtype flow: x = bytes of matmul outputs (4 fp32, 2 otherwise); r = bytes of the residual
//! stream (4 fp32 and under autocast, where fp32 embeddings promote the sum; 2 pure bf16).

use super::{ActTerm, Place, Split};
use crate::model::arch::{vit_patches, Mlp, Norm, Stack, TransformerArch};
use crate::model::precision::Precision;
use crate::scenario::{Attention, Training};


struct Ctx {
    /// Tokens in the micro-batch on this rank (b · s / cp).
    tokens: f64,
    b: f64,
    /// Sequence length on this rank.
    s: f64,
    /// Full sequence (keys attended to).
    s_full: f64,
    x: f64,
    r: f64,
    mixed: bool,
    bf16: bool,
    dropout: bool,
}

/// Saved tensors of the whole model for one micro-batch (`Layer` terms for one block), and
/// the bytes full checkpointing keeps per block: the block input in the residual dtype
/// (`torch.utils.checkpoint` saves only the block's arguments).
pub fn terms(t: &TransformerArch, training: &Training, cp: f64) -> (Vec<ActTerm>, f64) {
    let precision = training.precision;
    let b = training.micro_batch.max(1) as f64;
    let s_full = match t.stack {
        Stack::Vision => {
            let image = training.image_size.unwrap_or(t.image_size).max(1);
            (vit_patches(image, t.patch) + 1) as f64
        }
        _ => training.seq_len.max(1) as f64,
    };
    let s = s_full / cp.max(1.0);
    let c = Ctx {
        tokens: b * s,
        b,
        s,
        s_full,
        x: precision.activation_bytes() as f64,
        r: if precision == Precision::Bf16 { 2.0 } else { 4.0 },
        mixed: precision.is_mixed(),
        bf16: precision == Precision::Bf16,
        dropout: training.dropout > 0.0,
    };
    let mut out = Vec::with_capacity(24);
    block_terms(t, training, &c, &mut out);
    input_terms(t, training, &c, &mut out);
    output_terms(t, &c, &mut out);
    (out, c.r * c.tokens * t.hidden as f64)
}

fn push(out: &mut Vec<ActTerm>, name: &'static str, bytes: f64, split: Split, place: Place) {
    out.push(ActTerm { name, bytes, split, place, attention_core: false });
}

/// A norm's own saved tensors (not its output).
fn norm_saved(norm: Norm, c: &Ctx, h: f64) -> f64 {
    match norm {
        // input (residual dtype) + fp32 mean and rstd.
        Norm::Layernorm => c.r * c.tokens * h + 8.0 * c.tokens,
        // fp32 copy of the input + fp32 rsqrt + normalised tensor (bf16 in pure bf16, else fp32).
        Norm::Rmsnorm => 4.0 * c.tokens * h + 4.0 * c.tokens + if c.bf16 { 2.0 } else { 4.0 } * c.tokens * h,
    }
}

/// A norm output (or block input) as saved by the `consumers` linears that read it: one
/// shared tensor, or under autocast one 16-bit copy per linear.
fn linear_inputs(c: &Ctx, h: f64, consumers: f64) -> f64 {
    if c.mixed {
        consumers * 2.0 * c.tokens * h
    } else {
        c.r * c.tokens * h
    }
}

fn block_terms(t: &TransformerArch, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let (h, f) = (t.hidden as f64, t.ffn as f64);
    let qd = (t.heads * t.head_dim) as f64;
    let kvd = (t.kv_heads * t.head_dim) as f64;
    let a = t.heads as f64;
    let tok = c.tokens;
    let pre_norm = t.stack != Stack::Encoder;
    let use_layer = Place::Layer;
    // Attention input: pre-norm saves the norm; both save the projection inputs.
    if pre_norm {
        push(out, "attention norm", norm_saved(t.norm, c, h), Split::Sequence, use_layer);
    }
    let qkv_consumers = if t.fused_qkv { 1.0 } else { 3.0 };
    push(out, "q/k/v projection inputs", linear_inputs(c, h, qkv_consumers), Split::Sequence, use_layer);

    // Attention core.
    let rotary = t.stack == Stack::Decoder && t.max_positions == 0;
    match effective_attention(t, training) {
        Attention::Sdpa | Attention::Flash => {
            let qkv = if t.fused_qkv {
                // q is a view of the fused c_attn output; k and v are made contiguous copies.
                c.x * tok * (qd + 2.0 * kvd) + 2.0 * c.x * tok * kvd
            } else {
                // Rotary models save the rotated q and k; others the projection outputs.
                c.x * tok * (qd + 2.0 * kvd)
            };
            push(out, "attention q, k, v", qkv, Split::Tensor, use_layer);
            push(out, "attention output", c.x * tok * qd, Split::Tensor, use_layer);
            let efficient_kernel = c.x == 4.0 && training.attention == Attention::Sdpa;
            let lse_len = if efficient_kernel { (c.s / 32.0).ceil() * 32.0 } else { c.s };
            push(out, "attention logsumexp", 4.0 * c.b * a * lse_len, Split::Tensor, use_layer);
        }
        Attention::Eager => {
            // q, and k, v repeated to all heads (repeat_kv), as the batched matmuls save them.
            // With GPT-2's fused c_attn and a micro-batch of 1 the reshaped q stays a view of
            // the whole c_attn output (measured: gpt2 eager s1024 b1), pinning 3·h.
            let qkv = if t.fused_qkv && c.b == 1.0 { c.x * tok * (qd + 2.0 * kvd) + 2.0 * c.x * tok * qd } else { 3.0 * c.x * tok * qd };
            push(out, "attention q, k, v", qkv, Split::Tensor, use_layer);
            push(out, "attention output (o_proj input)", c.x * tok * qd, Split::Tensor, use_layer);
            let scores = c.b * a * c.s * c.s_full;
            // Softmax runs in fp32 under autocast and in Llama-family eager attention.
            let softmax_bytes = if c.bf16 && !rotary { 2.0 } else { 4.0 };
            let probs = if c.dropout {
                1.0 + c.x
            } else if softmax_bytes != c.x {
                c.x
            } else {
                0.0
            };
            out.push(ActTerm {
                name: "attention softmax and probabilities",
                bytes: (softmax_bytes + probs) * scores,
                split: Split::Tensor,
                place: use_layer,
                attention_core: true,
            });
        }
    }
    if c.dropout {
        push(out, "attention residual dropout mask", tok * h, Split::Sequence, use_layer);
    }

    // MLP input.
    if pre_norm {
        push(out, "MLP norm", norm_saved(t.norm, c, h), Split::Sequence, use_layer);
    } else {
        push(out, "attention output norm", norm_saved(t.norm, c, h), Split::Sequence, use_layer);
    }
    let moe = t.experts > 1;
    let mlp_consumers = if moe { 1.0 } else if t.mlp == Mlp::Swiglu { 2.0 } else { 1.0 };
    push(out, "MLP inputs", linear_inputs(c, h, mlp_consumers), Split::Sequence, use_layer);

    // MLP internals.
    if moe {
        let k = t.experts_per_token.max(1) as f64;
        let e = t.experts as f64;
        // Per routed token: its gathered input, the fused gate/up output (2f), SiLU output,
        // the product, the expert output and its weighted copy; plus an int64 index.
        push(out, "expert activations", k * tok * ((3.0 * h + 4.0 * f) * c.x + 8.0), Split::Tensor, use_layer);
        push(out, "router probabilities", tok * (4.0 * e + 12.0 * k), Split::Sequence, use_layer);
    } else {
        let per_tf = match t.mlp {
            Mlp::Swiglu => 4.0 * c.x,
            Mlp::Gelu => 2.0 * c.x,
            // gelu_new: pow input, tanh output, two mul operands, c_proj input; the first
            // three run in fp32 under autocast.
            Mlp::GeluTanh if c.mixed => 3.0 * 4.0 + 2.0 * 2.0,
            Mlp::GeluTanh => 5.0 * c.x,
        };
        push(out, "MLP intermediates", per_tf * tok * f, Split::Tensor, use_layer);
    }
    if c.dropout {
        push(out, "MLP dropout mask", tok * h, Split::Sequence, use_layer);
    }
    if !pre_norm {
        push(out, "MLP output norm", norm_saved(t.norm, c, h), Split::Sequence, use_layer);
    }
}

/// The attention kernel that really runs. On CUDA, SDPA in fp32 with grouped key/value heads
/// (GQA) falls back to the math kernel: flash has no fp32 and the memory-efficient kernel
/// rejects grouped heads, so PyTorch materialises the scores as eager attention does
/// (measured: llama-tiny-sdpa-fp32 saves exactly what llama-tiny-eager-fp32 saves).
pub fn effective_attention(t: &TransformerArch, training: &Training) -> Attention {
    let fp32 = training.precision == Precision::Fp32;
    match training.attention {
        Attention::Sdpa | Attention::Flash if fp32 && t.kv_heads < t.heads => Attention::Eager,
        other => other,
    }
}

fn input_terms(t: &TransformerArch, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let h = t.hidden as f64;
    let place = Place::Input;
    match t.stack {
        Stack::Vision => {
            let image = training.image_size.unwrap_or(t.image_size).max(1) as f64;
            let pixel_bytes = if c.x == 4.0 { 4.0 } else { 2.0 };
            push(out, "input pixels (patch projection input)", pixel_bytes * c.b * t.channels as f64 * image * image, Split::Sequence, place);
        }
        _ => {
            push(out, "input ids", 8.0 * c.tokens, Split::Sequence, place);
            if t.stack == Stack::Decoder && t.max_positions == 0 {
                // Rotary cos and sin, shared by all blocks (fp32 under autocast).
                let bytes = if c.mixed { 4.0 } else { c.x };
                push(out, "rotary cos/sin", 2.0 * bytes * c.s * t.head_dim as f64, Split::Sequence, place);
            }
        }
    }
    if t.stack == Stack::Encoder {
        push(out, "embedding norm", norm_saved(t.norm, c, h), Split::Sequence, place);
    }
    if c.dropout {
        push(out, "embedding dropout mask", c.tokens * h, Split::Sequence, place);
    }
}

fn output_terms(t: &TransformerArch, c: &Ctx, out: &mut Vec<ActTerm>) {
    let (h, v) = (t.hidden as f64, t.vocab as f64);
    let tok = c.tokens;
    let place = Place::Output;
    match t.stack {
        Stack::Decoder => {
            push(out, "final norm", norm_saved(t.norm, c, h), Split::Sequence, place);
            push(out, "LM head input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            // transformers' ForCausalLMLoss upcasts logits to fp32; log_softmax saves its output.
            push(out, "fp32 log-softmax of the logits", 4.0 * tok * v + 8.0 * tok, Split::Tensor, place);
        }
        Stack::Encoder => {
            // BertForMaskedLM head: dense → GELU → LayerNorm → decoder.
            push(out, "MLM transform input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            push(out, "MLM GELU input", c.x * tok * h, Split::Sequence, place);
            let ln_input = if c.bf16 { 2.0 } else { 4.0 };
            push(out, "MLM norm", ln_input * tok * h + 8.0 * tok, Split::Sequence, place);
            push(out, "MLM decoder input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            // fp32: one fp32 log-softmax; pure bf16: one bf16 log-softmax; autocast: a 16-bit
            // log-softmax and the fp32 copy the NLL loss saves.
            let loss = if c.x == 4.0 {
                4.0
            } else if c.mixed {
                6.0
            } else {
                2.0
            };
            push(out, "log-softmax of the logits", loss * tok * v + 8.0 * tok, Split::Tensor, place);
        }
        Stack::Vision => {
            push(out, "final norm", norm_saved(t.norm, c, h), Split::Sequence, place);
            // The classifier reads the [CLS] row: a view that keeps the whole norm output alive,
            // or under autocast a fresh 16-bit copy of just that row.
            let cls = if c.mixed { 2.0 * c.b * h } else { c.r * tok * h };
            push(out, "classifier input", cls + 4.0 * c.b * t.classes as f64, Split::Sequence, place);
        }
    }
}
