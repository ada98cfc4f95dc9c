//! The address bar as the scenario's home: reads the scenario from `location.search` on load,
//! writes it back on every change, and restores it on back/forward.
//!
//! One history entry per burst of edits: the first change of a burst (a slider drag, a
//! number being typed) pushes an entry, later changes in the same burst replace it, and the
//! burst ends [`BURST_MS`] after the last change. So back goes to the scenario before the
//! drag, not to each pixel of it. Page keys ([`crate::url::PAGE_KEYS`]) other than `units`,
//! which this module owns, are carried over untouched for the other views.
//!
//! The codec itself ([`crate::url`]) is the `url_codec` WASM chunk ([`url_codec`]).
//!
//! Decoding a link never fails as a whole: its problems go to [`UrlNotice`], shown by
//! [`UrlNoticeBanner`], and the readable part is opened. Not a component library: the
//! scenario itself lives in [`Planner`].

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::after_paint::AfterPaint;
use super::state::Planner;
use super::url_codec::{self, UrlCodec};
use crate::error::InputError;
use crate::format::Units;
use crate::page_query::{query_without, units_from};
use crate::scenario::Scenario;

/// Quiet time that ends a burst of edits (one history entry per burst).
const BURST_MS: u64 = 400;

/// `location.search` without its `?` (empty when there is none or no window).
pub fn location_query() -> String {
    let search = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    search.strip_prefix('?').unwrap_or(&search).to_string()
}

/// The planner for the scenario in the address bar, kept in step with it from now on
/// ([`start`]); the link's problems go to the provided [`UrlNotice`].
pub fn provide_planner() -> Planner {
    let (scenario, units, errors) = decode_location();
    let planner = Planner::provide(scenario);
    planner.units.set(units);
    let notice = UrlNotice::provide(errors);
    start(planner, notice);
    planner
}

/// Problems found in the last link opened (on load, back/forward or a saved scenario).
#[derive(Clone, Copy)]
pub struct UrlNotice(pub RwSignal<Vec<InputError>>);

impl UrlNotice {
    /// Creates the notice and provides it as context.
    pub fn provide(errors: Vec<InputError>) -> UrlNotice {
        let notice = UrlNotice(RwSignal::new(errors));
        provide_context(notice);
        notice
    }
}

/// Sets (or with `None` removes) one page key in the current history entry, keeping the
/// scenario and the other keys: the open tab travels in the link this way (`view=strategy`).
pub fn replace_page_key(key: &str, value: Option<&str>) {
    let mut query = query_without(&location_query(), key);
    if let Some(value) = value {
        if !query.is_empty() {
            query.push('&');
        }
        query.push_str(&format!("{key}={value}"));
    }
    write_history(&query, false);
}

/// Replaces every `key=…` pair of the current history entry with `pairs` (already encoded:
/// `key=a&key=b`, or empty to drop the key), keeping the scenario and the other keys: the
/// Compare columns travel in the link this way (`cmp=…&cmp=…`).
pub fn replace_page_pairs(key: &str, pairs: &str) {
    let mut query = query_without(&location_query(), key);
    if !pairs.is_empty() {
        if !query.is_empty() {
            query.push('&');
        }
        query.push_str(pairs);
    }
    write_history(&query, false);
}

/// Writes `?query` into the current history entry, or a new one when `push`.
fn write_history(query: &str, push: bool) {
    let Some(history) = web_sys::window().and_then(|w| w.history().ok()) else {
        return;
    };
    let target = format!("?{query}");
    let result = if push { history.push_state_with_url(&JsValue::NULL, "", Some(&target)) } else { history.replace_state_with_url(&JsValue::NULL, "", Some(&target)) };
    if let Err(e) = result {
        leptos::logging::warn!("address bar not updated: {e:?}");
    }
}

/// The scenario, units and problems of the address bar's query, read with the link codec
/// ([`url_codec`]) when the query needs it. Without the codec (its chunk failed to load)
/// such a query opens the default scenario, and the problem says why.
pub fn decode_location() -> (Scenario, Units, Vec<InputError>) {
    let query = location_query();
    if let Some(decoded) = url_codec::decode_without(&query) {
        return decoded;
    }
    match url_codec::get() {
        Some(codec) => (codec.decode_view)(&query),
        None => (Scenario::default(), units_from(&query), vec![codec_missing()]),
    }
}

/// The problem shown when a link cannot be read because the codec's chunk did not load.
fn codec_missing() -> InputError {
    InputError::new("url", "this link's scenario could not be read: the page's link code did not load (are you offline?); reload to retry")
}

