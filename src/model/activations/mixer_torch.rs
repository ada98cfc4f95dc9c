//! What a hybrid's token mixer saves for backward on transformers' torch fallback
//! (`training.mixer_kernels: "torch"`): the path transformers 5.25 takes when neither the
//! hub kernels nor `mamba_ssm` / `causal_conv1d` are installed (each function it calls is
//! wrapped in `use_kernel_func_from_hub_with_fallback`, whose body is the torch code cited
//! below). Mechanism by mechanism from `transformers/models/{mamba,jamba,mamba2,lfm2}/modeling_*.py`;
//! measured on CPU with `saved_tensors_hooks` in `tests/fixtures/measured/mixer_torch.json`
//! (`tests/measure/mixer_torch.py`, `tests/mixer_torch.rs`), fp32 and pure bf16.
//!
//! `x` is the activations' dtype (the model's); the scans work in fp32 where the code upcasts
//! (`A_log.float()`, `hidden_states.float()`), and an upcast of an fp32 tensor is the tensor
//! itself, so several copies exist only in 16-bit runs. Under LoRA the same mechanisms are
//! assumed (the adapters are `mixer.rs`'s); mixed-precision autocast is not measured.

use super::term::Ctx;
use crate::model::arch::Mixer;
use crate::model::dtype::{BOOL, F32};

/// The fallback's saved tensors of one mixer block, apart from `in_proj`'s input (`mixer.rs`).
pub(super) struct TorchMixer {
    /// Width of `out_proj`'s input, which the fallback calls as a module.
    pub out_width: f64,
    /// Width of `x_proj`'s input (Mamba: a contiguous copy of the transposed conv output).
    pub x_proj_width: Option<f64>,
    /// Everything else the mixer keeps, bytes per micro-batch.
    pub saved: f64,
}

/// Whether the torch fallback of `mixer` is modelled (`torch_mixer` returns its terms).
pub fn torch_fallback_modelled(mixer: &Mixer) -> bool {
    matches!(mixer, Mixer::Mamba { heads: None, .. } | Mixer::Mamba2 { gated_norm: true, .. } | Mixer::ShortConv { .. })
}

