//! The Scenario: the whole input of a plan, the same serde type for the URL, the CLI, the
//! test fixtures and the embed view.
//!
//! Decoding is the only fallible step of Headroom: [`Scenario::from_json`] turns text into a
//! scenario plus warnings (unknown keys, which fall back to defaults), or an
//! [`InputError`] naming the bad field. [`Scenario::validate`] then lists, field by field,
//! combinations the model can compute but that no framework would run (TP not dividing
//! the heads, more pipeline stages than layers, …).

use std::borrow::Cow;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::InputError;
use crate::import::hf_config::import_hf_config;
use crate::import::presets::{model_preset, model_preset_ids};
use crate::model::arch::{Architecture, Stack};
use crate::model::device::{device_preset, Device};
pub use crate::model::inputs::{
    Attention, Checkpointing, Engine, Frozen, KvCacheFormat, Lora, LoraBase, Loss, MixerKernels, Mode, Nf4Quantizer, Offload, Optimizer, OptimizerImpl, Parallel, Platform,
    PpSchedule, Runtime, Serving, Techniques, Training, WeightFormat, Zero, Zero3Impl,
};
use crate::profiles::Framework;

/// The plan of a scenario: resolves the model and the device, runs the memory model
/// ([`crate::model::estimate`]), and adds what the user should know — how the model was read
/// first, validation messages last.
pub fn estimate(scenario: &Scenario) -> crate::model::breakdown::Breakdown {
    use crate::model::breakdown::Breakdown;
    let Some(arch) = scenario.model.architecture() else {
        return Breakdown { warnings: vec![format!("unknown model \"{}\": nothing to estimate", scenario.model.label())], ..Breakdown::default() };
    };
    let (device, device_warning) = scenario.device.resolve_or_default();
    let inputs = crate::model::Inputs { arch: &arch, training: &scenario.training, parallel: &scenario.parallel, device: &device, runtime: &scenario.runtime };
    let mut b = crate::model::estimate(&inputs);
    let mut warnings = scenario.model.notes().to_vec();
    warnings.extend(device_warning);
    warnings.append(&mut b.warnings);
    warnings.extend(scenario.validate().into_iter().map(|e| e.to_string()));
    b.warnings = warnings;
    b
}

/// Current version of the scenario format; written into every encoded scenario.
pub const SCENARIO_VERSION: u32 = 1;

/// Everything a plan depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scenario {
    pub version: u32,
    pub model: ModelSpec,
    pub training: Training,
    pub parallel: Parallel,
    pub device: DeviceSpec,
    /// Platform (what happens beyond the GPU's memory) and GPU sharing.
    pub runtime: Runtime,
    /// The framework profile the switches started from (`crate::plan::profiles`).
    #[serde(skip_serializing_if = "is_custom")]
    pub framework: Framework,
    /// The whole run the step belongs to: its data, epochs and price (`crate::plan::run`).
    #[serde(skip_serializing_if = "RunSpec::is_default")]
    pub run: RunSpec,
}

fn is_custom(f: &Framework) -> bool {
    *f == Framework::Custom
}

impl Default for Scenario {
    /// Llama-3-8B, bf16-mixed AdamW, micro-batch 1, sequence 4096, on one H100 80GB:
    /// a common first attempt that does not fit, so the first view already teaches something.
    fn default() -> Self {
        Scenario {
            version: SCENARIO_VERSION,
            model: ModelSpec::default(),
            training: Training::default(),
            parallel: Parallel::default(),
            device: DeviceSpec::default(),
            runtime: Runtime::default(),
            framework: Framework::Custom,
            run: RunSpec::default(),
        }
    }
}

/// The run a step belongs to: how much data, how many passes over it, and what a GPU-hour
/// costs. `crate::plan::run` turns it into steps, hours, GPU-hours, energy and cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSpec {
    /// Tokens in one epoch of the dataset (training); tokens to generate (inference). For
    /// vision models without tokens, images: one image is one sample.
    pub dataset_tokens: u64,
    /// Passes over the dataset (fractions allowed).
    pub epochs: f64,
    /// Price of one GPU-hour of the scenario's device; `None`: the catalogue's example
    /// figure for [`RunSpec::pricing`] (`crate::plan::prices`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_gpu_hour: Option<f64>,
    /// Which example price applies when no price is given.
    pub pricing: Pricing,
}

impl Default for RunSpec {
    /// One billion tokens, one epoch, the example on-demand price.
    fn default() -> Self {
        RunSpec { dataset_tokens: 1_000_000_000, epochs: 1.0, price_per_gpu_hour: None, pricing: Pricing::OnDemand }
    }
}

