//! `MemoryChart`: the stacked per-GPU bar, drawn by ECharts through charming.
//!
//! The option comes from the pure [`crate::chart::memory_chart`]; this component only owns
//! the ECharts instance: it creates it on the first run of an effect and afterwards merges
//! each new option into it (`WasmRenderer::update`), so the bars animate between plans.

use charming::theme::Theme;
use charming::{Echarts, WasmRenderer};
use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::state::Planner;
use crate::chart::memory_chart;

/// Id of the chart's container element.
const CHART_ID: &str = "memory-chart";

/// True when `echarts.min.js` has loaded (the global `echarts` exists).
fn echarts_loaded() -> bool {
    js_sys::Reflect::has(&js_sys::global(), &JsValue::from_str("echarts")).unwrap_or(false)
}

/// True when the user prefers a dark colour scheme.
fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

/// The chart container and the effect that keeps it in step with the plan.
#[component]
pub fn MemoryChart() -> impl IntoView {
    let planner = Planner::get();
    let handle = StoredValue::new_local(None::<Echarts>);
    let failed = RwSignal::new(false);
    Effect::new(move |_| {
        let units = planner.units.get();
        let chart = planner.plan.with(|p| memory_chart(&p.breakdown, units));
        handle.update_value(|h| match h {
            Some(echarts) => WasmRenderer::update(echarts, &chart),
            None if echarts_loaded() => {
                let theme = if prefers_dark() { Theme::Dark } else { Theme::Default };
                match WasmRenderer::new_opt(None, None).theme(theme).render(CHART_ID, &chart) {
                    Ok(echarts) => *h = Some(echarts),
                    Err(e) => {
                        leptos::logging::warn!("chart not drawn: {e}");
                        failed.set(true);
                    }
                }
            }
            None => failed.set(true),
        });
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        handle.with_value(|h| {
            if let Some(echarts) = h {
                echarts.resize(JsValue::UNDEFINED);
            }
        })
    });
    on_cleanup(move || resize.remove());
    let summary = move || planner.plan.with(|p| format!("Stacked bar of per-GPU memory: {} of {} capacity", crate::format::bytes(p.breakdown.total, planner.units.get()), crate::format::bytes(p.breakdown.capacity, planner.units.get())));
    view! {
        <figure class="chart-figure">
            <div id=CHART_ID class="chart" role="img" aria-label=summary></div>
            <Show when=move || failed.get()>
                <p class="field-error">"The chart could not be drawn (echarts.min.js missing); the table below has the same numbers."</p>
            </Show>
        </figure>
    }
}
