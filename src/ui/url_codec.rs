//! The address bar's scenario codec ([`crate::url`]: `encode`, `decode` and the serde code
//! behind them; 52 KB of the first download's gzip before it moved, measured by leaving it
//! out) and the address bar's query by part ([`crate::address`]) as the `url_codec` WASM chunk.
//!
//! A page opened without a scenario in its address (the default planner) never needs it to
//! draw, so it is fetched after the first chart ([`prefetch`]) and is there by the first
//! edit. A shared link or an embed needs it before anything is drawn: [`super::mount`] waits
//! for it first (`url::carries_scenario`), and the page preloads its files beside the main module when
//! the address has a query (`scripts/trunk-split-wasm.mjs`). Until it has arrived, a change
//! to the scenario or the Compare columns waits for it before it reaches the address bar
//! (`address_bar`).

use leptos::wasm_split::{wasm_split, SplitLoaderError};

use super::lazy_view::Chunked;

use std::cell::RefCell;

use crate::address::{rewrite, Ladder, Wanted};
use crate::error::InputError;
use crate::format::Units;
use crate::scenario::Scenario;

/// What the page's state wants in the address bar, before encoding (see [`crate::address::Wanted`]).
pub struct Parts<'a> {
    /// The scenario when it changed since the bar last showed it; `None` keeps the bar's pairs.
    pub scenario: Option<&'a Scenario>,
    pub units: Units,
    pub view: Option<&'static str>,
    pub budget: Option<u64>,
    pub ladder: Option<Ladder>,
    /// The Compare columns once there are any; `None` keeps the bar's `cmp=` pairs.
    pub columns: Option<&'a [Scenario]>,
}

/// What the chunk holds.
#[derive(Clone, Copy)]
pub struct UrlCodec {
    /// The scenario, units and decoding problems of a query.
    pub decode_view: fn(&str) -> (Scenario, Units, Vec<InputError>),
    /// The address bar's query with the state's parts, or `None` when it says so already ([`compose`]).
    pub compose: fn(&str, &Parts) -> Option<String>,
}

thread_local! {
    /// The columns last encoded and their `cmp=` pairs: a planner edit does not encode them again.
    static COLUMNS: RefCell<Option<(Vec<Scenario>, String)>> = const { RefCell::new(None) };
}

/// `current` with `parts` encoded ([`crate::url::encode`], [`crate::url::encode_compare`]) and
/// applied ([`crate::address::rewrite`]); `None` when the query says so already.
fn compose(current: &str, parts: &Parts) -> Option<String> {
    let compare = parts.columns.map(|columns| {
        COLUMNS.with_borrow_mut(|shown| match shown {
            Some((cols, pairs)) if cols.as_slice() == columns => pairs.clone(),
            _ => {
                let pairs = crate::url::encode_compare(columns);
                *shown = Some((columns.to_vec(), pairs.clone()));
                pairs
            }
        })
    });
    let wanted = Wanted { scenario: parts.scenario.map(crate::url::encode), units: parts.units, view: parts.view, budget: parts.budget, ladder: parts.ladder.clone(), compare };
    rewrite(current, &wanted)
}

/// The codec, in the `url_codec` chunk. (Built here, not in a `static`: a function pointer
/// in the main module's data would keep the function in the main module.)
#[wasm_split(url_codec, wasm_split_path = ::leptos::wasm_split, fallible)]
fn load_chunk() -> Result<UrlCodec, SplitLoaderError> {
    Ok(UrlCodec { decode_view: crate::page_query::decode_view, compose })
}
static CODEC: Chunked<UrlCodec> = Chunked::new();

/// The codec, if its chunk has arrived.
pub fn get() -> Option<UrlCodec> {
    CODEC.get()
}

/// The codec, fetching its chunk the first time.
pub async fn load() -> Result<UrlCodec, SplitLoaderError> {
    CODEC.load(load_chunk).await
}

/// Fetches the chunk in the background (its failure shows at the first use).
pub fn prefetch() {
    if get().is_none() {
        leptos::task::spawn_local(async {
            let _ = load().await;
        });
    }
}

/// The scenario, units and problems of `query` without the codec, when it carries no
/// scenario ([`crate::url::carries_scenario`]); `None` when it needs the codec.
pub fn decode_without(query: &str) -> Option<(Scenario, Units, Vec<InputError>)> {
    (!crate::url::carries_scenario(query)).then(|| (Scenario::default(), crate::page_query::units_from(query), Vec::new()))
}
