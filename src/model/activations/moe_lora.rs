//! What a mixture of experts saves for backward under PEFT's LoRA when transformers 5 fuses
//! its experts (`arch/moe_peft.rs`), per MoE block and micro-batch, with transformers 5.25's
//! default `grouped_mm` experts (`integrations/moe.py` `grouped_mm_experts_forward`, lines
//! 424–520). Measured with PEFT 0.21.2 on tiny Qwen3-MoE and Qwen2-MoE models
//! (`lora_experts.json`, `tests/lora_experts.rs`).
//!
//! Per routed slot (k per token):
//! - always: the gate-up output and what the activation saves, but not the product (a dense
//!   MLP's saves less the down projection's input, `mlp.rs`), the down output (kept by its
//!   product with the routing weights), and the sort indices and weights (`mlp.rs`);
//! - the gathered input (h) only when `gate_up_proj` is wrapped, the product (f) only when
//!   `down_proj` is: a grouped matmul keeps its input for its weight's gradient, and a frozen
//!   fused parameter has none.
//!
//! A wrapped parameter is folded into its adapters once per forward (`_LoraFactorsProxy`:
//! `torch.baddbmm(W, lhs, rhs)`, `peft/tuners/lora/layer.py` 2305–2323, under
//! `parametrize.cached()`, 2598): a merged copy of the whole `[E, a, b]` parameter in its
//! dtype, which the grouped matmul keeps for its input's gradient. With fp32 adapters on a
//! 16-bit base, `get_delta_factors` casts the factors to the base dtype and `baddbmm` keeps
//! those copies. The router: frozen, its scores and top-k as without LoRA (`mlp.rs`); wrapped
//! (the conversion under "all-linear"), also its merged `[E, h]` weight
//! (`_LoraParameterProxy`) and its input; an `nn.Linear` router (Llama 4, PhiMoE) its
//! adapter's input and r per token. The shared experts save what a LoRA-adapted dense MLP
//! does (`mlp.rs`), without adapters where the conversion took their names, and
//! `shared_expert_gate`'s adapter under "all-linear".

use super::lora::{adapter_inputs, adapter_intermediates};
use super::mlp::{down_input_only, per_feature, router_saved, slot_indices};
use super::norm::linear_inputs;
use super::term::{push, ActTerm, Ctx, LoraCtx, Place, Split};
use crate::model::arch::{LinearKind, MoePart, PeftReach, Router, Scope, TransformerArch};
use crate::model::dtype::F32;
use crate::model::lora_reach::{all_linear, reaches};

/// The MoE block's saved tensors under LoRA, its experts fused (`MoePeft::fused`).
pub fn moe_lora_terms(t: &TransformerArch, moe: &MoePart, c: &Ctx, l: &LoraCtx, out: &mut Vec<ActTerm>) {
    use LinearKind::{Down, Gate, Up};
    let place = Place::Block(Scope::MoeLayer);
    let (h, tok) = (t.hidden as f64, c.tokens);
    let (k, e, f) = (moe.top_k.max(1) as f64, moe.experts as f64, moe.expert_ffn as f64);
    let reads: &[LinearKind] = if t.mlp.gated { &[Gate, Up] } else { &[Up] };
    let up_rows = reads.len() as f64;
    let gate_up = reaches(moe.peft.expert_reach(reads.len()), reads, &l.targets);
    let down = reaches(moe.peft.expert_reach(1), &[Down], &l.targets);

    let product = down_input_only(&t.mlp, c);
    let mut slot = c.x * h + (per_feature(&t.mlp, c) - product) * f + slot_indices(&t.mlp);
    if gate_up {
        slot += c.x * h;
    }
    if down {
        slot += product * f;
    }
    push(out, "routed expert activations", k * tok * slot + F32 * e, Split::Tensor, place);

    // The merged copies of the wrapped parameters, and the factors cast to a 16-bit base.
    let (mut merged, mut factors) = (0.0, 0.0);
    if gate_up {
        merged += up_rows * f * h;
        factors += up_rows * l.rank * (h + up_rows * f);
    }
    if down {
        merged += f * h;
        factors += l.rank * (f + h);
    }
    let cast_factors = if l.fp32 && c.x < F32 { factors * c.x } else { 0.0 };
    if merged > 0.0 {
        push(out, "LoRA merged expert weights (PEFT ParamWrapper)", e * (merged * c.x + cast_factors), Split::Experts, place);
    }

    // The block's input, as the linears and adapters reading it keep it.
    let router = moe.peft.router_reach().filter(|r| reaches(*r, &[], &l.targets));
    let wrapped_router = matches!(router, Some(PeftReach::Wrapped { .. }));
    let router_input = if wrapped_router { linear_inputs(c, h, 1.0) } else { 0.0 };
    let shared = moe.shared_ffn > 0 && !moe.peft.drops_linear("gate_proj");
    let shared_reads = if shared { l.adapted(reads, t.mlp.fused_gate_up) } else { 0.0 };
    let shared_downs = if shared { l.adapted(&[Down], false) } else { 0.0 };
    let gate_adapter = if moe.shared_gate && all_linear(&l.targets) { 1.0 } else { 0.0 };
    let router_adapter = if router == Some(PeftReach::AllLinearModule) { 1.0 } else { 0.0 };
    let readers = shared_reads + gate_adapter + router_adapter;
    push(out, "MoE inputs", router_input + adapter_inputs(c, l, h, readers, router_input > 0.0), Split::Sequence, place);
    let merged_router = if wrapped_router { e * h * c.x } else { 0.0 };
    // Gemma 4's frozen per-expert scale: its product keeps the gathered scales only.
    let frozen_scale = if moe.router == Router::ScaledSoftmax { F32 * k * tok } else { 0.0 };
    push(out, "router scores and top-k", router_saved(moe, c, h) + merged_router - frozen_scale, Split::Sequence, place);
    push(out, "LoRA adapter intermediates (MoE)", adapter_intermediates(c, l, readers + shared_downs), Split::Sequence, place);

    if moe.shared_ffn > 0 {
        let fs = moe.shared_ffn as f64;
        let mut saved = (per_feature(&t.mlp, c) - product) * tok * fs + adapter_inputs(c, l, fs, shared_downs, product == 0.0);
        if moe.shared_gate {
            // Sigmoid output (saved by sigmoid and by the product) and the shared expert output.
            saved += c.x * tok + c.x * tok * h;
        }
        push(out, "shared expert activations", saved, Split::Tensor, place);
    }
}
