//! What a diffusion pipeline's training step saves for backward: the denoiser's own terms
//! for one micro-batch at the run's size (`model/diffusion/`, each part measured against
//! diffusers on CPU), all placed before the (single) pipeline stage's blocks. The frozen VAE
//! and text encoders run under `torch.no_grad()` and save nothing.

use super::term::{ActTerm, Place, Split};
use crate::model::diffusion::pipeline::DiffusionArch;
use crate::model::inputs::Training;

/// The denoiser's saved tensors for one micro-batch (none without a denoiser).
pub fn terms(d: &DiffusionArch, training: &Training) -> Vec<ActTerm> {
    let Some(denoiser) = &d.denoiser else {
        return Vec::new();
    };
    let run = d.run(training, training.micro_batch);
    denoiser
        .saved(&run)
        .into_iter()
        .map(|s| ActTerm { name: s.name, bytes: s.bytes, split: Split::Sequence, place: Place::Input, attention_core: false, input_gradient_only: false })
        .collect()
}
