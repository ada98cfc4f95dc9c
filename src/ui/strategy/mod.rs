//! The Strategy view: the escalation flowchart evaluated on the planner's scenario within a
//! GPU budget (the planner's dp × tp × pp × cp until edited), its plan in words above it,
//! played one step at a time beside the stacked memory bar, with the editable ladder and the
//! automatic planner under it. Below `viewport::NARROW_QUERY` the flowchart is one column.
//!
//! Every number comes from the page's escalation memo ([`Workspace::escalation`], which runs
//! [`crate::plan::escalation::escalate_ladder`]) and the search; the flowchart geometry and
//! wording come from [`crate::chart::flow`].

mod animation;
mod flow_chart;
mod ladder_editor;
mod launch_panel;
mod plan_summary;
mod playback;
mod rent_panel;
mod search_panel;
mod step_caption;

use leptos::prelude::*;

use self::animation::Animation;
use self::flow_chart::FlowChart;
use self::ladder_editor::LadderEditor;
use self::plan_summary::PlanSummary;
use self::playback::Playback;
use self::step_caption::StepCaption;
use super::chart_box::ChartBox;
use super::state::Planner;
use super::url_sync::UrlNoticeBanner;
use super::viewport::narrow_viewport;
use super::workspace::Workspace;
use crate::chart::flow::Shape;
use crate::chart::memory_chart;
use launch_panel::LaunchPanel;
use rent_panel::RentPanel;
use search_panel::SearchPanel;

/// The whole Strategy tab.
#[component]
pub fn StrategyView() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let escalation = ws.escalation();
    let last = Memo::new(move |_| escalation.with(|e| e.steps.len().saturating_sub(1)));
    let stop = Memo::new(move |_| escalation.with(|e| e.first_fit.unwrap_or(e.steps.len().saturating_sub(1))));
    let anim = Animation { escalation, current: RwSignal::new(stop.get_untracked()), playing: RwSignal::new(false), stop, last, plan_shown: RwSignal::new(false) };
    // A new ladder (or scenario) shows its whole path at once; Play replays it.
    Effect::new(move |seen: Option<()>| {
        escalation.track();
        if seen.is_some() {
            anim.show_step(stop.get_untracked());
        }
    });
    let narrow = RwSignal::new(narrow_viewport());
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        let now = narrow_viewport();
        if narrow.get_untracked() != now {
            narrow.set(now);
        }
    });
    on_cleanup(move || resize.remove());
    let shape = Signal::derive(move || if narrow.get() { Shape::Narrow } else { Shape::Wide });
    let stale = move || !planner.errors.with(Vec::is_empty);
    let bar_label =
        Signal::derive(move || anim.shown().map(|(name, b)| format!("Per-GPU memory of {name}: {}", crate::format::bytes(b.total, planner.units.get()))).unwrap_or_default());
    let build = Callback::new(move |_| {
        let units = planner.units.get();
        memory_chart(&anim.shown().map(|(_, b)| b).unwrap_or_default(), units)
    });
    view! {
        <UrlNoticeBanner id="strategy-url-notice" />
        <div class="strategy-layout">
            <section class="card flow-card" aria-labelledby="flow-heading">
                <div class="card-head">
                    <h2 id="flow-heading">"Escalation flowchart"</h2>
                    <p class="hint">"Each step is applied on top of the ones before it, on your planner scenario, within the GPU budget; the path stops where the run first fits, and the plan keeps only the steps still needed there."</p>
                </div>
                <Show when=stale>
                    <p class="stale" role="alert">"The planner has invalid settings: this shows the last valid scenario."</p>
                </Show>
                <PlanSummary anim />
                <FlowChart anim shape />
            </section>
            <aside class="strategy-side">
                <section class="card" aria-labelledby="play-heading">
                    <h2 id="play-heading" class="visually-hidden">"Animation"</h2>
                    <Playback anim />
                    <StepCaption anim />
                    <ChartBox id="strategy-chart" class="chart-strategy" label=bar_label option=build />
                </section>
                <LadderEditor />
            </aside>
        </div>
        <SearchPanel />
        <RentPanel />
        <LaunchPanel />
    }
}
