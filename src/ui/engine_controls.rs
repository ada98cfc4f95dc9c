//! `EngineControls`: which serving engine plans the inference, and its memory settings,
//! named as the engine's own flags (`--gpu-memory-utilization`, `--mem-fraction-static`,
//! `--max-model-len`, `--max-num-seqs`, `--max-num-batched-tokens`, `--enforce-eager`,
//! `--block-size`). An unset setting shows the engine's default from the plan.

use leptos::prelude::*;

use super::checkbox_field::CheckboxField;
use super::number_field::NumberField;
use super::select_field::enum_select;
use super::state::Planner;
use crate::model::inputs::Engine;

/// The engines, as the select names them.
fn engine_label(e: Engine) -> &'static str {
    match e {
        Engine::Transformers => "transformers generate (whole batch at once)",
        Engine::Vllm => "vLLM",
        Engine::Sglang => "SGLang",
        Engine::Tgi => "text-generation-inference",
        Engine::LlamaCpp => "llama.cpp",
    }
}

/// The engine select and, for an engine with its own plan, its settings.
#[component]
pub fn EngineControls() -> impl IntoView {
    let planner = Planner::get();
    let engine = planner.slice(|s| s.training.serving.engine);
    // The values the engine runs with (its defaults where unset), from the plan.
    let report = move |f: fn(&crate::model::serving::ServingReport) -> f64| planner.plan.with(|p| p.breakdown.serving.as_ref().map_or(0.0, f));
    let eager = planner.slice(|s| s.training.serving.enforce_eager);
    let select = enum_select(
        planner,
        "Engine",
        "engine",
        "training.serving.engine",
        Engine::ALL.iter().map(|&e| (e, engine_label(e))).collect(),
        |s| s.training.serving.engine,
        |s, v| s.training.serving.engine = v,
    );
    let fraction_label = move || match engine.get() {
        Engine::Sglang => "--mem-fraction-static",
        Engine::Tgi => "--cuda-memory-fraction",
        _ => "--gpu-memory-utilization",
    };
    view! {
        {select}
        // Hidden rather than removed: a focused box removed mid-edit would fire its change
        // event after its owner is gone.
        <div hidden=move || matches!(engine.get(), Engine::Transformers)>
            <p class="hint">"--gpu-memory-utilization (SGLang: --mem-fraction-static), --max-model-len, --max-num-seqs, --max-num-batched-tokens, --block-size, --enforce-eager; each box shows the value the engine runs with."</p>
            <div class="pair">
                <div class="engine-fraction" title=fraction_label hidden=move || !matches!(engine.get(), Engine::Vllm | Engine::Sglang | Engine::Tgi)>
                        <NumberField
                            label="Memory fraction"
                            id="engine-fraction"
                            field="training.serving.gpu_memory_utilization"
                            step="0.01"
                            value=Signal::derive(move || report(|r| r.memory_fraction))
                            on_change=move |v: f64| planner.set(|s| {
                                if s.training.serving.engine == Engine::Sglang {
                                    s.training.serving.mem_fraction_static = Some(v);
                                } else {
                                    s.training.serving.gpu_memory_utilization = Some(v);
                                }
                            })
                        />
                </div>
                <NumberField
                    label="Context per request"
                    id="engine-max-model-len"
                    field="training.serving.max_model_len"
                    step="1"
                    value=Signal::derive(move || report(|r| r.max_model_len as f64))
                    on_change=move |v: f64| planner.set(|s| s.training.serving.max_model_len = Some(v.round().max(1.0) as u64))
                />
            </div>
            <div class="pair">
                <NumberField
                    label="Sequences scheduled"
                    id="engine-max-num-seqs"
                    field="training.serving.max_num_seqs"
                    step="1"
                    value=Signal::derive(move || report(|r| r.max_num_seqs as f64))
                    on_change=move |v: f64| planner.set(|s| s.training.serving.max_num_seqs = Some(v.round().max(1.0) as u64))
                />
                <NumberField
                    label="Prefill chunk (tokens)"
                    id="engine-batched-tokens"
                    field="training.serving.max_num_batched_tokens"
                    step="1"
                    value=Signal::derive(move || report(|r| r.max_num_batched_tokens as f64))
                    on_change=move |v: f64| planner.set(|s| s.training.serving.max_num_batched_tokens = Some(v.round().max(1.0) as u64))
                />
            </div>
            <div class="pair">
                <NumberField
                    label="Block size (tokens)"
                    id="engine-block-size"
                    field="training.serving.block_size"
                    step="1"
                    value=Signal::derive(move || report(|r| r.block_size as f64))
                    on_change=move |v: f64| planner.set(|s| s.training.serving.block_size = Some(v.round().max(1.0) as u64))
                />
                <CheckboxField label="No CUDA graphs (eager)" id="engine-eager" field="training.serving.enforce_eager"
                    value=eager on_change=move |on| planner.set(|s| s.training.serving.enforce_eager = on) />
            </div>
        </div>
    }
}
