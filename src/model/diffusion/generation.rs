//! Generation memory of a diffusion pipeline: the parts' weights and the largest of its
//! three no-grad stages — encoding the prompt, one denoiser call (the loop repeats it: the
//! number of steps does not change memory) and decoding the latents.
//!
//! Where the weights are during each stage follows diffusers' offload modes
//! (`pipelines/pipeline_utils.py`):
//! - none: every part stays on the GPU for the whole call;
//! - `enable_model_cpu_offload()`: accelerate's `cpu_offload_with_hook` moves each part to the
//!   GPU when its forward starts and the previous part back, in `model_cpu_offload_seq`
//!   order, so a stage holds its own part's weights alone;
//! - `enable_sequential_cpu_offload()`: accelerate's `cpu_offload` moves each leaf module's
//!   weights in for its own forward only: a stage holds its part's largest tensor.
//!
//! Classifier-free guidance doubles the denoiser's batch (SD, SDXL, SD3, Wan); the VAE
//! decodes the prompts' latents only; `enable_tiling()` bounds the decode's workspace to
//! one tile (`vae.rs`).
//!
//! The SDXL pipelines decode with an fp16 VAE whose config says `force_upcast` upcast to
//! fp32 (`pipeline_stable_diffusion_xl.py`: `needs_upcasting`, `upcast_vae()`): its weights
//! and its decode are fp32's.
//!
//! `training.serving.weights` quantises the denoiser's linear layers as diffusers'
//! quantizers load them (`BitsAndBytesConfig` NF4/int8, FP8, GGUF: every `nn.Linear` of the
//! model passed `quantization_config`, the denoiser in diffusers' examples and benchmarks);
//! the VAE and text encoders keep the run's dtype. A 4-bit linear is dequantised to 16 bits
//! for its matmul (bitsandbytes' `dequantize_4bit`), one at a time, inside the denoiser call.

use super::options::GenerationOffload;
use super::pipeline::{DiffusionArch, Vae};
use super::text_encoder::TextEncoder;
use crate::model::arch::param::{ParamTensor, Scope};
use crate::model::breakdown::{Component, Lifetime, Moment};
use crate::model::dtype::F32;
use crate::model::inputs::Training;
use crate::model::ledger::Ledger;
use crate::model::precision::Precision;

const WEIGHTS: &str = "parameters × bytes of the run's dtype (16-bit unless fp32), for the parts on the GPU (diffusers' offload hooks decide which)";
const WORKSPACE: &str = "live tensors of one no-grad call of the part at the run's size, beyond its weights (model/diffusion/, measured on CPU with diffusers)";

/// Add a generation call's terms to the ledger.
pub fn generation_memory(d: &DiffusionArch, training: &Training, ledger: &mut Ledger) {
    let bytes = training.precision.activation_bytes() as f64;
    let o = &training.diffusion;
    let prompts = training.micro_batch.max(1);
    let tensors = d.param_tensors();
    let part = |scope: Scope| -> Vec<ParamTensor> { tensors.iter().filter(|t| t.scope == scope).cloned().collect() };
    let denoiser = part(Scope::Layer);
    let vae = part(Scope::Vae);
    let text = part(Scope::TextEncoder);
    // An SDXL pipeline in fp16 runs a `force_upcast` VAE in fp32 (`upcasts_vae`).
    let upcast = d.upcasts_vae && training.precision == Precision::Fp16Mixed && d.vae.as_ref().is_some_and(Vae::force_upcast);
    // Bytes of one tensor as loaded: the denoiser's linears in the chosen format.
    let stored = |t: &ParamTensor| -> f64 {
        let per = match t.scope {
            Scope::Layer => crate::model::inference::weight_bytes(t, training, 1, false),
            Scope::Vae if upcast => F32,
            _ => bytes,
        };
        t.numel() * per
    };
    let held = |tensors: &[ParamTensor]| -> f64 {
        match o.offload {
            GenerationOffload::None | GenerationOffload::Model => tensors.iter().map(stored).sum::<f64>(),
            GenerationOffload::Sequential => tensors.iter().map(stored).fold(0.0, f64::max),
        }
    };
    if o.offload == GenerationOffload::None {
        for (name, tensors) in [("denoiser weights", &denoiser), ("VAE weights", &vae), ("text encoder weights", &text)] {
            if !tensors.is_empty() {
                ledger.add(Component::Parameters, name, held(tensors), WEIGHTS, Lifetime::WholeStep);
            }
        }
    }
    // A stage's part is brought in for it under offload: its weights are parameters of that
    // moment only.
    let moved = |ledger: &mut Ledger, name: &'static str, tensors: &[ParamTensor], moment: Moment| {
        if o.offload != GenerationOffload::None {
            ledger.add(Component::Parameters, name, held(tensors), WEIGHTS, Lifetime::Transient(moment));
        }
    };
    if !d.text_encoders.is_empty() {
        let encode = d.text_encoders.iter().map(|t: &TextEncoder| t.forward_peak(prompts, bytes, true)).fold(0.0, f64::max);
        moved(ledger, "text encoder weights (on the GPU for the encode)", &text, Moment::TextEncode);
        ledger.add(Component::Temporary, "prompt encoding", encode, WORKSPACE, Lifetime::Transient(Moment::TextEncode));
    }
    if let Some(den) = &d.denoiser {
        let batch = if d.guidance(training) { 2 * prompts } else { prompts };
        let run = d.run(training, batch);
        // A quantised linear's 16-bit copy for its matmul (the largest one's, one at a time).
        let dequantised = if training.serving.weights.is_some_and(|f| f != crate::model::inputs::WeightFormat::Half) {
            denoiser.iter().filter(|t| t.linear.is_some()).map(ParamTensor::numel).fold(0.0, f64::max) * bytes
        } else {
            0.0
        };
        moved(ledger, "denoiser weights (on the GPU for its calls)", &denoiser, Moment::Denoise);
        ledger.add(Component::Temporary, "denoiser call", den.forward_peak(&run) + dequantised, WORKSPACE, Lifetime::Transient(Moment::Denoise));
        // The prompt embeddings and the latents stay on the GPU through the loop.
        let latents = (run.batch * run.latent_frames * run.latent_height * run.latent_width * den.latent_channels()) as f64 * bytes;
        let embeddings = (run.batch * run.text_tokens) as f64 * d.text_encoders.iter().map(|t| t.hidden).max().unwrap_or(0) as f64 * bytes;
        ledger.add(Component::Activations, "latents and prompt embeddings", latents + embeddings, WORKSPACE, Lifetime::WholeStep);
    }
    if let Some(v) = &d.vae {
        let mut run = d.run(training, prompts);
        if upcast {
            run.precision = Precision::Fp32;
        }
        moved(ledger, "VAE weights (on the GPU for the decode)", &vae, Moment::VaeDecode);
        ledger.add(Component::Temporary, "VAE decode", v.decode_peak(&run, o.vae_tiling), WORKSPACE, Lifetime::Transient(Moment::VaeDecode));
    }
}
