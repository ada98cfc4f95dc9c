//! The address bar's scenario codec ([`crate::url`]: `encode`, `decode` and the serde code
//! behind them; 52 KB of the first download's gzip before it moved, measured by leaving it
//! out) as the `url_codec` WASM chunk.
//!
//! A page opened without a scenario in its address (the default planner) never needs it to
//! draw, so it is fetched after the first chart ([`prefetch`]) and is there by the first
//! edit. A shared link or an embed needs it before anything is drawn: [`super::mount`] waits
//! for it first ([`needed`]), and the page preloads its files beside the main module when
//! the address has a query (`scripts/trunk-split-wasm.mjs`). Until it has arrived, a change
//! to the scenario waits for it ([`super::url_sync`]).

use std::sync::OnceLock;

use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::error::InputError;
use crate::format::Units;
use crate::scenario::Scenario;

/// What the chunk holds.
#[derive(Clone, Copy)]
pub struct UrlCodec {
    /// The scenario, units and decoding problems of a query.
    pub decode_view: fn(&str) -> (Scenario, Units, Vec<InputError>),
    /// The query for a scenario and units, keeping the other page keys of the current query.
    pub compose: fn(&Scenario, Units, &str) -> String,
}

/// The codec, in the `url_codec` chunk. (Built here, not in a `static`: a function pointer
/// in the main module's data would keep the function in the main module.)
#[wasm_split(url_codec, wasm_split_path = ::leptos::wasm_split, fallible)]
fn load_chunk() -> Result<UrlCodec, SplitLoaderError> {
    Ok(UrlCodec { decode_view: super::url_sync::decode_view, compose: super::url_sync::compose })
}
static LOADED: OnceLock<UrlCodec> = OnceLock::new();

/// The codec, if its chunk has arrived.
pub fn get() -> Option<UrlCodec> {
    LOADED.get().copied()
}

/// The codec, fetching its chunk the first time.
pub async fn load() -> Result<UrlCodec, SplitLoaderError> {
    if let Some(codec) = get() {
        return Ok(codec);
    }
    let codec = load_chunk().await?;
    Ok(*LOADED.get_or_init(|| codec))
}

/// Fetches the chunk in the background (its failure shows at the first use).
pub fn prefetch() {
    if get().is_none() {
        leptos::task::spawn_local(async {
            let _ = load().await;
        });
    }
}

/// Whether `query` needs the codec to be read ([`crate::url::carries_scenario`]).
pub fn needed(query: &str) -> bool {
    crate::url::carries_scenario(query)
}

/// The scenario, units and problems of `query` without the codec, when it is not
/// [`needed`]; `None` when it is.
pub fn decode_without(query: &str) -> Option<(Scenario, Units, Vec<InputError>)> {
    (!needed(query)).then(|| (Scenario::default(), super::url_sync::units_from(query), Vec::new()))
}
