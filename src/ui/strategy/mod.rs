//! The Strategy view: the escalation flowchart evaluated on the planner's scenario, played
//! one step at a time beside the stacked memory bar, with the editable ladder and the
//! automatic planner under it.
//!
//! Every number comes from [`crate::plan::escalation::escalate`] (and the search); the
//! flowchart geometry and wording come from [`crate::chart::flow`].

mod flow_chart;
mod ladder_editor;
mod playback;
mod step_caption;


use leptos::prelude::*;

use self::flow_chart::FlowChart;
use self::ladder_editor::LadderEditor;
use self::playback::Playback;
use self::step_caption::StepCaption;
use super::chart_box::ChartBox;
use super::search_panel::SearchPanel;
use super::state::Planner;
use super::tabs::Workspace;
use crate::chart::memory_chart;
use crate::plan::escalation::{escalate, Escalation};

/// Escalation step shown by the animation, and where the animation stops.
#[derive(Clone, Copy)]
pub struct Animation {
    pub escalation: Memo<Escalation>,
    /// Index into `escalation.steps`.
    pub current: RwSignal<usize>,
    pub playing: RwSignal<bool>,
    /// The first fit, or the last step when nothing fits.
    pub stop: Memo<usize>,
    pub last: Memo<usize>,
}

/// The whole Strategy tab.
#[component]
pub fn StrategyView() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let valid = planner.valid;
    let escalation = Memo::new(move |_| {
        let ladder: Vec<_> = ws.ladder.with(|l| l.iter().filter(|r| r.enabled).map(|r| r.step).collect());
        let gpus = ws.ladder_gpus.get();
        valid.with(|s| escalate(s, &ladder, gpus))
    });
    let last = Memo::new(move |_| escalation.with(|e| e.steps.len().saturating_sub(1)));
    let stop = Memo::new(move |_| escalation.with(|e| e.first_fit.unwrap_or(e.steps.len().saturating_sub(1))));
    let anim = Animation { escalation, current: RwSignal::new(stop.get_untracked()), playing: RwSignal::new(false), stop, last };
    // A new ladder (or scenario) shows its whole path at once; Play replays it.
    Effect::new(move |seen: Option<()>| {
        escalation.track();
        if seen.is_some() {
            anim.playing.set(false);
            anim.current.set(stop.get_untracked());
        }
    });
    let stale = move || !planner.errors.with(Vec::is_empty);
    let bar_label = Signal::derive(move || {
        let k = anim.current.get();
        escalation.with(|e| e.steps.get(k).map(|s| format!("Per-GPU memory after {}: {}", s.name, crate::format::bytes(s.breakdown.total, planner.units.get()))).unwrap_or_default())
    });
    let build = Callback::new(move |_| {
        let units = planner.units.get();
        let k = anim.current.get();
        escalation.with(|e| {
            let b = e.steps.get(k).or(e.steps.last()).map(|s| s.breakdown.clone()).unwrap_or_default();
            memory_chart(&b, units)
        })
    });
    view! {
        <div class="strategy-layout">
            <section class="card flow-card" aria-labelledby="flow-heading">
                <div class="card-head">
                    <h2 id="flow-heading">"Escalation flowchart"</h2>
                    <p class="hint">"Each step is applied on top of the ones before it, on your planner scenario; the path stops where the run first fits."</p>
                </div>
                <Show when=stale>
                    <p class="stale" role="alert">"The planner has invalid settings: this shows the last valid scenario."</p>
                </Show>
                <FlowChart anim />
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
    }
}