/// The torch fallback of `mixer`, or `None` where it is not modelled yet (Gated DeltaNet,
/// Zamba's multi-head Mamba, Mamba-2 without its gated norm): the plan then keeps
/// the fused-kernel terms and says so (`model/mixer_notes.rs`).
pub(super) fn torch_mixer(mixer: &Mixer, hidden: f64, c: &Ctx) -> Option<TorchMixer> {
    let (b, s, tok, x) = (c.b, c.s, c.tokens, c.x);
    // A 16-bit run: `.float()` / `.to(torch.float32)` make copies.
    let upcast = x < F32;
    match *mixer {
        Mixer::Mamba { inner, state, conv, dt_rank, dt_norms, heads: None, .. } => {
            let (d, n, r, k) = (inner as f64, state as f64, dt_rank as f64, conv as f64);
            // `MambaMixer.forward` (modeling_mamba.py 562–617; Jamba's `JambaMambaMixer.forward`,
            // modeling_jamba.py 685–727, is the same with its norms): the in_proj output (2d;
            // the conv reads one half, `silu(z)` the other), the conv output before `silu`,
            // padded to s + K − 1 (`causal_conv1d_fn` 81–101), `dt + delta_bias` (softplus
            // input), softplus's output, the conv output after silu (`hidden_states`, read by
            // `* D` and the discretisation), `silu(z)`, and the zero initial state.
            let input_dtype = tok * (2.0 * d + 4.0 * d) + b * d * (s + k - 1.0) + b * d * n;
            // x_proj's output (R + 2N). Mamba: Δ, B and C are views of it, kept by
            // `dt_proj.weight @ time_step` and the scan. Jamba: each of its three RMSNorms keeps
            // its input (fp32: a view of x_proj's output; 16-bit: an fp32 copy), its fp32 rstd
            // and its normalised output (`.to(input_dtype)`, kept by the weight's product);
            // `dt_proj.weight @` keeps the normed Δ (R), the scan the normed C (N) and, in
            // fp32, the normed B (N; in 16-bit its fp32 copy, below).
            let projections = if dt_norms {
                let inputs = if upcast { F32 } else { x } * tok * (r + 2.0 * n);
                inputs + F32 * tok * 3.0 + x * tok * (r + 2.0 * n) + x * tok * (r + n) + if upcast { 0.0 } else { x * tok * n }
            } else {
                x * tok * (r + 2.0 * n)
            };
            // `mamba_selective_scan` (228–334): A = −exp(A_log.float()) (Mamba computes it twice,
            // in `forward` and in `mamba_scan_forward`) and its negation, `discrete_A = exp(A·Δ)`
            // and `discrete_B = Δ·B.float()` (b·d·s·N each, fp32), and the scan output after
            // `+ hidden_states·D.float()` (fp32).
            let a = if dt_norms { 2.0 } else { 3.0 };
            let fp32 = a * d * n + 2.0 * b * d * s * n + tok * d;
            // The sequential loop: each state (fp32) is kept by the next step's
            // `discrete_A[:, :, i] * ssm_state`, and its `.to(input_dtype)` by the matmul with C.
            let states = if upcast { s * b * d * n * x + (s - 1.0) * b * d * n * F32 } else { s * b * d * n * F32 };
            // 16-bit only: `B.float()`, `hidden_states.float()`, `D.float()`.
            let copies = if upcast { F32 * (b * s * n + tok * d + d) } else { 0.0 };
            Some(TorchMixer { out_width: d, x_proj_width: Some(d), saved: x * input_dtype + projections + F32 * fp32 + states + copies })
        }
        Mixer::Mamba2 { inner, heads, head_dim, groups, state, conv, chunk, gated_norm: true, .. } => {
            let (d, hh, p, g, n, k, l) = (inner as f64, heads as f64, head_dim as f64, groups as f64, state as f64, conv as f64, chunk as f64);
            let conv_dim = d + 2.0 * g * n;
            // `pad_size` (modeling_mamba2.py 318): the sequence padded to whole chunks.
            let chunks = (s / l).ceil();
            let sp = chunks * l;
            // `Mamba2Mixer.forward` (654–720): the in_proj output (gate, xBC, dt: the conv and
            // `silu(gate)` read views of it), the conv output before silu (s + K − 1), and in
            // `mamba2_chunk_scan` (288–…) `dt + dt_bias` and softplus's output.
            let input_dtype = tok * (2.0 * d + 2.0 * g * n + hh) + b * conv_dim * (s + k - 1.0) + 2.0 * tok * hh;
            // The clamped Δ read as `dt[..., None].float()` and `dt.float()` (one tensor in fp32,
            // two copies in 16-bit); `hidden_states.float()` (fp32: the whole xBC output).
            let dt_and_x = if upcast { F32 * tok * (2.0 * hh + d) } else { F32 * tok * (hh + conv_dim) };
            // A = −exp(A_log.float()) twice and its negation; `D · pad(hidden)`; the chunked
            // SSD (322–388): L = exp(segment_sum(A)) (b·H·c·L²), G = C·Bᵀ with both operands
            // copied (b·s'·H·N each) and its output (b·c·L²·H), M's copy (b·c·H·L²) and the
            // discretised x (b·s'·d) for Y_diag, decay_states, the chunked B, B_decay's and x's
            // copies for the states, decay_chunk over c + 1 chunks, the concatenated states
            // (b·H·(c+1)·P·N), state_decay_out, C's and the states' copies for C_times_states,
            // and C_times_states (b·s'·d) for Y_off.
            let ssd = 3.0 * hh
                + b * sp * d
                + b * hh * chunks * l * l
                + 2.0 * b * sp * hh * n
                + 2.0 * b * chunks * l * l * hh
                + 2.0 * b * sp * d
                + b * hh * sp
                + 2.0 * b * sp * hh * n
                + b * hh * (chunks + 1.0) * (chunks + 1.0)
                + b * hh * (chunks + 1.0) * p * n
                + b * hh * sp
                + b * sp * hh * n
                + b * chunks * hh * p * n
                + b * sp * d;
            // `segment_sum`'s two boolean tril masks, for the chunk and for the c + 1 chunk ends.
            let masks = BOOL * 2.0 * (l * l + (chunks + 1.0) * (chunks + 1.0));
            // `Mamba2RMSNormGated` (45–59), in fp32: the scan output, `silu(gate)`, their
            // product, the rstd per group, the normalised tensor (kept for the weight's
            // gradient unless frozen); the gate's fp32 copy in 16-bit.
            let normed = if c.frozen_norms { 0.0 } else { tok * d };
            let norm = F32 * (tok * 3.0 * d + normed + tok * g) + if upcast { F32 * tok * d } else { 0.0 };
            Some(TorchMixer { out_width: d, x_proj_width: None, saved: x * input_dtype + dt_and_x + F32 * ssd + masks + norm })
        }
        // `Lfm2ShortConv.forward` (modeling_lfm2.py 399–415): `B * x` keeps the in_proj output
        // (3h; B and x are views), the conv its input B·x (h), and `C * conv` the conv output,
        // a slice of the padded `F.conv1d` result (s + K − 1, `causal_conv1d_fn` 293–313);
        // `out_proj`'s input is the contiguous product (h).
        Mixer::ShortConv { conv, .. } => {
            let (h, k) = (hidden, conv as f64);
            Some(TorchMixer { out_width: h, x_proj_width: None, saved: x * (tok * 4.0 * h + b * h * (s + k - 1.0)) })
        }
        _ => None,
    }
}
