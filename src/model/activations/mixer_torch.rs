//! What a hybrid's token mixer saves for backward on transformers' torch fallback
//! (`training.mixer_kernels: "torch"`): the path transformers 5.25 takes when neither the
//! hub kernels nor `mamba_ssm` / `causal_conv1d` are installed (each function it calls is
//! wrapped in `use_kernel_func_from_hub_with_fallback`, whose body is the torch code cited
//! below). Mechanism by mechanism from `transformers/models/{mamba,jamba,mamba2,falcon_h1,lfm2}/modeling_*.py`
//! here, Zamba's and Gated DeltaNet's in their own files; measured on CPU with `saved_tensors_hooks` in `tests/fixtures/measured/mixer_torch.json`
//! (`tests/measure/mixer_torch.py`, `tests/mixer_torch.rs`), fp32 and pure bf16.
//!
//! `x` is the activations' dtype (the model's); the scans work in fp32 where the code upcasts
//! (`A_log.float()`, `hidden_states.float()`), and an upcast of an fp32 tensor is the tensor
//! itself, so several copies exist only in 16-bit runs. Under LoRA the base and the mixers'
//! own parameters (`A_log`, `D`, the norms' weights) are frozen, so the tensors kept only for
//! their gradients go (measured with PEFT in `mixer_torch_lora.json`; the adapters are
//! `mixer.rs`'s). Under autocast (measured with bf16 on CPU, whose autocast lists matmul, bmm
//! and conv1d as CUDA's does) the Mamba family's conv reads autocast's 16-bit copy, the SSD's
//! einsums and the delta rule's matmuls keep 16-bit copies of their operands, and Falcon-H1's
//! fp32 `mup_vector` keeps its projection fp32.
//!
//! Tensors saved only by a branch the forward drops (an `A` computed for the fused call the
//! fallback never reads, Gated DeltaNet's last state update) are freed with that branch when
//! the forward returns and are not counted; the measurement separates them
//! (`*_unreachable_bytes`).

use super::mixer_torch_delta::{gated_delta_net, DeltaWidths};
use super::mixer_torch_scan::scan_states;
use super::mixer_torch_zamba::{multi_head_mamba, ZambaWidths};
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

/// The torch fallback's saved tensors of one `mixer` block: Mamba's and Jamba's here, Zamba's
/// multi-head Mamba in `mixer_torch_zamba.rs`, the Mamba-2 family's chunked SSD here, Gated
/// DeltaNet's chunked delta rule in `mixer_torch_delta.rs`, LFM2's short conv here.
pub(super) fn torch_mixer(mixer: &Mixer, hidden: f64, c: &Ctx) -> TorchMixer {
    let f = |v: u64| v as f64;
    match *mixer {
        Mixer::Mamba { inner, state, conv, dt_rank, dt_norms, heads: None, .. } => mamba(f(inner), f(state), f(conv), f(dt_rank), dt_norms, c),
        Mixer::Mamba { inner, state, conv, dt_rank, heads: Some(heads), .. } => {
            let saved = multi_head_mamba(&ZambaWidths { inner: f(inner), heads: f(heads), state: f(state), conv: f(conv), dt_rank: f(dt_rank) }, c);
            TorchMixer { out_width: f(inner), x_proj_width: None, saved }
        }
        Mixer::Mamba2 { inner, heads, head_dim, groups, state, conv, chunk, gated_norm, fp32_projection_scale, .. } => {
            let w = SsdWidths { inner: f(inner), heads: f(heads), head_dim: f(head_dim), groups: f(groups), state: f(state), conv: f(conv), chunk: f(chunk) };
            ssd(&w, gated_norm, fp32_projection_scale, c)
        }
        Mixer::GatedDeltaNet { key_heads, value_heads, key_dim, value_dim, conv, .. } => {
            let saved = gated_delta_net(&DeltaWidths { key_heads: f(key_heads), value_heads: f(value_heads), key_dim: f(key_dim), value_dim: f(value_dim), conv: f(conv) }, c);
            TorchMixer { out_width: f(value_heads * value_dim), x_proj_width: None, saved }
        }
        // `Lfm2ShortConv.forward` (modeling_lfm2.py 399–415): `B * x` keeps the in_proj output
        // (3h; B and x are views), the conv its input B·x (h), and `C * conv` the conv output,
        // a slice of the padded `F.conv1d` result (s + K − 1, `causal_conv1d_fn` 293–313);
        // `out_proj`'s input is the contiguous product (h).
        Mixer::ShortConv { conv, .. } => {
            let (h, k) = (hidden, f(conv));
            TorchMixer { out_width: h, x_proj_width: None, saved: c.x * (c.tokens * 4.0 * h + c.b * h * (c.s + k - 1.0)) }
        }
    }
}