/// Keeps the URL in step with `planner` from now on, and restores the scenario on
/// back/forward. The link codec is fetched once the first chart has been painted; a change
/// made before it has arrived is written when it does.
pub fn start(planner: Planner, notice: UrlNotice) {
    let shown = StoredValue::new((planner.scenario.get_untracked(), planner.units.get_untracked()));
    let burst = StoredValue::new(None::<TimeoutHandle>);
    let end_burst = move || {
        if let Some(handle) = burst.get_value() {
            handle.clear();
        }
        burst.set_value(None);
    };
    // Writes the planner's current scenario, if the address bar does not show it yet.
    let write = move |codec: UrlCodec| {
        let current = (planner.scenario.get_untracked(), planner.units.get_untracked());
        if shown.with_value(|s| *s == current) {
            return;
        }
        let query = (codec.compose)(&current.0, current.1, &location_query());
        shown.set_value(current);
        let in_burst = burst.with_value(Option::is_some);
        write_history(&query, !in_burst);
        end_burst();
        match set_timeout_with_handle(move || burst.set_value(None), std::time::Duration::from_millis(BURST_MS)) {
            Ok(handle) => burst.set_value(Some(handle)),
            Err(_) => burst.set_value(None),
        }
    };
    Effect::new(move |first: Option<()>| {
        planner.scenario.track();
        planner.units.track();
        if first.is_none() {
            return; // the address bar shows the scenario it was opened with
        }
        match url_codec::get() {
            Some(codec) => write(codec),
            None => leptos::task::spawn_local(async move {
                match url_codec::load().await {
                    Ok(codec) => write(codec),
                    Err(_) => leptos::logging::warn!("address bar not updated: the link code did not load"),
                }
            }),
        }
    });
    AfterPaint::new().schedule(url_codec::prefetch);
    let popstate = window_event_listener(leptos::ev::popstate, move |_| {
        end_burst();
        let query = location_query();
        let restore = move |(scenario, units, errors): (Scenario, Units, Vec<InputError>)| {
            shown.set_value((scenario.clone(), units));
            notice.0.set(errors);
            if planner.scenario.with_untracked(|s| *s != scenario) {
                planner.scenario.set(scenario);
            }
            if planner.units.get_untracked() != units {
                planner.units.set(units);
            }
        };
        match url_codec::decode_without(&query) {
            Some(decoded) => restore(decoded),
            None => leptos::task::spawn_local(async move {
                match url_codec::load().await {
                    Ok(codec) => restore((codec.decode_view)(&query)),
                    Err(_) => notice.0.set(vec![codec_missing()]),
                }
            }),
        }
    });
    on_cleanup(move || popstate.remove());
}

/// The dismissible list of a link's problems, each naming its parameter. The planner shows it
/// (`url-notice`); so does the Strategy view, which a `view=strategy` link opens on while the
/// planner is hidden. Dismissing one copy dismisses both.
#[component]
pub fn UrlNoticeBanner(
    /// Element id.
    #[prop(default = "url-notice")]
    id: &'static str,
) -> impl IntoView {
    let notice = expect_context::<UrlNotice>();
    link_problems(notice.0, id, "Parts of this link could not be read; the rest was opened:", "Dismiss the link problems")
}

/// A dismissible notice listing what a link could not read, each problem naming its parameter
/// (`url.` stripped); shown while `errors` is not empty. The dismiss button is `<id>-dismiss`.
pub fn link_problems(errors: RwSignal<Vec<InputError>>, id: &'static str, title: &'static str, dismiss_label: &'static str) -> impl IntoView {
    let items = move || {
        errors.with(|errors| {
            errors
                .iter()
                .map(|e| {
                    let param = e.field.strip_prefix("url.").unwrap_or(&e.field).to_string();
                    view! { <li><code class="param">{param}</code>": "{e.message.clone()}</li> }
                })
                .collect_view()
        })
    };
    view! {
        <Show when=move || errors.with(|e| !e.is_empty())>
            <div id=id class="notice" role="alert">
                <div class="notice-body">
                    <p class="notice-title">{title}</p>
                    <ul>{items}</ul>
                </div>
                <button type="button" id=format!("{id}-dismiss") class="notice-dismiss" aria-label=dismiss_label on:click=move |_| errors.set(Vec::new())>
                    "Dismiss"
                </button>
            </div>
        </Show>
    }
}
