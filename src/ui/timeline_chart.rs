//! `TimelineChart`: the predicted memory of one training step over time — forward through
//! the blocks, the loss, backward, the optimizer step; per micro-batch and pipeline stage —
//! stacked by component, with the capacity and the peak marked. Not shown in inference
//! (a forward pass has no step to draw).
//!
//! The points come from the pure [`crate::model::timeline::timeline`], the option from
//! [`crate::chart::timeline::timeline_chart`]; drawing is [`ChartBox`]'s job.

use leptos::prelude::*;

use super::chart_box::ChartBox;
use super::next_frame::NextFrame;
use super::state::Planner;
use crate::chart::timeline::timeline_chart;
use crate::format::bytes;
use crate::model::timeline::{timeline, Timeline};

/// The timeline of the current plan, under the stacked bar.
#[component]
pub fn TimelineChart() -> impl IntoView {
    let planner = Planner::get();
    // Built on the next animation frame, after the stacked bar has taken the new plan, so a
    // dragged slider moves the bar first; a newer plan supersedes a pending one.
    let points = RwSignal::new(planner.plan.with_untracked(|p| timeline(&p.breakdown)));
    let next = NextFrame::new();
    Effect::new(move |first: Option<()>| {
        planner.plan.track();
        if first.is_some() {
            next.schedule(move || points.set(planner.plan.with_untracked(|p| timeline(&p.breakdown))));
        }
    });
    let shown = Memo::new(move |_| points.with(|t: &Timeline| !t.points.is_empty()));
    let label = Signal::derive(move || {
        let units = planner.units.get();
        points.with(|t| match t.peak() {
            Some(peak) => format!("Memory over one training step, {} points; peak {} at {}", t.points.len(), bytes(peak.bytes.total, units), peak.label),
            None => String::new(),
        })
    });
    let build = Callback::new(move |()| {
        let units = planner.units.get();
        // Read untracked: the points change a frame after every plan, and then the capacity is current.
        let capacity = planner.plan.with_untracked(|p| p.breakdown.capacity);
        points.with(|t| timeline_chart(t, capacity, units))
    });
    view! {
        <Show when=move || shown.get()>
            <details class="timeline-card" open=true>
                <summary>"Memory over one step (predicted)"</summary>
                <ChartBox id="timeline-chart" class="timeline" label option=build />
            </details>
        </Show>
    }
}
