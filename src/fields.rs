//! The scenario's fields, one table entry each: the dotted path of every scalar leaf of
//! [`crate::scenario::Scenario`], the key it travels under in a link, its label, its unit, the
//! values validation accepts, and where the page shows its error.
//!
//! The link codec (`crate::url`) reads its key ↔ path pairs from [`FIELDS`]; the page places
//! each validation error with [`anchor`] (under one control, or in the list above the chart,
//! never both); the controls read their labels with [`label`]. `tests/fields.rs` checks the
//! table against the type: every leaf of a fully populated scenario has exactly one entry,
//! every entry round-trips through a link, every range is the one `Scenario::validate`
//! enforces, and every choice lists exactly the ids serde reads.
//!
//! Adding a scenario field: its serde field in `model/inputs.rs` (or `scenario.rs`), one
//! entry here, and its control in `src/ui/`.

use crate::scenario::{LIMIT_BATCH, LIMIT_DATASET_TOKENS, LIMIT_DEGREE, LIMIT_SEQ};

/// One scenario field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// The dotted path in the scenario JSON (`training.techniques.liger_kernels`).
    pub path: &'static str,
    /// How the field travels in a link.
    pub link: Link,
    /// The control's label (in training; a control may word it for serving).
    pub label: &'static str,
    /// The unit of its value in words; empty for a choice, a switch or a pure number.
    pub unit: &'static str,
    /// The values validation accepts.
    pub values: Values,
    /// `Some`: validation bounds it further by the model or the device, in words.
    pub bound: Option<&'static str>,
    /// `true`: the field may be absent (`None`, left out of the JSON), its default.
    pub optional: bool,
    /// Where the page shows its validation errors.
    pub shown: Shown,
}

/// How a field travels in a link (`crate::url`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `key=value`, the value as the scenario JSON writes it (a number, `true`/`false`, an id).
    Scalar(&'static str),
    /// `key=number`: a positive figure overriding the device preset's.
    DeviceFigure(&'static str),
    /// A key read and written by hand in `crate::url`, shared by every field listed with it
    /// (`m` the model, `lora` the adapters as base64url JSON, `fz` the frozen layers, …).
    Own(&'static str),
}

impl Link {
    /// The query key.
    pub fn key(self) -> &'static str {
        match self {
            Link::Scalar(k) | Link::DeviceFigure(k) | Link::Own(k) => k,
        }
    }
}

/// The values validation accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Values {
    /// Whole numbers from `min` to `max`.
    Count { min: u64, max: u64 },
    /// Real numbers between `min` and `max`, the ends included as [`Ends`] says.
    Real { min: f64, max: f64, ends: Ends },
    /// `true` or `false`.
    Switch,
    /// One of these ids, as the scenario JSON writes them.
    Choice(&'static [&'static str]),
    /// A list of these ids (at least one).
    List(&'static [&'static str]),
    /// Two whole numbers (width, height) from `min` to `max` each.
    Pair { min: u64, max: u64 },
    /// An id from a catalogue (a model's Hub id, a GPU's id).
    Catalogue,
}

/// Which ends of a [`Values::Real`] interval are allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    /// `[min, max]`
    Both,
    /// `(min, max]`
    AboveMin,
    /// `[min, max)`
    BelowMax,
}

/// Where the page shows a field's validation errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Under the field's own control (a `FieldError` for its path).
    Control,
    /// Under another control, named by its `FieldError`'s field (the GPU menu shows an unknown
    /// preset id; the fine-tuning menu the adapters' base).
    Under(&'static str),
    /// In the list above the chart: the field has no control.
    Listed,
}

/// Errors that name a whole section rather than a field (`parallel`: the world size) and the
/// `FieldError` that shows them.
pub const SECTIONS: [&str; 2] = ["parallel", "device"];

