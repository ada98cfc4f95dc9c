//! A diffusion pipeline as one architecture: its denoiser, VAE and text encoders (any of
//! them may be absent when a single component's config is planned), the text length and
//! picture size it is used at, and which frozen parts stay on the GPU during training.
//!
//! diffusers builds a pipeline from `model_index.json`, one class per component
//! (`DiffusionPipeline.from_pretrained`); each part here is what that class builds from its
//! own `config.json` (`unet.rs`, `vae.rs`, `dit.rs`, `text_encoder.rs`).

use serde::{Deserialize, Serialize};

use super::dit::Dit;
use super::text_encoder::TextEncoder;
use super::unet::UNet2D;
use super::vae::AutoencoderKl;
use super::wan_vae::WanVae;
use super::Run;
use crate::error::InputError;
use crate::model::arch::param::ParamTensor;
use crate::model::inputs::{Checkpointing, Training};

/// The denoiser of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Denoiser {
    /// `UNet2DConditionModel` (SD 1.5, SD 2.x, SDXL).
    Unet(UNet2D),
    /// A diffusion transformer (Flux, SD3, Wan).
    Dit(Dit),
}

impl Denoiser {
    pub fn check(&self) -> Result<(), InputError> {
        match self {
            Denoiser::Unet(u) => u.check(),
            Denoiser::Dit(d) => d.check(),
        }
    }
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Denoiser::Unet(u) => u.param_tensors(),
            Denoiser::Dit(d) => d.param_tensors(),
        }
    }
    /// The diffusers class name.
    pub fn class(&self) -> &'static str {
        match self {
            Denoiser::Unet(_) => "UNet2DConditionModel",
            Denoiser::Dit(d) => d.class(),
        }
    }
    /// Latent channels of the VAE it works on (Flux's packed 64 input channels are 16 latent
    /// channels × 2 × 2).
    pub fn latent_channels(&self) -> u64 {
        match self {
            Denoiser::Unet(u) => u.in_channels(),
            Denoiser::Dit(Dit::Flux(f)) => f.in_channels() / 4,
            Denoiser::Dit(d) => d.in_channels(),
        }
    }
    /// Pixels between sizes the denoiser takes: the VAE's factor × the patch (Flux packs
    /// 2 × 2 latents in the pipeline), or × 2 per down-sampling of a UNet.
    pub fn pixel_step(&self, vae_factor: u64) -> u64 {
        match self {
            Denoiser::Unet(u) => vae_factor << u.downsamplings(),
            Denoiser::Dit(Dit::Flux(_)) => vae_factor * 2,
            Denoiser::Dit(d) => vae_factor * d.patch_size(),
        }
    }
}

/// The VAE of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Vae {
    /// `AutoencoderKL` (SD, SDXL, SD3, Flux).
    Kl(AutoencoderKl),
    /// `AutoencoderKLWan`: Wan 2.1's causal 3-D VAE (4 frames per latent frame after the first).
    Wan(WanVae),
}

impl Vae {
    pub fn check(&self) -> Result<(), InputError> {
        match self {
            Vae::Kl(v) => v.check(),
            Vae::Wan(v) => v.check(),
        }
    }
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Vae::Kl(v) => v.param_tensors(),
            Vae::Wan(v) => v.param_tensors(),
        }
    }
    /// Pixels per latent along each side (8 for SD's and Flux's VAE).
    pub fn spatial_factor(&self) -> u64 {
        match self {
            Vae::Kl(v) => v.spatial_factor(),
            Vae::Wan(v) => v.spatial_factor(),
        }
    }
    /// Frames per latent frame after the first (1 for images).
    pub fn temporal_factor(&self) -> u64 {
        match self {
            Vae::Kl(v) => v.temporal_factor(),
            Vae::Wan(v) => v.temporal_factor(),
        }
    }
    /// The config's `force_upcast` (Wan's VAE has none).
    pub fn force_upcast(&self) -> bool {
        match self {
            Vae::Kl(v) => v.force_upcast,
            Vae::Wan(_) => false,
        }
    }
    pub fn class(&self) -> &'static str {
        match self {
            Vae::Kl(_) => "AutoencoderKL",
            Vae::Wan(_) => "AutoencoderKLWan",
        }
    }
}

/// Which frozen parts are on the GPU during a training step: decided by the run's
/// [`DiffusionOptions`](super::options::DiffusionOptions), applied by [`DiffusionArch::for_run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Resident {
    pub vae: bool,
    pub text_encoders: bool,
}

/// A pipeline, or one component of one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffusionArch {
    /// The pipeline class of `model_index.json` (`StableDiffusionXLPipeline`), or the one
    /// component's class.
    pub class: String,
    pub denoiser: Option<Denoiser>,
    pub vae: Option<Vae>,
    pub text_encoders: Vec<TextEncoder>,
    /// Text tokens the denoiser attends to (CLIP's 77; Flux's 512 T5 tokens; SD3's 77 CLIP +
    /// 256 T5 tokens, concatenated).
    pub text_tokens: u64,
    /// The size the pipeline generates by default, `[width, height]` in pixels.
    pub resolution: [u64; 2],
    /// Frames of a video pipeline's default clip (1 for images).
    pub frames: u64,
    /// Classifier-free guidance batched with the prompt at generation.
    pub guidance: bool,
    /// The pipeline runs an fp16 VAE whose config says `force_upcast` in fp32 for the decode
    /// (the SDXL pipelines: `needs_upcasting = self.vae.dtype == torch.float16 and
    /// self.vae.config.force_upcast`, then `self.upcast_vae()`).
    #[serde(default)]
    pub upcasts_vae: bool,
    /// Parts on the GPU during training (set per run; all of them until then).
    #[serde(skip, default = "all_resident")]
    pub resident: Resident,
}

