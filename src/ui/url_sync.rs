//! The address bar as the scenario's source on load: the scenario, units and problems of
//! `location.search` ([`decode_location`], through the link codec's chunk, [`url_codec`]),
//! the planner made from them ([`provide_planner`]), and the list of a link's problems
//! ([`UrlNotice`], shown by [`UrlNoticeBanner`]). Decoding a link never fails as a whole: its
//! problems are listed and the readable part is opened. Writing the address bar and
//! back/forward are `address_bar.rs`'s. Not a component library: the scenario itself lives in
//! [`Planner`].

use leptos::prelude::*;

use super::state::Planner;
use super::url_codec;
use crate::error::InputError;
use crate::format::Units;
use crate::page_query::units_from;
use crate::scenario::Scenario;

/// `location.search` without its `?` (empty when there is none or no window).
pub fn location_query() -> String {
    let search = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    search.strip_prefix('?').unwrap_or(&search).to_string()
}

/// The planner for the scenario in the address bar, and the link's problems, provided as
/// context (the address bar follows them once `address_bar::start` runs).
pub fn provide_planner() -> (Planner, UrlNotice) {
    let (scenario, units, errors) = decode_location();
    let planner = Planner::provide(scenario);
    planner.units.set(units);
    (planner, UrlNotice::provide(errors))
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
pub fn codec_missing() -> InputError {
    InputError::new("url", "this link's scenario could not be read: the page's link code did not load (are you offline?); reload to retry")
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