const PRECISIONS: &[&str] = &["fp32", "fp16-mixed", "bf16-mixed", "bf16", "fp8-mixed"];
const OPTIMIZERS: &[&str] = &["adamw", "adam", "sgd", "sgd-momentum", "adamw-8bit", "adafactor", "lion", "paged-adamw", "paged-adamw-8bit"];
const LINEARS: &[&str] = &["q", "k", "v", "o", "gate", "up", "down", "add-q", "add-k", "add-v", "add-o", "mixer-in", "mixer-gates", "x-proj", "dt-proj", "mixer-out"];
const WEIGHTS: &[&str] = &["bf16", "fp8", "int8", "int4", "nf4", "mxfp4", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0"];
const FRAMEWORKS: &[&str] = &["custom", "transformers", "trl-liger", "unsloth", "torchtune", "litgpt", "torchtitan", "megatron-core", "deepspeed"];
const PLATFORMS: &[&str] = &["auto", "linux", "windows-fallback", "windows-no-fallback", "managed", "offload", "c2c"];

/// A field; every argument is a column of [`Field`].
const fn f(path: &'static str, link: Link, label: &'static str, unit: &'static str, values: Values, shown: Shown) -> Field {
    Field { path, link, label, unit, values, bound: None, optional: false, shown }
}

impl Field {
    /// The same field, absent by default (`None`).
    const fn optional(self) -> Field {
        Field { optional: true, ..self }
    }

    /// The same field, bounded further by the model or device (`why`).
    const fn bound(self, why: &'static str) -> Field {
        Field { bound: Some(why), ..self }
    }
}

use Link::{DeviceFigure as Dev, Own, Scalar};
use Shown::{Control, Listed, Under};
use Values::{Catalogue, Choice, Pair, Switch};

const fn count(min: u64, max: u64) -> Values {
    Values::Count { min, max }
}

const fn real(min: f64, max: f64, ends: Ends) -> Values {
    Values::Real { min, max, ends }
}

const FRACTION: Values = real(0.0, 1.0, Ends::AboveMin);
const PROBABILITY: Values = real(0.0, 1.0, Ends::BelowMax);
const BANDWIDTH: Values = real(0.0, 1e15, Ends::AboveMin);

/// Every scenario field, in the order a link writes them (`crate::url::encode`): the version
/// and model first, then the scalars, the adapters, the frozen layers, the image size and the
/// device.
pub const FIELDS: &[Field] = &[
    // A link is always written in the current version (`v=1`); older ones are migrated on reading.
    f("version", Own("v"), "Scenario format version", "", Choice(&["1"]), Listed),
    f("model", Own("m"), "Model", "", Catalogue, Control),
    f("training.micro_batch", Scalar("b"), "Micro-batch size", "sequences", count(1, LIMIT_BATCH), Control),
    f("training.seq_len", Scalar("s"), "Sequence length (tokens)", "tokens", count(1, LIMIT_SEQ), Control),
    f("training.grad_accum", Scalar("ga"), "Gradient accumulation steps", "micro-batches", count(1, LIMIT_BATCH), Control),
    f("training.precision", Scalar("p"), "Precision", "", Choice(PRECISIONS), Control),
    f("training.optimizer", Scalar("o"), "Optimizer", "", Choice(OPTIMIZERS), Control),
    f("training.optimizer_impl", Scalar("oi"), "Optimizer implementation", "", Choice(&["foreach", "for-loop", "fused"]), Control),
    f("training.fp32_gradients", Scalar("g32"), "Gradients in fp32 (Megatron)", "", Switch, Control),
    f("training.checkpointing", Scalar("ck"), "Activation checkpointing", "", Choice(&["none", "selective", "full"]), Control),
    f("training.attention", Scalar("at"), "Attention", "", Choice(&["eager", "sdpa", "flash"]), Control),
    f("training.mixer_kernels", Scalar("mk"), "Mixer kernels (Mamba, linear attention)", "", Choice(&["fused", "torch"]), Control),
    f("training.dropout", Scalar("do"), "Dropout", "probability", PROBABILITY, Listed),
    f("training.image_size", Scalar("img"), "Image resolution (pixels per side)", "pixels", count(1, 65_536), Control).optional(),
    f("training.mode", Scalar("mode"), "Plan for", "", Choice(&["train", "inference"]), Control),
    f("parallel.dp", Scalar("dp"), "Data parallel (dp)", "GPUs", count(1, LIMIT_DEGREE), Control),
    f("parallel.tp", Scalar("tp"), "Tensor parallel (tp)", "GPUs", count(1, LIMIT_DEGREE), Control).bound("divides the attention heads"),
    f("parallel.pp", Scalar("pp"), "Pipeline parallel (pp)", "stages", count(1, LIMIT_DEGREE), Control).bound("at most the model's layers"),
    f("parallel.sp", Scalar("sp"), "Sequence parallel (with tp > 1)", "", Switch, Control),
    f("parallel.cp", Scalar("cp"), "Context parallel (cp)", "GPUs", count(1, LIMIT_DEGREE), Control).bound("2 × cp divides the sequence"),
    f("parallel.ep", Scalar("ep"), "Expert parallel (ep, within dp)", "GPUs", count(1, LIMIT_DEGREE), Control).bound("divides the experts, at most dp"),
    f("parallel.zero", Scalar("z"), "ZeRO stage", "", Choice(&["0", "1", "2", "3"]), Control),
    f("parallel.offload", Scalar("off"), "CPU offload", "", Choice(&["none", "optimizer", "optimizer+params"]), Control),
    f("parallel.pp_schedule", Scalar("sch"), "Pipeline schedule", "", Choice(&["1f1b", "interleaved", "gpipe"]), Listed),
    f("parallel.zero3_impl", Scalar("z3"), "ZeRO-3 implementation", "", Choice(&["fsdp2", "deepspeed"]), Control),
    f("parallel.fsdp_reshard_after_forward", Scalar("rsh"), "Reshard after forward", "", Switch, Control),
    f("parallel.full_state_dict_on_save", Scalar("fsd"), "Full state dict on save", "", Switch, Control),
    f("parallel.gradient_as_bucket_view", Scalar("gbv"), "DDP gradient_as_bucket_view", "", Switch, Control),
    f("parallel.fsdp_version", Scalar("fv"), "FSDP version", "", count(1, 2), Listed),
    f("parallel.fsdp_load", Scalar("fl"), "FSDP2 load", "", Choice(&["unit", "tensor", "sharded"]), Listed),
    f("parallel.virtual_stages", Scalar("vs"), "Virtual pipeline stages", "chunks per stage", count(1, 1024), Listed),
    f("runtime.platform", Scalar("pf"), "Beyond GPU memory", "", Choice(PLATFORMS), Control),
    f("runtime.memory_fraction", Scalar("mf"), "Per-process memory fraction", "fraction", FRACTION, Control),
    f("runtime.other_processes_bytes", Scalar("ob"), "Used by other processes", "bytes", count(0, u64::MAX), Control).bound("less than the GPU's memory"),
    f("runtime.jobs", Scalar("nj"), "Jobs sharing this GPU", "jobs", count(1, 1024), Control),
    f("training.techniques.loss", Scalar("loss"), "Loss", "", Choice(&["standard", "chunked", "fused-linear", "chunked-no-upcast"]), Control),
    f("training.techniques.loss_chunks", Scalar("lch"), "Loss chunks", "chunks", count(1, 1024), Listed),
    f("training.techniques.optimizer_in_backward", Scalar("oib"), "Optimizer step in backward", "", Switch, Control),
    f("training.techniques.activation_offload", Scalar("aof"), "Offload activations to host", "", Switch, Control),
    f("training.techniques.liger_kernels", Scalar("lig"), "Liger kernels (norm, SwiGLU, RoPE)", "", Switch, Control),
    f("training.techniques.compile", Scalar("cmpl"), "torch.compile (blocks and loss)", "", Switch, Control),
    f("training.techniques.compile_loss", Scalar("cmpl_loss"), "Loss inside the compiled region", "", Switch, Control),
    f("training.techniques.compile_model", Scalar("cmpl_model"), "The whole model compiled (torch.compile(model))", "", Switch, Control),
    // Set by the LitGPT profile (the framework menu), as `training.lora.fp32_adapters` is.
    f("training.techniques.litgpt_modules", Scalar("ltm"), "LitGPT's modules (k/v repeated, fused QKV adapters)", "", Switch, Listed),
    f("training.serving.weights", Scalar("wq"), "Weights", "", Choice(WEIGHTS), Control).optional(),
    f("training.serving.kv_cache", Scalar("kvq"), "KV cache", "", Choice(&["bf16", "fp8"]), Control).optional(),
    f("training.serving.double_quant", Scalar("dq"), "Double quantisation", "", Switch, Control),
    f("training.serving.engine", Scalar("eng"), "Engine", "", Choice(&["transformers", "vllm", "sglang", "tgi", "llama.cpp"]), Control),
    f("training.serving.gpu_memory_utilization", Scalar("gmu"), "Memory fraction", "fraction", FRACTION, Control).optional(),
    // SGLang's --mem-fraction-static is set in the same box as vLLM's --gpu-memory-utilization.
    f("training.serving.mem_fraction_static", Scalar("mfs"), "Memory fraction (SGLang)", "fraction", FRACTION, Under("training.serving.gpu_memory_utilization")).optional(),
    f("training.serving.max_model_len", Scalar("mml"), "Context per request", "tokens", count(1, LIMIT_SEQ), Control)
        .optional()
        .bound("at most the model's positions when an engine serves it"),
    f("training.serving.max_num_seqs", Scalar("mns"), "Sequences scheduled", "sequences", count(1, LIMIT_BATCH), Control).optional(),
    f("training.serving.max_num_batched_tokens", Scalar("mbt"), "Prefill chunk (tokens)", "tokens", count(1, LIMIT_SEQ), Control).optional(),
    f("training.serving.enforce_eager", Scalar("eager"), "No CUDA graphs (eager)", "", Switch, Control),
    f("training.serving.block_size", Scalar("bs"), "Block size (tokens)", "tokens", count(1, 65_536), Control).optional(),
    f("framework", Scalar("fw"), "Framework profile", "", Choice(FRAMEWORKS), Control),
    f("runtime.expandable_segments", Scalar("xs"), "expandable_segments allocator", "", Switch, Control),
    f("runtime.host_memory_bytes", Scalar("hm"), "System RAM", "bytes", count(1 << 30, 64 << 40), Control).optional(),
    f("run.dataset_tokens", Scalar("tok"), "Dataset tokens (per epoch)", "tokens", count(1, LIMIT_DATASET_TOKENS), Control),
    f("run.epochs", Scalar("epo"), "Epochs", "passes", real(0.0, 1e6, Ends::AboveMin), Control),
    f("run.price_per_gpu_hour", Scalar("usd"), "Price per GPU-hour (USD)", "USD per GPU-hour", real(0.0, 1e6, Ends::Both), Control).optional(),
    // Its menu has no error to show: serde refuses anything but the two ids.
    f("run.pricing", Scalar("pr"), "Capacity", "", Choice(&["on-demand", "spot"]), Listed),
    f("training.images_per_sample", Scalar("ipi"), "Images per sample", "images", count(1, 1024), Control).optional(),
    f("training.frames", Scalar("fr"), "Frames", "frames", count(1, 4096), Control).optional(),
    f("training.lora.rank", Own("lora"), "LoRA rank", "", count(1, 65_536), Control),
    f("training.lora.targets", Own("lora"), "Adapted layers", "", Values::List(LINEARS), Control),
    f("training.lora.base", Own("lora"), "Fine-tuning", "", Choice(&["bf16", "nf4"]), Under("training.lora")),
    f("training.lora.double_quant", Own("lora"), "Double quantisation", "", Switch, Control),
    f("training.lora.dropout", Own("lora"), "LoRA dropout", "probability", PROBABILITY, Control),
    f("training.lora.fp32_unquantised", Own("lora"), "Unquantised weights in fp32 (PEFT)", "", Switch, Control),
    f("training.lora.fp32_adapters", Own("lora"), "Adapters in fp32 (PEFT)", "", Switch, Control),
    f("training.lora.quantize_at_load", Own("lora"), "Quantise while loading", "", Switch, Listed),
    // Set by the framework profile (torchtune: torchao); its menu has no error to show.
    f("training.lora.quantizer", Own("lora"), "NF4 quantiser", "", Choice(&["bitsandbytes", "torchao"]), Listed),
    f("training.lora.vision_tower", Own("lora"), "LoRA on the vision tower", "", Switch, Control),
    f("training.frozen.layers", Own("fz"), "Frozen blocks (from the bottom)", "blocks", count(0, u64::MAX), Control).bound("at most the model's layers"),
    f("training.frozen.embeddings", Own("fz"), "Freeze the embeddings", "", Switch, Listed),
    f("training.frozen.vision_tower", Own("fz"), "Freeze the vision tower", "", Switch, Control),
    f("training.resolution", Own("res"), "Image size (pixels per side)", "pixels", Pair { min: 1, max: 65_536 }, Control).optional(),
    f("device.preset", Own("d"), "GPU", "", Catalogue, Under("device")).optional(),
    f("device.capacity_bytes", Dev("cap"), "Memory", "bytes", BANDWIDTH, Control).optional(),
    f("device.hbm_bandwidth", Dev("hbm"), "Memory bandwidth", "bytes/s", BANDWIDTH, Control).optional(),
    f("device.host_link_bandwidth", Dev("host"), "Host link (each way)", "bytes/s", BANDWIDTH, Control).optional(),
    f("device.bf16_tflops", Dev("tf"), "Dense BF16 TFLOPS", "TFLOPS", real(0.0, 1e6, Ends::AboveMin), Control).optional(),
    f("device.interconnect_bandwidth", Dev("nvl"), "GPU-to-GPU link", "bytes/s", BANDWIDTH, Control).optional(),
    f("device.network_bandwidth", Dev("net"), "Network per GPU", "bytes/s", BANDWIDTH, Control).optional(),
    f("device.gpus_per_node", Own("gpn"), "GPUs per node", "GPUs", count(1, 1 << 20), Control).optional(),
    // A diffusion pipeline's caching, offload and tiling (`model/diffusion/options.rs`).
    f("training.diffusion.cache_latents", Scalar("cl"), "Cache latents (VAE off the GPU)", "", Switch, Control),
    f("training.diffusion.cache_text_embeddings", Scalar("cte"), "Cache prompt embeddings (text encoders off the GPU)", "", Switch, Control),
    f("training.diffusion.offload_text_encoders", Scalar("ote"), "Text encoders in host memory", "", Switch, Control),
    f("training.diffusion.offload", Scalar("goff"), "CPU offload", "", Choice(&["none", "model", "sequential"]), Control),
    f("training.diffusion.vae_tiling", Scalar("vt"), "VAE tiling", "", Switch, Control),
    f("training.diffusion.guidance", Scalar("cfg"), "Classifier-free guidance in one batch", "", Switch, Control).optional(),
    f("training.diffusion.text_tokens", Scalar("tt"), "Text tokens the denoiser attends to", "tokens", count(1, 65_536), Listed).optional(),
];

/// The entry for a dotted path.
pub fn field(path: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.path == path)
}

