//! Diffusers component configs (a `config.json` carrying `_class_name`), a pipeline's
//! transformers text-encoder configs, and whole pipelines (`model_index.json` plus its
//! components) read into a [`DiffusionArch`].
//!
//! A pipeline is read as `DiffusionPipeline.from_pretrained` builds it: `model_index.json`
//! maps each component name to `[library, class]`; every component Headroom counts (the
//! denoiser, the VAE, the text encoders) must come with its config; tokenizers, schedulers,
//! feature extractors and safety checkers hold no GPU weights worth counting and are skipped;
//! any other model component is named in a note as not counted.

pub mod cogvideox_vae;
pub mod dc_ae;
pub mod dit;
pub mod hunyuan_vae;
mod lists;
pub mod ltx_vae;
pub mod text_encoder;
pub mod unet;
pub mod vae;
pub mod wan_vae;

use serde_json::Value;

use crate::error::InputError;
use crate::model::diffusion::pipeline::{Denoiser, DiffusionArch, Resident, Vae};
use crate::model::diffusion::text_encoder::{TextEncoder, TextEncoderKind};

/// What a pipeline class does by default, from its diffusers `__call__`.
struct PipelineDefaults {
    /// `[width, height]` in pixels.
    resolution: [u64; 2],
    frames: u64,
    /// Classifier-free guidance batched with the prompt (`torch.cat([latents] * 2)`).
    guidance: bool,
    /// Tokens of the T5-style encoder (`max_sequence_length`), when the pipeline has one.
    long_tokens: u64,
}

/// Each pipeline's defaults, from its `pipeline_*.py` in diffusers 0.42: default sizes
/// (`default_sample_size × vae_scale_factor`, or the `height`/`width`/`num_frames`
/// defaults of `__call__`), whether guidance concatenates the latents, and
/// `max_sequence_length`.
fn pipeline_defaults(class: &str) -> Option<PipelineDefaults> {
    let d = |w, h, frames, guidance, long_tokens| Some(PipelineDefaults { resolution: [w, h], frames, guidance, long_tokens });
    match class {
        "StableDiffusionPipeline" => d(512, 512, 1, true, 0),
        "StableDiffusionXLPipeline" => d(1024, 1024, 1, true, 0),
        // `max_sequence_length: int = 256`; CLIP's 77 tokens are concatenated in front.
        "StableDiffusion3Pipeline" => d(1024, 1024, 1, true, 256),
        // Flux.1-dev is guidance-distilled (`guidance_embeds`); `true_cfg_scale` runs the
        // negative prompt as a second call, never one doubled batch. `max_sequence_length: 512`.
        "FluxPipeline" => d(1024, 1024, 1, false, 512),
        // `height=480, width=832, num_frames=81`; the unconditional pass is a second
        // `self.transformer(...)` call under `with self.transformer.cache_context("uncond")`.
        "WanPipeline" => d(832, 480, 81, false, 512),
        "CogVideoXPipeline" => d(720, 480, 49, true, 226),
        "LTXPipeline" => d(704, 480, 161, true, 128),
        "HunyuanVideoPipeline" => d(1280, 720, 129, false, 256),
        "PixArtSigmaPipeline" => d(1024, 1024, 1, true, 300),
        "SanaPipeline" => d(1024, 1024, 1, true, 300),
        _ => None,
    }
}

/// Components that hold no GPU weights worth counting.
const SKIPPED: [&str; 6] = ["tokenizer", "tokenizer_2", "tokenizer_3", "scheduler", "feature_extractor", "safety_checker"];

/// Whether a config is a diffusers component or a pipeline's text encoder (a `LlamaModel` or
/// `Gemma2Model` config alone is an LLM's: it is a text encoder inside a pipeline only).
pub fn is_component(cfg: &Value) -> bool {
    cfg.get("_class_name").is_some() || text_encoder::kind_of(cfg).is_some_and(|k| !matches!(k, TextEncoderKind::Llama | TextEncoderKind::Gemma2))
}

