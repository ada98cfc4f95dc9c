//! Files and clipboard for the share toolbar: the chart as PNG or SVG (a fresh, light,
//! unanimated ECharts instance of the export's pure option, titled with the plan's context),
//! downloads through a `Blob`, an object URL and `<a download>`, the clipboard, and today's
//! date for the exports.
//!
//! Only browser plumbing: what goes into each file comes from [`crate::report`]. The export
//! buttons' work ([`export_file`]) is the `export` WASM chunk, fetched at the first export
//! ([`crate::ui::lazy_view`] says how the split works).

use js_sys::{Array, Object, Reflect, Uint8Array};
use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use serde_json::Value;

use crate::report::{export_chart, export_json, export_markdown, EXPORT_TITLE_HEIGHT};
use crate::ui::state::Planner;

/// Size of an exported chart with its title, in CSS pixels.
const EXPORT_WIDTH: u32 = 960;
const EXPORT_HEIGHT: u32 = 300 + EXPORT_TITLE_HEIGHT;

#[wasm_bindgen]
extern "C" {
    /// An ECharts instance, as far as exporting needs it.
    type ExportChart;

    #[wasm_bindgen(catch, js_namespace = echarts, js_name = init)]
    fn echarts_init(dom: &JsValue, theme: &JsValue, opts: &JsValue) -> Result<ExportChart, JsValue>;

    #[wasm_bindgen(catch, method, js_name = setOption)]
    fn set_option(this: &ExportChart, option: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(catch, method, js_name = getDataURL)]
    fn get_data_url(this: &ExportChart, opts: &JsValue) -> Result<String, JsValue>;

    #[wasm_bindgen(catch, method, js_name = renderToSVGString)]
    fn render_to_svg_string(this: &ExportChart) -> Result<String, JsValue>;

    #[wasm_bindgen(method)]
    fn dispose(this: &ExportChart);
}

fn js_error(e: JsValue) -> String {
    e.as_string().or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string())).unwrap_or_else(|| "unknown error".into())
}

