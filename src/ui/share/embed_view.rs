//! `EmbedView`: the page at `?embed=1`, for an iframe in someone's documentation — a title
//! naming the model, the GPUs and the outcome ([`Summary::headline`], also the document's
//! title), the verdict with the layout and precision, and the chart of the linked scenario,
//! read-only, with a link to the full planner.
//!
//! It reports its height to the parent page (`{type: "headroom:height", height}` through
//! `postMessage`) on load and whenever it changes, so the parent can size the iframe to fit.
//! It never writes the address bar.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::chart::verdict;
use crate::format;
use crate::report::Summary;
use crate::ui::planner::memory_chart::MemoryChart;
use crate::ui::state::Planner;
use crate::ui::url_sync::{decode_location, location_query, query_without, UrlNotice, UrlNoticeBanner};

/// Id of the embed's root element, whose height is reported.
const ROOT_ID: &str = "embed";

/// Posts the embed's height to the parent window.
fn post_height() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(el) = window.document().and_then(|d| d.get_element_by_id(ROOT_ID)) else {
        return;
    };
    let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() else {
        return;
    };
    let height = el.offset_top() + el.offset_height();
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &"headroom:height".into());
    let _ = js_sys::Reflect::set(&message, &"height".into(), &JsValue::from(height));
    if let Ok(Some(parent)) = window.parent() {
        let _ = parent.post_message(&message, "*");
    }
}

/// Reports the height now and after every size change of the embed's root.
fn watch_height() {
    post_height();
    let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(ROOT_ID)) else {
        return;
    };
    let callback = Closure::<dyn FnMut(JsValue)>::new(|_| post_height());
    match web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
        Ok(observer) => {
            observer.observe(&el);
            // The embed lives as long as the page: so do the observer and its callback.
            callback.forget();
            std::mem::forget(observer);
        }
        Err(_) => {
            let listener = window_event_listener(leptos::ev::resize, |_| post_height());
            std::mem::forget(listener);
        }
    }
}

/// The compact, read-only view.
#[component]
pub fn EmbedView() -> impl IntoView {
    let query = location_query();
    let (scenario, units, errors) = decode_location();
    let planner = Planner::provide(scenario);
    planner.units.set(units);
    UrlNotice::provide(errors);
    let full = query_without(&query, "embed");
    let full_href = if full.is_empty() { "./".to_string() } else { format!("?{full}") };
    let verdict = Memo::new(move |_| planner.plan.with(|p| verdict(&p.breakdown, units)));
    // The plan shown is the last valid scenario's: its words come from that scenario.
    let summary = Memo::new(move |_| planner.plan.with(|p| planner.valid.with(|s| Summary::new(s, &p.breakdown, units))));
    let details = move || planner.plan.with(|p| summary.with(|s| format!("{} · {} parameters", s.setup(), format::count(p.breakdown.param_count))));
    Effect::new(move |_| {
        let title = summary.with(|s| format!("{} — Headroom", s.headline()));
        if let Some(document) = web_sys::window().and_then(|w| w.document()) {
            document.set_title(&title);
        }
    });
    if let Some(body) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.body()) {
        let _ = body.class_list().add_1("embedded");
    }
    request_animation_frame(watch_height);
    view! {
        <main id=ROOT_ID class="embed">
            <UrlNoticeBanner />
            <h1 id="embed-title" class="embed-title">{move || summary.with(Summary::headline)}</h1>
            <div id="verdict" class=move || format!("verdict {}", verdict.with(|v| v.kind())) role="status">
                <p class="headline">{move || verdict.with(|v| v.text().to_string())}</p>
                <p class="details">{details}</p>
            </div>
            <MemoryChart />
            <p class="embed-foot">
                <span>"Per-GPU training memory, estimated by Headroom."</span>
                <a id="open-full" href=full_href target="_blank" rel="noopener">"Open in Headroom ↗"</a>
            </p>
        </main>
    }
}