impl RunSpec {
    fn is_default(&self) -> bool {
        *self == RunSpec::default()
    }
}

/// On-demand or interruptible (spot) capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pricing {
    #[default]
    OnDemand,
    Spot,
}

/// Largest dataset accepted, in tokens: 10¹⁵, a thousand times today's largest pre-training runs.
pub const LIMIT_DATASET_TOKENS: u64 = 1_000_000_000_000_000;

/// The model: a preset id, our own architecture fields, or a pasted `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelSpec {
    /// `{"preset": "meta-llama/Meta-Llama-3-8B"}` (a Hub id, or an alias such as `llama-3-8b`)
    Preset(String),
    /// `{"arch": {"family": "transformer", "hidden": 4096, …}}`
    Arch(Architecture),
    /// `{"hf_config": {…}}`: the raw config (kept for re-encoding), what it builds, and
    /// what the importer noted (defaulted keys, an approximate family, a vision tower left out).
    HfConfig { raw: Value, arch: Architecture, notes: Vec<String> },
    /// `{"pipeline": {"model_index": {…}, "unet": {…}, …}}`: a diffusers pipeline's
    /// `model_index.json` and its component configs (kept for re-encoding), what they build,
    /// and what the importer noted.
    Pipeline { raw: Value, arch: Architecture, notes: Vec<String> },
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec::Preset("meta-llama/Meta-Llama-3-8B".into())
    }
}

impl ModelSpec {
    /// The one decoder of a pasted or linked `config.json` (scenario JSON, URL, model picker).
    pub fn from_hf_config(raw: Value) -> Result<ModelSpec, InputError> {
        if crate::import::diffusers::is_component(&raw) {
            let arch = crate::import::diffusers::read_component(&raw)?;
            let notes = crate::import::diffusers::component_notes(&arch);
            return Ok(ModelSpec::HfConfig { raw, arch: Architecture::Diffusion(Box::new(arch)), notes });
        }
        let imported = import_hf_config(&raw)?;
        Ok(ModelSpec::HfConfig { raw, arch: imported.arch, notes: imported.warnings })
    }

    /// A diffusers pipeline (`model_index.json` and its component configs).
    pub fn from_pipeline(raw: Value) -> Result<ModelSpec, InputError> {
        let (arch, notes) = crate::import::diffusers::read_pipeline(&raw)?;
        Ok(ModelSpec::Pipeline { raw, arch: Architecture::Diffusion(Box::new(arch)), notes })
    }

    /// What the user should know about how the model was read.
    pub fn notes(&self) -> &[String] {
        match self {
            ModelSpec::Preset(id) => model_preset(id).map_or(&[], |p| p.warnings.as_slice()),
            ModelSpec::Arch(_) => &[],
            ModelSpec::HfConfig { notes, .. } | ModelSpec::Pipeline { notes, .. } => notes,
        }
    }

    /// The architecture, or `None` for an unknown preset id.
    pub fn architecture(&self) -> Option<Cow<'_, Architecture>> {
        match self {
            ModelSpec::Preset(id) => model_preset(id).map(|p| Cow::Borrowed(&p.arch)),
            ModelSpec::Arch(arch) | ModelSpec::HfConfig { arch, .. } | ModelSpec::Pipeline { arch, .. } => Some(Cow::Borrowed(arch)),
        }
    }

    /// A short label for the model (preset id, or the config's model type and size).
    pub fn label(&self) -> String {
        match self {
            ModelSpec::Preset(id) => id.clone(),
            ModelSpec::Arch(_) => "custom architecture".into(),
            ModelSpec::Pipeline { raw, arch, .. } => {
                let class = raw.pointer("/model_index/_class_name").and_then(Value::as_str).unwrap_or("pipeline");
                format!("{} {} (model_index.json)", crate::safe_text::quoted(class), crate::format::count(arch.param_count() as u64))
            }
            ModelSpec::HfConfig { raw, arch, .. } => {
                let family = raw.get("model_type").or_else(|| raw.get("_class_name")).and_then(Value::as_str).unwrap_or("custom");
                format!("{} {} (config.json)", crate::safe_text::quoted(family), crate::format::count(arch.param_count() as u64))
            }
        }
    }
}

