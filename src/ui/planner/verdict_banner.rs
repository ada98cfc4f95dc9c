//! `VerdictBanner`: fits, spills (where, and how much slower) or out of memory, in one
//! sentence, with the model size, GPU count and step (or prefill and per-token) time under
//! it, and the model's warnings; `CheapestFix`, under the chart, the cheapest fix when it
//! does not fit (the default ladder's plan for the same GPU count, with a way to the
//! Strategy view).
//!
//! The verdict sticks to the top of the window while the controls are edited, compact there
//! (the headline only: `stuck`); while the input is refused (an invalid field, a pasted
//! config that could not be read) it is marked as the last valid plan, not the answer.
//!
//! The cheapest fix runs the escalation ladder, whose code is the `fix` WASM chunk (shared
//! with the Strategy view's), fetched once the first chart has been painted.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::chart::{verdict, verdict_details};
use crate::format::Units;
use crate::plan::explain::{cheapest_fix, CheapestFix};
use crate::scenario::Scenario;
use crate::ui::after_paint::AfterPaint;
use crate::ui::lazy_view::Chunked;
use crate::ui::planner::spill_details::SpillDetails;
use crate::ui::state::Planner;
use crate::ui::workspace::{select_tab, Tab, Workspace};

/// [`cheapest_fix`]'s signature.
type FixFn = fn(&Scenario, Units) -> CheapestFix;

/// [`cheapest_fix`], in the `fix` chunk.
#[wasm_split(fix, wasm_split_path = ::leptos::wasm_split, fallible)]
fn load_cheapest_fix() -> Result<FixFn, SplitLoaderError> {
    Ok(cheapest_fix)
}
static FIX: Chunked<FixFn> = Chunked::new();

/// The verdict's element and whether it is stuck to the top of the window (its top at the
/// window's, where `position: sticky` holds it), updated on scroll and resize.
fn sticky_state() -> (NodeRef<leptos::html::Div>, RwSignal<bool>) {
    let node = NodeRef::<leptos::html::Div>::new();
    let stuck = RwSignal::new(false);
    let update = move || {
        if let Some(el) = node.get_untracked() {
            let top = el.get_bounding_client_rect().top();
            // Only while the page is scrolled: at the top the verdict is where it belongs.
            let scrolled = window().scroll_y().unwrap_or(0.0) > 0.0;
            stuck.set(scrolled && top <= 1.0);
        }
    };
    let scroll = window_event_listener(leptos::ev::scroll, move |_| update());
    let resize = window_event_listener(leptos::ev::resize, move |_| update());
    on_cleanup(move || {
        scroll.remove();
        resize.remove();
    });
    (node, stuck)
}

/// The banner above the chart.
#[component]
pub fn VerdictBanner() -> impl IntoView {
    let planner = Planner::get();
    let verdict = Memo::new(move |_| {
        let units = planner.units.get();
        planner.plan.with(|p| verdict(&p.breakdown, units))
    });
    let stale = Memo::new(move |_| planner.plan.with(|p| p.stale));
    let outdated = Memo::new(move |_| stale.get() || planner.rejected_paste.with(Option::is_some));
    let stuck = sticky_state();
    let details = move || {
        let units = planner.units.get();
        planner.valid.with(|s| planner.plan.with(|p| verdict_details(&p.breakdown, s, units)))
    };
    let warnings = move || planner.plan.with(|p| p.breakdown.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view());
    view! {
        <div
            id="verdict"
            node_ref=stuck.0
            class=move || format!("verdict {}{}{}", verdict.with(|v| v.kind()), if outdated.get() { " outdated" } else { "" }, if stuck.1.get() { " stuck" } else { "" })
            role="status"
            aria-live="polite"
        >
            <Show when=move || outdated.get()>
                <p class="last-valid" id="last-valid">"Last valid plan — not your current input"</p>
            </Show>
            <p class="headline">{move || verdict.with(|v| v.text().to_string())}</p>
            <p class="details">{details}</p>
        </div>
        <SpillDetails />
        <Show when=move || stale.get()>
            <p class="stale" role="alert">"Some settings are invalid (see the messages by the controls): the chart shows the last valid plan."</p>
        </Show>
        <Show when=move || planner.rejected_paste.with(Option::is_some)>
            <p class="stale" id="paste-rejected" role="alert">"The pasted config.json could not be read (see the message under it): the chart shows the last valid plan, for the previous model."</p>
        </Show>
        <ul class="warnings">{warnings}</ul>
    }
}

/// The cheapest fix, under the chart: the plan of the ladder a view would start from on these
/// GPUs, with a way to the Strategy view. Below the chart rather than above it, so its
/// arrival after the first paint moves nothing already drawn (no layout shift over the chart).
#[component]
pub fn CheapestFix() -> impl IntoView {
    let planner = Planner::get();
    // The cheapest fix: the plan of the ladder a view would start from on these GPUs. It is
    // worked out once the frame showing the new chart has been painted, so neither the first
    // chart nor a dragged slider waits for the ladder; a newer change supersedes a pending
    // one. Until its chunk has arrived there is no fix to show; its arrival runs this again.
    // Meanwhile the line holds its place, saying it is being worked out (or that it failed).
    let fix = RwSignal::new(None::<CheapestFix>);
    let needed = Memo::new(move |_| planner.plan.with(|p| !(p.breakdown.fits || p.breakdown.capacity == 0)));
    let failed = RwSignal::new(false);
    let loaded = RwSignal::new(FIX.get().is_some());
    let after_paint = AfterPaint::new();
    Effect::new(move |_| {
        let units = planner.units.get();
        let scenario = planner.valid.get();
        if !needed.get() {
            after_paint.cancel();
            fix.set(None);
        } else if let (true, Some(cheapest)) = (loaded.get(), FIX.get()) {
            after_paint.schedule(move || fix.set(Some(cheapest(&scenario, units))));
        } else {
            // Fetched after the first paint too: the chunk never delays the first chart.
            after_paint.schedule(move || {
                leptos::task::spawn_local(async move {
                    match FIX.load(load_cheapest_fix).await {
                        Ok(_) => {
                            let _ = loaded.try_set(true);
                        }
                        Err(_) => {
                            let _ = failed.try_set(true);
                        }
                    }
                })
            });
        }
    });
    let open_strategy = move |_| select_tab(Workspace::get(), Tab::Strategy);
    view! {
        // One line that fills in: it holds its place from the first paint ("working it
        // out…") and its text is replaced when the plan arrives, so the line is drawn once.
        <Show when=move || needed.get() || fix.with(Option::is_some)>
            <p class=move || if fix.with(Option::is_some) { "fix" } else { "fix pending" } id="cheapest-fix">
                {move || match fix.get() {
                    Some(CheapestFix { fits, headline, detail }) => view! {
                        <strong>{if fits { "Cheapest fix: " } else { "No fix on these GPUs: " }}</strong>
                        {format!("{headline} — {detail}")}
                        " "
                        <button type="button" class="link-button" on:click=open_strategy>"Open the ladder"</button>
                    }
                    .into_any(),
                    None => view! {
                        <strong>"Cheapest fix: "</strong>
                        {move || if failed.get() { "could not be loaded (are you offline?)" } else { "working it out…" }}
                    }
                    .into_any(),
                }}
            </p>
        </Show>
    }
}
