//! `MemoryChart`: the planner's stacked per-GPU bar against the device capacity.
//!
//! The option comes from the pure [`crate::chart::memory_chart`]; drawing and animating it is
//! [`ChartBox`]'s job.

use leptos::prelude::*;

use crate::chart::memory_chart;
use crate::format::bytes;
use crate::ui::chart_box::ChartBox;
use crate::ui::state::Planner;

/// The chart of the current plan.
#[component]
pub fn MemoryChart() -> impl IntoView {
    let planner = Planner::get();
    let label = Signal::derive(move || {
        let units = planner.units.get();
        planner.plan.with(|p| format!("Stacked bar of per-GPU memory: {} of {} capacity", bytes(p.breakdown.total, units), bytes(p.breakdown.capacity, units)))
    });
    let build = Callback::new(move |()| {
        let units = planner.units.get();
        planner.plan.with(|p| memory_chart(&p.breakdown, units))
    });
    view! { <ChartBox id="memory-chart" class="" label option=build /> }
}