impl Serialize for ModelSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        match self {
            ModelSpec::Preset(id) => map.serialize_entry("preset", id)?,
            ModelSpec::Arch(arch) => map.serialize_entry("arch", arch)?,
            ModelSpec::HfConfig { raw, .. } => map.serialize_entry("hf_config", raw)?,
            ModelSpec::Pipeline { raw, .. } => map.serialize_entry("pipeline", raw)?,
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ModelSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            preset: Option<String>,
            arch: Option<Architecture>,
            hf_config: Option<Value>,
            pipeline: Option<Value>,
        }
        let raw = Raw::deserialize(d)?;
        if let Some(p) = raw.pipeline {
            if raw.preset.is_some() || raw.arch.is_some() || raw.hf_config.is_some() {
                return Err(de::Error::custom("give exactly one of \"preset\", \"arch\", \"hf_config\" or \"pipeline\""));
            }
            return ModelSpec::from_pipeline(p).map_err(|e| de::Error::custom(e.within("pipeline")));
        }
        match (raw.preset, raw.arch, raw.hf_config) {
            (Some(id), None, None) => {
                if model_preset(&id).is_none() {
                    let known: Vec<_> = model_preset_ids().collect();
                    return Err(de::Error::custom(format!(
                        "unknown model preset \"{}\" ({} presets are known: `headroom presets` lists them)",
                        crate::safe_text::quoted(&id),
                        known.len()
                    )));
                }
                Ok(ModelSpec::Preset(id))
            }
            (None, Some(arch), None) => {
                arch.check().map_err(|e| de::Error::custom(e.within("arch")))?;
                Ok(ModelSpec::Arch(arch))
            }
            (None, None, Some(raw)) => ModelSpec::from_hf_config(raw).map_err(|e| de::Error::custom(e.within("hf_config"))),
            _ => Err(de::Error::custom("give exactly one of \"preset\", \"arch\", \"hf_config\" or \"pipeline\"")),
        }
    }
}

/// The GPU: a preset, optionally with fields overridden, or a fully custom device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hbm_bandwidth: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_link_bandwidth: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bf16_tflops: Option<f64>,
    /// GPU-to-GPU bandwidth per direction inside a node (NVLink generation or PCIe), bytes/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interconnect_bandwidth: Option<f64>,
    /// Network bandwidth per GPU per direction between nodes (InfiniBand / Ethernet), bytes/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_bandwidth: Option<f64>,
    /// GPUs per node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u64>,
}

impl Default for DeviceSpec {
    fn default() -> Self {
        DeviceSpec::preset("h100-sxm-80gb")
    }
}

impl DeviceSpec {
    pub fn preset(id: &str) -> Self {
        DeviceSpec { preset: Some(id.into()), ..DeviceSpec::custom() }
    }

    /// A device with no preset and no figures yet (each one is required before it resolves).
    pub fn custom() -> Self {
        DeviceSpec {
            preset: None,
            capacity_bytes: None,
            hbm_bandwidth: None,
            host_link_bandwidth: None,
            bf16_tflops: None,
            interconnect_bandwidth: None,
            network_bandwidth: None,
            gpus_per_node: None,
        }
    }

    /// The device, or the H100 SXM 80GB figures with a warning saying why (the one
    /// fallback: the page and the CLI never stop on an unknown device).
    pub fn resolve_or_default(&self) -> (Device, Option<String>) {
        match self.resolve() {
            Ok(d) => (d, None),
            Err(e) => (device_preset("h100-sxm-80gb").unwrap_or_else(Device::placeholder), Some(format!("{e}; using the H100 SXM 80GB figures"))),
        }
    }

