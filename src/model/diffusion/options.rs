//! What a diffusion run does beyond the training step every model shares: whether latents
//! and prompt embeddings are cached, where the frozen parts live, how generation offloads,
//! and the VAE's tiling (`training.diffusion` in a scenario).
//!
//! Defaults follow diffusers' training scripts and pipelines:
//! - `cache_latents: false`, `cache_text_embeddings: true`: `train_dreambooth_lora_flux.py`
//!   and `train_dreambooth_lora_sdxl.py` encode the (fixed) instance prompt once and free the
//!   text encoders (`del text_encoder_one, text_encoder_two; free_memory()` when
//!   `not args.train_text_encoder`) but keep the VAE and encode every batch unless
//!   `--cache_latents`;
//! - generation keeps every part on the GPU unless `enable_model_cpu_offload()` (one part at
//!   a time, `DiffusionPipeline.enable_model_cpu_offload` hooks) or
//!   `enable_sequential_cpu_offload()` (one module at a time, accelerate's `cpu_offload`);
//! - classifier-free guidance runs the unconditional and conditional passes as one batch of
//!   2 × the prompts in SD, SDXL, SD3 and Wan (`torch.cat([latents] * 2)` in their
//!   `__call__`); Flux.1-dev is guidance-distilled and runs one pass (`guidance_embeds`).

use serde::{Deserialize, Serialize};

/// diffusers' offload modes for generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GenerationOffload {
    /// Every part on the GPU for the whole call.
    #[default]
    None,
    /// `enable_model_cpu_offload()`: each part moves to the GPU when it runs and back after.
    Model,
    /// `enable_sequential_cpu_offload()`: each leaf module's weights move to the GPU only for
    /// its own forward.
    Sequential,
}

/// `training.diffusion`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiffusionOptions {
    /// Latents encoded once before training (`--cache_latents`): the VAE leaves the GPU.
    pub cache_latents: bool,
    /// Prompt embeddings computed once: the text encoders leave the GPU.
    pub cache_text_embeddings: bool,
    /// Text encoders kept in host memory and run there when embeddings are not cached.
    pub offload_text_encoders: bool,
    /// Generation's offload.
    pub offload: GenerationOffload,
    /// `vae.enable_tiling()`: decode (and encode) tile by tile.
    pub vae_tiling: bool,
    /// Classifier-free guidance batched with the prompts (default: the pipeline's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guidance: Option<bool>,
    /// Text tokens the denoiser attends to (default: the pipeline's `max_sequence_length`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_tokens: Option<u64>,
}

impl Default for DiffusionOptions {
    fn default() -> Self {
        DiffusionOptions {
            cache_latents: false,
            cache_text_embeddings: true,
            offload_text_encoders: false,
            offload: GenerationOffload::None,
            vae_tiling: false,
            guidance: None,
            text_tokens: None,
        }
    }
}

impl DiffusionOptions {
    /// Whether nothing is set (scenarios leave the section out).
    pub fn is_default(&self) -> bool {
        *self == DiffusionOptions::default()
    }
}
