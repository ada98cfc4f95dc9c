//! What the feed-forward part saves for backward, per block and micro-batch: a dense MLP
//! (by activation and gating) or a mixture of experts (routed tokens, router, shared experts).
//!
//! Dense, per token and intermediate feature (x = bytes of a matmul output):
//! - gated with a fused activation (SwiGLU, GeGLU): the gate output (activation input), the
//!   up output and the activation output (the product's inputs) and the product (the down
//!   projection's input): 4·x;
//! - non-gated with a fused activation (GELU, tanh-GELU): its input and output: 2·x;
//! - ReLU saves its output, which is also the down projection's input: 1·x;
//! - GPT-2's `gelu_new` written op by op saves five tensors (three of them fp32 under autocast);
//! - gpt-oss's clamped SwiGLU saves seven.
//!
//! Liger kernels (`liger_kernels`; linkedin/Liger-Kernel at ead96b6, Triton only, derived from
//! the source, not measured): `LigerSwiGLUMLP.forward` is
//! `down_proj(LigerSiLUMulFunction.apply(gate_proj(x), up_proj(x)))` (`transformers/swiglu.py`),
//! and `LigerSiLUMulFunction` saves only `a` and `b`, recomputing silu(a) in backward
//! (`ops/swiglu.py`, lines 230–264: `ctx.save_for_backward(a, b)`); `LigerGELUMulFunction` does
//! the same for GeGLU (`ops/geglu.py`, lines 133–139). With the down projection's input (the
//! product) that is 3·x instead of 4·x. Liger has no kernel for the other activations here.
//! Under LoRA the frozen down projection keeps no input: the product is saved by its adapters
//! only (`lora.rs`).
//! MoE with transformers' default `grouped_mm` experts (`parts_report.md` §11), per routed
//! token slot: its gathered input and the expert output (2·x·h), the internals as a dense MLP
//! of the expert width, and 28 B of int64 sort indices and offsets (32 for gpt-oss); plus
//! 4·E of expert counts. The router saves its fp32 scores and int64 top-k indices; the
//! weights depend on how it normalises ([`Router`]).
//! Autocast does not reach the fused experts: `grouped_mm` has no autocast kernel on any device
//! (`torch._C._dispatch_dump("aten::_grouped_mm")` lists none, where `aten::mm` has
//! `AutocastCUDA`; torch 2.15), and transformers casts the experts' input to the weights' dtype
//! instead (`integrations/moe.py` `_grouped_mm`, lines 373–383, transformers 5.25). With fp32
//! master weights under autocast every routed tensor is then fp32 ([`fp32_experts`]).

use super::lora::adapter_inputs;
use super::norm::{linear_inputs, norm_saved, residual_norm, weight_operand};
use super::term::{push, ActTerm, Ctx, LoraCtx, Place, Split};
use crate::model::arch::{Activation, LinearKind, MlpPart, MoePart, Router, Scope, TransformerArch};
use crate::model::dtype::{BOOL, F32, HALF, INT64};

/// Bytes per token and intermediate feature of a dense MLP's internals.
pub(super) fn per_feature(mlp: &MlpPart, c: &Ctx) -> f64 {
    if c.liger && liger_gated(mlp) {
        // a, b (saved by Liger's Function) and the product (the down projection's input).
        return 3.0 * c.x;
    }
    match (mlp.activation, mlp.gated) {
        // gelu_new: pow input, tanh output, two mul operands, c_proj input; the first three
        // run in fp32 under autocast.
        (Activation::GeluNew, false) if c.mixed => 3.0 * F32 + 2.0 * HALF,
        (Activation::GeluNew, false) => 5.0 * c.x,
        (Activation::GeluNew, true) if c.mixed => 3.0 * F32 + 2.0 * HALF + 2.0 * HALF,
        (Activation::GeluNew, true) => 7.0 * c.x,
        (Activation::Relu, false) => c.x,
        (Activation::Relu, true) => 3.0 * c.x,
        (Activation::SwigluClamped, _) => 7.0 * c.x,
        (_, true) => 4.0 * c.x,
        (_, false) => 2.0 * c.x,
    }
}

/// A gated MLP Liger replaces: SwiGLU (`LigerSwiGLUMLP`) or GeGLU with the tanh GELU
/// (`LigerGEGLUMLP`).
fn liger_gated(mlp: &MlpPart) -> bool {
    mlp.gated && matches!(mlp.activation, Activation::Silu | Activation::GeluTanh)
}

