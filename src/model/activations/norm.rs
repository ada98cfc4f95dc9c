//! What a norm saves for backward, by implementation, and what the linears that read a
//! norm's output save (one shared tensor, or under autocast one 16-bit copy per linear).
//!
//! Measured op by op in `tests/measure/saved_tensors_report.md` and `parts_report.md` (§7),
//! per normalised width w over R rows, input dtype i bytes:
//! - `nn.LayerNorm` saves its input and fp32 mean and rstd per row: i·R·w + 8·R;
//! - `LlamaRMSNorm` saves an fp32 copy of its input, the fp32 rsqrt per row and the
//!   normalised tensor cast back to the input dtype: 4·R·w + 4·R + i·R·w;
//! - `T5LayerNorm` multiplies the input itself by the fp32 rsqrt: the fp32 copy (the input
//!   when it is fp32), the rsqrt, the input, and the cast: 4·R·w + 4·R + (i ≠ 4 ? i : 0)·R·w + i·R·w;
//! - `GemmaRMSNorm` keeps the whole norm in fp32 (the `(1 + w)` factor too): 8·R·w + 4·R + 4·w;
//! - `Olmo2RMSNorm` / `GptOssRMSNorm` multiply the weight in fp32: 8·R·w + 4·R;
//! - `Gemma4RMSNorm` the same, but `torch.pow(mean x² + eps, −0.5)` keeps its base and its
//!   result: 8·R·w + 8·R (measured in `gemma4.json`: q/k norms 2 values per element and 2
//!   per row; a weightless one, `v_norm`, 4·R·w + 8·R);
//! - `CohereLayerNorm` (fp32, no bias): two fp32 x − mean tensors and the fp32 normalised
//!   tensor: 12·R·w + 4·R.
//!
//! With a frozen weight (LoRA freezes every base parameter) the product `weight · normalised`
//! saves the normalised tensor only for the weight's gradient: autograd's `mul` keeps `self`
//! for `other`'s gradient only when `other` requires one (`MulBackward0`, derivatives.yaml). Measured
//! on `LlamaRMSNorm` under PEFT LoRA (`lora.json`: 4·R·w + 4·R per norm, no normalised copy);
//! the other kinds follow their Hugging Face code (the weight's operand is the fp32 or cast
//! normalised tensor). `nn.LayerNorm` saves the same either way (`native_layer_norm`).
//!
//! Liger kernels (`liger_kernels`, linkedin/Liger-Kernel at ead96b6; Triton only, so derived from
//! the source and not measured):
//! - `LigerRMSNormFunction` (`src/liger_kernel/ops/rms_norm.py`, lines 436–510 and 648–660) saves
//!   `X` (its input viewed as rows: the residual stream itself), `W` (a parameter) and `RSTD`,
//!   one fp32 per row in the `llama` and `gemma` casting modes that every Liger RMSNorm uses
//!   (`transformers/rms_norm.py`): i·R·w + 4·R, whatever the weight's `requires_grad`;
//! - `LigerLayerNormFunction` (`ops/layer_norm.py`, lines 169–191 and 307–313) saves `X`, `W`,
//!   `B` and `Mean`, `RSTD` in X's dtype: i·R·w + 2·i·R.
//!
//! Liger has no kernel for `T5LayerNorm`, `CohereLayerNorm` or `Gemma4RMSNorm`; those stay eager.

use super::term::Ctx;
use crate::model::arch::NormKind;
use crate::model::dtype::{F32, HALF};

/// A norm's own saved tensors over `rows` rows of `width` features whose input has
/// `input_bytes` per element (not its output).
pub fn norm_saved(kind: NormKind, rows: f64, width: f64, input_bytes: f64) -> f64 {
    // One fp32 statistic (rsqrt) per row.
    let stats = F32 * rows;
    match kind {
        // Input, fp32 mean and rstd.
        NormKind::Layernorm => input_bytes * rows * width + 2.0 * F32 * rows,
        // fp32 copy of the input, rsqrt, normalised tensor in the input dtype.
        NormKind::Rmsnorm => F32 * rows * width + stats + input_bytes * rows * width,
        NormKind::T5Layernorm => {
            let input = if input_bytes == F32 { 0.0 } else { input_bytes };
            F32 * rows * width + stats + (input + input_bytes) * rows * width
        }
        // fp32 copy and fp32 normalised tensor, rsqrt, and the fp32 (1 + w).
        NormKind::GemmaRmsnorm => 2.0 * F32 * rows * width + stats + F32 * width,
        NormKind::RmsnormFp32Weight => 2.0 * F32 * rows * width + stats,
        NormKind::RmsnormPow => 2.0 * F32 * rows * width + 2.0 * stats,
        // Two fp32 x − mean tensors and the fp32 normalised tensor.
        NormKind::CohereLayernorm => 3.0 * F32 * rows * width + stats,
    }
}

/// The part of [`norm_saved`] kept only for the weight's gradient: the normalised tensor the
/// weight multiplies (gone when the weight is frozen).
pub(super) fn weight_operand(kind: NormKind, rows: f64, width: f64, input_bytes: f64) -> f64 {
    match kind {
        NormKind::Layernorm => 0.0,
        NormKind::Rmsnorm | NormKind::T5Layernorm => input_bytes * rows * width,
        NormKind::GemmaRmsnorm | NormKind::RmsnormFp32Weight | NormKind::RmsnormPow | NormKind::CohereLayernorm => F32 * rows * width,
    }
}

/// What Liger's norm Function saves, for the kinds Liger has a kernel for.
fn liger_norm_saved(kind: NormKind, rows: f64, width: f64, input_bytes: f64) -> Option<f64> {
    match kind {
        NormKind::Rmsnorm | NormKind::GemmaRmsnorm | NormKind::RmsnormFp32Weight => Some(input_bytes * rows * width + F32 * rows),
        NormKind::Layernorm => Some(input_bytes * rows * width + 2.0 * input_bytes * rows),
        NormKind::T5Layernorm | NormKind::CohereLayernorm | NormKind::RmsnormPow => None,
    }
}

/// A norm as this run computes it: Liger's kernel (block norms only), and without the weight's
/// operand when the weight is frozen.
pub fn norm_in_run(kind: NormKind, c: &Ctx, rows: f64, width: f64, input_bytes: f64, liger: bool) -> f64 {
    if liger && c.liger {
        if let Some(bytes) = liger_norm_saved(kind, rows, width, input_bytes) {
            return bytes;
        }
    }
    let eager = norm_saved(kind, rows, width, input_bytes);
    if c.frozen_norms {
        eager - weight_operand(kind, rows, width, input_bytes)
    } else {
        eager
    }
}

/// A block-level norm over the residual stream (one row per token).
pub fn residual_norm(kind: NormKind, c: &Ctx, width: f64) -> f64 {
    norm_in_run(kind, c, c.tokens, width, c.r, true)
}

/// A tensor of `width` features read by `consumers` linears: one shared tensor in the
/// residual dtype, or under autocast one 16-bit copy per linear.
pub fn linear_inputs(c: &Ctx, width: f64, consumers: f64) -> f64 {
    if c.mixed {
        consumers * HALF * c.tokens * width
    } else {
        c.r * c.tokens * width
    }
}
