//! Readable names for scenario fields, shared by the planner's controls, the Compare view,
//! the exports and the embed view, so a setting reads the same everywhere
//! (`bf16 mixed (AMP)`, not the serde id `bf16-mixed`).
//!
//! Pure text: no numbers are formatted here (that is [`crate::format`]).

use crate::model::precision::Precision;
use crate::scenario::{Checkpointing, Optimizer};

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
    }
}
