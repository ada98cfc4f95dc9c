//! `SearchPanel`: the automatic planner. A GPU count (the Strategy budget, shared with the
//! flowchart: the planner's dp × tp × pp × cp until edited), a safety margin and "Find layouts" run the layout search on the planner's
//! scenario in slices of about [`SLICE_MS`] with a zero-delay timer between them, so the
//! page stays responsive; a progress bar appears when the search has taken longer than
//! [`PROGRESS_AFTER_MS`]. (Slices by time, not by layout count: browsers hold a chain of
//! zero-delay timers to 4 ms each, which cost more than the search itself when every 50
//! layouts waited for one.) The summary says how many layouts were tried and how many fit; the
//! ten best are listed (fastest first, equal times by memory left), each with an "Apply"
//! button that writes its scenario into the planner (saying what it changes) and shows the
//! Planner tab at its top.
//!
//! The search itself is [`crate::plan::search::SearchRun`] (same results as
//! `plan::search::search`).

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use leptos::prelude::*;

use crate::enum_id::enum_id;
use crate::format;
use crate::plan::search::{Candidate, SearchRun};
use crate::plan::{headroom, MAX_MARGIN};
use crate::scenario::Offload;
use crate::ui::state::Planner;
use crate::ui::workspace::{apply_to_planner, show_planner_at_top, SearchOutcome, Workspace, MAX_GPUS};

/// Milliseconds of search between two yields to the browser (a layout takes tens of µs).
pub const SLICE_MS: f64 = 12.0;
/// Results listed.
pub const TOP: usize = 10;
/// A search shorter than this shows no progress bar.
pub const PROGRESS_AFTER_MS: f64 = 100.0;

/// Runs one slice, then schedules the next, until done or superseded.
fn run_chunk(ws: Workspace, run: Rc<RefCell<SearchRun>>, generation: u32, started: f64, gpus: u64) {
    if ws.search.generation.get_value() != generation {
        return;
    }
    let slice = js_sys::Date::now();
    let finished = run.borrow_mut().step_while(|| js_sys::Date::now() - slice < SLICE_MS);
    let elapsed = js_sys::Date::now() - started;
    if finished {
        let result = run.borrow().result();
        ws.search.outcome.set(Some(SearchOutcome { result, millis: elapsed, gpus, run: generation }));
        ws.search.progress.set(None);
        ws.search.running.set(false);
        return;
    }
    if elapsed > PROGRESS_AFTER_MS {
        let r = run.borrow();
        ws.search.progress.set(Some((r.done(), r.total())));
    }
    Timeout::new(0, move || run_chunk(ws, run, generation, started, gpus)).forget();
}

fn offload_label(o: Offload) -> &'static str {
    match o {
        Offload::None => "—",
        Offload::Optimizer => "optimizer",
        Offload::OptimizerAndParams => "opt. + params",
    }
}

fn result_row(rank: usize, c: Candidate, planner: Planner, ws: Workspace) -> impl IntoView {
    let units = planner.units.get_untracked();
    let p = c.scenario.parallel.clone();
    let t = c.scenario.training.clone();
    let scenario = c.scenario.clone();
    let apply = move |_| {
        apply_to_planner(ws, planner, &format!("layout {} of the automatic planner", rank + 1), scenario.clone());
        show_planner_at_top(ws);
    };
    view! {
        <tr class="search-result" data-rank=rank.to_string()>
            <td class="num">{rank + 1}</td>
            <td class="num">{format!("{} / {} / {} / {}", p.dp, p.tp, p.pp, p.cp)}</td>
            <td class="num">{p.zero.stage()}</td>
            <td>{enum_id(&t.checkpointing)}</td>
            <td>{offload_label(p.offload)}</td>
            <td class="num">{format!("{} × {} × {}", t.micro_batch, t.grad_accum, p.dp)}</td>
            <td class="num">{c.max_micro_batch}</td>
            <td class="num">{format!("{} of {}", format::bytes(c.breakdown.total, units), format::bytes(c.breakdown.capacity, units))}</td>
            <td class="num">{format::bytes(headroom(&c.breakdown), units)}</td>
            <td class="num">{format!("{:.0}", c.tokens_per_second)}</td>
            <td class="num">{format::seconds(c.step_seconds)}</td>
            <td><button type="button" class="apply" on:click=apply aria-label=format!("Apply layout {}", rank + 1)>"Apply"</button></td>
        </tr>
    }
}

