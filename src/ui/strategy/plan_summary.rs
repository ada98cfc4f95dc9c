//! `PlanSummary`: the ladder's answer in words, above the flowchart so it is the first thing
//! read on a phone: what to launch (the first fit less the steps it does not need), its step
//! time and memory, what was dropped and why, the communication and what of it overlaps
//! compute, the global batch, each setting it changes; and "Apply to the Planner". The wording is
//! [`crate::plan::explain::plan_summary`].

use leptos::prelude::*;

use super::Animation;
use crate::plan::explain::plan_summary;
use crate::ui::state::Planner;
use crate::ui::workspace::{apply_to_planner, show_planner_at_top, Workspace};

/// The plan and its Apply button.
#[component]
pub fn PlanSummary(anim: Animation) -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let summary = Memo::new(move |_| {
        let units = planner.units.get();
        anim.escalation.with(|e| plan_summary(e, units))
    });
    let apply = move |_| {
        if let Some(s) = anim.escalation.with_untracked(|e| e.plan.as_ref().map(|p| p.result.scenario.clone())) {
            apply_to_planner(ws, planner, "the Strategy plan", s);
            show_planner_at_top(ws);
        }
    };
    view! {
        <div id="flow-plan" class=move || if summary.with(|s| s.fits) { "flow-plan fits" } else { "flow-plan spills" } aria-live="polite">
            <p class="plan-headline">{move || summary.with(|s| s.headline.clone())}</p>
            <Show when=move || summary.with(|s| !s.changes.is_empty())>
                <p class="plan-changes" id="plan-changes"><strong>"Changes: "</strong>{move || summary.with(|s| s.changes.clone())}</p>
            </Show>
            <ul class="plan-lines">{move || summary.with(|s| s.lines.iter().map(|l| view! { <li>{l.clone()}</li> }).collect_view())}</ul>
            <Show when=move || summary.with(|s| s.fits)>
                <button type="button" id="apply-plan" class="primary" on:click=apply>"Apply to the Planner"</button>
            </Show>
        </div>
    }
}
