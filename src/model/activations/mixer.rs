//! What a non-attention mixer (`arch/mixer.rs`) saves for backward, per block and
//! micro-batch, on the CUDA path transformers takes when the fused kernels are installed
//! (`mamba_ssm`, `causal_conv1d`, `fla`). Derived from those kernels' `save_for_backward`
//! calls, cited per mixer; the torch fallbacks transformers runs without them (and on CPU)
//! save more, measured in `tests/fixtures/measured/hybrid_activations.json` and compared in
//! `tests/hybrids.rs`.
//!
//! Every mixer also keeps its input projection's input (the block norm's output; one
//! 16-bit copy per projection under autocast) and, where `out_proj` is called as a module
//! (Jamba, Gated DeltaNet, LFM2), its input. Under LoRA the frozen projections keep neither;
//! the adapters PEFT puts on the mixer's linears keep theirs (`lora.rs`: the input, its
//! dropout mask and copy, `lora_A`'s output), except those on linears whose weight the CUDA
//! path reads directly, which never run (`ParamTensor::adapter_bypassed`, `arch/mixer.rs`):
//! Mamba's adapters run on `in_proj` only, Jamba's on all but `dt_proj`, the Mamba-2
//! family's on `in_proj` only. Measured with PEFT on the torch fallbacks, where the same
//! adapters run but Mamba's `x_proj` and `out_proj` and Mamba-2's `out_proj`
//! (`tests/fixtures/measured/mixer_lora.json`, `tests/mixer_lora.rs`).

use super::lora::{adapter_inputs, adapter_intermediates};
use super::mixer_torch::torch_mixer;
use super::norm::linear_inputs;
use super::term::{push, ActTerm, Ctx, Place, Split};
use crate::model::arch::{LinearKind, Mixer, Scope, TransformerArch};
use crate::model::dtype::F32;
use crate::model::inputs::MixerKernels;

/// The tokens per scan chunk whose fp32 intermediates `selective_scan_cuda.fwd` keeps
/// (`csrc/selective_scan/selective_scan.cpp`: `n_chunks = (seqlen + 2048 - 1) / 2048`, `x`
/// of `batch × dim × n_chunks × dstate·2`, fp32).
const SCAN_CHUNK: f64 = 2048.0;

/// Chunk length of `fla`'s gated delta rule (`chunk_gated_delta_rule_fwd`: `chunk_size=64`),
/// the last dimension of the WY matrix `A` it saves.
const FLA_CHUNK: f64 = 64.0;

