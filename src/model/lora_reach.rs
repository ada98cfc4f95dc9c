//! Which tensors a run's LoRA adapts, and at what rank, as PEFT 0.21 decides on the module
//! tree transformers 5 builds (`arch/moe_peft.rs`, `PeftReach`), and which of them QLoRA's
//! quantizer makes 4-bit.
//!
//! The contract names no targeting form, so `training.lora.targets` stands for both:
//! every kind (the Planner's "all linear layers", the default) is PEFT's
//! `target_modules="all-linear"`; a shorter list is `target_modules` with the family's own
//! module names for those kinds (Llama's `q_proj` … `down_proj`; DeepSeek's `q_a_proj`,
//! `kv_b_proj`, …; Mixtral's experts `w1`, `w3`, `w2`, which PEFT's conversion maps to them).

use super::arch::{LinearKind, ParamTensor, PeftReach, Scope};
use super::inputs::{Lora, Nf4Quantizer};

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

/// Whether a QLoRA run's quantizer makes `t` 4-bit. transformers 5.25's bitsandbytes quantizer
/// quantizes the parameters of `bnb.nn.Linear4bit` modules only
/// (`quantizers/quantizer_bnb_4bit.py` `param_needs_quantization`, lines 83–87), so fused
/// expert parameters keep the load dtype, and PEFT's `prepare_model_for_kbit_training` then
/// casts them to fp32 like every 16-bit parameter that is not a `Params4bit` (measured in
/// `lora_experts.json`, `qlora`). torchao's (torchtune) is left as it was: every linear.
pub fn quantized(t: &ParamTensor, l: &Lora) -> bool {
    t.is_quantized_linear() && !(l.quantizer == Nf4Quantizer::Bitsandbytes && t.is_fused_expert())
}
