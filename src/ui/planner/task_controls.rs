//! `TaskControls`: what the run is. Training, with full fine-tuning, LoRA or QLoRA (rank,
//! adapted layers, double quantisation) and frozen blocks; or inference, with the weights'
//! and the KV cache's storage formats. Says how many parameters the run trains.

use leptos::prelude::*;

use crate::enum_id::{enum_from_id, enum_id};
use crate::fields;
use crate::format;
use crate::model::arch::LinearKind;
use crate::model::precision::Precision;
use crate::scenario::{KvCacheFormat, Lora, LoraBase, Mode, Scenario, WeightFormat};
use crate::ui::fields::checkbox_field::CheckboxField;
use crate::ui::fields::number_slider::NumberSlider;
use crate::ui::fields::select_field::{enum_select, SelectField};
use crate::ui::planner::engine_controls::EngineControls;
use crate::ui::state::Planner;

/// How the weights are trained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FineTuning {
    Full,
    Lora,
    Qlora,
}

impl FineTuning {
    const ALL: [(FineTuning, &'static str, &'static str); 3] =
        [(FineTuning::Full, "full", "full fine-tuning"), (FineTuning::Lora, "lora", "LoRA (16-bit base)"), (FineTuning::Qlora, "qlora", "QLoRA (NF4 base)")];

    fn of(s: &Scenario) -> FineTuning {
        match &s.training.lora {
            None => FineTuning::Full,
            Some(l) if l.base == LoraBase::Nf4 => FineTuning::Qlora,
            Some(_) => FineTuning::Lora,
        }
    }

    fn apply(self, s: &mut Scenario) {
        let base = match self {
            FineTuning::Full => {
                s.training.lora = None;
                return;
            }
            FineTuning::Lora => LoraBase::Bf16,
            FineTuning::Qlora => LoraBase::Nf4,
        };
        // A new adapter config follows the framework profile's QLoRA casting (torchtune keeps
        // the unquantised weights in the training dtype, PEFT casts them to fp32).
        let fp32_unquantised = s.framework.defaults().is_none_or(|d| d.qlora_fp32_unquantised);
        // And its adapters' dtype (PEFT's fp32 adapters, torchtune's and LitGPT's 16-bit ones).
        let fp32_adapters = s.framework.defaults().is_none_or(|d| d.fp32_adapters);
        let previous = s.training.lora.clone().unwrap_or(Lora { fp32_unquantised, fp32_adapters, ..Lora::default() });
        s.training.lora = Some(Lora { base, ..previous });
    }
}

/// The adapted-layer choices (PEFT `target_modules`), by the value the select uses.
const TARGETS: [(&str, &str, &[LinearKind]); 4] = [
    ("all", "all linear layers", &LinearKind::ALL),
    ("attention", "attention (q, k, v, o)", &[LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O]),
    ("mlp", "MLP (gate, up, down)", &[LinearKind::Gate, LinearKind::Up, LinearKind::Down]),
    ("mixer", "hybrid token mixer (in_proj, x_proj, dt_proj, out_proj)", &LinearKind::MIXER),
];

/// The select value for a target list (`custom` for a list no option names, from a link).
fn targets_id(targets: &[LinearKind]) -> &'static str {
    TARGETS.iter().find(|(_, _, kinds)| kinds.len() == targets.len() && kinds.iter().all(|k| targets.contains(k))).map_or("custom", |(id, _, _)| id)
}

/// PEFT `lora_dropout` values people use: off, and the 0.05 and 0.1 of PEFT's and the QLoRA
/// paper's examples.
const LORA_DROPOUT: [f64; 3] = [0.0, 0.05, 0.1];

fn weight_label(w: WeightFormat) -> &'static str {
    match w {
        WeightFormat::Half => "bf16 / fp16",
        WeightFormat::Fp8 => "FP8 (per-tensor scale)",
        WeightFormat::Int8 => "int8 (LLM.int8)",
        WeightFormat::Int4 => "int4 (GPTQ / AWQ, group 128)",
        WeightFormat::Nf4 => "NF4 (bitsandbytes 4-bit)",
        WeightFormat::Mxfp4 => "MXFP4 experts (gpt-oss)",
        WeightFormat::GgufQ8_0 => "GGUF Q8_0 (llama.cpp)",
        WeightFormat::GgufQ6K => "GGUF Q6_K (llama.cpp)",
        WeightFormat::GgufQ5KM => "GGUF Q5_K_M (llama.cpp)",
        WeightFormat::GgufQ4KM => "GGUF Q4_K_M (llama.cpp)",
        WeightFormat::GgufQ4_0 => "GGUF Q4_0 (llama.cpp)",
    }
}

