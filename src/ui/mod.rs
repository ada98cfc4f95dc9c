//! The planner page: Leptos components over one `RwSignal<Scenario>`.
//!
//! Data flows one way: controls write the scenario signal, a memo validates it and calls
//! [`crate::estimate`], and the verdict, chart and table read that memo. No component
//! computes memory. Built only for `wasm32`; the pure pieces it shows (the chart option, the
//! verdict text, unit formatting) live in [`crate::chart`] and [`crate::format`] and are
//! tested natively. The address bar carries the scenario and the views' state ([`address_bar`], [`url_sync`]); `?embed=1` shows
//! the compact [`embed_view`] instead of the planner.

mod address_bar;
mod after_paint;
mod app;
mod chart_box;
mod compare;
mod fields;
mod lazy_view;
mod panic_panel;
mod planner;
mod root;
mod share;
mod state;
mod strategy;
mod stylesheet;
mod tabs;
mod url_codec;
mod url_sync;
mod workspace;

pub use app::App;
pub use root::Root;
pub use state::Planner;

/// Installs the panic panel, then mounts the page for the address (planner or embed) into
/// `<body>`: at once for an address without a scenario, else once the link codec's chunk
/// has arrived ([`url_codec`]), so a shared link's scenario is the first one drawn.
pub fn mount() {
    panic_panel::install();
    if crate::url::carries_scenario(&url_sync::location_query()) {
        wasm_bindgen_futures::spawn_local(async {
            // On failure the page opens anyway, saying the link could not be read.
            let _ = url_codec::load().await;
            leptos::mount::mount_to_body(root::Root);
        });
    } else {
        leptos::mount::mount_to_body(root::Root);
    }
}
