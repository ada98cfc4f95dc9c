//! The diffusion pipelines' parts (`model::diffusion::parts`: the denoisers' and VAEs'
//! op-by-op walks, 31 KB of gzip that left the main module) as the `diffusion` WASM chunk,
//! fetched the first time a pipeline is validated: chosen in a model list, read from a link,
//! a saved scenario or a pasted config.
//!
//! The model asks for the chunk through the hook [`install_hook`] sets: a pipeline's
//! validation (`Scenario::validate`) fails with the hook's message while the parts are
//! missing, so the page keeps the previous plan (as for any invalid input), and the hook
//! starts the download once. Every
//! memo that validated a pipeline meanwhile tracked [`ARRIVED`], so it runs again when the
//! chunk has been installed (or has failed, to show that); nothing else on the page needs to
//! know about the chunk.

use std::cell::Cell;

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use super::lazy_view::Chunked;

use crate::model::arch::Architecture;
use crate::model::diffusion::parts::{self, Parts};
use crate::scenario::Scenario;

/// The parts' table, in the `diffusion` chunk. (Built here, not in a `static`: a function
/// pointer in the main module's data would keep the function in the main module.)
#[wasm_split(diffusion, wasm_split_path = ::leptos::wasm_split, fallible)]
fn load_chunk() -> Result<Parts, SplitLoaderError> {
    Ok(Parts::all())
}
static CHUNK: Chunked<Parts> = Chunked::new();

/// Where the download stands.
#[derive(Clone, Copy, PartialEq)]
enum State {
    Idle,
    Loading,
    Failed,
}

thread_local! {
    static STATE: Cell<State> = const { Cell::new(State::Idle) };
    /// Notified when the download ends, either way: the memos that met a missing part rerun.
    static ARRIVED: ArcTrigger = ArcTrigger::new();
}

/// Lets the model fetch the chunk when it first meets a pipeline ([`parts::on_missing`]).
pub fn install_hook() {
    parts::on_missing(missing);
}

/// Called by `Scenario::validate` of a pipeline while the parts are missing: subscribes the running memo
/// to the chunk's arrival, starts the download if none is under way, and says what is
/// happening. After a failure, the message says so once and the next check retries.
fn missing() -> &'static str {
    ARRIVED.with(Track::track);
    match STATE.with(|s| s.replace(State::Loading)) {
        State::Failed => {
            STATE.with(|s| s.set(State::Idle));
            "the diffusion pipeline code could not be loaded (are you offline?); change the model or reload to retry"
        }
        State::Loading => "the diffusion pipeline code is loading; the plan follows when it has arrived",
        State::Idle => {
            leptos::task::spawn_local(async {
                match CHUNK.load(load_chunk).await {
                    Ok(table) => {
                        parts::install(table);
                        STATE.with(|s| s.set(State::Idle));
                    }
                    Err(_) => STATE.with(|s| s.set(State::Failed)),
                }
                ARRIVED.with(Notify::notify);
            });
            "the diffusion pipeline code is loading; the plan follows when it has arrived"
        }
    }
}

/// Whether `s` plans a diffusion pipeline whose parts have not arrived yet.
pub fn needed(s: &Scenario) -> bool {
    !parts::installed() && s.model.architecture().is_some_and(|a| matches!(a.as_ref(), Architecture::Diffusion(_)))
}

/// Fetches and installs the parts (a failure is said by the next validation, which retries).
pub async fn load() {
    if let Ok(table) = CHUNK.load(load_chunk).await {
        parts::install(table);
    }
}

/// Fetches the parts in the background (the model search does when it gets the focus: a
/// pipeline chosen there then plans at once).
pub fn prefetch() {
    if !parts::installed() && STATE.with(|s| s.get()) == State::Idle {
        leptos::task::spawn_local(load());
    }
}