/// The weight format inference uses when none is chosen: the run's own.
fn effective_weights(s: &Scenario) -> Option<WeightFormat> {
    match (s.training.serving.weights, &s.training.lora) {
        (Some(w), _) => Some(w),
        (None, Some(l)) if l.base == LoraBase::Nf4 => Some(WeightFormat::Nf4),
        (None, _) if s.training.precision == Precision::Fp32 => None,
        (None, _) => Some(WeightFormat::Half),
    }
}

/// Stores the weight format the select names (`fp32` switches the run to fp32).
fn set_weights(planner: Planner, id: &str) {
    match enum_from_id::<WeightFormat>(id) {
        Some(w) => planner.set(|s| s.training.serving.weights = Some(w)),
        None => planner.set(|s| {
            s.training.serving.weights = None;
            s.training.precision = Precision::Fp32;
        }),
    }
}

// long: markup, one control per task field (mode, fine-tuning, adapters, frozen blocks, serving formats) and the conditions that hide them.
/// Mode, fine-tuning or serving formats, and the trainable-parameter count.
#[component]
pub fn TaskControls() -> impl IntoView {
    let planner = Planner::get();
    let inference = planner.slice(|s| s.training.mode == Mode::Inference);
    let tuning = planner.slice(FineTuning::of);
    let rank = planner.slice(|s| s.training.lora.as_ref().map_or(16, |l| l.rank));
    let targets = planner.slice(|s| s.training.lora.as_ref().map_or("all", |l| targets_id(&l.targets)).to_string());
    let lora_dq = planner.slice(|s| s.training.lora.as_ref().is_some_and(|l| l.double_quant));
    let lora_fp32 = planner.slice(|s| s.training.lora.as_ref().is_some_and(|l| l.fp32_unquantised));
    let adapters_fp32 = planner.slice(|s| s.training.lora.as_ref().is_some_and(|l| l.fp32_adapters));
    let lora_tower = planner.slice(|s| s.training.lora.as_ref().is_some_and(|l| l.vision_tower));
    let vlm = planner.slice(|s| s.model.architecture().is_some_and(|a| a.transformer().is_some_and(|t| t.tower.is_some())));
    let frozen = planner.slice(|s| s.training.frozen.layers);
    let dropout = planner.slice(|s| s.training.lora.as_ref().map_or(0.0, |l| l.dropout));
    let weights = planner.slice(effective_weights);
    let serving_dq = planner.slice(|s| s.training.serving.double_quant);
    let trainable = move || {
        planner.plan.with(|p| {
            let b = &p.breakdown;
            let share = if b.param_count > 0 { 100.0 * b.trainable_params as f64 / b.param_count as f64 } else { 0.0 };
            format!("Trains {} of {} parameters ({share:.2} %)", format::count(b.trainable_params), format::count(b.param_count))
        })
    };
    let mode_select = enum_select(
        planner,
        fields::label("training.mode"),
        "mode",
        "training.mode",
        vec![(Mode::Train, "training / fine-tuning"), (Mode::Inference, "inference (serving)")],
        |s| s.training.mode,
        |s, v| s.training.mode = v,
    );
    let training_view = view! {
        <div class="pair">
            <SelectField
                label="Fine-tuning"
                id="fine-tuning"
                field="training.lora"
                options=FineTuning::ALL.iter().map(|(_, id, label)| (id.to_string(), label.to_string())).collect()
                value=Signal::derive(move || FineTuning::ALL.iter().find(|(f, _, _)| *f == tuning.get()).map_or("full", |(_, id, _)| id).to_string())
                on_change=move |v: String| {
                    if let Some((f, _, _)) = FineTuning::ALL.iter().find(|(_, id, _)| *id == v) {
                        planner.set(|s| f.apply(s));
                    }
                }
            />
            <Show when=move || tuning.get() != FineTuning::Full>
                <SelectField
                    label=fields::label("training.lora.targets")
                    id="lora-targets"
                    field="training.lora.targets"
                    options=TARGETS.iter().map(|(id, label, _)| (id.to_string(), label.to_string())).chain(targets.with_untracked(|t| (t == "custom").then(|| ("custom".to_string(), "as in the link".to_string())))).collect()
                    value=targets
                    on_change=move |v: String| {
                        if let Some((_, _, kinds)) = TARGETS.iter().find(|(id, _, _)| *id == v) {
                            planner.set(|s| {
                                if let Some(l) = s.training.lora.as_mut() {
                                    l.targets = kinds.to_vec();
                                }
                            });
                        }
                    }
                />
            </Show>
        </div>
        <Show when=move || tuning.get() != FineTuning::Full>
            <NumberSlider
                label=fields::label("training.lora.rank")
                id="lora-rank"
                field="training.lora.rank"
                min=1
                max=1024
                log2=true
                value=rank
                on_change=move |v| planner.set(|s| if let Some(l) = s.training.lora.as_mut() { l.rank = v })
            />
            <CheckboxField label=fields::label("training.lora.fp32_adapters") id="lora-fp32-adapters" field="training.lora.fp32_adapters"
                value=adapters_fp32 on_change=move |on| planner.set(|s| if let Some(l) = s.training.lora.as_mut() { l.fp32_adapters = on }) />
            <div hidden=move || !vlm.get()>
                <CheckboxField label=fields::label("training.lora.vision_tower") id="lora-vision-tower" field="training.lora.vision_tower"
                    value=lora_tower on_change=move |on| planner.set(|s| if let Some(l) = s.training.lora.as_mut() { l.vision_tower = on }) />
            </div>
            <SelectField
                label=fields::label("training.lora.dropout")
                id="lora-dropout"
                field="training.lora.dropout"
                options=LORA_DROPOUT.iter().map(|p| (p.to_string(), p.to_string())).collect()
                value=Signal::derive(move || dropout.get().to_string())
                on_change=move |v: String| {
                    if let Some(p) = crate::format::parse_f64(&v) {
                        planner.set(|s| if let Some(l) = s.training.lora.as_mut() { l.dropout = p });
                    }
                }
            />
        </Show>
        <Show when=move || tuning.get() == FineTuning::Qlora>
            <CheckboxField label=fields::label("training.lora.double_quant") id="lora-double-quant" field="training.lora.double_quant"
                value=lora_dq on_change=move |on| planner.set(|s| if let Some(l) = s.training.lora.as_mut() { l.double_quant = on }) />
            <CheckboxField label=fields::label("training.lora.fp32_unquantised") id="lora-fp32-unquantised" field="training.lora.fp32_unquantised"
                value=lora_fp32 on_change=move |on| planner.set(|s| if let Some(l) = s.training.lora.as_mut() { l.fp32_unquantised = on }) />
        </Show>
        <Show when=move || tuning.get() == FineTuning::Full>
            <NumberSlider
                label=fields::label("training.frozen.layers")
                id="frozen-layers"
                field="training.frozen.layers"
                min=0
                max=128
                value=frozen
                on_change=move |v| planner.set(|s| s.training.frozen.layers = v)
            />
        </Show>
        <p class="hint" id="trainable">{trainable}</p>
    };
    // A diffusion pipeline is not served by an engine and has no KV cache: its weights'
    // format stays (diffusers' quantizers load the denoiser in it).
    let pipeline = planner.slice(|s| s.model.architecture().is_some_and(|a| matches!(a.as_ref(), crate::model::arch::Architecture::Diffusion(_))));
    let inference_view = view! {
        <div hidden=move || pipeline.get()><EngineControls /></div>
        <div class="pair">
            <SelectField
                label=fields::label("training.serving.weights")
                id="weights"
                field="training.serving.weights"
                options=WeightFormat::ALL.iter().map(|w| (enum_id(w), weight_label(*w).to_string())).chain(std::iter::once(("fp32".to_string(), "fp32".to_string()))).collect()
                value=Signal::derive(move || weights.get().map_or("fp32".to_string(), |w| enum_id(&w)))
                on_change=move |v: String| set_weights(planner, &v)
            />
            <div class="pair-item" hidden=move || pipeline.get()>{enum_select(
                planner,
                fields::label("training.serving.kv_cache"),
                "kv-cache",
                "training.serving.kv_cache",
                vec![(KvCacheFormat::Half, "bf16 / fp16"), (KvCacheFormat::Fp8, "FP8")],
                move |s| s.training.serving.kv_cache.unwrap_or(KvCacheFormat::Half),
                |s, v| s.training.serving.kv_cache = Some(v),
            )}</div>
        </div>
        <Show when=move || weights.get() == Some(WeightFormat::Nf4)>
            <CheckboxField label=fields::label("training.serving.double_quant") id="serving-double-quant" field="training.serving.double_quant"
                value=serving_dq on_change=move |on| planner.set(|s| s.training.serving.double_quant = on) />
        </Show>
    };
    view! {
        <fieldset class="group">
            <legend>"Task"</legend>
            {mode_select}
            <div hidden=move || inference.get()>{training_view}</div>
            <div hidden=move || !inference.get()>{inference_view}</div>
        </fieldset>
    }
}
