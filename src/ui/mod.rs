//! The planner page: Leptos components over one `RwSignal<Scenario>`.
//!
//! Data flows one way: controls write the scenario signal, a memo validates it and calls
//! [`crate::estimate`], and the verdict, chart and table read that memo. No component
//! computes memory. Built only for `wasm32`; the pure pieces it shows (the chart option, the
//! verdict text, unit formatting) live in [`crate::chart`] and [`crate::format`] and are
//! tested natively.

mod app;
mod breakdown_table;
mod device_picker;
mod field_error;
mod memory_chart;
mod model_picker;
mod number_slider;
mod parallel_controls;
mod select_field;
mod state;
mod training_controls;
mod unplaced_errors;
mod verdict_banner;

pub use app::App;
pub use state::Planner;

/// Mounts the planner into `<body>`.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
