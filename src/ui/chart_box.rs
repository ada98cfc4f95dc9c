//! `ChartBox`: one ECharts chart whose option comes from a pure builder (`src/chart/`).
//!
//! The effect builds the option (reading whatever signals the builder reads), creates the
//! ECharts instance on its first run and afterwards merges each new option into it
//! (`setOption`), so bars animate from one option to the next. Every chart of the page
//! (planner, strategy, compare, embed) is one of these.
//!
//! ECharts comes in two stages (`scripts/build-echarts.mjs`): the first, loaded with the
//! page, draws the memory chart; a chart with `extra` (line series) also waits for the
//! second, which `echarts.more()` imports once.
//!
//! The option reaches ECharts as JSON text ([`crate::chart::option_json`], then `JSON.parse`),
//! the same path as the exports: charming's `WasmRenderer` would serialise every chart type a
//! second time through `serde-wasm-bindgen`, about 60 KB of WASM (docs/wasm-size.md).

use charming::Chart;
use leptos::prelude::*;

use super::after_paint::first_chart_drawn;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// An ECharts instance.
    type Echarts;

    #[wasm_bindgen(catch, js_namespace = echarts, js_name = init)]
    fn echarts_init(dom: &web_sys::Element, theme: &str) -> Result<Echarts, JsValue>;

    #[wasm_bindgen(catch, method, js_name = setOption)]
    fn set_option(this: &Echarts, option: &JsValue) -> Result<(), JsValue>;

    /// `setOption(option, opts)`: with `{lazyUpdate: true}` ECharts takes the option now and
    /// renders it in its next animation frame.
    #[wasm_bindgen(catch, method, js_name = setOption)]
    fn set_option_with(this: &Echarts, option: &JsValue, opts: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(method)]
    fn resize(this: &Echarts);

    #[wasm_bindgen(method)]
    fn dispose(this: &Echarts);

    /// `echarts.more()`: imports ECharts' second stage, once (the same Promise afterwards).
    #[wasm_bindgen(catch, js_namespace = echarts, js_name = more)]
    fn import_echarts_more() -> Result<js_sys::Promise, JsValue>;
}

/// What an export or a chart says when ECharts' first stage is not there.
pub const LIBRARY_MISSING: &str = "the chart library did not load";
/// … and when its second stage did not come.
const MORE_MISSING: &str = "part of the chart library did not load (are you offline?)";

/// Waits for ECharts' second stage (line series, title, SVG renderer); the error says why
/// it did not come. The first stage must have loaded.
pub async fn echarts_more() -> Result<(), String> {
    if !echarts_loaded() {
        return Err(LIBRARY_MISSING.into());
    }
    let promise = import_echarts_more().map_err(|_| MORE_MISSING.to_string())?;
    wasm_bindgen_futures::JsFuture::from(promise).await.map(|_| ()).map_err(|e| {
        leptos::logging::warn!("ECharts' second stage did not load: {e:?}");
        MORE_MISSING.to_string()
    })
}

/// Hands `chart` to ECharts (merged into what it shows), as JSON text like the exports'
/// option: one copy of charming's `Serialize` code serves both.
fn set_chart(echarts: &Echarts, chart: &Chart) {
    if let Ok(option) = js_sys::JSON::parse(&crate::chart::option_json(chart)) {
        if let Err(e) = echarts.set_option(&option) {
            leptos::logging::warn!("chart option refused: {e:?}");
        }
    }
}

/// A new ECharts instance in `element`, showing `chart`. The first option is set with
/// `lazyUpdate`, so ECharts' first (cold, slowest) work is two tasks, reading the option now
/// and rendering it in the next frame, rather than one long task that blocks input.
fn render(element: &web_sys::Element, dark: bool, chart: &Chart) -> Result<Echarts, String> {
    let echarts = echarts_init(element, if dark { "dark" } else { "" }).map_err(|e| format!("{e:?}"))?;
    if let Ok(option) = js_sys::JSON::parse(&crate::chart::option_json(chart)) {
        let lazy = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&lazy, &JsValue::from_str("lazyUpdate"), &JsValue::TRUE);
        echarts.set_option_with(&option, &lazy).map_err(|e| format!("chart option refused: {e:?}"))?;
    }
    Ok(echarts)
}

/// True when ECharts' first stage has run (the global `echarts` exists).
pub(super) fn echarts_loaded() -> bool {
    js_sys::Reflect::has(&js_sys::global(), &JsValue::from_str("echarts")).unwrap_or(false)
}

/// Calls `settle` once with whether ECharts' first stage is there: now, or once the WASM
/// loader's import of it has settled. The loader imports ECharts after the page's first frame
/// has been painted (scripts/trunk-external-loader.mjs), so the verdict and the controls never
/// wait for the chart library; it then sets `headroomEcharts` (whether the import worked) and
/// dispatches `headroom-echarts`.
fn when_echarts_settles(settle: impl Fn(bool) + 'static) {
    if echarts_loaded() {
        return settle(true);
    }
    let Some(window) = web_sys::window() else {
        return settle(false);
    };
    if js_sys::Reflect::get(&window, &JsValue::from_str("headroomEcharts")).ok().and_then(|v| v.as_bool()).is_some() {
        return settle(echarts_loaded());
    }
    let handler = Closure::once_into_js(move |_: web_sys::Event| settle(echarts_loaded()));
    let options = web_sys::AddEventListenerOptions::new();
    options.set_once(true);
    let _ = window.add_event_listener_with_callback_and_add_event_listener_options("headroom-echarts", handler.unchecked_ref(), &options);
}

