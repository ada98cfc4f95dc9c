//! Diffusion transformers, one type over the diffusers classes Headroom builds: [`Flux`]
//! (`mmdit.rs`) and [`Sd3`] (`sd3.rs`), two-stream joint attention; [`Wan`] (`video.rs`, 3-D
//! patches with cross-attention to the text), [`HunyuanVideo`], [`CogVideoX`] and [`LtxVideo`]
//! (`hunyuan_video.rs`, `cogvideox.rs`, `ltx_video.rs`), [`Sana`] (`sana.rs`, linear
//! attention) and [`PixArt`] (`pixart.rs`): parameter tensors, the training forward, the no-grad
//! peak and FLOPs of each.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::ParamTensor;
use crate::model::diffusion::autograd::Tape;
use crate::model::diffusion::backward_walk::Walk;
use crate::model::diffusion::cogvideox::CogVideoX;
use crate::model::diffusion::hunyuan_video::HunyuanVideo;
use crate::model::diffusion::ltx_video::LtxVideo;
use crate::model::diffusion::mmdit::Flux;
use crate::model::diffusion::pixart::PixArt;
use crate::model::diffusion::sana::Sana;
use crate::model::diffusion::sd3::Sd3;
use crate::model::diffusion::video::Wan;
use crate::model::diffusion::{Run, Saved};

/// One diffusion transformer, by its diffusers `_class_name`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum Dit {
    Flux(Flux),
    Sd3(Sd3),
    Wan(Wan),
    HunyuanVideo(HunyuanVideo),
    CogVideoX(CogVideoX),
    LtxVideo(LtxVideo),
    Sana(Sana),
    PixArt(PixArt),
}

