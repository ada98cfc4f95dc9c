//! Views whose code is not in the first download: each lives in a WASM chunk of its own,
//! fetched the first time the view opens.
//!
//! A split point is a function marked `#[wasm_split(name, …)]` (the `wasm_split_helpers`
//! crate, re-exported as `leptos::wasm_split`; it is what Leptos' own `#[lazy]` expands to,
//! leptos-rs/leptos `leptos_macro/src/lazy.rs`). Its body and everything only it reaches
//! are cut out of the main module after linking by `wasm-split-cli`
//! (`scripts/trunk-split-wasm.mjs`); calling it first awaits the chunk. Ours return a
//! [`Build`]: a plain function that builds the view, called synchronously like any
//! component, inside the owner of the place that shows it. So a view in a chunk has the
//! same context, effects and cleanup as it had in the main module; only the first opening
//! waits, and no future ever touches a reactive value after its view has gone.
//!
//! A chunk that fails to load (offline) says so in place of the view; opening it again
//! retries (the loader caches successes only). A view on screen from the start
//! ([`lazy_view_or`]) is not opened again: its message asks for a reload.

use std::future::Future;
use std::sync::OnceLock;

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::after_paint::AfterPaint;

/// Builds a view; the function itself lives in a chunk.
pub type Build = fn() -> AnyView;

/// What a split point returned (a view's [`Build`], or a plain function such as the link
/// codec's), kept once its chunk has arrived so later uses need no `await`.
pub struct Chunked<T: Copy + 'static>(OnceLock<T>);

impl<T: Copy + 'static> Chunked<T> {
    pub const fn new() -> Self {
        Chunked(OnceLock::new())
    }

    /// The value, if its chunk has arrived.
    pub fn get(&self) -> Option<T> {
        self.0.get().copied()
    }

    /// The value, calling the split point `load` the first time (the chunk's loader caches
    /// successes only, so a failed fetch is retried by the next call).
    pub async fn load<F>(&'static self, load: fn() -> F) -> Result<T, SplitLoaderError>
    where
        F: Future<Output = Result<T, SplitLoaderError>>,
    {
        if let Some(value) = self.get() {
            return Ok(value);
        }
        let value = load().await?;
        Ok(*self.0.get_or_init(|| value))
    }
}

/// What a lazily loaded view shows while it is not built.
#[derive(Clone, Copy)]
enum Load {
    Pending,
    Failed,
    Ready(Build),
}

/// The view that `load` (a split point) builds: at once when its chunk has been loaded
/// before (`built` keeps its builder), else a short status until it arrives.
pub fn lazy_view<F>(built: &'static Chunked<Build>, load: fn() -> F) -> AnyView
where
    F: Future<Output = Result<Build, SplitLoaderError>> + 'static,
{
    if let Some(build) = built.get() {
        return build();
    }
    let state = RwSignal::new(Load::Pending);
    fetch(built, load, state);
    show(state, || view! { <p class="hint" role="status">"Loading…"</p> }.into_any(), "Open it again to retry.")
}

/// [`lazy_view`] for a view that is on screen from the start: `pending` (a placeholder of the
/// view's own size, so nothing moves when it is built) shows until the chunk arrives, and
/// the chunk is fetched once the first frame has been painted ([`AfterPaint`]), so fetching
/// and compiling it never delays the first chart.
pub fn lazy_view_or<F>(built: &'static Chunked<Build>, load: fn() -> F, pending: fn() -> AnyView) -> AnyView
where
    F: Future<Output = Result<Build, SplitLoaderError>> + 'static,
{
    if let Some(build) = built.get() {
        return build();
    }
    let state = RwSignal::new(Load::Pending);
    AfterPaint::new().schedule(move || fetch(built, load, state));
    show(state, pending, "Reload the page to retry.")
}

/// Fetches the chunk and records what came of it in `state`.
fn fetch<F>(built: &'static Chunked<Build>, load: fn() -> F, state: RwSignal<Load>)
where
    F: Future<Output = Result<Build, SplitLoaderError>> + 'static,
{
    leptos::task::spawn_local(async move {
        let next = match built.load(load).await {
            Ok(build) => Load::Ready(build),
            Err(_) => Load::Failed,
        };
        // Built in a task of its own: chunks that arrive together would otherwise all be
        // built in the microtasks of one task, one long task that blocks input. The view may
        // have been closed meanwhile, its signal with it: nothing to show then.
        set_timeout(
            move || {
                let _ = state.try_set(next);
            },
            std::time::Duration::ZERO,
        );
    });
}

/// `pending`, the failure (with how to `retry`), or the built view, as `state` says.
fn show(state: RwSignal<Load>, pending: fn() -> AnyView, retry: &'static str) -> AnyView {
    (move || match state.get() {
        Load::Pending => pending(),
        Load::Failed => view! { <p class="field-error" role="alert">"This view could not be loaded (are you offline?). "{retry}</p> }.into_any(),
        Load::Ready(build) => build(),
    })
    .into_any()
}
