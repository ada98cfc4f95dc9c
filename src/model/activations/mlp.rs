//! What the feed-forward part saves for backward, per block and micro-batch: a dense MLP
//! (by activation and gating) or a mixture of experts (routed tokens, router, shared experts).
//!
//! Dense, per token and intermediate feature (x = bytes of a matmul output):
//! - gated with a fused activation (SwiGLU, GeGLU): the gate output (activation input), the
//!   up output and the activation output (the product's inputs) and the product (the down
//!   projection's input): 4·x;
//! - non-gated with a fused activation (GELU, tanh-GELU): its input and output: 2·x;
//! - ReLU saves its output, which is also the down projection's input: 1·x;
//! - GPT-2's `gelu_new` written op by op saves five tensors (three of them fp32 under autocast).
//! MoE (measured on Mixtral, `tests/fixtures/measured/activations.json`): per routed token its
//! gathered input, the gate/up output (2f), the activation output, the product, the expert
//! output and its weighted copy, plus an int64 index; the router saves fp32 probabilities.

use super::norm::linear_inputs;
use super::transformer::{push, Ctx};
use super::{ActTerm, Place, Split};
use crate::model::arch::{Activation, MlpPart, Scope, TransformerArch};

/// Bytes per token and intermediate feature of a dense MLP's internals.
fn per_feature(mlp: &MlpPart, c: &Ctx) -> f64 {
    match (mlp.activation, mlp.gated) {
        // gelu_new: pow input, tanh output, two mul operands, c_proj input; the first three
        // run in fp32 under autocast.
        (Activation::GeluNew, false) if c.mixed => 3.0 * 4.0 + 2.0 * 2.0,
        (Activation::GeluNew, false) => 5.0 * c.x,
        (Activation::GeluNew, true) if c.mixed => 3.0 * 4.0 + 2.0 * 2.0 + 2.0 * 2.0,
        (Activation::GeluNew, true) => 7.0 * c.x,
        (Activation::Relu, false) => c.x,
        (Activation::Relu, true) => 3.0 * c.x,
        (_, true) => 4.0 * c.x,
        (_, false) => 2.0 * c.x,
    }
}

/// Linears that read the MLP's input: gate and up (or one fused gate_up), or one up.
fn input_consumers(mlp: &MlpPart) -> f64 {
    if mlp.gated && !mlp.fused_gate_up {
        2.0
    } else {
        1.0
    }
}

/// Inputs and internals of the dense MLP (in `DenseMlp` blocks) and of the MoE (in
/// `MoeLayer` blocks).
pub fn mlp_terms(t: &TransformerArch, c: &Ctx, out: &mut Vec<ActTerm>) {
    let h = t.hidden as f64;
    let tok = c.tokens;
    let dense = Place::Block(Scope::DenseMlp);
    push(out, "MLP inputs", linear_inputs(c, h, input_consumers(&t.mlp)), Split::Sequence, dense);
    push(out, "MLP intermediates", per_feature(&t.mlp, c) * tok * t.mlp.ffn as f64, Split::Tensor, dense);
    if c.dropout && t.mlp.activation == Activation::Relu {
        // T5's dropout between the activation and wo: a mask and its output.
        push(out, "MLP inner dropout", (1.0 + c.x) * tok * t.mlp.ffn as f64, Split::Tensor, dense);
    }

    let Some(moe) = &t.moe else { return };
    let place = Place::Block(Scope::MoeLayer);
    let (k, e, f) = (moe.top_k.max(1) as f64, moe.experts as f64, moe.expert_ffn as f64);
    let shared_consumers = if moe.shared_ffn > 0 { input_consumers(&t.mlp) } else { 0.0 };
    push(out, "MoE inputs", linear_inputs(c, h, 1.0 + shared_consumers), Split::Sequence, place);
    push(out, "expert activations", k * tok * ((3.0 * h + 4.0 * f) * c.x + 8.0), Split::Tensor, place);
    push(out, "router probabilities", tok * (4.0 * e + 12.0 * k), Split::Sequence, place);
    if moe.shared_ffn > 0 {
        let mut shared = per_feature(&t.mlp, c) * tok * moe.shared_ffn as f64;
        if moe.shared_gate {
            // sigmoid output (saved by sigmoid and by the product) and the shared expert output.
            shared += c.x * tok + c.x * tok * h;
        }
        push(out, "shared expert activations", shared, Split::Tensor, place);
    }
}