    /// The device with overrides applied, or the reason it cannot be built.
    pub fn resolve(&self) -> Result<Device, InputError> {
        let mut device = match &self.preset {
            Some(id) => device_preset(id).ok_or_else(|| InputError::new("device.preset", format!("unknown device \"{}\"", crate::safe_text::quoted(id))))?,
            None => {
                let missing = [
                    ("capacity_bytes", self.capacity_bytes),
                    ("hbm_bandwidth", self.hbm_bandwidth),
                    ("host_link_bandwidth", self.host_link_bandwidth),
                    ("bf16_tflops", self.bf16_tflops),
                ]
                .into_iter()
                .find(|(_, v)| v.is_none());
                if let Some((field, _)) = missing {
                    return Err(InputError::new(format!("device.{field}"), "required for a custom device (or give a preset)"));
                }
                let custom = device_preset("h100-sxm-80gb").ok_or_else(|| InputError::new("device", "catalogue is empty"))?;
                Device { id: "custom".into(), name: "Custom device".into(), compute_major: 8, ..custom }
            }
        };
        let check = |field: &str, v: Option<f64>, max: f64| -> Result<Option<f64>, InputError> {
            match v {
                Some(x) if !(x.is_finite() && x > 0.0 && x <= max) => Err(InputError::new(format!("device.{field}"), format!("must be a positive number up to {max:e}, got {x}"))),
                other => Ok(other),
            }
        };
        if let Some(x) = check("capacity_bytes", self.capacity_bytes, 1e15)? {
            device.capacity_bytes = x;
        }
        if let Some(x) = check("hbm_bandwidth", self.hbm_bandwidth, 1e15)? {
            device.hbm_bandwidth = x;
        }
        if let Some(x) = check("host_link_bandwidth", self.host_link_bandwidth, 1e15)? {
            device.host_link_bandwidth = x;
        }
        if let Some(x) = check("bf16_tflops", self.bf16_tflops, 1e6)? {
            device.bf16_tflops = x;
        }
        if let Some(x) = check("interconnect_bandwidth", self.interconnect_bandwidth, 1e15)? {
            device.interconnect_bandwidth = x;
        }
        if let Some(x) = check("network_bandwidth", self.network_bandwidth, 1e15)? {
            device.network_bandwidth = x;
        }
        match self.gpus_per_node {
            Some(0) => return Err(InputError::new("device.gpus_per_node", "must be at least 1")),
            Some(n) if n > 1 << 20 => return Err(InputError::new("device.gpus_per_node", format!("{n} GPUs in one node is not a real machine"))),
            Some(n) => device.gpus_per_node = n,
            None => {}
        }
        Ok(device)
    }
}

impl Scenario {
    /// Sets the framework and the switches its profile decides ([`crate::profiles`]).
    /// Optimizer-in-backward is left off where gradient accumulation needs the gradients
    /// (torchtune refuses the pair).
    pub fn apply_framework(&mut self, framework: Framework) {
        self.framework = framework;
        let Some(d) = framework.defaults() else {
            return;
        };
        self.training.precision = d.precision;
        self.training.attention = d.attention;
        self.training.techniques.loss = d.loss;
        self.training.checkpointing = d.checkpointing;
        self.training.techniques.optimizer_in_backward = d.optimizer_in_backward && self.training.grad_accum <= 1;
        self.training.techniques.activation_offload = d.activation_offload;
        self.training.techniques.liger_kernels = d.liger_kernels;
        self.training.techniques.compile_model = d.compile_model;
        self.training.techniques.litgpt_modules = d.litgpt_modules;
        self.training.optimizer_impl = d.optimizer_impl;
        self.parallel.gradient_as_bucket_view = d.gradient_as_bucket_view;
        self.parallel.fsdp_version = d.fsdp_version;
        self.parallel.fsdp_load = d.fsdp_load;
        self.training.fp32_gradients = d.fp32_gradients;
        if let Some(lora) = &mut self.training.lora {
            lora.fp32_unquantised = d.qlora_fp32_unquantised;
            lora.fp32_adapters = d.fp32_adapters;
            lora.quantizer = d.nf4_quantizer;
        }
        if let Some(z) = d.zero {
            self.parallel.zero = z;
        }
    }
}

/// A decoded scenario and the keys that were ignored on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub scenario: Scenario,
    /// Human-readable warnings ("unknown field `training.batch` ignored").
    pub warnings: Vec<String>,
}

/// The run's data, epochs and price: in range, finite.
fn validate_run(r: &RunSpec, errors: &mut Vec<InputError>) {
    if r.dataset_tokens == 0 || r.dataset_tokens > LIMIT_DATASET_TOKENS {
        errors.push(InputError::new("run.dataset_tokens", format!("must be between 1 and {LIMIT_DATASET_TOKENS}, got {}", r.dataset_tokens)));
    }
    if !(r.epochs.is_finite() && r.epochs > 0.0 && r.epochs <= 1e6) {
        errors.push(InputError::new("run.epochs", format!("must be a number in (0, 1000000], got {}", crate::format::short_real(r.epochs))));
    }
    if let Some(price) = r.price_per_gpu_hour {
        if !(price.is_finite() && (0.0..=1e6).contains(&price)) {
            errors.push(InputError::new("run.price_per_gpu_hour", format!("must be a price between 0 and 1000000 per GPU-hour, got {}", crate::format::short_real(price))));
        }
    }
}