/// A denoiser from its config, if `class` is one.
fn read_denoiser(class: &str, cfg: &Value) -> Option<Result<Denoiser, InputError>> {
    match class {
        "UNet2DConditionModel" => Some(unet::read(cfg).map(Denoiser::Unet)),
        c if dit::CLASSES.contains(&c) => Some(dit::read(cfg).map(Denoiser::Dit)),
        _ => None,
    }
}

/// A VAE from its config, if `class` is one.
fn read_vae(class: &str, cfg: &Value) -> Option<Result<Vae, InputError>> {
    match class {
        "AutoencoderKL" => Some(vae::read(cfg).map(Vae::Kl)),
        "AutoencoderKLWan" => Some(wan_vae::read(cfg).map(Vae::Wan)),
        "AutoencoderKLCogVideoX" => Some(cogvideox_vae::read(cfg).map(Vae::CogVideoX)),
        "AutoencoderKLHunyuanVideo" => Some(hunyuan_vae::read(cfg).map(Vae::HunyuanVideo)),
        "AutoencoderKLLTXVideo" => Some(ltx_vae::read(cfg).map(Vae::LtxVideo)),
        "AutoencoderDC" => Some(dc_ae::read(cfg).map(Vae::Dc)),
        _ => None,
    }
}

/// Diffusers component classes Headroom reads.
pub const COMPONENT_CLASSES: &[&str] = &[
    "UNet2DConditionModel", "FluxTransformer2DModel", "SD3Transformer2DModel", "WanTransformer3DModel", "AutoencoderKL", "AutoencoderKLWan", "AutoencoderKLCogVideoX",
    "AutoencoderKLHunyuanVideo", "AutoencoderKLLTXVideo", "AutoencoderDC",
];

fn class_of(cfg: &Value) -> Result<&str, InputError> {
    match cfg.get("_class_name") {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(InputError::new("_class_name", "must be a string")),
        None => Err(InputError::new("_class_name", "missing")),
    }
}

/// One component's config (diffusers `_class_name`, or a transformers text encoder), planned
/// as a pipeline of that part alone.
pub fn read_component(cfg: &Value) -> Result<DiffusionArch, InputError> {
    if text_encoder::kind_of(cfg).is_some() {
        let t = text_encoder::read(cfg, None)?;
        return Ok(alone(t.kind.class(), None, None, vec![t]));
    }
    let class = class_of(cfg)?;
    if let Some(d) = read_denoiser(class, cfg) {
        return Ok(alone(class, Some(d?), None, Vec::new()));
    }
    if let Some(v) = read_vae(class, cfg) {
        return Ok(alone(class, None, Some(v?), Vec::new()));
    }
    Err(unknown_class(class))
}

/// What a VAE whose encode or decode workspace is not modelled yet says in the plan's notes.
fn unmodelled_vae_note(v: &Vae) -> Option<String> {
    let missing: Vec<&str> = [("encode", v.encode_measured()), ("decode", v.decode_measured())].iter().filter(|(_, m)| !m).map(|(s, _)| *s).collect();
    (!missing.is_empty())
        .then(|| format!("the VAE ({}) counts its weights, but its {} workspace is not modelled yet (not measured): that term is 0", v.class(), missing.join(" and ")))
}

/// The notes a single component's plan carries (a VAE whose workspace is not modelled).
pub fn component_notes(arch: &DiffusionArch) -> Vec<String> {
    arch.vae.as_ref().and_then(unmodelled_vae_note).into_iter().collect()
}

fn unknown_class(class: &str) -> InputError {
    let mut known: Vec<&str> = COMPONENT_CLASSES.to_vec();
    known.extend(text_encoder::CLASSES);
    InputError::new("_class_name", format!("\"{}\" is not a class Headroom reads; it reads {}", crate::safe_text::quoted(class), known.join(", ")))
}