/// The label of a field's control; the path itself for a path that is not a field (the table
/// test keeps every path the page names a field).
pub fn label(path: &'static str) -> &'static str {
    field(path).map_or(path, |f| f.label)
}

/// The `FieldError` (named by its field) that shows a validation error on `error_field`, or
/// `None` when the list above the chart shows it. Each error has exactly one place: a field's
/// own entry says where ([`Shown`]); a path below a field (`model.preset`) goes where the
/// field's errors go; an error on a whole section ([`SECTIONS`]) goes under that section's
/// controls; anything else is listed.
pub fn anchor(error_field: &str) -> Option<&'static str> {
    let mut path = error_field;
    loop {
        if let Some(f) = field(path) {
            return match f.shown {
                Shown::Control => Some(f.path),
                Shown::Under(other) => Some(other),
                Shown::Listed => None,
            };
        }
        if let Some(section) = SECTIONS.iter().find(|s| **s == path) {
            return Some(section);
        }
        path = path.rsplit_once('.')?.0;
    }
}

/// Every `FieldError` the page places errors under: the fields shown under their own control,
/// the controls others are shown under, and the [`SECTIONS`].
pub fn anchors() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = FIELDS
        .iter()
        .filter_map(|f| match f.shown {
            Shown::Control => Some(f.path),
            Shown::Under(other) => Some(other),
            Shown::Listed => None,
        })
        .chain(SECTIONS)
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The `key=value` scalars of a link, as `(key, path)`, in link order.
pub fn scalar_keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    FIELDS.iter().filter_map(|f| match f.link {
        Link::Scalar(k) => Some((k, f.path)),
        _ => None,
    })
}