/// The engine settings' ranges: fractions in (0, 1], counts at least 1.
fn validate_serving(s: &Serving, errors: &mut Vec<InputError>) {
    for (field, value) in [("training.serving.gpu_memory_utilization", s.gpu_memory_utilization), ("training.serving.mem_fraction_static", s.mem_fraction_static)] {
        if let Some(v) = value {
            if !(v > 0.0 && v <= 1.0) {
                errors.push(InputError::new(field, format!("must be a fraction in (0, 1], got {}", crate::format::short_real(v))));
            }
        }
    }
    for (field, value, max) in [
        ("training.serving.max_model_len", s.max_model_len, LIMIT_SEQ),
        ("training.serving.max_num_seqs", s.max_num_seqs, LIMIT_BATCH),
        ("training.serving.max_num_batched_tokens", s.max_num_batched_tokens, LIMIT_SEQ),
        ("training.serving.block_size", s.block_size, 65_536),
    ] {
        if let Some(v) = value {
            if v == 0 || v > max {
                errors.push(InputError::new(field, format!("must be between 1 and {max}, got {v}")));
            }
        }
    }
}

impl Scenario {
    /// Parse scenario JSON. Missing fields take defaults; unknown fields are ignored with a
    /// warning; a malformed value is an error naming its field.
    pub fn from_json(text: &str) -> Result<Decoded, InputError> {
        crate::input_limits::check_size("", "a scenario", text.len(), crate::input_limits::SCENARIO_BYTES)?;
        // serde reads a struct from a JSON array too (fields in order): only an object is a scenario.
        if !text.trim_start().starts_with('{') {
            return Err(InputError::new("", "a scenario is a JSON object ({\"model\": …, \"training\": …}); this is not one"));
        }
        let mut ignored = Vec::new();
        let mut json = serde_json::Deserializer::from_str(text);
        let result: Result<Scenario, _> =
            serde_path_to_error::deserialize(serde_ignored::Deserializer::new(&mut json, &mut |path: serde_ignored::Path| ignored.push(path.to_string())));
        let scenario = result.map_err(|e| {
            let field = e.path().to_string();
            let message = e.into_inner().to_string();
            let field = if field == "." { String::new() } else { field };
            InputError::new(field, strip_position(&message))
        })?;
        json.end().map_err(|e| InputError::new("", strip_position(&e.to_string())))?;
        let input: Value = serde_json::from_str(text).map_err(|e| InputError::new("", strip_position(&e.to_string())))?;
        crate::json_shape::objects_where_expected(&input, &scenario)?;
        let scenario = scenario.with_profile_under(&input)?;
        let mut warnings: Vec<String> = ignored.into_iter().map(|p| format!("unknown field `{p}` ignored")).collect();
        if scenario.version > SCENARIO_VERSION {
            warnings.push(format!("scenario version {} is newer than this planner ({SCENARIO_VERSION}); read as version {SCENARIO_VERSION}", scenario.version));
        }
        Ok(Decoded { scenario, warnings })
    }

    /// The framework profile applied under the fields the JSON gives: a scenario naming
    /// `"framework": "torchtune"` gets the switches choosing torchtune on the page sets
    /// ([`Scenario::apply_framework`]), and every field written in `input` keeps its written
    /// value (the explicit field wins). A scenario written by [`Scenario::to_json`] holds every
    /// field, so it reads back unchanged.
    fn with_profile_under(self, input: &Value) -> Result<Scenario, InputError> {
        if self.framework == Framework::Custom {
            return Ok(self);
        }
        let mut profiled = self.clone();
        profiled.apply_framework(self.framework);
        let mut merged = serde_json::to_value(&profiled).map_err(|e| InputError::new("", e.to_string()))?;
        overlay(&mut merged, input);
        if let Value::Object(map) = &mut merged {
            // The model and the device were read already; the profile sets neither.
            map.remove("model");
            map.remove("device");
        }
        let mut back: Scenario = serde_json::from_value(merged).map_err(|e| InputError::new("", strip_position(&e.to_string())))?;
        back.model = self.model;
        back.device = self.device;
        Ok(back)
    }

