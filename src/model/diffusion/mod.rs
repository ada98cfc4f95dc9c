//! Diffusion and video pipelines as parts: a denoiser (a UNet or a diffusion transformer),
//! a VAE and text encoders, each with the parameter tensors its diffusers/transformers module
//! tree builds and the tensors it saves or holds for one call.
//!
//! Every part answers the same questions for one [`Run`] (its latent size, batch, text
//! length, precision, checkpointing, attention kernel and adapters):
//! - `param_tensors()`: every parameter tensor, named after the module that owns it (LoRA
//!   targets carry `linear` kinds: diffusers' `to_q/to_k/to_v/to_out.0` map to `Q/K/V/O`, the
//!   feed-forward's `ff.net.0.proj`/`ff.net.2` to `Up`/`Down`);
//! - `saved(run)`: what autograd keeps for backward of one training forward, term by term;
//! - `forward_peak(run)`: the transient working set of one forward without gradients (the
//!   generation loop's denoiser call, the VAE's encode or decode), beyond the weights.
//!
//! The parts are measured on CPU with real diffusers code (`tests/measure/diffusion_*.py`,
//! fixtures in `tests/fixtures/measured/diffusion_*.json`).

mod autograd;
pub mod backward;
pub mod backward_walk;
mod blocks;
pub mod cogvideox;
pub mod cogvideox_vae;
mod conv;
pub mod dc_ae;
mod dc_ae_peak;
pub mod dit;
pub mod encodes;
mod forward_live;
pub mod generation;
pub mod hunyuan_vae;
pub mod hunyuan_video;
mod live;
pub mod ltx_vae;
mod ltx_vae_peak;
pub mod ltx_video;
pub mod mmdit;
pub mod options;
pub mod parts;
pub mod pipeline;
pub mod pixart;
pub mod sana;
pub mod sd3;
pub mod text_encoder;
pub mod unet;
mod unet_backward;
mod unet_flops;
mod unet_peak;
mod unet_saved;
pub mod vae;
mod vae_peak;
mod vae_shape;
pub mod video;
pub mod wan_vae;
mod wan_vae_encode;
mod wan_vae_peak;

use crate::model::arch::param::LinearKind;
use crate::model::inputs::Attention;
use crate::model::precision::Precision;

/// Most blocks of one kind (layers, resnets per level, levels) a part may have. The largest
/// published denoisers have 60 (HunyuanVideo: 20 double + 40 single), text encoders 32;
/// every part lists one tensor per block and walks its forward block by block, so the bound
/// keeps a hostile config's tensor list and walk small.
pub const MAX_BLOCKS: u64 = 1024;

/// `Ok` when `n` blocks are at most [`MAX_BLOCKS`], else an error naming `field`.
pub fn check_blocks(field: &str, n: u64) -> Result<(), crate::error::InputError> {
    if n > MAX_BLOCKS {
        Err(crate::error::InputError::new(field, format!("must be at most {MAX_BLOCKS} blocks, got {n}")))
    } else {
        Ok(())
    }
}

/// One call of a part: the latent it works on and how it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Samples per call (the micro-batch; doubled by classifier-free guidance at generation
    /// when the pipeline batches the unconditional pass).
    pub batch: u64,
    /// Latent frames (1 for images; after the VAE's temporal compression for video).
    pub latent_frames: u64,
    /// Latent height and width (pixels ÷ the VAE's spatial factor).
    pub latent_height: u64,
    pub latent_width: u64,
    /// Pixel height and width (the VAE's own input and output).
    pub height: u64,
    pub width: u64,
    /// Pixel frames (the VAE's input and output for video; 1 for images).
    pub frames: u64,
    /// Tokens of the text conditioning the denoiser attends to.
    pub text_tokens: u64,
    pub precision: Precision,
    /// `enable_gradient_checkpointing()` on the part: only block inputs are kept.
    pub checkpointing: bool,
    pub attention: Attention,
    /// LoRA adapters on this part's linears, if it is trained with them.
    pub lora: Option<LoraRun>,
}

/// LoRA adapters on a part (PEFT, as diffusers' training scripts add them).
#[derive(Clone, Debug, PartialEq)]
pub struct LoraRun {
    pub rank: u64,
    /// Adapted linear kinds (`to_q/to_k/to_v/to_out.0` are `Q/K/V/O`).
    pub targets: Vec<LinearKind>,
    /// Adapter weights in fp32 (diffusers' scripts call `cast_training_params(..., torch.float32)`).
    pub fp32: bool,
    pub dropout: bool,
}

/// One group of tensors a part saves or holds, for one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Saved {
    pub name: &'static str,
    pub bytes: f64,
}
