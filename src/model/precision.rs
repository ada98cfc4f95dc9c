//! Numeric precision of a training run: which dtype the weights, gradients, optimizer
//! states and saved activations use.
//!
//! This module only names the modes and their byte widths; how the bytes add up per
//! component lives in `states.rs` (weights, gradients, optimizer) and `activations/`.

use serde::{Deserialize, Serialize};

use super::dtype::Dtype;

/// How a run stores its numbers.
///
/// The mixed modes follow PyTorch automatic mixed precision (`torch.autocast`) when ZeRO
/// is off: the fp32 weights are the master copy and autocast makes 16-bit (or 8-bit)
/// copies for the matmuls. With ZeRO or FSDP they follow DeepSpeed / the ZeRO paper
/// (Rajbhandari et al. 2020, §3.1): 16-bit weights and gradients plus an fp32 master
/// copy held with the optimizer states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Everything in fp32.
    Fp32,
    /// fp16 autocast with fp32 master weights (and loss scaling).
    Fp16Mixed,
    /// bf16 autocast with fp32 master weights.
    #[default]
    Bf16Mixed,
    /// Pure bf16: weights, gradients and optimizer states all bf16 (`model.to(torch.bfloat16)`).
    Bf16,
    /// FP8 matmuls (Transformer Engine style) with bf16 activations and fp32 master weights.
    Fp8Mixed,
}

impl Precision {
    pub const ALL: [Precision; 5] = [Precision::Fp32, Precision::Fp16Mixed, Precision::Bf16Mixed, Precision::Bf16, Precision::Fp8Mixed];

    /// Kebab-case id, as written in scenarios.
    pub fn id(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16Mixed => "fp16-mixed",
            Precision::Bf16Mixed => "bf16-mixed",
            Precision::Bf16 => "bf16",
            Precision::Fp8Mixed => "fp8-mixed",
        }
    }

    /// True for the autocast-style modes that keep an fp32 master copy.
    pub fn is_mixed(self) -> bool {
        matches!(self, Precision::Fp16Mixed | Precision::Bf16Mixed | Precision::Fp8Mixed)
    }

    /// The dtype of an activation as autocast produces it (matmul outputs).
    pub fn activation_dtype(self) -> Dtype {
        match self {
            Precision::Fp32 => Dtype::F32,
            _ => Dtype::Bf16,
        }
    }

    /// Bytes of one activation element.
    pub fn activation_bytes(self) -> u64 {
        self.activation_dtype().bytes() as u64
    }

    /// Bytes of the copy of a weight that a matmul actually reads: the autocast cast
    /// (bf16), an FP8 cast, or the weight itself.
    pub fn matmul_weight_bytes(self) -> u64 {
        match self {
            Precision::Fp32 => Dtype::F32,
            Precision::Fp8Mixed => Dtype::Fp8,
            _ => Dtype::Bf16,
        }
        .bytes() as u64
    }

    /// Bytes per element of the weights as stored between steps when ZeRO is off:
    /// fp32 for fp32 and the autocast modes (the weights are the master copy), bf16 for pure bf16.
    pub fn stored_weight_bytes(self) -> u64 {
        match self {
            Precision::Bf16 => Dtype::Bf16,
            _ => Dtype::F32,
        }
        .bytes() as u64
    }

    /// Bytes per element of the optimizer states: fp32, except in pure bf16, where
    /// `torch.optim` creates its states with `zeros_like(param)` (bf16).
    pub fn optimizer_state_bytes(self) -> u64 {
        match self {
            Precision::Bf16 => Dtype::Bf16,
            _ => Dtype::F32,
        }
        .bytes() as u64
    }
}