impl Dit {
    /// The diffusers class name.
    pub fn class(&self) -> &'static str {
        match self {
            Dit::Flux(_) => "FluxTransformer2DModel",
            Dit::Sd3(_) => "SD3Transformer2DModel",
            Dit::Wan(_) => "WanTransformer3DModel",
            Dit::HunyuanVideo(_) => "HunyuanVideoTransformer3DModel",
            Dit::CogVideoX(_) => "CogVideoXTransformer3DModel",
            Dit::LtxVideo(_) => "LTXVideoTransformer3DModel",
            Dit::Sana(_) => "SanaTransformer2DModel",
            Dit::PixArt(_) => "PixArtTransformer2DModel",
        }
    }

    pub fn check(&self) -> Result<(), InputError> {
        match self {
            Dit::Flux(m) => m.check(),
            Dit::Sd3(m) => m.check(),
            Dit::Wan(m) => m.check(),
            Dit::HunyuanVideo(m) => m.check(),
            Dit::CogVideoX(m) => m.check(),
            Dit::LtxVideo(m) => m.check(),
            Dit::Sana(m) => m.check(),
            Dit::PixArt(m) => m.check(),
        }
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Dit::Flux(m) => m.param_tensors(),
            Dit::Sd3(m) => m.param_tensors(),
            Dit::Wan(m) => m.param_tensors(),
            Dit::HunyuanVideo(m) => m.param_tensors(),
            Dit::CogVideoX(m) => m.param_tensors(),
            Dit::LtxVideo(m) => m.param_tensors(),
            Dit::Sana(m) => m.param_tensors(),
            Dit::PixArt(m) => m.param_tensors(),
        }
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }

    /// What one training forward keeps for backward, by kind (see `autograd.rs`); the entry
    /// "weight copies" holds the cast copies of weights kept for backward (autocast's 16-bit
    /// copies of fp32 weights, fp32 copies of 16-bit norm weights).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        self.tape(run).finish()
    }

    /// The backward after one training forward, walked op by op (`backward_walk.rs`): the most
    /// it holds beyond the saved tensors (gradients in flight, parameter gradients made so far,
    /// the loss's tensors, the recomputed block under checkpointing).
    pub fn backward(&self, run: &Run) -> Walk {
        self.tape(run).backward()
    }

    /// Forward FLOPs of one denoiser call (2 per multiply-add of matmuls, convolutions and
    /// attention), for step time.
    pub fn forward_flops(&self, run: &Run) -> f64 {
        self.tape(run).flops
    }

    /// One training forward written op by op over the [`Tape`] (each class's `simulate`): what
    /// it saves, its FLOPs and its recorded graph for the backward walk.
    fn tape(&self, run: &Run) -> Tape {
        match self {
            Dit::Flux(m) => m.simulate(run),
            Dit::Sd3(m) => m.simulate(run),
            Dit::Wan(m) => m.simulate(run),
            Dit::HunyuanVideo(m) => m.simulate(run),
            Dit::CogVideoX(m) => m.simulate(run),
            Dit::LtxVideo(m) => m.simulate(run),
            Dit::Sana(m) => m.simulate(run),
            Dit::PixArt(m) => m.simulate(run),
        }
    }

    /// The transient bytes of one `torch.no_grad()` denoiser call beyond the weights.
    pub fn forward_peak(&self, run: &Run) -> f64 {
        match self {
            Dit::Flux(m) => m.forward_peak(run),
            Dit::Sd3(m) => m.forward_peak(run),
            Dit::Wan(m) => m.forward_peak(run),
            Dit::HunyuanVideo(m) => m.forward_peak(run),
            Dit::CogVideoX(m) => m.forward_peak(run),
            Dit::LtxVideo(m) => m.forward_peak(run),
            Dit::Sana(m) => m.forward_peak(run),
            Dit::PixArt(m) => m.forward_peak(run),
        }
    }

    /// Tokens the denoiser attends over for the run's latent, besides the text (Flux: the
    /// pipeline's 2×2 packing; the video models: frames ÷ temporal patch × spatial patches).
    pub fn image_tokens(&self, run: &Run) -> u64 {
        match self {
            Dit::Flux(m) => m.image_tokens(run),
            Dit::Sd3(m) => m.image_tokens(run),
            Dit::Wan(m) => m.image_tokens(run),
            Dit::HunyuanVideo(m) => m.image_tokens(run),
            Dit::CogVideoX(m) => m.image_tokens(run),
            Dit::LtxVideo(m) => m.image_tokens(run),
            Dit::Sana(m) => m.image_tokens(run),
            Dit::PixArt(m) => m.image_tokens(run),
        }
    }

    /// The transformer's width (`num_attention_heads × attention_head_dim`).
    pub fn hidden(&self) -> u64 {
        match self {
            Dit::Flux(m) => m.hidden(),
            Dit::Sd3(m) => m.hidden(),
            Dit::Wan(m) => m.hidden(),
            Dit::HunyuanVideo(m) => m.hidden(),
            Dit::CogVideoX(m) => m.hidden(),
            Dit::LtxVideo(m) => m.hidden(),
            Dit::Sana(m) => m.hidden(),
            Dit::PixArt(m) => m.hidden(),
        }
    }

    /// Channels of the latent the denoiser takes (Flux: the 2×2-packed latent, 4 × the VAE's).
    pub fn in_channels(&self) -> u64 {
        match self {
            Dit::Flux(m) => m.in_channels(),
            Dit::Sd3(m) => m.in_channels(),
            Dit::Wan(m) => m.in_channels(),
            Dit::HunyuanVideo(m) => m.in_channels,
            Dit::CogVideoX(m) => m.in_channels,
            Dit::LtxVideo(m) => m.in_channels,
            Dit::Sana(m) => m.in_channels,
            Dit::PixArt(m) => m.in_channels,
        }
    }

    /// Spatial patch size inside the denoiser (Flux packs its 2×2 patches in the pipeline, so 1).
    pub fn patch_size(&self) -> u64 {
        match self {
            Dit::Flux(m) => m.patch_size(),
            Dit::Sd3(m) => m.patch_size(),
            Dit::Wan(m) => m.patch_size(),
            Dit::HunyuanVideo(m) => m.patch_size,
            Dit::CogVideoX(m) => m.patch_size,
            Dit::LtxVideo(m) => m.patch_size,
            Dit::Sana(m) => m.patch_size,
            Dit::PixArt(m) => m.patch_size,
        }
    }

    /// Width of the text embeddings it takes.
    pub fn text_width(&self) -> u64 {
        match self {
            Dit::Flux(m) => m.text_width(),
            Dit::Sd3(m) => m.text_width(),
            Dit::Wan(m) => m.text_width(),
            Dit::HunyuanVideo(m) => m.text_embed_dim,
            Dit::CogVideoX(m) => m.text_embed_dim,
            Dit::LtxVideo(m) => m.caption_channels,
            Dit::Sana(m) => m.caption_channels,
            Dit::PixArt(m) => m.caption_channels.unwrap_or(m.cross_attention_dim),
        }
    }
}
