//! `ShareToolbar`: copy the link or an iframe snippet, and export the chart (PNG, SVG) and
//! the breakdown (Markdown, JSON), each carrying its context (model, GPUs, layout,
//! precision, verdict, the link and the date; [`crate::report`]). The link is the address
//! bar itself, which [`crate::ui::url_sync`] keeps in step with the scenario.
//!
//! What was copied last also sits in a read-only box, so it can be copied by hand where the
//! clipboard is refused. The exports' code arrives at the first export (`share_export::export_file`).

use leptos::prelude::*;

use crate::format::Units;
use crate::report::Summary;
use crate::ui::chart_box::echarts_more;
use crate::ui::share::share_export::{copy_text, export_file, html_attr};
use crate::ui::state::Planner;

/// The planner's address, as the address bar shows it.
fn page_url() -> String {
    web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default()
}

/// The embed address for the current page: the same scenario with `embed=1` first.
pub fn embed_url() -> String {
    let href = page_url();
    let (base, query) = match href.split_once('?') {
        Some((base, query)) => (base.to_string(), query.split('#').next().unwrap_or("").to_string()),
        None => (href.split('#').next().unwrap_or("").to_string(), String::new()),
    };
    let rest = crate::ui::url_sync::query_without(&query, "embed");
    if rest.is_empty() {
        format!("{base}?embed=1")
    } else {
        format!("{base}?embed=1&{rest}")
    }
}

/// The toolbar under the chart.
#[component]
pub fn ShareToolbar() -> impl IntoView {
    let planner = Planner::get();
    let status = RwSignal::new(String::new());
    let copied = RwSignal::new(String::new());
    let copy = move |what: &'static str, text: String| {
        copied.set(text.clone());
        leptos::task::spawn_local(async move {
            match copy_text(&text).await {
                Ok(()) => status.set(format!("{what} copied.")),
                Err(e) => status.set(format!("{what} not copied: {e}. Copy it from the box below.")),
            }
        });
    };
    let copy_link = move |_| copy("Link", page_url());
    let copy_iframe = move |_| {
        let title =
            planner.plan.with_untracked(|p| planner.valid.with_untracked(|s| format!("Headroom: GPU memory plan for {}", Summary::new(s, &p.breakdown, Units::Gib).title())));
        let snippet = format!(
            "<iframe src=\"{}\" title=\"{}\" width=\"100%\" height=\"420\" style=\"border:0;max-width:760px\" loading=\"lazy\"></iframe>",
            html_attr(&embed_url()),
            html_attr(&title)
        );
        copy("Iframe snippet", snippet);
    };
    let export = move |kind: &'static str| {
        let link = page_url();
        leptos::task::spawn_local(async move {
            // The chart images need ECharts' second stage (the title, the SVG renderer).
            let charts = if matches!(kind, "png" | "svg") { echarts_more().await } else { Ok(()) };
            let result = match charts {
                Ok(()) => export_file(planner, kind, link).await.unwrap_or_else(|_| Err("the export code could not be loaded (are you offline?)".into())),
                Err(e) => Err(e),
            };
            let stale = planner.plan.with_untracked(|p| p.stale);
            status.set(match result {
                Ok(()) if stale => {
                    format!("{} exported (the last valid plan: some settings are invalid).", kind.to_ascii_uppercase())
                }
                Ok(()) => format!("{} exported.", kind.to_ascii_uppercase()),
                Err(e) => format!("{} not exported: {e}", kind.to_ascii_uppercase()),
            });
        });
    };
    view! {
        <section class="share card" aria-label="Share and export">
            <div class="share-row">
                <span class="share-label">"Share"</span>
                <button type="button" id="copy-link" on:click=copy_link>"Copy link"</button>
                <button type="button" id="copy-iframe" on:click=copy_iframe>"Copy iframe snippet"</button>
            </div>
            <div class="share-row">
                <span class="share-label">"Export"</span>
                <button type="button" id="export-png" on:click=move |_| export("png")>"PNG"</button>
                <button type="button" id="export-svg" on:click=move |_| export("svg")>"SVG"</button>
                <button type="button" id="export-md" on:click=move |_| export("md")>"Markdown"</button>
                <button type="button" id="export-json" on:click=move |_| export("json")>"JSON"</button>
            </div>
            <p id="share-status" class="share-status" role="status" aria-live="polite">{move || status.get()}</p>
            <Show when=move || copied.with(|c| !c.is_empty())>
                <label class="visually-hidden" for="share-text">"Last copied text"</label>
                <input id="share-text" class="share-text" type="text" readonly prop:value=move || copied.get() on:focus=|ev| {
                    use wasm_bindgen::JsCast;
                    if let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                        input.select();
                    }
                } />
            </Show>
        </section>
    }
}