/// Mamba's and Jamba's mixer (with Jamba's Δ, B, C norms: `dt_norms`) of d_inner `d`, state
/// `n`, conv kernel `k` and Δ's rank `r`.
fn mamba(d: f64, n: f64, k: f64, r: f64, dt_norms: bool, c: &Ctx) -> TorchMixer {
    let (b, s, tok, x) = (c.b, c.s, c.tokens, c.x);
    // A 16-bit run: `.float()` / `.to(torch.float32)` make copies.
    let upcast = x < F32;
    // `MambaMixer.forward` (modeling_mamba.py 562–617; Jamba's `JambaMambaMixer.forward`,
    // modeling_jamba.py 685–727, is the same with its norms): the in_proj output (2d;
    // the conv reads one half, `silu(z)` the other), the conv output before `silu`,
    // padded to s + K − 1 (`causal_conv1d_fn` 81–101), `dt + delta_bias` (softplus
    // input), softplus's output, the conv output after silu (`hidden_states`, read by
    // `* D` and the discretisation), `silu(z)`, and the zero initial state.
    // Under autocast the conv reads its own 16-bit copy of its half (`causal_conv1d_fn`'s
    // `.to(weight.dtype)` is fp32, which autocast's conv1d casts back).
    let conv_copy = if c.mixed { tok * d } else { 0.0 };
    let input_dtype = tok * (2.0 * d + 4.0 * d) + b * d * (s + k - 1.0) + b * d * n + conv_copy;
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
    // `mamba_selective_scan` (228–334): A = −exp(A_log.float()) and its negation,
    // `discrete_A = exp(A·Δ)` and `discrete_B = Δ·B.float()` (b·d·s·N each, fp32), and
    // the scan output after `+ hidden_states·D.float()` (fp32). Mamba's `forward` also
    // computes A for the fused call (modeling_mamba.py 574), which the fallback never
    // reads: freed when the forward returns, not counted.
    let fp32 = 2.0 * d * n + 2.0 * b * d * s * n + tok * d;
    let states = scan_states(c, d, n);
    // 16-bit only: `B.float()`, `hidden_states.float()`, `D.float()` (no copy of the fp32
    // parameter under autocast).
    let copies = if upcast { F32 * (b * s * n + tok * d + if c.mixed { 0.0 } else { d }) } else { 0.0 };
    let saved = x * input_dtype + projections + F32 * fp32 + states + copies;
    // With the base frozen (LoRA), `A_log`, `D`, the norms' and `dt_proj`'s weights want no
    // gradient: exp(A_log) (268) is not kept, nor in 16-bit the silu output that only
    // `hidden_states * D` (325) kept (fp32 keeps it as the discretisation's `.float()`),
    // nor Jamba's normalised Δ, B, C before their weights and the normed Δ `dt_proj` reads
    // (modeling_jamba.py 720–729).
    let frozen = if c.lora.is_some() {
        let jamba = if dt_norms { x * tok * (2.0 * r + 2.0 * n) } else { 0.0 };
        F32 * d * n + if upcast { x * tok * d } else { 0.0 } + jamba
    } else {
        0.0
    };
    TorchMixer { out_width: d, x_proj_width: Some(d), saved: saved - frozen }
}

/// The widths of one Mamba-2 mixer: d_inner, H heads of P, G groups, N, the conv kernel K and
/// the chunk length L.
struct SsdWidths {
    inner: f64,
    heads: f64,
    head_dim: f64,
    groups: f64,
    state: f64,
    conv: f64,
    chunk: f64,
}

