//! `LimitsPanel`: the Planner's limits under the verdict — the largest micro-batch, the
//! longest sequence (or largest image side) and the fewest GPUs of the chosen type, each
//! with the memory it leaves and a "Use this" that writes it into the planner (the fewest
//! GPUs: the ladder's plan on them). `AppliedNotice`: what the last Apply or "Use this"
//! changed, while the planner still holds its result.
//!
//! The limits are [`crate::plan::limits::limits`] in words ([`crate::report::limit_lines`]);
//! the card's list, its search and its buttons are the `fix` WASM chunk, shared with the
//! cheapest fix (both run the escalation ladder), fetched once the first chart has been
//! painted; they are worked out after the frame showing each new chart has been painted, the
//! newest scenario winning, so neither the first chart nor a dragged slider waits for them.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::format::Units;
use crate::plan::limits::limits;
use crate::report::{limit_lines, LimitLine};
use crate::scenario::Scenario;
use crate::ui::after_paint::AfterPaint;
use crate::ui::lazy_view::{lazy_view_or, Build, Chunked};
use crate::ui::state::Planner;
use crate::ui::workspace::{apply_to_planner, Workspace};

/// The three limits in words, and the scenario each "Use this" writes.
#[derive(Clone, Debug, PartialEq)]
struct Worked {
    lines: [LimitLine; 3],
    uses: [Option<Scenario>; 3],
}

/// The limits of `s` and the scenario each one's "Use this" gives.
fn work_out(s: &Scenario, units: Units) -> Worked {
    let l = limits(s);
    let with = |f: &dyn Fn(&mut Scenario)| {
        let mut n = s.clone();
        f(&mut n);
        n
    };
    // No "Use this" where the limit is what is entered already.
    let micro = l.max_micro_batch.map(|m| with(&|n| n.training.micro_batch = m.value)).filter(|n| n != s);
    let extent = l.max_extent.map(|e| with(&|n| l.extent.apply(n, e.value))).filter(|n| n != s);
    let gpus = l.min_gpus.as_ref().map(|(_, plan)| plan.result.scenario.clone()).filter(|n| n != s);
    Worked { lines: limit_lines(s, &l, units), uses: [micro, extent, gpus] }
}

/// The list's builder, in the `fix` chunk (with the limits' search and the ladder).
#[wasm_split(fix, wasm_split_path = ::leptos::wasm_split, fallible)]
fn limits_body() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <LimitsBody /> }.into_any())
}
static BODY: Chunked<Build> = Chunked::new();

/// What the card says until its chunk has arrived.
fn placeholder() -> AnyView {
    view! { <p class="hint">"Working them out…"</p> }.into_any()
}

/// The limits card under the chart.
#[component]
pub fn LimitsPanel() -> impl IntoView {
    view! {
        <section class="limits" id="limits" aria-labelledby="limits-heading">
            <h2 id="limits-heading">"Limits on this setup"</h2>
            {lazy_view_or(&BODY, limits_body, placeholder)}
        </section>
    }
}

/// The three limits with their "Use this", worked out after each new plan has been painted.
#[component]
fn LimitsBody() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let worked = RwSignal::new(None::<Worked>);
    let after_paint = AfterPaint::new();
    Effect::new(move |_| {
        let units = planner.units.get();
        let scenario = planner.valid.get();
        after_paint.schedule(move || worked.set(Some(work_out(&scenario, units))));
    });
    let ids = ["limit-micro-batch", "limit-extent", "limit-gpus"];
    let rows = move || {
        worked.get().map(|w| {
            w.lines
                .iter()
                .cloned()
                .zip(w.uses.iter().cloned())
                .zip(ids)
                .map(|((line, next), id)| {
                    let label = line.label.clone();
                    let use_it = next.map(|next| {
                        let what = format!("{} ({})", line.label.to_lowercase(), line.value.map(crate::format::thousands).unwrap_or_default());
                        let aria = format!("Use this: {}", line.label.to_lowercase());
                        view! {
                            <button type="button" class="link-button use-limit" aria-label=aria on:click=move |_| apply_to_planner(ws, planner, &what, next.clone())>
                                "Use this"
                            </button>
                        }
                    });
                    view! {
                        <li id=id data-value=line.value.map(|v| v.to_string()).unwrap_or_default()>
                            <span class="limit-label">{label}": "</span>
                            <span class="limit-answer">{line.answer.clone()}</span>
                            " "
                            {use_it}
                        </li>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <Show when=move || worked.with(Option::is_some) fallback=placeholder>
            <ul class="limit-list">{rows}</ul>
            <p class="hint">"Everything else as entered; the fewest GPUs keep the model, precision and optimizer."</p>
        </Show>
    }
}

/// What the last Apply or "Use this" changed, while the planner still holds its result.
#[component]
pub fn AppliedNotice() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let text = move || ws.applied.with(|a| a.as_ref().and_then(|(s, text)| planner.scenario.with(|now| (now == s).then(|| text.clone()))));
    view! {
        <Show when=move || text().is_some()>
            <p class="applied" id="applied-changes" role="status">
                <strong>"Applied "</strong>
                {text}
            </p>
        </Show>
    }
}