/// Of [`per_feature`], the bytes saved only as the down projection's input (x for the gated
/// and fused activations; ReLU keeps its own output, and the op-by-op activations are left as
/// they are).
pub(super) fn down_input_only(mlp: &MlpPart, c: &Ctx) -> f64 {
    match mlp.activation {
        Activation::Silu | Activation::Gelu | Activation::GeluTanh => c.x,
        _ => 0.0,
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
    let f = t.mean_dense_ffn();
    if let Some(l) = &c.lora {
        // Frozen gate/up/down keep no input; their adapters do (`lora.rs`), unless PEFT's
        // conversion took their names (`moe_lora.rs`).
        let (readers, downs) = dense_adapters(t, l);
        push(out, "MLP inputs", adapter_inputs(c, l, h, readers, false), Split::Sequence, dense);
        let internals = (per_feature(&t.mlp, c) - down_input_only(&t.mlp, c)) * tok * f;
        let down = adapter_inputs(c, l, f, downs, down_input_only(&t.mlp, c) == 0.0);
        push(out, "MLP intermediates", internals + down, Split::Tensor, dense);
    } else {
        push(out, "MLP inputs", linear_inputs(c, h, input_consumers(&t.mlp)), Split::Sequence, dense);
        push(out, "MLP intermediates", per_feature(&t.mlp, c) * tok * f, Split::Tensor, dense);
    }
    if c.dropout && t.mlp.activation == Activation::Relu {
        // T5's dropout between the activation and wo: a mask and its output.
        push(out, "MLP inner dropout", (BOOL + c.x) * tok * t.mlp.ffn as f64, Split::Tensor, dense);
    }
    if let Some(moe) = &t.moe {
        moe_terms(t, moe, c, out);
    }
}

/// Adapted linears of a dense MLP reading its input, and adapted down projections (none
/// where PEFT's MoE conversion took the names `gate_proj`, `up_proj`, `down_proj`).
pub(super) fn dense_adapters(t: &TransformerArch, l: &LoraCtx) -> (f64, f64) {
    if t.moe.as_ref().is_some_and(|m| m.peft.drops_linear("gate_proj")) {
        return (0.0, 0.0);
    }
    let readers = if t.mlp.gated { l.adapted(&[LinearKind::Gate, LinearKind::Up], t.mlp.fused_gate_up) } else { l.adapted(&[LinearKind::Up], false) };
    (readers, l.adapted(&[LinearKind::Down], false))
}

/// Bytes of the int64 sort indices and offsets of one routed slot (3.5 and 4 int64s).
pub(super) fn slot_indices(mlp: &MlpPart) -> f64 {
    if mlp.activation == Activation::SwigluClamped {
        4.0 * INT64
    } else {
        3.5 * INT64
    }
}

fn moe_terms(t: &TransformerArch, moe: &MoePart, c: &Ctx, out: &mut Vec<ActTerm>) {
    if c.lora.is_some() && moe.peft.fused {
        // PEFT's LoRA on fused experts: `moe_lora.rs`, from the block; Gemma 4's branch norms here.
        if moe.beside_dense {
            beside_dense_terms(t, c, out);
        }
        return;
    }
    let place = Place::Block(Scope::MoeLayer);
    let h = t.hidden as f64;
    let tok = c.tokens;
    let (k, e, f) = (moe.top_k.max(1) as f64, moe.experts as f64, moe.expert_ffn as f64);
    if moe.beside_dense {
        beside_dense_terms(t, c, out);
    } else {
        let shared_consumers = if moe.shared_ffn > 0 { input_consumers(&t.mlp) } else { 0.0 };
        push(out, "MoE inputs", linear_inputs(c, h, 1.0 + shared_consumers), Split::Sequence, place);
    }
    // int64 sort indices and offsets per routed slot, fp32 expert counts. The expert internals
    // scale with the matmul output's bytes (no MoE family has GPT-2's op-by-op gelu_new).
    let x = if fp32_experts(moe, c) { F32 } else { c.x };
    let routed = k * tok * (2.0 * x * h + per_feature(&t.mlp, c) * (x / c.x) * f + slot_indices(&t.mlp)) + F32 * e;
    push(out, "routed expert activations", routed, Split::Tensor, place);
    push(out, "router scores and top-k", router_saved(moe, c, h), Split::Sequence, place);
    if moe.shared_ffn > 0 {
        let mut shared = per_feature(&t.mlp, c) * tok * moe.shared_ffn as f64;
        if moe.shared_gate {
            // Sigmoid output (saved by sigmoid and by the product) and the shared expert output.
            shared += c.x * tok + c.x * tok * h;
        }
        push(out, "shared expert activations", shared, Split::Tensor, place);
    }
}

/// Whether the routed experts run in fp32 under autocast: transformers 5's fused experts
/// (`grouped_mm`, which autocast does not reach) with fp32 weights in the forward, the same
/// condition that keeps the residual stream fp32 (`Ctx::r`; measured on CPU under bf16
/// autocast with fp32 weights, `mixer_torch.json`'s Qwen3-Next cases, `tests/mixer_torch.rs`).
fn fp32_experts(moe: &MoePart, c: &Ctx) -> bool {
    moe.peft.fused && c.mixed && c.r == F32
}

/// Gemma 4's MoE branch beside the dense MLP (`Gemma4TextDecoderLayer.forward`, lines
/// 1391–1403; measured in `gemma4.json`): the router's weightless norm over the block's
/// residual (its statistics; the residual is kept by `pre_feedforward_layernorm` already when
/// it is fp32), the normalised tensor the learned `scale` multiplies and `proj`'s input
/// (`Gemma4TextRouter.forward`, lines 1307–1313); `pre_feedforward_layernorm_2` over the same
/// residual (its input kept already), whose output only the experts' gather reads (counted
/// with the routed slots); and the two post-norms over the MLP's and the experts' outputs.
fn beside_dense_terms(t: &TransformerArch, c: &Ctx, out: &mut Vec<ActTerm>) {
    let place = Place::Block(Scope::MoeLayer);
    let h = t.hidden as f64;
    let kind = t.norm.kind;
    let residual_kept = if c.r == F32 { c.r * c.tokens * h } else { 0.0 };
    let weightless = norm_saved(kind, c.tokens, h, c.r) - weight_operand(kind, c.tokens, h, c.r) - residual_kept;
    // Under LoRA the scale and `proj` are frozen: the normalised tensor and proj's input are
    // kept for no gradient.
    let scaled = if c.lora.is_some() { 0.0 } else { c.r * c.tokens * h + linear_inputs(c, h, 1.0) };
    push(out, "MoE router input (norm, scale, projection)", weightless + scaled, Split::Sequence, place);
    let norm = residual_norm(kind, c, h);
    push(out, "MoE branch norms", 2.0 * norm + norm - c.r * c.tokens * h, Split::Sequence, place);
}

/// What the router saves per micro-batch (`parts_report.md`, MoE rows): fp32 scores over all
/// experts (4·E per token), int64 top-k indices (8·k), and the routing weights as the family
/// computes them. DeepSeek's router weight stays fp32 in a bf16 model, so its input is copied
/// to fp32 (4·h per token).
pub(super) fn router_saved(moe: &MoePart, c: &Ctx, h: f64) -> f64 {
    let (k, e) = (moe.top_k.max(1) as f64, moe.experts as f64);
    let fp32_input = if c.bf16 { F32 * h } else { 0.0 };
    // fp32 scores over the experts, int64 top-k indices, then the routing weights: fp32 (Mixtral),
    // in the model dtype (Qwen2-MoE, gpt-oss), fp32 with their fp32 sum (Qwen3-MoE, DeepSeek-V3);
    // LFM2-MoE's scores and weights are in the model dtype.
    let per_token = match moe.router {
        Router::Softmax => F32 * e + (INT64 + F32) * k,
        Router::SoftmaxRaw => F32 * e + INT64 * k + c.x * k,
        Router::SoftmaxNormalized => F32 * e + (INT64 + F32) * k + F32,
        Router::SoftmaxGreedy => fp32_input + F32 * e + INT64 * k,
        Router::SigmoidGrouped => fp32_input + F32 * e + (INT64 + F32) * k + F32,
        // LFM2-MoE (`Lfm2MoeTopKRouter`, modeling_lfm2_moe.py 182–196): the sigmoid's output
        // and the top-k indices; renormalising divides the gathered weights by their sum
        // (+1e-6), and the division keeps both. Measured in lfm2_moe.json.
        Router::SigmoidNormalized => c.x * e + INT64 * k + c.x * k + c.x,
        Router::SigmoidRaw => c.x * e + INT64 * k,
        Router::TopKSoftmax => INT64 * k + c.x * k,
        // Gemma 4: Qwen3-MoE's fp32 softmax, top-k and sum, then the per-expert scales
        // gathered by index and multiplied in (both factors kept, k each).
        Router::ScaledSoftmax => F32 * e + (INT64 + F32) * k + F32 + 2.0 * F32 * k,
    };
    per_token * c.tokens
}