/// The Mamba-2 family's chunked SSD (Mamba-2, Nemotron-H, Bamba, Falcon-H1, Granite-4.0-H,
/// Zamba2), with or without its gated RMSNorm; `fp32_scale`: Falcon-H1's fp32 `mup_vector`
/// on the in_proj output.
fn ssd(w: &SsdWidths, gated_norm: bool, fp32_scale: bool, c: &Ctx) -> TorchMixer {
    let (b, s, tok, x) = (c.b, c.s, c.tokens, c.x);
    let upcast = x < F32;
    // Under autocast Falcon-H1's `projected_states * self.mup_vector` (modeling_falcon_h1.py
    // 871) is fp32: Δ, xBC after the conv (`causal_conv1d_fn` returns the input's dtype) and
    // the gate are fp32, and `.float()` copies nothing; the product keeps no operand (the
    // buffer wants no gradient), but the gate's reader keeps the whole fp32 projection.
    let p32 = c.mixed && fp32_scale;
    let projected = if p32 { F32 * tok * (2.0 * w.inner + 2.0 * w.groups * w.state + w.heads) } else { 0.0 };
    let (d, hh, p, g, n, k, l) = (w.inner, w.heads, w.head_dim, w.groups, w.state, w.conv, w.chunk);
    let conv_dim = d + 2.0 * g * n;
    // `pad_size` (modeling_mamba2.py 318): the sequence padded to whole chunks.
    let chunks = (s / l).ceil();
    let sp = chunks * l;
    // `Mamba2Mixer.forward` (654–720): the in_proj output (gate, xBC, dt: the conv and
    // `silu(gate)` read views of it; under autocast the conv reads its own 16-bit copy of
    // xBC, `causal_conv1d_fn`'s `.to(weight.dtype)` being fp32), the conv output before silu
    // (s + K − 1), and in `mamba2_chunk_scan` (288–…) `dt + dt_bias` and softplus's output.
    let conv_input = if c.mixed { tok * conv_dim } else { tok * (2.0 * d + 2.0 * g * n + hh) };
    let (dt_x, dt_f32) = if p32 { (0.0, F32 * 2.0 * tok * hh) } else { (2.0 * tok * hh, 0.0) };
    let input_dtype = conv_input + b * conv_dim * (s + k - 1.0) + dt_x;
    // The clamped Δ read as `dt[..., None].float()` and `dt.float()` (one tensor in fp32,
    // two copies in 16-bit); `hidden_states.float()` (fp32: the whole xBC output).
    let dt_and_x = if upcast && !p32 { F32 * tok * (2.0 * hh + d) } else { F32 * tok * (hh + conv_dim) } + dt_f32 + projected;
    // The chunked SSD (322–388), its elementwise tensors in fp32: A = −exp(A_log.float()) and
    // its negation (`forward`'s own A, 667, for the fused call, is never read on this path
    // and is freed); `D · pad(hidden)`; L = exp(segment_sum(A)) (b·H·c·L²); decay_states;
    // the chunked B (kept by B_decay's product); decay_chunk over c + 1 chunks;
    // state_decay_out.
    let elementwise = 2.0 * hh + b * sp * d + b * hh * chunks * l * l + b * hh * sp + b * sp * hh * n + b * hh * (chunks + 1.0) * (chunks + 1.0) + b * hh * sp;
    // Its einsums' operands and outputs, in fp32, or under autocast in 16 bits (the bmm's
    // casts): G = C·Bᵀ with both operands copied (b·s'·H·N each) and its output (b·c·L²·H),
    // M's copy (b·c·H·L²) and the discretised x (b·s'·d) for Y_diag, B_decay's and x's
    // copies for the states, the concatenated states (b·H·(c+1)·P·N) and, under autocast,
    // decay_chunk's copy, C's and the states' copies for C_times_states, and C_times_states
    // (b·s'·d) for Y_off.
    let einsums = 2.0 * b * sp * hh * n
        + 2.0 * b * chunks * l * l * hh
        + 2.0 * b * sp * d
        + b * sp * hh * n
        + b * hh * (chunks + 1.0) * p * n
        + if c.mixed { b * hh * (chunks + 1.0) * (chunks + 1.0) } else { 0.0 }
        + b * sp * hh * n
        + b * chunks * hh * p * n
        + b * sp * d;
    let ssd = F32 * elementwise + if c.mixed { x } else { F32 } * einsums;
    // `segment_sum`'s two boolean tril masks, for the chunk and for the c + 1 chunk ends.
    let masks = BOOL * 2.0 * (l * l + (chunks + 1.0) * (chunks + 1.0));
    // `Mamba2RMSNormGated` (45–59), in fp32: the scan output, `silu(gate)`, their
    // product, the rstd per group, the normalised tensor (kept for the weight's
    // gradient unless frozen); the gate's fp32 copy in 16-bit.
    let normed = if c.frozen_norms { 0.0 } else { tok * d };
    let norm = if gated_norm {
        F32 * (tok * 3.0 * d + normed + tok * g) + if upcast && !p32 { F32 * tok * d } else { 0.0 }
    } else {
        // Falcon-H1 without `mamba_rms_norm` (modeling_falcon_h1.py 927–930):
        // `scan_output * silu(gate)` keeps the fp32 scan output and silu's output in
        // the gate's dtype (silu keeps its input, a view of the in_proj output).
        F32 * tok * d + if p32 { F32 } else { x } * tok * d
    };
    // With the base frozen (LoRA), `A_log` and `D` want no gradient: exp(A_log) and
    // `D · pad(hidden)`'s operand (320) are not kept, nor in 16-bit the Δ copy that only
    // `A · dt.float()` (324) kept.
    let frozen = if c.lora.is_some() { F32 * (hh + b * sp * d) + if upcast && !p32 { F32 * tok * hh } else { 0.0 } } else { 0.0 };
    TorchMixer { out_width: d, x_proj_width: None, saved: x * input_dtype + dt_and_x + ssd + masks + norm - frozen }
}
