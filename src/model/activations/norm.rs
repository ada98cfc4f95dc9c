//! What a norm saves for backward, by implementation, and what the linears that read a
//! norm's output save (one shared tensor, or under autocast one 16-bit copy per linear).
//!
//! Measured op by op in `tests/measure/saved_tensors_report.md` and `parts_report.md`:
//! - `nn.LayerNorm` saves its input and fp32 mean and rstd per row (8 B);
//! - `LlamaRMSNorm` (also T5's) saves an fp32 copy of its input, the fp32 rsqrt per row and
//!   the normalised tensor (16-bit in pure bf16, fp32 otherwise) that the weight multiplies;
//! - `GemmaRMSNorm` and `Olmo2RMSNorm` keep the whole computation in fp32 and cast at the
//!   end: the fp32 input copy, the rsqrt, and the fp32 normalised tensor.

use super::transformer::Ctx;
use crate::model::arch::NormKind;

/// A norm's own saved tensors over `rows` rows of `width` features (not its output).
pub fn norm_saved(kind: NormKind, c: &Ctx, rows: f64, width: f64) -> f64 {
    match kind {
        NormKind::Layernorm | NormKind::LayernormNoBias => c.r * rows * width + 8.0 * rows,
        NormKind::Rmsnorm => 4.0 * rows * width + 4.0 * rows + if c.bf16 { 2.0 } else { 4.0 } * rows * width,
        NormKind::GemmaRmsnorm | NormKind::Olmo2Rmsnorm => 4.0 * rows * width + 4.0 * rows + 4.0 * rows * width,
    }
}

/// A tensor of `width` features read by `consumers` linears: one shared tensor in the
/// residual dtype, or under autocast one 16-bit copy per linear.
pub fn linear_inputs(c: &Ctx, width: f64, consumers: f64) -> f64 {
    if c.mixed {
        consumers * 2.0 * c.tokens * width
    } else {
        c.r * c.tokens * width
    }
}