/// The mixer's saved tensors for one block and micro-batch, in `Scope::Mixer` blocks: the
/// fused kernels' (below), or with `kernels` torch the fallback's (`mixer_torch.rs`).
pub fn mixer_terms(t: &TransformerArch, mixer: &Mixer, kernels: MixerKernels, c: &Ctx, out: &mut Vec<ActTerm>) {
    let place = Place::Block(Scope::Mixer);
    let h = t.hidden as f64;
    let (tok, x) = (c.tokens, c.x);
    let torch = match kernels {
        MixerKernels::Torch => Some(torch_mixer(mixer, h, c)),
        MixerKernels::Fused => None,
    };
    // `out_proj`'s input where the forward calls it as a module, and its width.
    let out_width = match (mixer, &torch) {
        (_, Some(tm)) => Some(tm.out_width),
        (&Mixer::Mamba { inner, dt_norms: true, .. } | &Mixer::Mamba { inner, heads: Some(_), .. }, None) => Some(inner as f64),
        (&Mixer::GatedDeltaNet { value_heads, value_dim, .. }, None) => Some((value_heads * value_dim) as f64),
        (Mixer::ShortConv { .. }, None) => Some(h),
        (Mixer::Mamba { .. } | Mixer::Mamba2 { .. }, None) => None,
    };
    // Mamba's `x_proj` on the torch path: a module call on a contiguous copy of its input.
    let torch_x_proj = torch.as_ref().and_then(|tm| tm.x_proj_width);
    match &c.lora {
        None => {
            push(out, "mixer input projection inputs", linear_inputs(c, h, mixer.input_projections().len() as f64), Split::Sequence, place);
            if let Some(w) = out_width {
                push(out, "mixer output projection input", x * tok * w, Split::Tensor, place);
            }
            if let Some(w) = torch_x_proj {
                push(out, "mixer x_proj input (torch fallback)", x * tok * w, Split::Tensor, place);
            }
        }
        Some(l) => {
            let adapted = |kinds: &[LinearKind]| kinds.iter().filter(|k| l.targets.contains(k)).count() as f64;
            let inputs = adapted(mixer.input_projections());
            push(out, "LoRA adapter inputs (mixer input projections)", adapter_inputs(c, l, h, inputs, false), Split::Sequence, place);
            // Jamba's `x_proj` reads the conv output, which the scan keeps anyway (below).
            let x_proj = match (mixer, torch_x_proj) {
                (_, Some(w)) => Some((w, adapted(&[LinearKind::XProj]), false)),
                (&Mixer::Mamba { inner, dt_norms: true, .. }, None) => Some((inner as f64, adapted(&[LinearKind::XProj]), true)),
                _ => None,
            };
            let outs = out_width.map(|w| (w, adapted(&[LinearKind::MixerOut])));
            let inner = x_proj.map_or(0.0, |(w, n, kept)| adapter_inputs(c, l, w, n, kept)) + outs.map_or(0.0, |(w, n)| adapter_inputs(c, l, w, n, false));
            push(out, "LoRA adapter inputs (mixer inner projections)", inner, Split::Tensor, place);
            let modules = inputs + x_proj.map_or(0.0, |(_, n, _)| n) + outs.map_or(0.0, |(_, n)| n);
            push(out, "LoRA adapter intermediates (mixer)", adapter_intermediates(c, l, modules), Split::Sequence, place);
        }
    }
    if let Some(tm) = torch {
        push(out, "mixer saved tensors (torch fallback)", tm.saved, Split::Tensor, place);
        return;
    }
    push(out, "mixer saved tensors (fused CUDA kernels)", fused_saved(mixer, h, c), Split::Tensor, place);
}

