//! `SavedScenarios`: name and keep scenarios in this browser (`localStorage`), then list,
//! open, rename and delete them.
//!
//! Each scenario sits under its own key, `headroom.saved.<id>`, as JSON `{name, query}`
//! where `query` is the URL codec's query string: an entry that cannot be read is reported
//! and skipped, and the others stay usable. Names are shown as text, never as HTML, cleaned
//! by the same rule whether typed or read back ([`crate::safe_text::clean_name`]), and an
//! entry is bounded in size at save and at load ([`crate::input_limits::SAVED_CHARS`]).
//!
//! The panel's body (storage, the list, the link codec it saves with) is the `saved` WASM
//! chunk, fetched once the first chart has been painted ([`crate::ui::lazy_view`]).

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};
use serde::{Deserialize, Serialize};

use crate::input_limits::{check_size, SAVED_CHARS};
use crate::safe_text::{clean_name, quoted, NAME_CHARS};
use crate::ui::lazy_view::{lazy_view_or, Build, Chunked};
use crate::ui::state::Planner;
use crate::ui::url_sync::UrlNotice;
use crate::url;
use wasm_bindgen::JsCast;

/// Key prefix of every saved scenario.
const PREFIX: &str = "headroom.saved.";

/// One stored scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Saved {
    name: String,
    query: String,
}

/// A listed entry: its id (the key without the prefix) and content.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    id: String,
    saved: Saved,
}

fn storage() -> Result<web_sys::Storage, String> {
    web_sys::window()
        .ok_or("no window")?
        .local_storage()
        .map_err(|_| "this browser blocks local storage here".to_string())?
        .ok_or_else(|| "this browser has no local storage".to_string())
}

/// Every readable entry, oldest first, and a message for each unreadable one.
fn list() -> (Vec<Entry>, Vec<String>) {
    let store = match storage() {
        Ok(s) => s,
        Err(e) => return (Vec::new(), vec![format!("Saved scenarios are unavailable: {e}.")]),
    };
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    let n = store.length().unwrap_or(0);
    for i in 0..n {
        let Ok(Some(key)) = store.key(i) else {
            continue;
        };
        let Some(id) = key.strip_prefix(PREFIX) else {
            continue;
        };
        // Its length is asked of the browser before its text is copied in: an entry past the
        // limit (written by hand, or by another page of this origin) is skipped, not read.
        let length = js_sys::Reflect::get(&store, &key.as_str().into()).ok().and_then(|v| v.dyn_into::<js_sys::JsString>().ok()).map_or(0, |v| v.length() as usize);
        if let Err(e) = check_size("saved scenario", "an entry", length, SAVED_CHARS) {
            problems.push(format!("The saved entry \"{}\" was skipped: {}.", quoted(&key), e.message));
            continue;
        }
        let text = store.get_item(&key).ok().flatten().unwrap_or_default();
        match serde_json::from_str::<Saved>(&text) {
            Ok(saved) => entries.push(Entry { id: id.to_string(), saved: Saved { name: display_name(&saved.name), query: saved.query } }),
            Err(e) => problems.push(format!("The saved entry \"{}\" is damaged ({}) and was skipped.", quoted(&key), quoted(&e.to_string()))),
        }
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    (entries, problems)
}

/// Stores an entry; a scenario whose link would not read back whole (a pasted config past
/// what a link carries) is refused here rather than at the next load.
fn write(id: &str, saved: &Saved) -> Result<(), String> {
    if let Some(problem) = url::unreadable_link(&saved.query) {
        return Err(problem.message);
    }
    let text = serde_json::to_string(saved).map_err(|e| e.to_string())?;
    storage()?.set_item(&format!("{PREFIX}{id}"), &text).map_err(|_| "the browser refused to store it (storage full or blocked)".to_string())
}

/// A new id that sorts by creation time.
fn new_id() -> String {
    let now = js_sys::Date::now() as u64;
    let salt = (js_sys::Math::random() * 1e6) as u64;
    format!("{now:013}-{salt:06}")
}

/// A name, typed or read back from storage, cleaned by the one rule ([`clean_name`]); an
/// empty one is "Untitled scenario".
fn display_name(name: &str) -> String {
    let name = clean_name(name);
    if name.is_empty() {
        "Untitled scenario".into()
    } else {
        name
    }
}

/// The panel's body builder, in the `saved` chunk.
#[wasm_split(saved, wasm_split_path = ::leptos::wasm_split, fallible)]
fn saved_body() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <SavedBody /> }.into_any())
}
static BODY: Chunked<Build> = Chunked::new();

