//! `ChartBox`: one ECharts chart whose option comes from a pure builder (`src/chart/`).
//!
//! The effect builds the option (reading whatever signals the builder reads), creates the
//! ECharts instance on its first run and afterwards merges each new option into it
//! (`WasmRenderer::update`), so bars animate from one option to the next. Every chart of the
//! page (planner, strategy, compare, embed) is one of these.

use charming::theme::Theme;
use charming::{Chart, Echarts, WasmRenderer};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

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

/// A chart container kept in step with `option`.
#[component]
pub fn ChartBox(
    /// Element id of the container.
    id: &'static str,
    /// Extra CSS class (sets the height).
    class: &'static str,
    /// Text alternative, read by screen readers.
    #[prop(into)]
    label: Signal<String>,
    /// Builds the chart option; called inside an effect, so it tracks what it reads.
    #[prop(into)]
    option: Callback<(), Chart>,
) -> impl IntoView {
    let handle = StoredValue::new_local(None::<Echarts>);
    let failed = RwSignal::new(false);
    Effect::new(move |_| {
        let chart = option.run(());
        handle.update_value(|h| match h {
            Some(echarts) => WasmRenderer::update(echarts, &chart),
            None if echarts_loaded() => {
                let theme = if prefers_dark() { Theme::Dark } else { Theme::Default };
                match WasmRenderer::new_opt(None, None).theme(theme).render(id, &chart) {
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
    on_cleanup(move || {
        resize.remove();
        handle.update_value(|h| {
            // Free the ECharts instance of a view that is unmounted (charming has no dispose).
            if let Some(echarts) = h.take() {
                let this: &JsValue = echarts.as_ref();
                if let Ok(f) = js_sys::Reflect::get(this, &JsValue::from_str("dispose")) {
                    if let Some(f) = f.dyn_ref::<js_sys::Function>() {
                        let _ = f.call0(this);
                    }
                }
            }
        });
    });
    view! {
        <figure class="chart-figure">
            <div id=id class=format!("chart {class}") role="img" aria-label=move || label.get()></div>
            <Show when=move || failed.get()>
                <p class="field-error">"The chart could not be drawn (echarts.min.js missing); the table has the same numbers."</p>
            </Show>
        </figure>
    }
}
