//! `HubFetch`: "Fetch config.json from the Hugging Face Hub" for a model id that is not in
//! the catalogue. Only when the user asks, the page reads
//! `https://huggingface.co/{id}/resolve/main/config.json` (the Hub's file URL, the one
//! `huggingface_hub.hf_hub_download` builds: huggingface/huggingface_hub
//! `src/huggingface_hub/file_download.py`, `hf_hub_url`); `index.html`'s Content Security
//! Policy allows exactly that origin for `connect-src`. The text goes through the pasted
//! config's decoder ([`HubFetch`]'s `on_config`).
//!
//! A gated repository (401/403: the Hub wants a login and an accepted licence), a missing
//! one (404), another status or no answer at all each say so, and offer the paste.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::import::hub::{config_url, HUB};

/// What a fetch ended with.
enum Fetched {
    Text(String),
    Status(u16),
    Unreachable,
}

async fn fetch_config(id: &str) -> Fetched {
    let Some(window) = web_sys::window() else {
        return Fetched::Unreachable;
    };
    let Ok(response) = JsFuture::from(window.fetch_with_str(&config_url(id))).await else {
        return Fetched::Unreachable;
    };
    let Ok(response) = response.dyn_into::<web_sys::Response>() else {
        return Fetched::Unreachable;
    };
    if !response.ok() {
        return Fetched::Status(response.status());
    }
    let text = match response.text() {
        Ok(promise) => JsFuture::from(promise).await.ok().and_then(|t| t.as_string()),
        Err(_) => None,
    };
    text.map_or(Fetched::Unreachable, Fetched::Text)
}

/// The sentence for a failed fetch of `id`.
fn failure(id: &str, fetched: &Fetched) -> String {
    let paste = "paste its config.json below instead";
    match fetched {
        Fetched::Status(401 | 403) => format!("{id} is gated on the Hub: its files need a Hugging Face login and an accepted licence. Open {HUB}/{id}, then {paste}."),
        Fetched::Status(404) => format!("The Hub has no config.json for {id} (no such repository, or a private one): check the id, or {paste}."),
        Fetched::Status(status) => format!("The Hub answered {status} for {id}'s config.json: {paste}."),
        Fetched::Unreachable | Fetched::Text(_) => format!("Could not reach the Hugging Face Hub (offline, or blocked): {paste}."),
    }
}

/// The fetch button for `id` (shown while it is a Hub id not in the catalogue) and its
/// status line. `on_config` gets the fetched text; `on_failure` opens the paste.
#[component]
pub fn HubFetch(id: Signal<Option<String>>, on_config: Callback<String>, on_failure: Callback<()>) -> impl IntoView {
    let status = RwSignal::new(None::<(bool, String)>);
    let busy = RwSignal::new(false);
    let fetch = move |_| {
        let Some(id) = id.get_untracked() else { return };
        busy.set(true);
        status.set(Some((false, format!("Fetching {}…", config_url(&id)))));
        leptos::task::spawn_local(async move {
            let fetched = fetch_config(&id).await;
            let _ = busy.try_set(false);
            match fetched {
                Fetched::Text(text) => {
                    let _ = status.try_set(Some((false, format!("Read {id}'s config.json from the Hub."))));
                    on_config.run(text);
                }
                other => {
                    let _ = status.try_set(Some((true, failure(&id, &other))));
                    on_failure.run(());
                }
            }
        });
    };
    view! {
        <Show when=move || id.with(Option::is_some)>
            <p class="hub-fetch">
                <button type="button" id="hub-fetch" on:click=fetch disabled=move || busy.get()>
                    "Fetch config.json from the Hugging Face Hub"
                </button>
                <span class="hint">{move || id.get().map(|id| format!(" for {id} (reads {})", config_url(&id))).unwrap_or_default()}</span>
            </p>
        </Show>
        <p id="hub-fetch-status" class=move || if status.with(|s| s.as_ref().is_some_and(|(bad, _)| *bad)) { "field-error" } else { "hint" } role="status" hidden=move || status.with(Option::is_none)>
            {move || status.with(|s| s.as_ref().map(|(_, text)| text.clone()).unwrap_or_default())}
        </p>
    }
}