/// The saved-scenarios panel.
#[component]
pub fn SavedScenarios() -> impl IntoView {
    view! {
        <fieldset class="group saved-scenarios">
            <legend>"Saved scenarios"</legend>
            {lazy_view_or(&BODY, saved_body, || view! { <p class="hint">"Scenarios you save stay in this browser."</p> }.into_any())}
        </fieldset>
    }
}

/// The save row, the list and the status line.
#[component]
fn SavedBody() -> impl IntoView {
    let planner = Planner::get();
    let notice = use_context::<UrlNotice>();
    let version = RwSignal::new(0u32);
    let status = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let listing = Memo::new(move |_| {
        version.track();
        list()
    });
    let changed = window_event_listener(leptos::ev::storage, move |_| version.update(|v| *v += 1));
    on_cleanup(move || changed.remove());
    let save = move || {
        let saved = Saved { name: display_name(&name.get_untracked()), query: planner.scenario.with_untracked(url::encode) };
        match write(&new_id(), &saved) {
            Ok(()) => {
                status.set(format!("Saved \"{}\".", saved.name));
                name.set(String::new());
            }
            Err(e) => status.set(format!("Not saved: {e}.")),
        }
        version.update(|v| *v += 1);
    };
    let open = move |entry: Entry| {
        let (scenario, errors) = url::decode(&entry.saved.query);
        let count = errors.len();
        if let Some(notice) = notice {
            notice.0.set(errors);
        }
        planner.scenario.set(scenario);
        status.set(if count == 0 { format!("Opened \"{}\".", entry.saved.name) } else { format!("Opened \"{}\" with {count} problem(s), listed above.", entry.saved.name) });
    };
    let rename = move |entry: Entry, new_name: String| {
        let saved = Saved { name: display_name(&new_name), query: entry.saved.query.clone() };
        match write(&entry.id, &saved) {
            Ok(()) => status.set(format!("Renamed to \"{}\".", saved.name)),
            Err(e) => status.set(format!("Not renamed: {e}.")),
        }
        version.update(|v| *v += 1);
    };
    let delete = move |entry: Entry| {
        match storage().and_then(|s| s.remove_item(&format!("{PREFIX}{}", entry.id)).map_err(|_| "the browser refused".to_string())) {
            Ok(()) => status.set(format!("Deleted \"{}\".", entry.saved.name)),
            Err(e) => status.set(format!("Not deleted: {e}.")),
        }
        version.update(|v| *v += 1);
    };
    let rows = move || {
        listing.with(|(entries, _)| {
            entries
                .iter()
                .map(|entry| {
                    let (e1, e2, e3) = (entry.clone(), entry.clone(), entry.clone());
                    let label = format!("Name of saved scenario {}", entry.saved.name);
                    view! {
                        <li class="saved" data-id=entry.id.clone()>
                            <input class="saved-name" type="text" dir="auto" maxlength=NAME_CHARS aria-label=label prop:value=entry.saved.name.clone()
                                on:change=move |ev| rename(e1.clone(), event_target_value(&ev)) />
                            <button type="button" class="saved-open" on:click=move |_| open(e2.clone())>"Open"</button>
                            <button type="button" class="saved-delete" on:click=move |_| delete(e3.clone())>"Delete"</button>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    let problems = move || listing.with(|(_, problems)| problems.iter().map(|p| view! { <li>{p.clone()}</li> }).collect_view());
    view! {
        <div class="save-row">
            <label for="save-name" class="visually-hidden">"Name for this scenario"</label>
            <input id="save-name" type="text" dir="auto" maxlength=NAME_CHARS placeholder="Name this scenario" prop:value=move || name.get()
                on:input=move |ev| name.set(event_target_value(&ev))
                on:keydown=move |ev| if ev.key() == "Enter" { ev.prevent_default(); save(); } />
            <button type="button" id="save-scenario" on:click=move |_| save()>"Save"</button>
        </div>
        <ul id="saved-problems" class="saved-problems" role="alert" hidden=move || listing.with(|(_, p)| p.is_empty())>{problems}</ul>
        <ul id="saved-list" class="saved-list">{rows}</ul>
        <p class="hint" hidden=move || listing.with(|(e, _)| !e.is_empty())>"Scenarios you save stay in this browser."</p>
        <p id="saved-status" class="hint" dir="auto" role="status" aria-live="polite">{move || status.get()}</p>
    }
}