/// What the fused CUDA kernels save for one mixer block and micro-batch (besides the
/// projections' inputs, above).
fn fused_saved(mixer: &Mixer, h: f64, c: &Ctx) -> f64 {
    let (tok, x) = (c.tokens, c.x);
    match *mixer {
        // `MambaInnerFn.forward` (state-spaces/mamba `mamba_ssm/ops/selective_scan_interface.py`,
        // checkpoint_lvl 1: conv1d_out and delta are recomputed in backward) saves xz (2·d),
        // x_dbl (R + 2N), contiguous copies of B and C (N each), the scan output `out` (d) and
        // the fp32 scan intermediates; out_z, the out_proj input, is recomputed.
        Mixer::Mamba { inner, state, dt_rank, dt_norms: false, heads: None, .. } => {
            let (d, n, r) = (inner as f64, state as f64, dt_rank as f64);
            x * tok * (2.0 * d + r + 2.0 * n + 2.0 * n + d) + F32 * c.b * d * (c.s / SCAN_CHUNK).ceil() * 2.0 * n
        }
        // Jamba (`modeling_jamba.py` `JambaMambaMixer.cuda_kernels_forward`) cannot use the
        // fused function (its Δ, B, C norms sit inside): `causal_conv1d_fn` keeps x (a view of
        // the in_proj output, 2·d), `x_proj` its input (the conv output, d), the three RMSNorms
        // their inputs and fp32 statistics (R, N, N), `dt_proj` its input (R),
        // `selective_scan_fn` (`SelectiveScanFn`) Δ (d), B and C (N each), z (a view), the
        // intermediates and its output (d); `out_proj`'s input, the gated output, is above.
        Mixer::Mamba { inner, state, dt_rank, dt_norms: true, .. } => {
            let (d, n, r) = (inner as f64, state as f64, dt_rank as f64);
            x * tok * (2.0 * d + d + (r + 2.0 * n) + r + d + 2.0 * n + d) + F32 * tok * 3.0 + F32 * c.b * d * (c.s / SCAN_CHUNK).ceil() * 2.0 * n
        }
        // Zamba (`modeling_zamba.py` `ZambaMambaMixer.forward`, lines 563–683, with
        // `causal_conv1d` and `mamba_ssm` installed): `CausalConv1dFn` keeps its input (d,
        // made contiguous); the `x_proj_weight @ conv output` product keeps the conv output
        // (d); `dt_proj_weight @ time_step` keeps Δ's rank-R slice of that product's output
        // (its whole storage, heads·(R + 2N)); each head's `SelectiveScanFn` keeps u (the conv
        // output again), Δ (d over the heads), contiguous copies of its B and C (strided
        // slices: 2N per head) and of z (a strided view of the in_proj output: d), the fp32
        // intermediates and its output before the gate (d); `out_proj`'s input, the
        // concatenated gated outputs, is above.
        Mixer::Mamba { inner, state, dt_rank, heads: Some(heads), .. } => {
            let (d, n, r, nh) = (inner as f64, state as f64, dt_rank as f64, heads as f64);
            x * tok * (d + d + nh * (r + 2.0 * n) + d + nh * 2.0 * n + d + d) + F32 * c.b * d * (c.s / SCAN_CHUNK).ceil() * 2.0 * n
        }
        // `MambaSplitConv1dScanCombinedFn.forward` (state-spaces/mamba
        // `mamba_ssm/ops/triton/ssd_combined.py`) saves zxbcdt, the whole in_proj output
        // (2·d + 2·G·N + H), out_x, the scan output before the gated norm (d), and the norm's
        // fp32 rstd per group; the norm output and out_proj's product are recomputed.
        Mixer::Mamba2 { inner, heads, groups, state, gated_norm, .. } => {
            let (d, g, n) = (inner as f64, groups as f64, state as f64);
            let rstd = if gated_norm { F32 * tok * g } else { 0.0 };
            x * tok * (2.0 * d + 2.0 * g * n + heads as f64 + d) + rstd
        }
        // Qwen3-Next / Qwen3.5 (`modeling_qwen3_next.py` `Qwen3NextGatedDeltaNet.forward`) with
        // `causal_conv1d_fn` (`CausalConv1dFn` saves its input, q·k·v: 2K + V), `fla`'s
        // `ChunkGatedDeltaRuleFunction` (fla-org/flash-linear-attention
        // `fla/ops/gated_delta_rule/chunk.py`: the l2-normalised q and k (K each) with their
        // fp32 rstd per head, v made contiguous by `input_guard` (V), the fp32 cumulated gate g
        // and β per value head, and the WY matrix A, 64 per token and value head in the input
        // dtype), the gate's fp32 softplus input and product (2 per value head), fla's
        // `FusedRMSNormGated` (its input V, the gate z V, fp32 rstd per value head);
        // `out_proj`'s input (V) is above. K = Hk·dk, V = Hv·dv.
        Mixer::GatedDeltaNet { key_heads, value_heads, key_dim, value_dim, .. } => {
            let (k, v, hk, hv) = ((key_heads * key_dim) as f64, (value_heads * value_dim) as f64, key_heads as f64, value_heads as f64);
            let conv_input = 2.0 * k + v;
            let kernel = 2.0 * k + v + hv + FLA_CHUNK * hv;
            let norm = 2.0 * v;
            x * tok * (conv_input + kernel + norm) + F32 * tok * (2.0 * hk + hv + 2.0 * hv + hv)
        }
        // LFM2 (`modeling_lfm2.py` `Lfm2ShortConv.forward`): `B * x` keeps both (views of the
        // in_proj output, 3h), the conv keeps its input B·x (h) and `C * conv` the conv output
        // (h); `out_proj`'s input, the contiguous product (h), is above.
        Mixer::ShortConv { .. } => x * tok * (3.0 * h + h + h),
    }
}
