//! Readable names for scenario fields, shared by the planner's controls, the Compare view,
//! the exports and the embed view, so a setting reads the same everywhere
//! (`bf16 mixed (AMP)`, not the serde id `bf16-mixed`; `Llama 3 8B`, not the Hub id;
//! `H100 SXM 80GB`, not `h100-sxm-80gb`).
//!
//! Pure text: no sizes or times are formatted here (that is [`crate::format`]).

use crate::import::presets::model_preset;
use crate::model::precision::Precision;
use crate::scenario::{Checkpointing, DeviceSpec, Lora, LoraBase, ModelSpec, Offload, Optimizer, Parallel, Zero};

/// The name of a precision mode.
pub fn precision_label(p: Precision) -> &'static str {
    match p {
        Precision::Fp32 => "fp32",
        Precision::Fp16Mixed => "fp16 mixed (AMP)",
        Precision::Bf16Mixed => "bf16 mixed (AMP)",
        Precision::Bf16 => "pure bf16",
        Precision::Fp8Mixed => "FP8 mixed (Transformer Engine)",
    }
}

/// The name of an optimizer.
pub fn optimizer_label(o: Optimizer) -> &'static str {
    match o {
        Optimizer::Adamw => "AdamW",
        Optimizer::Adam => "Adam",
        Optimizer::Sgd => "SGD",
        Optimizer::SgdMomentum => "SGD with momentum",
        Optimizer::Adamw8bit => "AdamW 8-bit (bitsandbytes)",
        Optimizer::Adafactor => "Adafactor",
        Optimizer::Lion => "Lion",
        Optimizer::PagedAdamw => "Paged AdamW (bitsandbytes)",
        Optimizer::PagedAdamw8bit => "Paged AdamW 8-bit (bitsandbytes)",
    }
}

/// Activation checkpointing modes and their names, in menu order.
pub const CHECKPOINTING: [(Checkpointing, &str); 3] =
    [(Checkpointing::None, "none"), (Checkpointing::Selective, "selective (attention core)"), (Checkpointing::Full, "full (every block)")];

/// The name of an activation checkpointing mode.
pub fn checkpointing_label(c: Checkpointing) -> &'static str {
    CHECKPOINTING.iter().find(|(x, _)| *x == c).map_or("none", |(_, label)| label)
}

/// Fine-tuning choices for a menu, as `(id, name)`: every weight trained, LoRA adapters on
/// 16-bit base weights, or QLoRA (4-bit NF4 base weights).
pub const FINE_TUNING: [(&str, &str); 3] = [("full", "full (all weights)"), ("lora", "LoRA"), ("qlora", "QLoRA (4-bit base)")];

/// The [`FINE_TUNING`] id of a scenario's adapters.
pub fn fine_tuning_id(lora: Option<&Lora>) -> &'static str {
    match lora.map(|l| l.base) {
        None => "full",
        Some(LoraBase::Bf16) => "lora",
        Some(LoraBase::Nf4) => "qlora",
    }
}

/// The adapters after choosing the [`FINE_TUNING`] entry `id`, keeping the rank and targets
/// of `current`; `None` (no change) for an unknown id.
pub fn with_fine_tuning(current: Option<&Lora>, id: &str) -> Option<Option<Lora>> {
    let base = match id {
        "full" => return Some(None),
        "lora" => LoraBase::Bf16,
        "qlora" => LoraBase::Nf4,
        _ => return None,
    };
    Some(Some(Lora { base, ..current.cloned().unwrap_or_default() }))
}

/// `full fine-tuning`, `LoRA r16`, `QLoRA r64`.
pub fn fine_tuning_label(lora: Option<&Lora>) -> String {
    match lora {
        None => "full fine-tuning".into(),
        Some(l) if l.base == LoraBase::Nf4 => format!("QLoRA r{}", l.rank),
        Some(l) => format!("LoRA r{}", l.rank),
    }
}

/// The model's display name (`Llama 3 8B`); for a pasted or custom model, its
/// [`ModelSpec::label`]; an unknown preset id as written.
/// User text in it (an unknown id) is clipped and its control characters escaped
/// ([`crate::safe_text::quoted`]), so a title in Markdown or a terminal stays one short line.
pub fn model_name(model: &ModelSpec) -> String {
    match model {
        ModelSpec::Preset(id) => model_preset(id).map_or_else(|| crate::safe_text::quoted(id), |p| p.name.to_string()),
        other => other.label(),
    }
}

