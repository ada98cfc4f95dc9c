//! `ServingPanel`: what the chosen serving engine does with the GPU, as it would report it
//! at startup — KV-cache tokens and blocks, how many requests of the full context fit at once,
//! the speed at the concurrency served, and the log lines to hold against a real startup.
//! Reads the plan's `serving` report; shown only when an engine plans the inference.

use leptos::prelude::*;

use crate::format;
use crate::ui::state::Planner;

/// The engine's report beside the chart.
#[component]
pub fn ServingPanel() -> impl IntoView {
    let planner = Planner::get();
    let report = Memo::new(move |_| planner.plan.with(|p| p.breakdown.serving.clone()));
    let requested = planner.slice(|s| s.training.micro_batch);
    move || {
        report.get().map(|r| {
            let engine = r.engine.name();
            let units = planner.units.get();
            let asked = requested.get();
            let rows = [
                (
                    "KV cache",
                    format!(
                        "{} tokens in {} blocks of {} ({})",
                        format::thousands(r.kv_cache_tokens),
                        format::thousands(r.num_blocks),
                        r.block_size,
                        format::bytes(r.kv_cache_bytes, units)
                    ),
                ),
                ("Requests at once", format!("{:.2} × {} tokens", r.max_concurrency, format::thousands(r.max_model_len))),
                (
                    "Served",
                    if r.concurrency == 0 {
                        "—".into()
                    } else if r.concurrency < asked {
                        format!("{} of the {asked} asked; the rest wait in the queue", r.concurrency)
                    } else {
                        format!("all {asked} asked")
                    },
                ),
                (
                    "Decode",
                    if r.decode_step_seconds > 0.0 {
                        format!(
                            "{:.0} tokens/s per sequence, {:.0} tokens/s in all ({} a step)",
                            r.tokens_per_second_per_sequence,
                            r.tokens_per_second,
                            format::seconds(r.decode_step_seconds)
                        )
                    } else {
                        "—".into()
                    },
                ),
                (
                    "First token",
                    if r.time_to_first_token_seconds > 0.0 {
                        format!("{} for a {}-token prompt", format::seconds(r.time_to_first_token_seconds), format::thousands(r.max_model_len))
                    } else {
                        "—".into()
                    },
                ),
                (
                    "Budget",
                    format!("{} of the GPU (fraction {}), {} outside it", format::bytes(r.budget_bytes, units), r.memory_fraction, format::bytes(r.outside_budget_bytes, units)),
                ),
            ];
            view! {
                <section class="table-card serving-panel" aria-labelledby="serving-title">
                    <h2 id="serving-title">{format!("{engine} at startup")}</h2>
                    <dl class="serving-facts">
                        {rows.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                    </dl>
                    {r.error.clone().map(|e| view! { <p class="serving-error" role="alert">{format!("{engine} refuses to start: {e}")}</p> })}
                    <details>
                        <summary>"Startup log lines to compare with yours"</summary>
                        <pre class="serving-log">{r.log.join("\n")}</pre>
                    </details>
                </section>
            }
        })
    }
}
