//! The planner page: Leptos components over one `RwSignal<Scenario>`.
//!
//! Data flows one way: controls write the scenario signal, a memo validates it and calls
//! [`crate::estimate`], and the verdict, chart and table read that memo. No component
//! computes memory. Built only for `wasm32`; the pure pieces it shows (the chart option, the
//! verdict text, unit formatting) live in [`crate::chart`] and [`crate::format`] and are
//! tested natively. The address bar carries the scenario and the views' state ([`address_bar`], [`url_sync`]); `?embed=1` shows
//! the compact [`embed_view`] instead of the planner.

mod address_bar;
use leptos::prelude::document;

mod after_paint;
mod app;
mod chart_box;
mod compare;
mod diffusion_parts;
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
mod viewport;
mod workspace;

pub use app::App;
pub use root::Root;
pub use state::Planner;

/// Installs the panic panel and the diffusion parts' loader ([`diffusion_parts`]), then
/// mounts the page for the address (planner or embed) into `<body>`: at once for an address
/// without a scenario, else once the link codec's chunk has arrived ([`url_codec`]) and, for
/// a linked diffusion pipeline, its parts' chunk, so a shared link's scenario is the first
/// one drawn.
pub fn mount() {
    panic_panel::install();
    diffusion_parts::install_hook();
    if crate::url::carries_scenario(&url_sync::location_query()) {
        wasm_bindgen_futures::spawn_local(async {
            // On failure the page opens anyway, saying the link could not be read.
            let _ = url_codec::load().await;
            // A linked pipeline is drawn with its parts' chunk, not after a "loading" frame.
            if diffusion_parts::needed(&url_sync::decode_location().0) {
                diffusion_parts::load().await;
            }
            mount_now();
        });
    } else if let Some(shown) = first_paint_shown() {
        // The static copy is painted (and its paint reported) first, then replaced: on a
        // fast link the WASM can be ready before that, and Chrome drops the paint record of a
        // node removed before it was reported, so the page's own headline became the largest
        // paint (measured: in 7 loads of 8 with the copy replaced one or two frames after it).
        wasm_bindgen_futures::spawn_local(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(shown).await;
            mount_now();
        });
    } else {
        mount_now();
    }
}

/// `public/first-paint.js`'s promise that the static first paint has been painted, when the
/// copy is on the page.
fn first_paint_shown() -> Option<js_sys::Promise> {
    document().get_element_by_id("first-paint")?;
    let shown = js_sys::Reflect::get(&js_sys::global(), &"headroomFirstPaint".into()).ok()?;
    wasm_bindgen::JsCast::dyn_into::<js_sys::Promise>(shown).ok()
}

/// Replaces `index.html`'s static first paint (`#first-paint`, `src/first_paint.rs`'s
/// markup) with the page, in one task: the frame after it shows the page's own boxes where
/// the copy's were.
fn mount_now() {
    if let Some(copy) = document().get_element_by_id("first-paint") {
        copy.remove();
    }
    leptos::mount::mount_to_body(root::Root);
}
