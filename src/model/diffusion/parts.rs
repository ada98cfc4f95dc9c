//! The pipeline parts' run-dependent functions (each denoiser's `saved`, `backward`,
//! `forward_peak` and `forward_flops`, each VAE's encode and decode peaks: the op-by-op walks
//! of the denoisers and VAEs) behind one table of function pointers, so the page's
//! first download does not carry them.
//!
//! On the page the table is built by [`Parts::all`] inside the `diffusion` WASM chunk
//! (`src/ui/diffusion_parts.rs`, a `#[wasm_split]` function) and handed over with
//! [`install`] when a pipeline is first chosen, linked or pasted: the linker then finds the
//! walks reachable from that chunk alone and `wasm-split-cli` moves them out of the main
//! module (`docs/wasm-size.md`, "Diffusion out of the main module"). Until it has arrived,
//! [`missing`] makes `Scenario::validate` refuse a pipeline with a message, so the page keeps
//! the previous plan and the estimate never reaches an empty table. Natively (the CLI, the
//! tests) the table is built on first use: nothing to install, the numbers are the same.

use std::sync::OnceLock;

use super::backward_walk::Walk;
use super::pipeline::{Denoiser, Vae};
use super::{Run, Saved};
use crate::error::InputError;

/// The run-dependent functions of every denoiser and VAE.
#[derive(Clone, Copy)]
pub struct Parts {
    saved: fn(&Denoiser, &Run) -> Vec<Saved>,
    backward: fn(&Denoiser, &Run) -> Walk,
    forward_peak: fn(&Denoiser, &Run) -> f64,
    forward_flops: fn(&Denoiser, &Run) -> f64,
    encode_peak: fn(&Vae, &Run, bool) -> f64,
    decode_peak: fn(&Vae, &Run, bool) -> f64,
}

impl Parts {
    /// The real functions. Called only by the page's `diffusion` chunk and, natively, by
    /// [`get`] (never from the main module on `wasm32`, which is what keeps them out of it).
    pub fn all() -> Parts {
        Parts {
            saved: |d, run| match d {
                Denoiser::Unet(u) => u.saved(run),
                Denoiser::Dit(x) => x.saved(run),
                Denoiser::Experts { high, .. } => high.saved(run),
            },
            backward: |d, run| match d {
                Denoiser::Unet(u) => u.backward(run),
                Denoiser::Dit(x) => x.backward(run),
                // Both experts have one shape (Wan 2.2 A14B); the step is planned as the
                // high-noise expert's, as `saved` is.
                Denoiser::Experts { high, .. } => high.backward(run),
            },
            forward_peak: |d, run| match d {
                Denoiser::Unet(u) => u.forward_peak(run),
                Denoiser::Dit(x) => x.forward_peak(run),
                Denoiser::Experts { high, low, .. } => high.forward_peak(run).max(low.forward_peak(run)),
            },
            forward_flops: |d, run| match d {
                Denoiser::Unet(u) => u.forward_flops(run),
                Denoiser::Dit(x) => x.forward_flops(run),
                Denoiser::Experts { high, low, .. } => high.forward_flops(run).max(low.forward_flops(run)),
            },
            encode_peak: |v, run, tiled| match v {
                Vae::Kl(k) => k.encode_peak(run, tiled),
                // Not measured yet: see `encode_measured` (the pipeline's notes say so).
                Vae::Wan(w) if w.is_residual => 0.0,
                Vae::Wan(w) => w.encode_peak(run, tiled),
                Vae::CogVideoX(_) | Vae::HunyuanVideo(_) | Vae::LtxVideo(_) | Vae::Dc(_) => 0.0,
            },
            decode_peak: |v, run, tiled| match v {
                Vae::Kl(k) => k.decode_peak(run, tiled),
                Vae::Wan(w) if w.is_residual => 0.0,
                Vae::Wan(w) => w.decode_peak(run, tiled),
                Vae::Dc(d) => d.decode_peak(run, tiled),
                Vae::LtxVideo(l) => l.decode_peak(run, tiled),
                Vae::CogVideoX(_) | Vae::HunyuanVideo(_) => 0.0,
            },
        }
    }
}

static PARTS: OnceLock<Parts> = OnceLock::new();

/// Hands the table to the model (the page's `diffusion` chunk, once it has arrived).
pub fn install(parts: Parts) {
    let _ = PARTS.set(parts);
}

/// Whether the table is there: always natively, on the page once the chunk has arrived.
pub fn installed() -> bool {
    cfg!(not(target_arch = "wasm32")) || PARTS.get().is_some()
}

static ON_MISSING: OnceLock<fn() -> &'static str> = OnceLock::new();

/// Sets what [`missing`] calls while the table is not there: the page's loader, which
/// fetches the chunk (once) and says how that is going (loading, or could not load).
pub fn on_missing(hook: fn() -> &'static str) {
    let _ = ON_MISSING.set(hook);
}

/// The error `Scenario::validate` gives a pipeline while the table is not there (only on the page,
/// before the `diffusion` chunk has arrived: the [`on_missing`] hook's message); `None` once
/// it is.
pub fn missing() -> Option<InputError> {
    if installed() {
        return None;
    }
    let message = ON_MISSING.get().map_or("the diffusion pipeline code is not loaded", |hook| hook());
    Some(InputError::new("model", message))
}

/// The table. Natively it is built on first use; on the page the estimate only reaches a
/// pipeline that passed validation, which needs the table ([`missing`]).
fn get() -> &'static Parts {
    #[cfg(not(target_arch = "wasm32"))]
    {
        PARTS.get_or_init(Parts::all)
    }
    #[cfg(target_arch = "wasm32")]
    {
        PARTS.get().expect("a diffusion pipeline was estimated before its parts' chunk was installed (Scenario::validate should have refused it)")
    }
}

impl Denoiser {
    /// What one training forward saves for backward.
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        (get().saved)(self, run)
    }
    /// What one training step's backward holds beyond the forward's saved tensors, and the
    /// recomputed block's part of it.
    pub fn backward(&self, run: &Run) -> Walk {
        (get().backward)(self, run)
    }
    /// The transient bytes of one no-grad call, beyond the weights.
    pub fn forward_peak(&self, run: &Run) -> f64 {
        (get().forward_peak)(self, run)
    }
    /// Forward FLOPs of one call.
    pub fn forward_flops(&self, run: &Run) -> f64 {
        (get().forward_flops)(self, run)
    }
}

impl Vae {
    /// The transient bytes of encoding the run's pictures without gradients.
    pub fn encode_peak(&self, run: &Run, tiled: bool) -> f64 {
        (get().encode_peak)(self, run, tiled)
    }
    /// The transient bytes of decoding the run's latents without gradients.
    pub fn decode_peak(&self, run: &Run, tiled: bool) -> f64 {
        (get().decode_peak)(self, run, tiled)
    }
}
