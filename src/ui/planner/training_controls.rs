//! `TrainingControls`: micro-batch, gradient accumulation, sequence length (or image
//! resolution for vision models; a vision-language model's image size, images per sample
//! and frozen tower beside its text length), precision, optimizer and its implementation, activation checkpointing, attention
//! kernel, loss and memory techniques, and the framework profile that sets several at once. In inference only the batch, context length,
//! precision and attention kernel stay: the rest does not exist when serving.

use leptos::prelude::*;

use crate::fields;
use crate::labels::{optimizer_label, precision_label, CHECKPOINTING};
use crate::model::precision::Precision;
use crate::profiles::Framework;
use crate::scenario::{Attention, Loss, MixerKernels, Mode, Optimizer, OptimizerImpl};
use crate::ui::fields::checkbox_field::CheckboxField;
use crate::ui::fields::number_slider::NumberSlider;
use crate::ui::fields::select_field::enum_select;
use crate::ui::state::Planner;

const LOSS: [(Loss, &str); 4] = [
    (Loss::Standard, "standard (fp32 logits)"),
    (Loss::Chunked, "chunked cross-entropy"),
    (Loss::ChunkedNoUpcast, "chunked CE, no upcast (LitGPT)"),
    (Loss::FusedLinear, "fused linear CE (Liger)"),
];

/// Adam / AdamW's implementation, as torch names its switches.
const OPTIMIZER_IMPL: [(OptimizerImpl, &str); 3] = [(OptimizerImpl::Foreach, "foreach (default)"), (OptimizerImpl::ForLoop, "for-loop"), (OptimizerImpl::Fused, "fused")];

/// A hybrid's token-mixer kernels: the fused CUDA packages, or transformers' torch fallback.
const MIXER_KERNELS: [(MixerKernels, &str); 2] = [(MixerKernels::Fused, "fused CUDA kernels (default)"), (MixerKernels::Torch, "torch fallback (kernels not installed)")];

const ATTENTION: [(Attention, &str); 3] = [(Attention::Eager, "eager (materialised scores)"), (Attention::Sdpa, "SDPA"), (Attention::Flash, "FlashAttention-2")];

