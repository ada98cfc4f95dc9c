//! What Zamba v1's multi-head Mamba saves for backward on transformers' torch fallback:
//! `ZambaMambaMixer.forward` (transformers 5.25 `models/zamba/modeling_zamba.py` lines
//! 563–682) with `causal_conv1d_fn`'s and `mamba_selective_scan`'s torch bodies (375–479),
//! the sequential scan run once per Mamba head. Measured on CPU in
//! `tests/fixtures/measured/mixer_torch.json` (`tests/measure/mixer_torch.py`,
//! `tests/mixer_torch.rs`). The per-head terms add up over the heads to the whole d_inner.

use super::mixer_torch_scan::scan_states;
use super::term::Ctx;
use crate::model::dtype::F32;

/// The widths of one multi-head Mamba mixer: d_inner, its heads, N, the conv kernel, Δ's rank.
pub(super) struct ZambaWidths {
    pub inner: f64,
    pub heads: f64,
    pub state: f64,
    pub conv: f64,
    pub dt_rank: f64,
}

/// The fallback's saved bytes of one Zamba Mamba block, apart from `in_proj`'s input and
/// `out_proj`'s (the concatenated heads, d; `mixer.rs`).
pub(super) fn multi_head_mamba(w: &ZambaWidths, c: &Ctx) -> f64 {
    let (b, s, tok, x) = (c.b, c.s, c.tokens, c.x);
    let (d, n, r) = (w.inner, w.state, w.dt_rank);
    let upcast = x < F32;
    // In the model's dtype: the conv's input (a contiguous copy of the in_proj half, 584), its
    // output padded to s + K − 1 (kept by silu), the silu output (kept by `hidden_states *
    // D`), and the batched per-head products (611, 618): `x_proj_weight[:, None] @ conv
    // output` keeps a copy of the conv output and of the weight broadcast over the batch
    // (b·(R + 2N)·d), `dt_proj_weight[:, None] @ Δ` the whole x_proj output (heads·(R + 2N)
    // per token; Δ is a view of it, and the scans read B and C from it) and the weight's
    // broadcast copy (b·d·R). Then per head (`mamba_selective_scan`, 405–479): `dt + bias`
    // and softplus's output (d per token over the heads), the zero initial state (b·d·N), the
    // gate z (a view of the whole in_proj output, 2d, kept by `silu(z)`) and silu's output.
    let heads = w.heads;
    let input_dtype = tok * d
        + b * d * (s + w.conv - 1.0)
        + tok * d
        + tok * d
        + b * (r + 2.0 * n) * d
        + tok * heads * (r + 2.0 * n)
        + b * d * r
        + 2.0 * tok * d
        + b * d * n
        + 2.0 * tok * d
        + tok * d;
    // fp32: A = −exp(A_log.float()) (620) and its negation (d·N each), `discrete_A` and
    // `discrete_B` (b·d·s·N each), and `scan_output + hidden·D` (kept by the gate's product).
    let fp32 = F32 * (2.0 * d * n + 2.0 * b * d * s * n + tok * d);
    // The sequential loop (462–468), as Mamba's.
    let states = scan_states(c, d, n);
    // 16-bit only: `B.float()` per head (b·s·N each), `hidden_states.float()`, `D.float()`
    // (no copy of the fp32 parameter under autocast; the conv's input is then autocast's
    // copy instead of the contiguous one, the same size).
    let copies = if upcast { F32 * (b * s * n * heads + tok * d + if c.mixed { 0.0 } else { d }) } else { 0.0 };
    // With the base frozen (LoRA: `x_proj_weight` and `dt_proj_weight` are bare parameters no
    // adapter reaches), the copy of the conv output kept for `x_proj_weight`'s gradient and
    // exp(A_log) are not kept, nor in 16-bit the silu output that only `hidden_states * D`
    // (472) kept.
    let frozen = if c.lora.is_some() { x * tok * d * if upcast { 2.0 } else { 1.0 } + F32 * d * n } else { 0.0 };
    x * input_dtype + fp32 + states + copies - frozen
}