/// The planner section of the Strategy tab.
#[component]
pub fn SearchPanel() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let invalid = move || !planner.errors.with(Vec::is_empty);
    let find = move |_| {
        if planner.errors.with_untracked(|e| !e.is_empty()) {
            return;
        }
        let generation = ws.search.generation.get_value().wrapping_add(1);
        ws.search.generation.set_value(generation);
        let gpus = ws.strategy.gpus.get_untracked();
        let margin = ws.search.margin.get_untracked();
        let run = Rc::new(RefCell::new(planner.scenario.with_untracked(|s| SearchRun::new(s, gpus, margin, TOP))));
        ws.search.running.set(true);
        ws.search.progress.set(None);
        let started = js_sys::Date::now();
        // Start after this click's frame, so the button shows its busy state at once.
        Timeout::new(0, move || run_chunk(ws, run, generation, started, gpus)).forget();
    };
    on_cleanup(move || {
        // Leaving the tab stops a running search.
        ws.search.generation.update_value(|g| *g = g.wrapping_add(1));
        ws.search.running.set(false);
        ws.search.progress.set(None);
    });
    let summary = move || {
        ws.search.outcome.with(|s| {
            s.as_ref().map(|o| {
                let rate = if o.millis > 0.0 { o.result.evaluations as f64 / (o.millis / 1000.0) } else { 0.0 };
                let listed = match o.result.results.len() {
                    0 => "Nothing to list: raise the GPU count, lower the margin, or change the planner's batch.".to_string(),
                    n => format!("Listed: the {n} fastest (equal times: most memory left first)."),
                };
                format!("{} {listed} {} estimates in {:.0} ms ({}/s).", o.result.summary(o.gpus), o.result.evaluations, o.millis, format::count(rate as u64))
            })
        })
    };
    let rows = move || ws.search.outcome.with(|s| s.as_ref().map(|o| o.result.results.iter().cloned().enumerate().map(|(i, c)| result_row(i, c, planner, ws)).collect_view()));
    let has_results = move || ws.search.outcome.with(|s| s.as_ref().is_some_and(|o| !o.result.results.is_empty()));
    view! {
        <section class="card search" aria-labelledby="search-heading">
            <h2 id="search-heading">"Automatic planner"</h2>
            <p class="hint">"Every dp × tp × pp × cp layout with each ZeRO stage, checkpointing and offload, for the planner's model, batch and device. The global batch (micro-batch × accumulation × dp) stays exactly the planner's; every layout leaves the safety margin free (the flowchart's plan too). Fastest first; equal times, most memory left first."</p>
            <div class="search-controls">
                <label class="inline-number" for="search-gpus">
                    "GPUs"
                    <input
                        type="number"
                        id="search-gpus"
                        min="1"
                        max=MAX_GPUS.to_string()
                        prop:value=move || ws.strategy.gpus.get().to_string()
                        on:change=move |ev| {
                            if let Some(n) = crate::format::parse_f64(event_target_value(&ev).trim()) {
                                if n.is_finite() {
                                    ws.strategy.gpus.set((n.round().max(1.0) as u64).min(MAX_GPUS));
                                }
                            }
                        }
                    />
                </label>
                <label class="inline-number" for="search-margin">
                    "Safety margin %"
                    <input
                        type="number"
                        id="search-margin"
                        min="0"
                        max=(MAX_MARGIN * 100.0).to_string()
                        step="1"
                        prop:value=move || format!("{:.0}", ws.search.margin.get() * 100.0)
                        on:change=move |ev| {
                            if let Some(n) = crate::format::parse_f64(event_target_value(&ev).trim()) {
                                if n.is_finite() {
                                    ws.search.margin.set((n / 100.0).clamp(0.0, MAX_MARGIN));
                                }
                            }
                        }
                    />
                </label>
                <button type="button" id="find-layouts" class="primary" on:click=find disabled=move || ws.search.running.get() || invalid()>
                    {move || if ws.search.running.get() { "Searching…" } else { "Find layouts" }}
                </button>
                <Show when=move || ws.search.progress.with(Option::is_some)>
                    <progress
                        id="search-progress"
                        max=move || ws.search.progress.get().map_or(1, |p| p.1).to_string()
                        value=move || ws.search.progress.get().map_or(0, |p| p.0).to_string()
                    ></progress>
                    <span class="hint">{move || ws.search.progress.get().map(|(d, t)| format!("{d} / {t} layouts")).unwrap_or_default()}</span>
                </Show>
            </div>
            <Show when=invalid>
                <p class="stale" role="alert">"Fix the planner's invalid settings first."</p>
            </Show>
            <p id="search-summary" class="search-summary" aria-live="polite" data-run=move || ws.search.outcome.with(|s| s.as_ref().map_or(0, |o| o.run)).to_string()>{summary}</p>
            <Show when=has_results>
                <div class="table-scroll">
                    <table class="breakdown search-results" id="search-results">
                        <thead>
                            <tr>
                                <th class="num">"#"</th>
                                <th class="num">"dp / tp / pp / cp"</th>
                                <th class="num">"ZeRO"</th>
                                <th>"Checkpointing"</th>
                                <th>"Offload"</th>
                                <th class="num">"Micro-batch × accum. × dp"</th>
                                <th class="num">"Largest micro-batch"</th>
                                <th class="num">"Per GPU"</th>
                                <th class="num">"Free"</th>
                                <th class="num">"Tokens/s"</th>
                                <th class="num">"Step time"</th>
                                <th><span class="visually-hidden">"Apply"</span></th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </Show>
        </section>
    }
}