/// The GPU's name (`H100 SXM 80GB`), marked `(modified)` when the scenario overrides any of
/// its figures; an unknown device is named as such.
pub fn device_name(device: &DeviceSpec) -> String {
    match device.resolve() {
        Ok(d) => {
            let modified = device.preset.is_some() && [device.capacity_bytes, device.hbm_bandwidth, device.host_link_bandwidth, device.bf16_tflops].iter().any(Option::is_some);
            if modified {
                format!("{} (modified)", d.name)
            } else {
                d.name
            }
        }
        Err(_) => format!("unknown device \"{}\"", device.preset.as_deref().unwrap_or("custom")),
    }
}

/// The parallel layout in one line: `dp 8 · tp 2 + SP · pp 1 · ZeRO-3`; context and expert
/// parallelism and offloading only when used.
pub fn layout_label(p: &Parallel) -> String {
    let mut parts = vec![format!("dp {}", p.dp), format!("tp {}{}", p.tp, if p.sp && p.tp > 1 { " + SP" } else { "" }), format!("pp {}", p.pp)];
    if p.cp > 1 {
        parts.push(format!("cp {}", p.cp));
    }
    if p.ep > 1 {
        parts.push(format!("ep {}", p.ep));
    }
    parts.push(if p.zero == Zero::Off { "no ZeRO".into() } else { format!("ZeRO-{}", p.zero) });
    match p.offload {
        Offload::None => {}
        Offload::Optimizer => parts.push("optimizer offloaded".into()),
        Offload::OptimizerAndParams => parts.push("optimizer and parameters offloaded".into()),
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mode has its own name, and none is the raw serde id of a mixed mode.
    #[test]
    fn labels_are_distinct_and_readable() {
        let precisions: std::collections::HashSet<_> = Precision::ALL.iter().map(|&p| precision_label(p)).collect();
        assert_eq!(precisions.len(), Precision::ALL.len());
        assert_eq!(precision_label(Precision::Bf16Mixed), "bf16 mixed (AMP)");
        let optimizers: std::collections::HashSet<_> = Optimizer::ALL.iter().map(|&o| optimizer_label(o)).collect();
        assert_eq!(optimizers.len(), Optimizer::ALL.len());
        assert_eq!(CHECKPOINTING.map(|(c, _)| c), [Checkpointing::None, Checkpointing::Selective, Checkpointing::Full]);
        assert_eq!(checkpointing_label(Checkpointing::Full), "full (every block)");
    }

    /// Each menu entry maps to adapters whose id is that entry; the rank survives a switch
    /// between LoRA and QLoRA; an unknown id changes nothing.
    #[test]
    fn fine_tuning_menu_round_trips() {
        for (id, _) in FINE_TUNING {
            let lora = with_fine_tuning(None, id).expect("known id");
            assert_eq!(fine_tuning_id(lora.as_ref()), id);
        }
        let lora = Lora { rank: 64, ..Lora::default() };
        let q = with_fine_tuning(Some(&lora), "qlora").expect("known id").expect("adapters");
        assert_eq!((q.rank, q.base), (64, LoraBase::Nf4));
        assert_eq!(fine_tuning_label(Some(&q)), "QLoRA r64");
        assert_eq!(fine_tuning_label(None), "full fine-tuning");
        assert_eq!(with_fine_tuning(Some(&lora), "bogus"), None);
    }

    #[test]
    fn model_device_and_layout_read_as_people_name_them() {
        assert_eq!(model_name(&ModelSpec::default()), "Llama 3 8B");
        assert_eq!(model_name(&ModelSpec::Preset("gpt2".into())), "GPT-2 (124M)");
        assert_eq!(model_name(&ModelSpec::Preset("no-such-model".into())), "no-such-model");
        assert_eq!(device_name(&DeviceSpec::default()), "H100 SXM 80GB");
        let modified = DeviceSpec { capacity_bytes: Some(40e9), ..DeviceSpec::default() };
        assert_eq!(device_name(&modified), "H100 SXM 80GB (modified)");
        assert_eq!(device_name(&DeviceSpec::preset("h900")), "unknown device \"h900\"");
        assert_eq!(layout_label(&Parallel::default()), "dp 1 · tp 1 · pp 1 · no ZeRO");
        let p = Parallel { dp: 8, tp: 2, sp: true, cp: 2, ep: 4, zero: Zero::Parameters, offload: Offload::Optimizer, ..Parallel::default() };
        assert_eq!(layout_label(&p), "dp 8 · tp 2 + SP · pp 1 · cp 2 · ep 4 · ZeRO-3 · optimizer offloaded");
    }
}
