//! `EngineControls`: which serving engine plans the inference, and its memory settings,
//! named as the engine's own flags (`--gpu-memory-utilization`, `--mem-fraction-static`,
//! `--max-model-len`, `--max-num-seqs`, `--max-num-batched-tokens`, `--enforce-eager`,
//! `--block-size`). An unset setting shows the engine's default from the plan.

use leptos::prelude::*;

use crate::fields;
use crate::model::inputs::{Engine, Serving};
use crate::model::serving::ServingReport;
use crate::ui::fields::checkbox_field::CheckboxField;
use crate::ui::fields::number_field::NumberField;
use crate::ui::fields::select_field::enum_select;
use crate::ui::state::Planner;

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

/// A box for one of the engine's counts (tokens, sequences): shows the value the engine runs
/// with (from the plan's report, its default where unset), stores a whole number ≥ 1.
fn count_field(planner: Planner, label: &'static str, id: &'static str, field: &'static str, get: fn(&ServingReport) -> u64, set: fn(&mut Serving, u64)) -> impl IntoView {
    let value = Signal::derive(move || planner.plan.with(|p| p.breakdown.serving.as_ref().map_or(0.0, |r| get(r) as f64)));
    view! {
        <NumberField label=label id=id field=field step="1" value=value
            on_change=move |v: f64| planner.set(|s| set(&mut s.training.serving, v.round().max(1.0) as u64)) />
    }
}

/// The engine select and, for an engine with its own plan, its settings.
#[component]
pub fn EngineControls() -> impl IntoView {
    let planner = Planner::get();
    let engine = planner.slice(|s| s.training.serving.engine);
    let eager = planner.slice(|s| s.training.serving.enforce_eager);
    let select = enum_select(
        planner,
        fields::label("training.serving.engine"),
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
                            label=fields::label("training.serving.gpu_memory_utilization")
                            id="engine-fraction"
                            field="training.serving.gpu_memory_utilization"
                            step="0.01"
                            value=Signal::derive(move || planner.plan.with(|p| p.breakdown.serving.as_ref().map_or(0.0, |r| r.memory_fraction)))
                            on_change=move |v: f64| planner.set(|s| {
                                if s.training.serving.engine == Engine::Sglang {
                                    s.training.serving.mem_fraction_static = Some(v);
                                } else {
                                    s.training.serving.gpu_memory_utilization = Some(v);
                                }
                            })
                        />
                </div>
                {count_field(planner, fields::label("training.serving.max_model_len"), "engine-max-model-len", "training.serving.max_model_len", |r| r.max_model_len, |s, v| s.max_model_len = Some(v))}
            </div>
            <div class="pair">
                {count_field(planner, fields::label("training.serving.max_num_seqs"), "engine-max-num-seqs", "training.serving.max_num_seqs", |r| r.max_num_seqs, |s, v| s.max_num_seqs = Some(v))}
                {count_field(planner, fields::label("training.serving.max_num_batched_tokens"), "engine-batched-tokens", "training.serving.max_num_batched_tokens", |r| r.max_num_batched_tokens, |s, v| s.max_num_batched_tokens = Some(v))}
            </div>
            <div class="pair">
                {count_field(planner, fields::label("training.serving.block_size"), "engine-block-size", "training.serving.block_size", |r| r.block_size, |s, v| s.block_size = Some(v))}
                <CheckboxField label=fields::label("training.serving.enforce_eager") id="engine-eager" field="training.serving.enforce_eager"
                    value=eager on_change=move |on| planner.set(|s| s.training.serving.enforce_eager = on) />
            </div>
        </div>
    }
}
