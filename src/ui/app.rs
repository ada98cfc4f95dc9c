//! `App`: the planner page layout, results beside (or, on a phone, above) the controls.
//!
//! Creates the shared [`Planner`] state from the scenario in the address bar. The page's one
//! `main` landmark holds the views' tab panels; a "Skip to controls" link, the first stop of
//! the keyboard, opens the Planner and puts the focus in the model search.

use leptos::prelude::*;

use super::address_bar;
use super::planner::breakdown_table::BreakdownTable;
use super::planner::device_picker::DevicePicker;
use super::planner::diffusion_controls::DiffusionControls;
use super::planner::limits_panel::{AppliedNotice, LimitsPanel};
use super::planner::measured_panel::MeasuredPanel;
use super::planner::memory_chart::MemoryChart;
use super::planner::model_picker::ModelPicker;
use super::planner::parallel_controls::ParallelControls;
use super::planner::run_panel::RunPanel;
use super::planner::saved_scenarios::SavedScenarios;
use super::planner::serving_panel::ServingPanel;
use super::planner::task_controls::TaskControls;
use super::planner::timeline_chart::TimelineChart;
use super::planner::training_controls::TrainingControls;
use super::planner::unplaced_errors::UnplacedErrors;
use super::planner::verdict_banner::{CheapestFix, VerdictBanner};
use super::share::share_toolbar::ShareToolbar;
use super::tabs::{OtherViews, TabBar};
use super::url_sync::{provide_planner, UrlNoticeBanner};
use super::workspace::{select_tab, Tab, Workspace};

/// The skip link's action: the Planner's controls, the focus in the model search.
fn skip_to_controls(ev: leptos::ev::MouseEvent, ws: Workspace) {
    ev.prevent_default();
    select_tab(ws, Tab::Planner);
    // After the frame that shows the Planner (a hidden panel's input takes no focus).
    request_animation_frame(|| {
        if let Some(el) = document().get_element_by_id("model") {
            if let Ok(el) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el) {
                let _ = el.focus();
            }
        }
    });
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let (planner, notice) = provide_planner();
    let ws = Workspace::provide();
    address_bar::start(planner, ws, notice);
    // The controls are built in a task of their own, right after the one that builds the
    // results: the page's first long task (instantiating the WASM and building the whole page,
    // ~290 ms on a 4× slower CPU) is cut in two, and the results (under or beside which the
    // controls sit) are not held back by them.
    let controls = RwSignal::new(false);
    set_timeout(move || controls.set(true), std::time::Duration::ZERO);
    view! {
        <a class="skip-link" href="#controls" on:click=move |ev| skip_to_controls(ev, ws)>"Skip to controls"</a>
        <header class="topbar">
            <h1>"Headroom"</h1>
            <p class="tagline">"Will it fit on my GPUs? Per-GPU training memory, computed in your browser."</p>
        </header>
        <TabBar />
        <main id="main">
        <div class="planner" id="panel-planner" role="tabpanel" aria-labelledby="tab-planner" hidden=move || ws.tab.get() != Tab::Planner>
            <section class="results" aria-label="Result">
                <UrlNoticeBanner />
                <VerdictBanner />
                <AppliedNotice />
                <UnplacedErrors />
                <MemoryChart />
                <CheapestFix />
                <LimitsPanel />
                <ServingPanel />
                <TimelineChart />
                <ShareToolbar />
                <BreakdownTable />
                <RunPanel />
                <MeasuredPanel />
            </section>
            <form class="controls" id="controls" aria-label="Scenario" on:submit=|ev| ev.prevent_default()>
                {move || controls.get().then(|| view! {
                    <ModelPicker />
                    <TaskControls />
                    <TrainingControls />
                    <DiffusionControls />
                    <ParallelControls />
                    <DevicePicker />
                    <SavedScenarios />
                })}
            </form>
        </div>
        <OtherViews />
        </main>
    }
}
