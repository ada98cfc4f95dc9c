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
//! - `CohereLayerNorm` (fp32, no bias): two fp32 x − mean tensors and the fp32 normalised
//!   tensor: 12·R·w + 4·R.

use super::transformer::Ctx;
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
        // Two fp32 x − mean tensors and the fp32 normalised tensor.
        NormKind::CohereLayernorm => 3.0 * F32 * rows * width + stats,
    }
}

/// A block-level norm over the residual stream (one row per token).
pub fn residual_norm(kind: NormKind, c: &Ctx, width: f64) -> f64 {
    norm_saved(kind, c.tokens, width, c.r)
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