    /// Pretty JSON of the scenario. Every switch a profile sets is written, even where serde
    /// leaves it out at its default (`lora.fp32_unquantised`, `lora.fp32_adapters`, `lora.quantizer`), so reading it back with
    /// [`Scenario::from_json`] keeps it over the profile's.
    pub fn to_json(&self) -> String {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let (Some(lora), Some(Value::Object(slot))) = (&self.training.lora, v.pointer_mut("/training/lora")) {
            slot.insert("fp32_unquantised".into(), Value::Bool(lora.fp32_unquantised));
            slot.insert("fp32_adapters".into(), Value::Bool(lora.fp32_adapters));
            slot.insert("quantizer".into(), serde_json::to_value(lora.quantizer).unwrap_or_default());
        }
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// Field-by-field problems: values out of range and parallel layouts that do not divide
    /// the model. Empty when the scenario is runnable.
    pub fn validate(&self) -> Vec<InputError> {
        let mut errors = Vec::new();
        let t = &self.training;
        let p = &self.parallel;
        if !matches!(p.fsdp_version, 1 | 2) {
            errors.push(InputError::new("parallel.fsdp_version", format!("must be 1 (FullyShardedDataParallel) or 2 (fully_shard), got {}", p.fsdp_version)));
        }
        let mut range = |field: &str, v: u64, max: u64| {
            if v == 0 || v > max {
                errors.push(InputError::new(field, format!("must be between 1 and {max}, got {v}")));
            }
        };
        range("training.micro_batch", t.micro_batch, LIMIT_BATCH);
        if let Some(n) = t.diffusion.text_tokens {
            range("training.diffusion.text_tokens", n, 65_536);
        }
        range("training.grad_accum", t.grad_accum, LIMIT_BATCH);
        range("parallel.dp", p.dp, LIMIT_DEGREE);
        range("parallel.tp", p.tp, LIMIT_DEGREE);
        range("parallel.pp", p.pp, LIMIT_DEGREE);
        range("parallel.cp", p.cp, LIMIT_DEGREE);
        range("parallel.ep", p.ep, LIMIT_DEGREE);
        range("parallel.virtual_stages", p.virtual_stages, 1024);
        range("runtime.jobs", self.runtime.jobs, 1024);
        range("training.techniques.loss_chunks", t.techniques.loss_chunks, 1024);
        if let Some(size) = t.image_size {
            range("training.image_size", size, 65_536);
        }
        if let Some([w, h]) = t.resolution {
            range("training.resolution", w, 65_536);
            range("training.resolution", h, 65_536);
        }
        if let Some(n) = t.images_per_sample {
            range("training.images_per_sample", n, 1024);
        }
        if let Some(n) = t.frames {
            range("training.frames", n, 4096);
        }
        if !(0.0..1.0).contains(&t.dropout) {
            errors.push(InputError::new("training.dropout", format!("must be a probability in [0, 1), got {}", crate::format::short_real(t.dropout))));
        }
        if let Some(lora) = &t.lora {
            if lora.rank == 0 || lora.rank > 65_536 {
                errors.push(InputError::new("training.lora.rank", format!("must be between 1 and 65536, got {}", lora.rank)));
            }
            if !(0.0..1.0).contains(&lora.dropout) {
                errors.push(InputError::new("training.lora.dropout", format!("must be a probability in [0, 1), got {}", crate::format::short_real(lora.dropout))));
            }
            if lora.targets.is_empty() {
                errors.push(InputError::new("training.lora.targets", "choose at least one layer to adapt"));
            }
        }
        if t.techniques.optimizer_in_backward && t.grad_accum > 1 {
            errors.push(InputError::new(
                "training.techniques.optimizer_in_backward",
                "cannot accumulate gradients: each gradient is freed by its update in backward (set grad_accum to 1)",
            ));
        }
        validate_serving(&t.serving, &mut errors);
        validate_run(&self.run, &mut errors);
        if let Some(ram) = self.runtime.host_memory_bytes {
            // 1 GiB to 64 TiB: below, no OS runs; above, no single machine exists.
            if !((1u64 << 30)..=(64u64 << 40)).contains(&ram) {
                errors.push(InputError::new("runtime.host_memory_bytes", format!("system RAM must be between 1 GiB and 64 TiB (in bytes), got {ram}")));
            }
        }
        let fraction = self.runtime.memory_fraction;
        if !(fraction > 0.0 && fraction <= 1.0) {
            errors.push(InputError::new("runtime.memory_fraction", format!("must be in (0, 1], got {fraction}")));
        }
        match self.device.resolve() {
            Err(e) => errors.push(e),
            Ok(d) if self.runtime.other_processes_bytes as f64 >= d.capacity_bytes => errors.push(InputError::new(
                "runtime.other_processes_bytes",
                format!("{} bytes used by other processes leave nothing of the {}'s memory", self.runtime.other_processes_bytes, d.name),
            )),
            Ok(_) => {}
        }
        if p.world_size() > LIMIT_WORLD {
            errors.push(InputError::new("parallel", format!("dp × tp × pp × cp = {} GPUs exceeds {LIMIT_WORLD}", p.world_size())));
        }
        if p.offload == Offload::OptimizerAndParams && p.zero < Zero::Parameters {
            errors.push(InputError::new("parallel.offload", "offloading parameters needs ZeRO-3 / FSDP"));
        }
        if p.pp_schedule == PpSchedule::Interleaved && p.pp < 2 {
            errors.push(InputError::new("parallel.pp_schedule", "the interleaved schedule needs pp ≥ 2"));
        }
        if p.ep > p.dp.max(1) && p.ep > 1 {
            errors.push(InputError::new("parallel.ep", format!("expert parallelism ({}) runs inside data parallelism ({})", p.ep, p.dp)));
        }
        match self.model.architecture() {
            None => errors.push(InputError::new("model.preset", format!("unknown model preset \"{}\"", crate::safe_text::quoted(&self.model.label())))),
            Some(arch) => self.validate_against(&arch, &mut errors),
        }
        errors
    }

    fn validate_against(&self, arch: &Architecture, errors: &mut Vec<InputError>) {
        let t = &self.training;
        let p = &self.parallel;
        // On the page, a pipeline waits for its parts' chunk (`model/diffusion/parts.rs`):
        // refused with a message meanwhile, so the estimate never runs without them.
        if matches!(arch, Architecture::Diffusion(_)) {
            errors.extend(crate::model::diffusion::parts::missing());
        }
        if let (Some(len), Architecture::Transformer(x)) = (t.serving.max_model_len, arch) {
            let positions = x.embedding.max_positions;
            if t.mode == Mode::Inference && t.serving.engine != Engine::Transformers && positions > 0 && len > positions {
                errors.push(InputError::new(
                    "training.serving.max_model_len",
                    format!("{len} tokens is longer than the model's {positions} positions (max_position_embeddings); engines refuse it"),
                ));
            }
        }
        let uses_tokens = !matches!(arch, Architecture::Resnet(_) | Architecture::Diffusion(_)) && !matches!(arch, Architecture::Transformer(x) if x.stack == Stack::Vision);
        if uses_tokens && (t.seq_len == 0 || t.seq_len > LIMIT_SEQ) {
            errors.push(InputError::new("training.seq_len", format!("must be between 1 and {LIMIT_SEQ}, got {}", t.seq_len)));
        }
        if let Architecture::Transformer(x) = arch {
            let (heads, kv_heads) = (x.attention.heads, x.attention.kv_heads);
            if p.tp > 1 && (heads % p.tp != 0 || kv_heads % p.tp != 0 && !p.tp.is_multiple_of(kv_heads)) {
                errors.push(InputError::new(
                    "parallel.tp",
                    format!("tp = {} must divide the {} attention heads (and the {} key/value heads, or be a multiple of them)", p.tp, heads, kv_heads),
                ));
            }
            if p.pp > x.layers {
                errors.push(InputError::new("parallel.pp", format!("{} pipeline stages exceed the {} layers", p.pp, x.layers)));
            } else if p.pp_schedule == PpSchedule::Interleaved {
                let chunks = p.pp.max(1).saturating_mul(p.virtual_stages.max(1));
                if x.layers % chunks != 0 {
                    errors.push(InputError::new("parallel.virtual_stages", format!("{} layers do not split into pp × virtual_stages = {chunks} chunks", x.layers)));
                }
            }
            let experts = arch.experts();
            if p.ep > 1 && (experts <= 1 || !experts.is_multiple_of(p.ep)) {
                errors.push(InputError::new("parallel.ep", format!("ep = {} must divide the number of experts ({experts})", p.ep)));
            }
            if uses_tokens && p.cp > 1 && !t.seq_len.is_multiple_of(p.cp.saturating_mul(2)) {
                errors.push(InputError::new("parallel.cp", format!("seq_len {} must be divisible by 2 × cp = {}", t.seq_len, p.cp.saturating_mul(2))));
            }
            if t.frozen.layers > x.layers {
                errors.push(InputError::new("training.frozen.layers", format!("{} exceeds the {} layers", t.frozen.layers, x.layers)));
            }
        } else if p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1 {
            errors.push(InputError::new("parallel", "tensor, pipeline, context and expert parallelism apply to transformers only"));
        }
    }
}

/// Largest micro-batch or accumulation count accepted.
pub const LIMIT_BATCH: u64 = 1_000_000;
/// Longest sequence accepted.
pub const LIMIT_SEQ: u64 = 100_000_000;
/// Largest degree of any one parallel dimension.
pub const LIMIT_DEGREE: u64 = 1_000_000;
/// Largest job accepted.
pub const LIMIT_WORLD: u64 = 10_000_000;

/// Writes every leaf of `explicit` over `base`, descending into objects present in both.
fn overlay(base: &mut Value, explicit: &Value) {
    match (base, explicit) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => overlay(slot, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, e) => *b = e.clone(),
    }
}

