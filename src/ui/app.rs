//! `App`: the planner page layout, results beside (or, on a phone, above) the controls.
//!
//! Creates the shared [`Planner`] state from `Scenario::default()`.

use leptos::prelude::*;

use super::breakdown_table::BreakdownTable;
use super::device_picker::DevicePicker;
use super::memory_chart::MemoryChart;
use super::model_picker::ModelPicker;
use super::parallel_controls::ParallelControls;
use super::state::Planner;
use super::training_controls::TrainingControls;
use super::unplaced_errors::UnplacedErrors;
use super::verdict_banner::VerdictBanner;
use crate::scenario::Scenario;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    Planner::provide(Scenario::default());
    view! {
        <header class="topbar">
            <h1>"Headroom"</h1>
            <p class="tagline">"Will it fit on my GPUs? Per-GPU training memory, computed in your browser."</p>
        </header>
        <main class="planner">
            <section class="results" aria-label="Result">
                <VerdictBanner />
                <UnplacedErrors />
                <MemoryChart />
                <BreakdownTable />
            </section>
            <form class="controls" aria-label="Scenario" on:submit=|ev| ev.prevent_default()>
                <ModelPicker />
                <TrainingControls />
                <ParallelControls />
                <DevicePicker />
            </form>
        </main>
    }
}