/// Sets `near` once `element` enters the viewport (and is shown:
/// a closed `<details>` gives it no box). The observer is dropped once it has answered, or
/// when the chart's view goes (the returned guard).
fn when_near_view(element: &web_sys::Element, near: RwSignal<bool>) -> Option<NearGuard> {
    let callback = Closure::<dyn FnMut(js_sys::Array, web_sys::IntersectionObserver)>::new(move |entries: js_sys::Array, observer: web_sys::IntersectionObserver| {
        let seen = entries.iter().any(|e| e.unchecked_into::<web_sys::IntersectionObserverEntry>().is_intersecting());
        if seen {
            observer.disconnect();
            let _ = near.try_set(true);
        }
    });
    let options = web_sys::IntersectionObserverInit::new();
    options.set_root_margin("0px");
    let observer = web_sys::IntersectionObserver::new_with_options(callback.as_ref().unchecked_ref(), &options).ok()?;
    observer.observe(element);
    Some(NearGuard { observer, _callback: callback })
}

/// Whether the chart may be drawn as far as the viewport goes: at once, or (`when_near`)
/// once `container` has entered the viewport; with the observer to drop when the view goes.
fn near_signal(container: NodeRef<leptos::html::Div>, when_near: bool) -> (RwSignal<bool>, StoredValue<Option<NearGuard>, LocalStorage>) {
    let near = RwSignal::new(!when_near);
    let observer = StoredValue::new_local(None::<NearGuard>);
    if when_near {
        Effect::new(move |_| {
            if let Some(element) = container.get() {
                observer.set_value(when_near_view(&element, near));
            }
        });
    }
    (near, observer)
}

/// An observer of [`when_near_view`] and its callback, kept alive together.
struct NearGuard {
    observer: web_sys::IntersectionObserver,
    _callback: Closure<dyn FnMut(js_sys::Array, web_sys::IntersectionObserver)>,
}

/// True when the user prefers a dark colour scheme.
fn prefers_dark() -> bool {
    web_sys::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten()).map(|m| m.matches()).unwrap_or(false)
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
    /// The option needs ECharts' second stage (line series): the chart waits for it too.
    #[prop(optional)]
    extra: bool,
    /// Drawn only once the container enters the viewport: a chart below the
    /// fold (the step timeline on a phone) costs the page's load nothing, and ECharts' work
    /// for it runs when the reader scrolls towards it.
    #[prop(optional)]
    when_near: bool,
) -> impl IntoView {
    let handle = StoredValue::new_local(None::<Echarts>);
    let failed = RwSignal::new(false);
    let ready = RwSignal::new(false);
    let container = NodeRef::<leptos::html::Div>::new();
    let (near, observer) = near_signal(container, when_near);
    when_echarts_settles(move |loaded| match (loaded, extra) {
        (false, _) => {
            failed.set(true);
            first_chart_drawn();
        }
        (true, false) => ready.set(true),
        (true, true) => leptos::task::spawn_local(async move {
            match echarts_more().await {
                Ok(()) => ready.try_set(true),
                Err(e) => {
                    leptos::logging::warn!("chart not drawn: {e}");
                    failed.try_set(true)
                }
            };
        }),
    });
    Effect::new(move |_| {
        let chart = option.run(());
        // The container is read through its node reference (tracked), not looked up by id:
        // the effect waits for the element itself rather than failing if it runs first.
        let Some(element) = container.get() else {
            return;
        };
        if !(ready.get() && near.get()) {
            return;
        }
        handle.update_value(|h| match h {
            Some(echarts) => set_chart(echarts, &chart),
            None => {
                match render(&element, prefers_dark(), &chart) {
                    Ok(echarts) => *h = Some(echarts),
                    Err(e) => {
                        leptos::logging::warn!("chart not drawn: {e}");
                        failed.set(true);
                    }
                }
                first_chart_drawn();
            }
        });
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        handle.with_value(|h| {
            if let Some(echarts) = h {
                echarts.resize();
            }
        })
    });
    on_cleanup(move || {
        resize.remove();
        if let Some(guard) = observer.try_update_value(Option::take).flatten() {
            guard.observer.disconnect();
        }
        handle.update_value(|h| {
            // Free the ECharts instance of a view that is unmounted.
            if let Some(echarts) = h.take() {
                echarts.dispose();
            }
        });
    });
    view! {
        <figure class="chart-figure">
            <div node_ref=container id=id class=format!("chart {class}") role="img" aria-label=move || label.get()></div>
            <Show when=move || failed.get()>
                <p class="field-error">"The chart could not be drawn (the chart library did not load). Reload the page to retry; the numbers are in the table."</p>
            </Show>
        </figure>
    }
}