/// A plain JS object from `(key, value)` pairs.
fn object(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

/// The export's chart option ([`crate::report::export_chart`]) as a JS object.
fn js_option(option: &Value) -> Result<JsValue, String> {
    js_sys::JSON::parse(&option.to_string()).map_err(js_error)
}

/// Runs `f` on a throw-away ECharts instance (`renderer` "canvas" or "svg") showing `option`.
fn with_export_chart<T>(option: &Value, renderer: &str, f: impl FnOnce(&ExportChart) -> Result<T, String>) -> Result<T, String> {
    if !crate::ui::chart_box::echarts_loaded() {
        return Err(crate::ui::chart_box::LIBRARY_MISSING.into());
    }
    let size = [("width", JsValue::from(EXPORT_WIDTH)), ("height", JsValue::from(EXPORT_HEIGHT))];
    let (dom, opts) = if renderer == "svg" {
        // Server-side mode: renders to a string without touching the DOM.
        (JsValue::NULL, object(&[size[0].clone(), size[1].clone(), ("renderer", "svg".into()), ("ssr", JsValue::TRUE)]))
    } else {
        let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
        let div = document.create_element("div").map_err(js_error)?;
        (div.into(), object(&[size[0].clone(), size[1].clone(), ("renderer", "canvas".into())]))
    };
    let chart = echarts_init(&dom, &JsValue::NULL, &opts).map_err(js_error)?;
    let result = js_option(option).and_then(|option| chart.set_option(&option).map_err(js_error)).and_then(|_| f(&chart));
    chart.dispose();
    result
}

/// The chart of `option` as PNG bytes (twice the CSS size, white background).
fn chart_png(option: &Value) -> Result<Vec<u8>, String> {
    let url = with_export_chart(option, "canvas", |chart| {
        chart.get_data_url(&object(&[("type", "png".into()), ("pixelRatio", 2.into()), ("backgroundColor", "#ffffff".into())])).map_err(js_error)
    })?;
    let base64 = url.split_once("base64,").map(|(_, data)| data).ok_or("the chart gave no PNG data")?;
    let binary = web_sys::window().ok_or("no window")?.atob(base64).map_err(js_error)?;
    // `atob` gives one char per byte.
    Ok(binary.chars().map(|c| c as u32 as u8).collect())
}

/// The chart of `option` as an SVG document.
fn chart_svg(option: &Value) -> Result<String, String> {
    with_export_chart(option, "svg", |chart| chart.render_to_svg_string().map_err(js_error))
}

/// Writes the file of one export button (`kind`: "png", "svg", "md" or "json") for the
/// plan shown, with its context and `link`; the outer error is a chunk that did not load.
#[wasm_split(export, wasm_split_path = ::leptos::wasm_split, fallible)]
pub fn export_file(planner: Planner, kind: &'static str, link: String) -> Result<Result<(), String>, SplitLoaderError> {
    let units = planner.units.get_untracked();
    let date = today();
    let stem = planner.valid.with_untracked(|s| file_stem(&s.model.label()));
    // The plan shown is the last valid scenario's: its context comes from that scenario.
    Ok(planner.plan.with_untracked(|p| {
        planner.valid.with_untracked(|s| {
            let b = &p.breakdown;
            match kind {
                "png" => chart_png(&export_chart(s, b, units, &link, &date)).and_then(|bytes| download(&bytes, &format!("{stem}.png"), "image/png")),
                "svg" => chart_svg(&export_chart(s, b, units, &link, &date)).and_then(|svg| download(svg.as_bytes(), &format!("{stem}.svg"), "image/svg+xml")),
                "md" => download(export_markdown(s, b, units, &link, &date).as_bytes(), &format!("{stem}.md"), "text/markdown"),
                _ => serde_json::to_string_pretty(&export_json(s, b, units, &link, &date))
                    .map_err(|e| e.to_string())
                    .and_then(|text| download(text.as_bytes(), &format!("{stem}.json"), "application/json")),
            }
        })
    }))
}

/// Today's date, `2026-12-03` (UTC), for the exports.
fn today() -> String {
    js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default().chars().take(10).collect()
}

/// Offers `bytes` as a download named `filename`.
fn download(bytes: &[u8], filename: &str, mime: &str) -> Result<(), String> {
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let parts = Array::of1(&Uint8Array::from(bytes).into());
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(js_error)?;
    let href = web_sys::Url::create_object_url_with_blob(&blob).map_err(js_error)?;
    let anchor: web_sys::HtmlAnchorElement = document.create_element("a").map_err(js_error)?.unchecked_into();
    anchor.set_href(&href);
    anchor.set_download(filename);
    anchor.set_hidden(true);
    if let Some(body) = document.body() {
        let _ = body.append_child(&anchor);
        anchor.click();
        let _ = body.remove_child(&anchor);
    } else {
        anchor.click();
    }
    // Revoke later: the download reads the blob asynchronously.
    set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&href);
        },
        std::time::Duration::from_secs(30),
    );
    Ok(())
}

/// Puts `text` on the clipboard; the error says why not.
pub async fn copy_text(text: &str) -> Result<(), String> {
    let window = web_sys::window().ok_or("no window")?;
    let clipboard = window.navigator().clipboard();
    if clipboard.is_undefined() {
        return Err("the clipboard is not available here".into());
    }
    wasm_bindgen_futures::JsFuture::from(clipboard.write_text(text)).await.map(|_| ()).map_err(|e| {
        let message = Reflect::get(&e, &JsValue::from_str("message")).ok().and_then(|m| m.as_string()).unwrap_or_else(|| js_error(e));
        format!("the browser refused ({message})")
    })
}

/// `llama-3-8b` → a safe file-name stem.
fn file_stem(label: &str) -> String {
    let stem: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c.to_ascii_lowercase() } else { '-' }).collect();
    let stem = stem.trim_matches('-');
    if stem.is_empty() {
        "headroom".into()
    } else {
        format!("headroom-{}", &stem[..stem.len().min(60)])
    }
}

/// Escapes text for an HTML attribute value in a snippet the user pastes elsewhere.
pub fn html_attr(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}