/// The device figures a link may override, as `(key, field of DeviceSpec)`, in link order.
pub fn device_keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    FIELDS.iter().filter_map(|f| match f.link {
        Link::DeviceFigure(k) => Some((k, f.path.strip_prefix("device.").unwrap_or(f.path))),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each error has one place: below a field it follows the field; a section's own error
    /// stays with the section; a path nobody shows is listed.
    #[test]
    fn errors_have_one_place() {
        assert_eq!(anchor("training.lora.rank"), Some("training.lora.rank"));
        assert_eq!(anchor("training.lora.base"), Some("training.lora"));
        assert_eq!(anchor("training.lora"), None);
        assert_eq!(anchor("model.preset"), Some("model"));
        assert_eq!(anchor("device.preset"), Some("device"));
        assert_eq!(anchor("device"), Some("device"));
        assert_eq!(anchor("parallel"), Some("parallel"));
        assert_eq!(anchor("parallel.virtual_stages"), None);
        assert_eq!(anchor("training.serving.mem_fraction_static"), Some("training.serving.gpu_memory_utilization"));
        assert_eq!(anchor("training.dropout"), None);
        assert_eq!(anchor(""), None);
        assert_eq!(anchor("nonsense.path"), None);
        assert!(anchors().contains(&"training.lora") && anchors().contains(&"parallel"));
    }

    #[test]
    fn keys_and_labels_come_from_the_table() {
        assert!(scalar_keys().any(|pair| pair == ("loss", "training.techniques.loss")));
        assert!(!scalar_keys().any(|(k, _)| k == "lora" || k == "cap"));
        assert_eq!(scalar_keys().next(), Some(("b", "training.micro_batch")));
        assert_eq!(device_keys().collect::<Vec<_>>()[0], ("cap", "capacity_bytes"));
        assert_eq!(label("training.grad_accum"), "Gradient accumulation steps");
        assert_eq!(Link::Own("lora").key(), "lora");
    }
}
