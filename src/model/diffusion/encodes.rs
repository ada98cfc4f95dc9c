//! The frozen parts' no-grad calls inside a training step, when their outputs are not
//! cached: the VAE encodes the batch's images and the text encoders its prompts before the
//! denoiser's forward (diffusers' `train_*` scripts: `vae.encode(pixel_values).latent_dist`
//! and `encode_prompt` under `torch.no_grad()` at the top of each step).
//!
//! They run before the forward, when no activation of the step is saved yet, so the step's
//! peak is the larger of (weights + states + the encode's workspace) and (weights + states +
//! saved activations + the forward and backward's transients). The ledger adds every saved
//! activation to every moment of the step, so an encode is entered as its workspace less the
//! activations the step saves: the moment wins exactly when the encode is the larger peak.
//!
//! An SDXL pipeline's own VAE encodes in fp32 in a 16-bit run, as its training scripts keep it
//! ([`Resident::vae_fp32`](super::pipeline::Resident::vae_fp32)).

use super::pipeline::DiffusionArch;
use crate::model::breakdown::{Component, Lifetime, Moment};
use crate::model::inputs::Training;
use crate::model::ledger::Ledger;
use crate::model::precision::Precision;

const ENCODE: &str =
    "live tensors of the no-grad encode (model/diffusion/, measured on CPU with diffusers), less the step's saved activations, which do not exist yet when it runs";

/// Add the encodes of one micro-batch; `saved`: the bytes of activations the step saves.
pub fn add_encodes(d: &DiffusionArch, training: &Training, saved: f64, ledger: &mut Ledger) {
    let bytes = training.precision.activation_bytes() as f64;
    let batch = training.micro_batch.max(1);
    if let (Some(vae), true) = (&d.vae, d.resident.vae) {
        let mut run = d.run(training, batch);
        if d.resident.vae_fp32 {
            run.precision = Precision::Fp32;
        }
        let encode = vae.encode_peak(&run, training.diffusion.vae_tiling);
        ledger.add(Component::Temporary, "VAE encode (latents not cached)", (encode - saved).max(0.0), ENCODE, Lifetime::Transient(Moment::VaeEncode));
    }
    if d.resident.text_encoders {
        let encode = d.text_encoders.iter().map(|t| t.forward_peak(batch, bytes, true)).fold(0.0, f64::max);
        if encode > 0.0 {
            ledger.add(Component::Temporary, "prompt encoding (embeddings not cached)", (encode - saved).max(0.0), ENCODE, Lifetime::Transient(Moment::TextEncode));
        }
    }
}
