//! Which tensors a run's LoRA adapts, and at what rank, as PEFT 0.21 decides on the module
//! tree transformers 5 builds (`arch/moe_peft.rs`, `PeftReach`).
//!
//! The contract names no targeting form, so `training.lora.targets` stands for both:
//! every kind (the Planner's "all linear layers", the default) is PEFT's
//! `target_modules="all-linear"`; a shorter list is `target_modules` with the family's own
//! module names for those kinds (Llama's `q_proj` … `down_proj`; DeepSeek's `q_a_proj`,
//! `kv_b_proj`, …; Mixtral's experts `w1`, `w3`, `w2`, which PEFT's conversion maps to them).

use super::arch::{LinearKind, ParamTensor, PeftReach, Scope};
use super::inputs::Lora;

/// Whether `targets` are PEFT's `"all-linear"`: every kind.
pub fn all_linear(targets: &[LinearKind]) -> bool {
    LinearKind::ALL.iter().all(|k| targets.contains(k))
}

/// Whether one of `t`'s kinds is among the targets.
pub fn named(t: &ParamTensor, l: &Lora) -> bool {
    t.linear.is_some_and(|kinds| kinds.iter().any(|k| l.targets.contains(k)))
}

/// Whether PEFT adapts a tensor reached as `reach` standing for `kinds` linears.
pub fn reaches(reach: PeftReach, kinds: &[LinearKind], targets: &[LinearKind]) -> bool {
    let named = kinds.iter().any(|k| targets.contains(k));
    match reach {
        PeftReach::Module => named,
        PeftReach::AllLinearModule => all_linear(targets),
        PeftReach::Wrapped { all_linear_only, .. } => all_linear(targets) || (!all_linear_only && named),
        PeftReach::Unreached => false,
    }
}

/// The multiple of the rank of `t`'s adapter (0: PEFT does not adapt it). A fused linear
/// (GPT-2's `c_attn`) is one module, adapted when any kind it stands for is a target; a
/// vision tower's only with `Lora::vision_tower`; a wrapped fused `gate_up_proj` at 2r.
pub fn rank_factor(t: &ParamTensor, l: &Lora) -> u64 {
    if t.scope == Scope::Tower && !l.vision_tower {
        return 0;
    }
    match (reaches(t.peft, t.linear.unwrap_or(&[]), &l.targets), t.peft) {
        (false, _) => 0,
        (true, PeftReach::Wrapped { rank_factor, .. }) => rank_factor,
        (true, _) => 1,
    }
}