/// serde_json appends " at line 1 column 42"; the field path already says where.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_round_trips_through_json() {
        let s = Scenario::default();
        let back = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(back.scenario, s);
        assert!(back.warnings.is_empty());
    }

    #[test]
    fn bad_value_names_its_field() {
        let err = Scenario::from_json(r#"{"training": {"micro_batch": -1}}"#).unwrap_err();
        assert_eq!(err.field, "training.micro_batch");
    }

    #[test]
    fn unknown_field_is_a_warning() {
        let d = Scenario::from_json(r#"{"training": {"batch": 3}}"#).unwrap();
        assert_eq!(d.warnings, vec!["unknown field `training.batch` ignored".to_string()]);
    }

    #[test]
    fn unknown_preset_is_an_error_on_the_model_field() {
        let err = Scenario::from_json(r#"{"model": {"preset": "llama-9"}}"#).unwrap_err();
        assert_eq!(err.field, "model");
        assert!(err.message.contains("llama-9"));
    }

    #[test]
    fn fsdp_is_zero_three() {
        let d = Scenario::from_json(r#"{"parallel": {"zero": "fsdp"}}"#).unwrap();
        assert_eq!(d.scenario.parallel.zero, Zero::Parameters);
    }

    #[test]
    fn only_an_object_is_a_scenario() {
        for text in ["[]", "[1, {}]", "42", "\"llama\"", "null"] {
            let err = Scenario::from_json(text).unwrap_err();
            assert!(err.message.contains("JSON object"), "{text}: {err}");
        }
        // Nor is an array where a part of it belongs (serde would read the fields by position).
        for (text, field) in [
            (r#"{"training": [1, 2]}"#, "training"),
            (r#"{"model": {"arch": ["transformer"]}}"#, "model.arch"),
            (r#"{"model": ["gpt2", null, null]}"#, "model"),
            (r#"{"training": {"lora": [8, ["q"], "nf4", false]}}"#, "training.lora"),
            (r#"{"training": {"techniques": ["chunked"]}}"#, "training.techniques"),
            (r#"{"parallel": [2]}"#, "parallel"),
        ] {
            let err = Scenario::from_json(text).unwrap_err();
            assert_eq!(err.field, field, "{text}: {err}");
            assert!(err.message.contains("JSON object") || err.message.contains("struct"), "{text}: {err}");
        }
        // Lists stay lists, and a pasted config.json keeps its arrays.
        let ok = r#"{"training": {"lora": {"targets": ["q", "v"]}}, "model": {"hf_config": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}}}"#;
        assert!(Scenario::from_json(ok).is_ok());
    }

    #[test]
    fn hf_config_error_names_the_nested_field() {
        let err = Scenario::from_json(r#"{"model": {"hf_config": {"model_type": "llama", "hidden_size": 0}}}"#).unwrap_err();
        assert!(err.to_string().contains("hf_config.hidden_size"), "{err}");
    }

    /// Regression inputs found by `scripts/fuzz.sh` (scenario_json target).
    #[test]
    fn fuzz_regressions_do_not_panic() {
        for text in [
            r#"{"model":{"preset":"mixtral-8x7b"},"parallel":{"dp":8,"ep":9,"zero":"fsdp","pp":0,"pp_schedule":"interleaved","virtual_stages":2}}"#,
            r#"{"parallel":{"pp":18446744073709551615,"pp_schedule":"interleaved","virtual_stages":18446744073709551615,"cp":9223372036854775808}}"#,
        ] {
            let s = Scenario::from_json(text).unwrap().scenario;
            assert!(!s.validate().is_empty());
            let b = crate::estimate(&s);
            assert_eq!(b.spill_bytes == 0, b.fits);
        }
    }

    #[test]
    fn validate_flags_tp_not_dividing_heads() {
        let mut s = Scenario::default();
        s.parallel.tp = 3;
        let errors = s.validate();
        assert!(errors.iter().any(|e| e.field == "parallel.tp"), "{errors:?}");
    }
}