/// A pipeline of one component, with the defaults of the pipeline that usually holds it.
fn alone(class: &str, denoiser: Option<Denoiser>, vae: Option<Vae>, text_encoders: Vec<TextEncoder>) -> DiffusionArch {
    let defaults = denoiser.as_ref().and_then(|d| pipeline_defaults(usual_pipeline(d.class())));
    let long = defaults.as_ref().map_or(0, |p| p.long_tokens);
    DiffusionArch {
        class: class.to_string(),
        text_tokens: text_tokens(class, &text_encoders, long),
        resolution: defaults.as_ref().map_or([1024, 1024], |p| p.resolution),
        frames: defaults.as_ref().map_or(1, |p| p.frames),
        guidance: defaults.as_ref().is_some_and(|p| p.guidance),
        upcasts_vae: false,
        denoiser,
        vae,
        text_encoders,
        resident: Resident::all(),
    }
}

/// The pipeline a denoiser class usually comes in.
fn usual_pipeline(denoiser_class: &str) -> &'static str {
    match denoiser_class {
        "UNet2DConditionModel" => "StableDiffusionXLPipeline",
        "SD3Transformer2DModel" => "StableDiffusion3Pipeline",
        "FluxTransformer2DModel" => "FluxPipeline",
        "WanTransformer3DModel" => "WanPipeline",
        "CogVideoXTransformer3DModel" => "CogVideoXPipeline",
        "LTXVideoTransformer3DModel" => "LTXPipeline",
        "HunyuanVideoTransformer3DModel" => "HunyuanVideoPipeline",
        "PixArtTransformer2DModel" => "PixArtSigmaPipeline",
        "SanaTransformer2DModel" => "SanaPipeline",
        _ => "",
    }
}

/// Tokens the denoiser attends to: CLIP's 77 for the UNet pipelines; the long encoder's
/// `max_sequence_length` where there is one, with SD3's 77 CLIP tokens in front.
fn text_tokens(class: &str, encoders: &[TextEncoder], long: u64) -> u64 {
    let clip = encoders.iter().filter(|t| !t.is_long()).map(|t| t.max_tokens).max().unwrap_or(77);
    match (class, long) {
        ("StableDiffusion3Pipeline", l) if l > 0 => clip + l,
        (_, l) if l > 0 => l,
        _ => clip,
    }
}