// long: markup, one control per training field (about 20) and the conditions that hide them; labels come from crate::fields.
/// The training fields users change most.
#[component]
pub fn TrainingControls() -> impl IntoView {
    let planner = Planner::get();
    let micro_batch = planner.slice(|s| s.training.micro_batch);
    let grad_accum = planner.slice(|s| s.training.grad_accum);
    let seq_len = planner.slice(|s| s.training.seq_len);
    let inference = planner.slice(|s| s.training.mode == Mode::Inference);
    // A CNN has no attention kernel and no language-model loss to choose.
    let transformer = planner.slice(|s| s.model.architecture().is_some_and(|a| a.transformer().is_some()));
    let vision = planner.slice(|s| s.model.architecture().is_some_and(|a| a.default_image_size() > 0));
    // Only a hybrid or state-space model has token mixers whose kernels can be chosen.
    let mixers = planner.slice(|s| s.model.architecture().is_some_and(|a| a.transformer().is_some_and(|t| t.hybrid.is_some())));
    // A diffusion pipeline sets its size and frames in `DiffusionControls`.
    let diffusion = planner.slice(|s| s.model.architecture().is_some_and(|a| matches!(a.as_ref(), crate::model::arch::Architecture::Diffusion(_))));
    let resolution = planner.slice(|s| s.training.image_size.or_else(|| s.model.architecture().map(|a| a.default_image_size())).unwrap_or(224));
    // A vision-language model: the language model's text length and, beside it, the images.
    let tower = |s: &crate::scenario::Scenario| s.model.architecture().and_then(|a| a.transformer().and_then(|t| t.tower.as_ref().map(|tw| tw.default_size().0)));
    let vlm = planner.slice(move |s| tower(s).is_some());
    let vlm_side = planner.slice(move |s| s.training.resolution.map(|[w, _]| w).or_else(|| tower(s)).unwrap_or(448));
    let images = planner.slice(|s| s.training.images_per_sample.unwrap_or(1));
    let frozen_tower = planner.slice(|s| s.training.frozen.vision_tower);
    let in_backward = planner.slice(|s| s.training.techniques.optimizer_in_backward);
    let fp32_gradients = planner.slice(|s| s.training.fp32_gradients);
    // Only torch's Adam / AdamW have the three implementations.
    let adam = planner.slice(|s| matches!(s.training.optimizer, Optimizer::Adam | Optimizer::Adamw));
    let offload = planner.slice(|s| s.training.techniques.activation_offload);
    let liger = planner.slice(|s| s.training.techniques.liger_kernels);
    let compile = planner.slice(|s| s.training.techniques.compile);
    let compile_loss = planner.slice(|s| s.training.techniques.compile_loss);
    let compile_model = planner.slice(|s| s.training.techniques.compile_model);
    view! {
        <fieldset class="group">
            <legend>{move || match (inference.get(), diffusion.get()) {
                (true, true) => "Generation",
                (true, false) => "Serving",
                _ => "Training",
            }}</legend>
            <div hidden=move || inference.get()>
                {enum_select(
                    planner,
                    fields::label("framework"),
                    "framework",
                    "framework",
                    Framework::ALL.iter().map(|&f| (f, f.label())).collect(),
                    |s| s.framework,
                    |s, f| s.apply_framework(f),
                )}
            </div>
            <NumberSlider
                label=Signal::derive(move || match (inference.get(), diffusion.get()) {
                    (true, true) => "Prompts per call",
                    (true, false) => "Batch (sequences served together)",
                    _ => fields::label("training.micro_batch"),
                })
                id="micro-batch"
                field="training.micro_batch"
                min=1
                max=1024
                log2=true
                value=micro_batch
                on_change=move |v| planner.set(|s| s.training.micro_batch = v)
            />
            <div hidden=move || inference.get()>
            <NumberSlider
                label=fields::label("training.grad_accum")
                id="grad-accum"
                field="training.grad_accum"
                min=1
                max=1024
                log2=true
                value=grad_accum
                on_change=move |v| planner.set(|s| s.training.grad_accum = v)
            />
            </div>
            <div hidden=move || vision.get()>
            <NumberSlider
                label=Signal::derive(move || if inference.get() { "Context length (tokens)" } else { fields::label("training.seq_len") })
                id="seq-len"
                field="training.seq_len"
                min=128
                max=1_048_576
                log2=true
                value=seq_len
                on_change=move |v| planner.set(|s| s.training.seq_len = v)
            />
            </div>
            <div hidden=move || !vlm.get()>
            <NumberSlider
                label=fields::label("training.resolution")
                id="vlm-image-size"
                field="training.resolution"
                min=56
                max=4096
                log2=true
                value=vlm_side
                on_change=move |v| planner.set(|s| s.training.resolution = Some([v, v]))
            />
            <NumberSlider
                label=fields::label("training.images_per_sample")
                id="images-per-sample"
                field="training.images_per_sample"
                min=1
                max=64
                log2=true
                value=images
                on_change=move |v| planner.set(|s| s.training.images_per_sample = Some(v))
            />
            <div hidden=move || inference.get()>
                <CheckboxField label=fields::label("training.frozen.vision_tower") id="freeze-vision-tower" field="training.frozen.vision_tower"
                    value=frozen_tower on_change=move |on| planner.set(|s| s.training.frozen.vision_tower = on) />
            </div>
            </div>
            <div hidden=move || !vision.get() || diffusion.get()>
            <NumberSlider
                label=fields::label("training.image_size")
                id="image-size"
                field="training.image_size"
                min=32
                max=4096
                log2=true
                value=resolution
                on_change=move |v| planner.set(|s| s.training.image_size = Some(v))
            />
            </div>
            <div class="pair">
                {enum_select(
                    planner,
                    fields::label("training.precision"),
                    "precision",
                    "training.precision",
                    Precision::ALL.iter().map(|&p| (p, precision_label(p))).collect(),
                    |s| s.training.precision,
                    |s, v| s.training.precision = v,
                )}
                <div class="pair-item" hidden=move || inference.get()>{enum_select(
                    planner,
                    fields::label("training.optimizer"),
                    "optimizer",
                    "training.optimizer",
                    Optimizer::ALL.iter().map(|&o| (o, optimizer_label(o))).collect(),
                    |s| s.training.optimizer,
                    |s, v| s.training.optimizer = v,
                )}</div>
                <div class="pair-item" hidden=move || inference.get() || !adam.get()>{enum_select(
                    planner,
                    fields::label("training.optimizer_impl"),
                    "optimizer-impl",
                    "training.optimizer_impl",
                    OPTIMIZER_IMPL.to_vec(),
                    |s| s.training.optimizer_impl,
                    |s, v| s.training.optimizer_impl = v,
                )}</div>
                <div class="pair-item" hidden=move || inference.get()>{enum_select(
                    planner,
                    fields::label("training.checkpointing"),
                    "checkpointing",
                    "training.checkpointing",
                    CHECKPOINTING.to_vec(),
                    |s| s.training.checkpointing,
                    |s, v| s.training.checkpointing = v,
                )}</div>
                <div class="pair-item" hidden=move || !transformer.get()>{enum_select(
                    planner,
                    fields::label("training.attention"),
                    "attention",
                    "training.attention",
                    ATTENTION.to_vec(),
                    |s| s.training.attention,
                    |s, v| s.training.attention = v,
                )}</div>
                <div class="pair-item" hidden=move || inference.get() || !mixers.get()>{enum_select(
                    planner,
                    fields::label("training.mixer_kernels"),
                    "mixer-kernels",
                    "training.mixer_kernels",
                    MIXER_KERNELS.to_vec(),
                    |s| s.training.mixer_kernels,
                    |s, v| s.training.mixer_kernels = v,
                )}</div>
                <div class="pair-item" hidden=move || inference.get() || !transformer.get()>{enum_select(
                    planner,
                    fields::label("training.techniques.loss"),
                    "loss",
                    "training.techniques.loss",
                    LOSS.to_vec(),
                    |s| s.training.techniques.loss,
                    |s, v| s.training.techniques.loss = v,
                )}</div>
            </div>
            <div hidden=move || inference.get()>
            <CheckboxField label=fields::label("training.techniques.optimizer_in_backward") id="optimizer-in-backward" field="training.techniques.optimizer_in_backward"
                value=in_backward on_change=move |on| planner.set(|s| s.training.techniques.optimizer_in_backward = on) />
            <CheckboxField label=fields::label("training.fp32_gradients") id="fp32-gradients" field="training.fp32_gradients"
                value=fp32_gradients on_change=move |on| planner.set(|s| s.training.fp32_gradients = on) />
            <CheckboxField label=fields::label("training.techniques.activation_offload") id="activation-offload" field="training.techniques.activation_offload"
                value=offload on_change=move |on| planner.set(|s| s.training.techniques.activation_offload = on) />
            <div hidden=move || !transformer.get()>
                <CheckboxField label=fields::label("training.techniques.liger_kernels") id="liger-kernels" field="training.techniques.liger_kernels"
                    value=liger on_change=move |on| planner.set(|s| s.training.techniques.liger_kernels = on) />
                <CheckboxField label=fields::label("training.techniques.compile") id="torch-compile" field="training.techniques.compile"
                    value=compile on_change=move |on| planner.set(|s| s.training.techniques.compile = on) />
                <div hidden=move || !compile.get()>
                    <CheckboxField label=fields::label("training.techniques.compile_loss") id="compile-loss" field="training.techniques.compile_loss"
                        value=compile_loss on_change=move |on| planner.set(|s| s.training.techniques.compile_loss = on) />
                    <CheckboxField label=fields::label("training.techniques.compile_model") id="compile-model" field="training.techniques.compile_model"
                        value=compile_model on_change=move |on| planner.set(|s| s.training.techniques.compile_model = on) />
                </div>
            </div>
            </div>
        </fieldset>
    }
}