/// A denoiser's 2-D weight that is not an embedding table is an `nn.Linear`'s (its
/// convolutions are 4-D): marked as a linear layer that no LoRA target names, so what treats
/// every linear alike sees it — bitsandbytes' 4-bit loading replaces every `nn.Linear` of the
/// model (`diffusers/quantizers/bitsandbytes/utils.py` `_replace_with_bnb_linear`), not only
/// the ones adapters target.
fn as_linear_layer(mut t: ParamTensor) -> ParamTensor {
    if t.linear.is_none() && !t.table {
        if let [out, inp] = *t.shape() {
            t.linear = Some(&[]);
            t.lora_dims = Some((inp, out));
        }
    }
    t
}

fn all_resident() -> Resident {
    Resident { vae: true, text_encoders: true }
}

impl DiffusionArch {
    pub fn check(&self) -> Result<(), InputError> {
        if let Some(d) = &self.denoiser {
            d.check()?;
        }
        if let Some(v) = &self.vae {
            v.check()?;
        }
        for t in &self.text_encoders {
            t.check()?;
        }
        if self.denoiser.is_none() && self.vae.is_none() && self.text_encoders.is_empty() {
            return Err(InputError::new("pipeline", "has no denoiser, VAE or text encoder"));
        }
        Ok(())
    }

    /// Every parameter tensor of every part.
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let mut out: Vec<ParamTensor> = self.denoiser.as_ref().map(Denoiser::param_tensors).unwrap_or_default().into_iter().map(as_linear_layer).collect();
        if let Some(v) = &self.vae {
            out.extend(v.param_tensors());
        }
        for t in &self.text_encoders {
            out.extend(t.param_tensors());
        }
        out
    }

    /// This pipeline as a training run holds it: the VAE leaves the GPU when latents are
    /// cached, the text encoders when embeddings are cached or kept in host memory.
    pub fn for_run(&self, training: &Training) -> DiffusionArch {
        let o = &training.diffusion;
        DiffusionArch { resident: Resident { vae: !o.cache_latents, text_encoders: !(o.cache_text_embeddings || o.offload_text_encoders) }, ..self.clone() }
    }

    /// Pixels per latent side.
    pub fn vae_factor(&self) -> u64 {
        self.vae.as_ref().map_or(8, Vae::spatial_factor)
    }

    /// One denoiser call of `batch` samples at the run's size.
    pub fn run(&self, training: &Training, batch: u64) -> Run {
        let [w, h] = training.resolution.unwrap_or(self.resolution);
        let frames = training.frames.unwrap_or(self.frames).max(1);
        let f = self.vae_factor().max(1);
        let t = self.vae.as_ref().map_or(1, Vae::temporal_factor).max(1);
        Run {
            batch: batch.max(1),
            latent_frames: 1 + (frames - 1) / t,
            latent_height: (h / f).max(1),
            latent_width: (w / f).max(1),
            height: h,
            width: w,
            frames,
            text_tokens: training.diffusion.text_tokens.unwrap_or(self.text_tokens).max(1),
            precision: training.precision,
            checkpointing: training.checkpointing != Checkpointing::None,
            attention: training.attention,
            lora: training.lora.as_ref().map(|l| super::LoraRun { rank: l.rank, targets: l.targets.clone(), fp32: l.fp32_adapters, dropout: l.dropout > 0.0 }),
        }
    }

    /// Whether generation batches the unconditional pass with the prompt.
    pub fn guidance(&self, training: &Training) -> bool {
        training.diffusion.guidance.unwrap_or(self.guidance)
    }

    /// A one-line description: "StableDiffusionXLPipeline · UNet 2.6B · VAE 84M · 2 text encoders 0.8B".
    pub fn summary(&self, count: impl Fn(&[ParamTensor]) -> String) -> String {
        let mut parts = vec![self.class.clone()];
        if let Some(d) = &self.denoiser {
            parts.push(format!("{} {}", d.class(), count(&d.param_tensors())));
        }
        if let Some(v) = &self.vae {
            parts.push(format!("{} {}", v.class(), count(&v.param_tensors())));
        }
        if !self.text_encoders.is_empty() {
            let tensors: Vec<ParamTensor> = self.text_encoders.iter().flat_map(TextEncoder::param_tensors).collect();
            let classes: Vec<&str> = self.text_encoders.iter().map(|t| t.kind.class()).collect();
            parts.push(format!("{} {}", classes.join(" + "), count(&tensors)));
        }
        parts.join(" · ")
    }
}
