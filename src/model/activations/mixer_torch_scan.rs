//! The states of Mamba's sequential selective scan on transformers' torch fallback
//! (`mamba_selective_scan`), shared by Mamba's and Jamba's mixers (`mixer_torch.rs`) and
//! Zamba's multi-head one (`mixer_torch_zamba.rs`).

use super::term::Ctx;
use crate::model::dtype::F32;

/// The sequential scan's states over s steps (Mamba's and Zamba's `mamba_selective_scan`,
/// modeling_mamba.py 315–321, modeling_zamba.py 462–468): each state (fp32) is kept by the next step's
/// `discrete_A[:, :, i] * ssm_state`, and its `.to(input_dtype)` by the matmul with C (in
/// fp32 the state itself; in 16-bit the last fp32 state is read by nothing that keeps it).
pub(super) fn scan_states(c: &Ctx, d: f64, n: f64) -> f64 {
    let (b, s, x) = (c.b, c.s, c.x);
    if x < F32 {
        s * b * d * n * x + (s - 1.0) * b * d * n * F32
    } else {
        s * b * d * n * F32
    }
}
