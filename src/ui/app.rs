//! `App`: the planner page layout, results beside (or, on a phone, above) the controls.
//!
//! Creates the shared [`Planner`] state from the scenario in the address bar.

use leptos::prelude::*;

use super::breakdown_table::BreakdownTable;
use super::device_picker::DevicePicker;
use super::limits_panel::{AppliedNotice, LimitsPanel};
use super::measured_panel::MeasuredPanel;
use super::memory_chart::MemoryChart;
use super::model_picker::ModelPicker;
use super::parallel_controls::ParallelControls;
use super::saved_scenarios::SavedScenarios;
use super::share_toolbar::ShareToolbar;
use super::state::Planner;
use super::tabs::{OtherViews, TabBar};
use super::task_controls::TaskControls;
use super::timeline_chart::TimelineChart;
use super::training_controls::TrainingControls;
use super::unplaced_errors::UnplacedErrors;
use super::url_sync::UrlNoticeBanner;
use super::verdict_banner::VerdictBanner;
use super::workspace::{Tab, Workspace};

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    Planner::provide_from_url();
    let ws = Workspace::provide();
    view! {
        <header class="topbar">
            <h1>"Headroom"</h1>
            <p class="tagline">"Will it fit on my GPUs? Per-GPU training memory, computed in your browser."</p>
        </header>
        <TabBar />
        <main class="planner" id="panel-planner" role="tabpanel" aria-labelledby="tab-planner" hidden=move || ws.tab.get() != Tab::Planner>
            <section class="results" aria-label="Result">
                <UrlNoticeBanner />
                <VerdictBanner />
                <AppliedNotice />
                <UnplacedErrors />
                <MemoryChart />
                <LimitsPanel />
                <TimelineChart />
                <ShareToolbar />
                <BreakdownTable />
                <MeasuredPanel />
            </section>
            <form class="controls" aria-label="Scenario" on:submit=|ev| ev.prevent_default()>
                <ModelPicker />
                <TaskControls />
                <TrainingControls />
                <ParallelControls />
                <DevicePicker />
                <SavedScenarios />
            </form>
        </main>
        <OtherViews />
    }
}
