//! `TimelineChart`: the predicted memory of one training step over time — forward through
//! the blocks, the loss, backward, the optimizer step; per micro-batch and pipeline stage —
//! stacked by component, with the capacity and the peak marked. Not shown in inference
//! (a forward pass has no step to draw).
//!
//! The card is in the first download; the plot (the pure [`crate::model::timeline::timeline`],
//! the option from [`crate::chart::timeline::timeline_chart`], drawn by [`ChartBox`]) is the
//! `timeline` WASM chunk ([`crate::ui::lazy_view`]), fetched once the stacked bar is painted. The
//! points are the page state's ([`Workspace::timeline`]), worked out after the frame that shows
//! the bar has been painted, on load and after every change, so the bar never waits for the
//! timeline. Until then an empty box of the chart's size holds its place. ECharts draws the
//! plot once it enters the viewport (`ChartBox`'s `when_near`): below the fold, as on a
//! phone, its drawing is no part of the page's load.

use charming::Chart;
use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::chart::timeline::timeline_chart;
use crate::format::bytes;
use crate::ui::chart_box::ChartBox;
use crate::ui::lazy_view::{lazy_view_or, Build, Chunked};
use crate::ui::state::Planner;
use crate::ui::viewport::narrow_viewport;
use crate::ui::workspace::Workspace;

/// The plot's builder, in the `timeline` chunk.
#[wasm_split(timeline, wasm_split_path = ::leptos::wasm_split, fallible)]
fn timeline_plot() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <TimelinePlot /> }.into_any())
}
static PLOT: Chunked<Build> = Chunked::new();

/// An empty box the size of the plot (`.chart.timeline`), holding its place.
fn placeholder() -> AnyView {
    view! { <figure class="chart-figure"><div class="chart timeline" aria-hidden="true"></div></figure> }.into_any()
}

/// The timeline card of the current plan, under the stacked bar.
#[component]
pub fn TimelineChart() -> impl IntoView {
    let planner = Planner::get();
    let shown = Memo::new(move |_| planner.plan.with(|p| p.breakdown.step.is_some()));
    view! {
        <Show when=move || shown.get()>
            <details class="timeline-card" open=true>
                <summary>"Memory over one step (predicted)"</summary>
                {lazy_view_or(&PLOT, timeline_plot, placeholder)}
            </details>
        </Show>
    }
}

/// The chart, drawn once the first points have been worked out.
#[component]
fn TimelinePlot() -> impl IntoView {
    let planner = Planner::get();
    // `None` until the first points: then the placeholder keeps the place.
    let points = Workspace::get().timeline();
    let label = Signal::derive(move || {
        let units = planner.units.get();
        points.with(|t| match t.as_ref().and_then(|t| Some((t.points.len(), t.peak()?))) {
            Some((n, peak)) => format!("Memory over one training step, {n} points; peak {} at {}", bytes(peak.bytes.total, units), peak.label),
            None => String::new(),
        })
    });
    let build = Callback::new(move |()| {
        let units = planner.units.get();
        // Read untracked: the points change after every plan, and then the capacity is current.
        let capacity = planner.plan.with_untracked(|p| p.breakdown.capacity);
        let narrow = narrow_viewport();
        points.with(|t| t.as_ref().map(|t| timeline_chart(t, capacity, units, narrow)).unwrap_or_else(Chart::new))
    });
    let ready = Memo::new(move |_| points.with(Option::is_some));
    view! {
        <Show when=move || ready.get() fallback=placeholder>
            <ChartBox id="timeline-chart" class="timeline" label option=build extra=true when_near=true />
        </Show>
    }
}