/// A whole pipeline: `{"model_index": {…}, "<component>": {…config…}, …}`.
pub fn read_pipeline(obj: &Value) -> Result<(DiffusionArch, Vec<String>), InputError> {
    let map = obj.as_object().ok_or_else(|| InputError::new("", "expected an object with \"model_index\" and the component configs"))?;
    let index = map.get("model_index").and_then(Value::as_object).ok_or_else(|| InputError::new("model_index", "missing: the pipeline's model_index.json"))?;
    let class = match index.get("_class_name") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(InputError::new("model_index._class_name", "missing: the pipeline class")),
    };
    let defaults = pipeline_defaults(&class);
    let mut notes = Vec::new();
    if defaults.is_none() {
        notes.push(format!(
            "pipeline class \"{}\" is not one Headroom knows: its default size, text length and guidance are guessed from the denoiser",
            crate::safe_text::quoted(&class)
        ));
    }
    let long = defaults.as_ref().map_or(512, |d| d.long_tokens);
    let (mut denoiser, mut vae, mut encoders) = (None, None, Vec::new());
    let mut names: Vec<&String> = index.keys().filter(|k| !k.starts_with('_')).collect();
    names.sort();
    for name in names {
        let Some(entry) = index[name].as_array() else { continue };
        let Some(component_class) = entry.get(1).and_then(Value::as_str) else { continue };
        if SKIPPED.contains(&name.as_str()) || entry.first().is_some_and(Value::is_null) {
            continue;
        }
        let field = |e: InputError| e.within(name);
        let cfg = map.get(name.as_str());
        if let Some(kind) = text_encoder_class(component_class) {
            let cfg = cfg.ok_or_else(|| missing(name, component_class))?;
            let tokens = if kind { None } else { Some(long + template_tokens(&class, component_class)) };
            encoders.push(text_encoder::read(cfg, tokens).map_err(field)?);
            if component_class == "Gemma2Model" && class == "SanaPipeline" {
                notes.push("Sana's prompt encode is counted at max_sequence_length (300) tokens: the default complex_human_instruction's own tokens are not counted".to_string());
            }
        } else if let Some(result) = read_denoiser(component_class, cfg.unwrap_or(&Value::Null)) {
            cfg.ok_or_else(|| missing(name, component_class))?;
            let read = result.map_err(field)?;
            // A second denoiser (`transformer_2`) is Wan 2.2 A14B's low-noise expert; the
            // pipeline switches to it below `boundary_ratio` (`Denoiser::Experts`).
            denoiser = Some(match denoiser.take() {
                None => read,
                Some(high) => {
                    let boundary_ratio = match index.get("boundary_ratio") {
                        Some(v) => v
                            .as_f64()
                            .filter(|r| (0.0..=1.0).contains(r))
                            .ok_or_else(|| InputError::new("model_index.boundary_ratio", format!("must be a number from 0 to 1, got {v}")))?,
                        None => return Err(InputError::new("model_index.boundary_ratio", "missing: two denoisers need the timestep ratio where the pipeline switches")),
                    };
                    notes.push(format!(
                        "two experts ({} and {}): generation holds both and runs one per step (switching at boundary_ratio {boundary_ratio}); a training run of this pipeline counts both as trained, while training tools train one expert per run: plan that expert's transformer config alone for it",
                        "transformer", crate::safe_text::quoted(name)
                    ));
                    Denoiser::Experts { high: Box::new(high), low: Box::new(read), boundary_ratio }
                }
            });
        } else if let Some(result) = read_vae(component_class, cfg.unwrap_or(&Value::Null)) {
            cfg.ok_or_else(|| missing(name, component_class))?;
            vae = Some(result.map_err(field)?);
        } else {
            notes.push(format!("component {} ({}) is not counted", crate::safe_text::quoted(name), crate::safe_text::quoted(component_class)));
        }
    }
    notes.extend(vae.as_ref().and_then(unmodelled_vae_note));
    let fallback = denoiser.as_ref().and_then(|d| pipeline_defaults(usual_pipeline(d.class())));
    let defaults = defaults.or(fallback);
    let arch = DiffusionArch {
        text_tokens: text_tokens(&class, &encoders, defaults.as_ref().map_or(0, |d| d.long_tokens)),
        resolution: defaults.as_ref().map_or([1024, 1024], |d| d.resolution),
        frames: defaults.as_ref().map_or(1, |d| d.frames),
        guidance: defaults.as_ref().is_some_and(|d| d.guidance),
        // `pipeline_stable_diffusion_xl.py` `__call__`: an fp16 VAE with `force_upcast` decodes
        // in fp32 (the other pipelines decode in the VAE's own dtype).
        upcasts_vae: class.starts_with("StableDiffusionXL"),
        class,
        denoiser,
        vae,
        text_encoders: encoders,
        resident: Resident::all(),
    };
    arch.check()?;
    Ok((arch, notes))
}

/// `Some(true)` for a CLIP text encoder class, `Some(false)` for a T5-style one.
fn text_encoder_class(class: &str) -> Option<bool> {
    match class {
        "CLIPTextModel" | "CLIPTextModelWithProjection" => Some(true),
        "T5EncoderModel" | "UMT5EncoderModel" | "LlamaModel" | "Gemma2Model" => Some(false),
        _ => None,
    }
}

/// Tokens an LLM text encoder reads beyond `max_sequence_length`: HunyuanVideo's prompt
/// template, whose first `crop_start` (95) tokens are encoded and then cropped
/// (`pipeline_hunyuan_video.py` `DEFAULT_PROMPT_TEMPLATE`, `_get_llama_prompt_embeds`:
/// `max_sequence_length += crop_start`). Sana's default `complex_human_instruction` adds its
/// own tokens too (`pipeline_sana.py` `_get_gemma_prompt_embeds`: `max_length_all =
/// num_chi_prompt_tokens + max_sequence_length - 2`), which need its tokenizer to count: not
/// added (a note says so).
fn template_tokens(pipeline: &str, encoder_class: &str) -> u64 {
    match (pipeline, encoder_class) {
        ("HunyuanVideoPipeline", "LlamaModel") => 95,
        _ => 0,
    }
}

fn missing(name: &str, class: &str) -> InputError {
    InputError::new(name, format!("missing: model_index.json lists {}, so its config.json is needed", crate::safe_text::quoted(class)))
}
