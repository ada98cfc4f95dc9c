//! A diffusion pipeline as one architecture: its denoiser, VAE and text encoders (any of
//! them may be absent when a single component's config is planned), the text length and
//! picture size it is used at, and which frozen parts stay on the GPU during training.
//!
//! diffusers builds a pipeline from `model_index.json`, one class per component
//! (`DiffusionPipeline.from_pretrained`); each part here is what that class builds from its
//! own `config.json` (`unet.rs`, `vae.rs`, `dit.rs`, `text_encoder.rs`).

use serde::{Deserialize, Serialize};

use super::cogvideox_vae::CogVideoXVae;
use super::dc_ae::DcAe;
use super::dit::Dit;
use super::hunyuan_vae::HunyuanVideoVae;
use super::ltx_vae::LtxVideoVae;
use super::text_encoder::TextEncoder;
use super::unet::UNet2D;
use super::vae::AutoencoderKl;
use super::wan_vae::WanVae;
use super::Run;
use crate::error::InputError;
use crate::model::arch::param::ParamTensor;
use crate::model::inputs::{Checkpointing, Training};
use crate::model::precision::Precision;

/// The denoiser of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Denoiser {
    /// `UNet2DConditionModel` (SD 1.5, SD 2.x, SDXL).
    Unet(UNet2D),
    /// A diffusion transformer (Flux, SD3, Wan).
    Dit(Dit),
    /// Two denoisers taking turns over the timesteps: Wan 2.2 A14B's high-noise `transformer`
    /// and low-noise `transformer_2` (`pipelines/wan/pipeline_wan.py`: `WanPipeline.__init__`
    /// holds both, lines 130–152; `__call__` sets `boundary_timestep = boundary_ratio *
    /// num_train_timesteps` and calls `self.transformer` while `t >= boundary_timestep`,
    /// `self.transformer_2` after, lines 585–603). Generation holds both experts' weights and
    /// each call is one expert's (workspace and FLOPs: the larger expert's). Training tools
    /// train one expert per run on its timestep range (musubi-tuner's `--dit` with
    /// `--min_timestep 875` for the high-noise one), planned from that expert's config alone;
    /// planned as this pipeline a training run counts both experts as trained, and what one
    /// step saves is the high-noise expert's (the same shape as the low-noise one in Wan 2.2).
    Experts {
        high: Box<Denoiser>,
        low: Box<Denoiser>,
        /// `model_index.json`'s `boundary_ratio` (0.875 for Wan2.2-T2V-A14B).
        boundary_ratio: f64,
    },
}

impl Denoiser {
    pub fn check(&self) -> Result<(), InputError> {
        match self {
            Denoiser::Unet(u) => u.check(),
            Denoiser::Dit(d) => d.check(),
            Denoiser::Experts { high, low, .. } => high.check().and(low.check()),
        }
    }
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Denoiser::Unet(u) => u.param_tensors(),
            Denoiser::Dit(d) => d.param_tensors(),
            Denoiser::Experts { high, low, .. } => [high.param_tensors(), low.param_tensors()].concat(),
        }
    }
    /// The diffusers class name.
    pub fn class(&self) -> &'static str {
        match self {
            Denoiser::Unet(_) => "UNet2DConditionModel",
            Denoiser::Dit(d) => d.class(),
            Denoiser::Experts { high, .. } => high.class(),
        }
    }
    /// Latent channels of the VAE it works on (Flux's packed 64 input channels are 16 latent
    /// channels × 2 × 2).
    pub fn latent_channels(&self) -> u64 {
        match self {
            Denoiser::Unet(u) => u.in_channels(),
            Denoiser::Dit(Dit::Flux(f)) => f.in_channels() / 4,
            Denoiser::Dit(d) => d.in_channels(),
            Denoiser::Experts { high, .. } => high.latent_channels(),
        }
    }
    /// Pixels between sizes the denoiser takes: the VAE's factor × the patch (Flux packs
    /// 2 × 2 latents in the pipeline), or × 2 per down-sampling of a UNet.
    pub fn pixel_step(&self, vae_factor: u64) -> u64 {
        match self {
            Denoiser::Unet(u) => vae_factor << u.downsamplings(),
            Denoiser::Dit(Dit::Flux(_)) => vae_factor * 2,
            Denoiser::Dit(d) => vae_factor * d.patch_size(),
            Denoiser::Experts { high, .. } => high.pixel_step(vae_factor),
        }
    }
}

/// The VAE of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Vae {
    /// `AutoencoderKL` (SD, SDXL, SD3, Flux).
    Kl(AutoencoderKl),
    /// `AutoencoderKLWan`: Wan 2.1's causal 3-D VAE (4 frames per latent frame after the first),
    /// or Wan 2.2's residual, patchified one.
    Wan(WanVae),
    /// `AutoencoderKLCogVideoX` (CogVideoX).
    CogVideoX(CogVideoXVae),
    /// `AutoencoderKLHunyuanVideo` (HunyuanVideo).
    HunyuanVideo(HunyuanVideoVae),
    /// `AutoencoderKLLTXVideo` (LTX-Video 0.9.0).
    LtxVideo(LtxVideoVae),
    /// `AutoencoderDC` (Sana's 32× deep-compression autoencoder).
    Dc(DcAe),
}

