//! Readable names for scenario fields, shared by the planner's controls, the Compare view,
//! the exports and the embed view, so a setting reads the same everywhere
//! (`bf16 mixed (AMP)`, not the serde id `bf16-mixed`).
//!
//! Pure text: no numbers are formatted here (that is [`crate::format`]).

use crate::model::precision::Precision;
use crate::scenario::{Checkpointing, Lora, LoraBase, Optimizer};

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
}
