//! The ladders of a diffusion pipeline: the steps diffusion users take to fit, in the order
//! diffusers' training scripts and docs offer them.
//!
//! Training (`train_dreambooth_lora_*.py`, the QLoRA blog `flux-qlora`): cache the prompt
//! embeddings and the latents (the text encoders and the VAE leave the GPU), a smaller
//! micro-batch with more accumulation, gradient checkpointing, 8-bit Adam
//! (`--use_8bit_adam`), LoRA on the attention projections (the scripts' default targets
//! `to_k, to_q, to_v, to_out.0`, rank 4), QLoRA's NF4 base (`BitsAndBytesConfig(
//! load_in_4bit=True, bnb_4bit_quant_type="nf4")`), and last a smaller picture or clip,
//! which changes what is trained on.
//!
//! Generation (`docs/source/en/optimization/memory.md`): VAE tiling, model CPU offload
//! (one part on the GPU at a time), sequential CPU offload (one layer at a time, slowest),
//! then a smaller picture or clip.

use super::escalation::Step;
use crate::model::arch::{Architecture, LinearKind};
use crate::model::diffusion::options::GenerationOffload;
use crate::model::inputs::{Lora, LoraBase};
use crate::scenario::Scenario;

/// Training steps for a pipeline, cheapest in step time first.
pub const TRAINING_LADDER: [Step; 8] =
    [Step::CacheTextEmbeddings, Step::CacheLatents, Step::SmallerMicroBatch, Step::ActivationCheckpointing, Step::Optimizer8bit, Step::Lora, Step::Qlora, Step::SmallerPicture];

/// Generation steps, cheapest in time first.
pub const GENERATION_LADDER: [Step; 4] = [Step::VaeTiling, Step::ModelCpuOffload, Step::SequentialCpuOffload, Step::SmallerPicture];

/// diffusers' LoRA scripts' default rank (`--rank`, default 4).
const DIFFUSERS_RANK: u64 = 4;

/// Whether the scenario plans a diffusion pipeline.
pub fn is_pipeline(s: &Scenario) -> bool {
    matches!(s.model.architecture().as_deref(), Some(Architecture::Diffusion(_)))
}

/// Apply `step` to a pipeline's scenario where it means something of its own; `None` for
/// the steps every model shares (`escalation::apply`).
pub fn apply(step: Step, s: &Scenario) -> Option<(Scenario, String)> {
    let mut n = s.clone();
    let o = &mut n.training.diffusion;
    let note = match step {
        Step::CacheTextEmbeddings if o.cache_text_embeddings => "prompt embeddings already cached".to_string(),
        Step::CacheTextEmbeddings => {
            o.cache_text_embeddings = true;
            "encode the prompts once before training and free the text encoders".into()
        }
        Step::CacheLatents if o.cache_latents => "latents already cached".to_string(),
        Step::CacheLatents => {
            o.cache_latents = true;
            "encode the images once before training (--cache_latents) and free the VAE".into()
        }
        Step::VaeTiling if o.vae_tiling => "VAE tiling already on".to_string(),
        Step::VaeTiling => {
            o.vae_tiling = true;
            "vae.enable_tiling(): decode tile by tile, the workspace of one tile".into()
        }
        Step::ModelCpuOffload | Step::SequentialCpuOffload => {
            let want = if step == Step::ModelCpuOffload { GenerationOffload::Model } else { GenerationOffload::Sequential };
            if o.offload == want || o.offload == GenerationOffload::Sequential {
                "offload already on".to_string()
            } else {
                o.offload = want;
                if want == GenerationOffload::Model {
                    "enable_model_cpu_offload(): each part on the GPU only while it runs".into()
                } else {
                    "enable_sequential_cpu_offload(): each layer's weights on the GPU only for its forward (much slower)".into()
                }
            }
        }
        Step::SmallerPicture => smaller_picture(s, &mut n),
        Step::Lora | Step::Qlora => {
            let base = if step == Step::Qlora { LoraBase::Nf4 } else { LoraBase::Bf16 };
            if s.training.lora.as_ref().is_some_and(|l| l.base == base) {
                "already on".into()
            } else {
                let targets = vec![LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O];
                n.training.lora = Some(Lora { base, rank: DIFFUSERS_RANK, targets, fp32_adapters: true, ..Lora::default() });
                let what = if base == LoraBase::Nf4 { "denoiser in 4-bit NF4 (bitsandbytes)" } else { "denoiser frozen" };
                format!("{what}, rank-{DIFFUSERS_RANK} adapters on to_q, to_k, to_v, to_out.0 (diffusers' defaults)")
            }
        }
        _ => return None,
    };
    Some((n, note))
}

/// Halve the frames of a clip (keeping the VAE's 1 + 4k), else each side of a picture.
fn smaller_picture(s: &Scenario, n: &mut Scenario) -> String {
    let Some(Architecture::Diffusion(d)) = s.model.architecture().as_deref().cloned() else {
        return "not a diffusion pipeline".into();
    };
    let frames = s.training.frames.unwrap_or(d.frames);
    if frames > 1 {
        let step = d.vae.as_ref().map_or(1, |v| v.temporal_factor()).max(1);
        let fewer = 1 + ((frames - 1) / 2 / step) * step;
        if fewer < frames {
            n.training.frames = Some(fewer);
            return format!("{frames} → {fewer} frames");
        }
    }
    let [w, h] = s.training.resolution.unwrap_or(d.resolution);
    let grid = d.denoiser.as_ref().map_or(d.vae_factor(), |den| den.pixel_step(d.vae_factor())).max(1);
    let half = |x: u64| ((x / 2) / grid).max(1) * grid;
    let (nw, nh) = (half(w), half(h));
    if (nw, nh) == (w, h) {
        return "already the smallest size".into();
    }
    n.training.resolution = Some([nw, nh]);
    format!("{w}×{h} → {nw}×{nh} pixels: a quarter of the latent tokens")
}