impl Vae {
    pub fn check(&self) -> Result<(), InputError> {
        match self {
            Vae::Kl(v) => v.check(),
            Vae::Wan(v) => v.check(),
            Vae::CogVideoX(v) => v.check(),
            Vae::HunyuanVideo(v) => v.check(),
            Vae::LtxVideo(v) => v.check(),
            Vae::Dc(v) => v.check(),
        }
    }
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Vae::Kl(v) => v.param_tensors(),
            Vae::Wan(v) => v.param_tensors(),
            Vae::CogVideoX(v) => v.param_tensors(),
            Vae::HunyuanVideo(v) => v.param_tensors(),
            Vae::LtxVideo(v) => v.param_tensors(),
            Vae::Dc(v) => v.param_tensors(),
        }
    }
    /// Pixels per latent along each side (8 for SD's and Flux's VAE).
    pub fn spatial_factor(&self) -> u64 {
        match self {
            Vae::Kl(v) => v.spatial_factor(),
            Vae::Wan(v) => v.spatial_factor(),
            Vae::CogVideoX(v) => v.spatial_factor(),
            Vae::HunyuanVideo(v) => v.spatial_factor(),
            Vae::LtxVideo(v) => v.spatial_factor(),
            Vae::Dc(v) => v.spatial_factor(),
        }
    }
    /// Frames per latent frame after the first (1 for images).
    pub fn temporal_factor(&self) -> u64 {
        match self {
            Vae::Kl(v) => v.temporal_factor(),
            Vae::Wan(v) => v.temporal_factor(),
            Vae::CogVideoX(v) => v.temporal_factor(),
            Vae::HunyuanVideo(v) => v.temporal_factor(),
            Vae::LtxVideo(v) => v.temporal_factor(),
            Vae::Dc(v) => v.temporal_factor(),
        }
    }
    /// The config's `force_upcast`, read for `AutoencoderKL` only: SDXL's pipelines are the
    /// ones that act on it; the video pipelines never upcast their VAE.
    pub fn force_upcast(&self) -> bool {
        match self {
            Vae::Kl(v) => v.force_upcast,
            Vae::Wan(_) | Vae::CogVideoX(_) | Vae::HunyuanVideo(_) | Vae::LtxVideo(_) | Vae::Dc(_) => false,
        }
    }
    /// Whether `decode_peak` models this VAE from a measurement (the video VAEs added for the
    /// catalogue and Wan 2.2's residual layout count their weights only: their decode is 0).
    pub fn decode_measured(&self) -> bool {
        match self {
            Vae::Kl(_) | Vae::Dc(_) | Vae::LtxVideo(_) => true,
            Vae::Wan(v) => !v.is_residual,
            Vae::CogVideoX(_) | Vae::HunyuanVideo(_) => false,
        }
    }
    /// Whether `encode_peak` models this VAE from a measurement (else it is 0).
    pub fn encode_measured(&self) -> bool {
        match self {
            Vae::Kl(_) => true,
            Vae::Wan(v) => !v.is_residual,
            Vae::CogVideoX(_) | Vae::HunyuanVideo(_) | Vae::LtxVideo(_) | Vae::Dc(_) => false,
        }
    }
    pub fn class(&self) -> &'static str {
        match self {
            Vae::Kl(_) => "AutoencoderKL",
            Vae::Wan(_) => "AutoencoderKLWan",
            Vae::CogVideoX(_) => "AutoencoderKLCogVideoX",
            Vae::HunyuanVideo(_) => "AutoencoderKLHunyuanVideo",
            Vae::LtxVideo(_) => "AutoencoderKLLTXVideo",
            Vae::Dc(_) => "AutoencoderDC",
        }
    }
}

/// Which frozen parts are on the GPU during a training step: decided by the run's
/// [`DiffusionOptions`](super::options::DiffusionOptions), applied by [`DiffusionArch::for_run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Resident {
    pub vae: bool,
    pub text_encoders: bool,
    /// The VAE stays in fp32 in a 16-bit run: diffusers' SDXL training scripts keep the
    /// pipeline's own VAE in fp32 "to avoid NaN losses" and cast only a replacement VAE
    /// (`--pretrained_vae_model_name_or_path`, e.g. the fp16-fix) to the weight dtype
    /// (`examples/text_to_image/train_text_to_image_lora_sdxl.py`: `if
    /// args.pretrained_vae_model_name_or_path is None: vae.to(accelerator.device,
    /// dtype=torch.float32)`). The pipeline's own VAE is the one whose config says
    /// `force_upcast`; the fp16-fix's says false.
    pub vae_fp32: bool,
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
    /// self.vae.config.force_upcast`, then `self.upcast_vae()`), and its training scripts keep
    /// such a VAE in fp32 ([`Resident::vae_fp32`]).
    #[serde(default)]
    pub upcasts_vae: bool,
    /// Parts on the GPU during training (set per run; all of them until then).
    #[serde(skip, default = "Resident::all")]
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

impl Resident {
    /// Every part on the GPU, in the run's dtype.
    pub fn all() -> Resident {
        Resident { vae: true, text_encoders: true, vae_fp32: false }
    }
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
        let vae_fp32 = self.upcasts_vae && training.precision != Precision::Fp32 && self.vae.as_ref().is_some_and(Vae::force_upcast);
        DiffusionArch { resident: Resident { vae: !o.cache_latents, text_encoders: !(o.cache_text_embeddings || o.offload_text_encoders), vae_fp32 }, ..self.clone() }
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
