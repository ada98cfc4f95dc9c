//! `ModelPicker`: a type-ahead search over the model catalogue (Hub ids, names, short ids),
//! with "paste a config.json" beside it.
//!
//! The search box is an ARIA combobox: typing filters the catalogue
//! ([`crate::import::presets::search_presets`]), ↑/↓ move through the matches, Enter picks,
//! Escape restores the current model. A pasted config goes through the one config decoder
//! ([`ModelSpec::from_hf_config`]); when it does not decode, its message is shown beside the
//! text box and a notice says the plan shown is still the previous model's. That decoder,
//! with every family Headroom reads, is the `config_reader` WASM chunk, fetched at the first
//! paste: the catalogue's own models need only their families, which the first download has.
//! A typed Hub id that is not in the catalogue can be fetched from the Hub on request
//! (`hub_fetch.rs`), through the same decoder; a failed fetch opens the paste.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};
use serde_json::Value;
use wasm_bindgen::JsCast;

use crate::import::hub::hub_id;
use crate::import::presets::{model_preset, search_presets};
use crate::input_limits::{check_size, CONFIG_BYTES};
use crate::scenario::ModelSpec;
use crate::ui::fields::bounded_text::textarea_text;
use crate::ui::fields::field_error::FieldError;
use crate::ui::lazy_view::Chunked;
use crate::ui::planner::hub_fetch::HubFetch;
use crate::ui::state::Planner;

/// Matches listed under the search box.
const LIST_LIMIT: usize = 12;

/// Pasted text → a model, or a message naming the bad field.
type Decode = fn(&str) -> Result<ModelSpec, String>;

/// Decodes pasted text into a model, or a message naming the bad field.
fn decode_config(text: &str) -> Result<ModelSpec, String> {
    check_size("config.json", "a config", text.len(), CONFIG_BYTES).map_err(|e| e.to_string())?;
    let raw: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    // A diffusers pipeline: `{"model_index": {…}, "unet": {…}, …}`.
    if raw.get("model_index").is_some() {
        return ModelSpec::from_pipeline(raw).map_err(|e| e.within("pipeline").to_string());
    }
    ModelSpec::from_hf_config(raw).map_err(|e| e.within("config.json").to_string())
}

/// The decoder, in the `config_reader` chunk.
#[wasm_split(config_reader, wasm_split_path = ::leptos::wasm_split, fallible)]
fn config_reader() -> Result<Decode, SplitLoaderError> {
    Ok(decode_config)
}
static READER: Chunked<Decode> = Chunked::new();

/// One entry of the match list.
#[derive(Clone, PartialEq)]
struct Match {
    key: String,
    name: String,
    detail: String,
}

fn matches_for(query: &str) -> Vec<Match> {
    search_presets(query, LIST_LIMIT).into_iter().map(|p| Match { key: p.id.to_string(), name: p.name.to_string(), detail: format!("{} · {}", p.id, p.arch.summary()) }).collect()
}

// long: one component's signals (type-ahead list, keyboard choice, config paste, Hub fetch) and the markup that reads them; to be split when src/ui/ is laid out by view (issue 25, item 5).
/// The catalogue search plus the config.json text box.
#[component]
pub fn ModelPicker() -> impl IntoView {
    let planner = Planner::get();
    let current_key = planner.slice(|s| match &s.model {
        ModelSpec::Preset(id) => model_preset(id).map_or_else(|| id.clone(), |p| p.id.to_string()),
        _ => "custom".to_string(),
    });
    let current_name = planner.slice(|s| match &s.model {
        ModelSpec::Preset(id) => model_preset(id).map_or_else(|| id.clone(), |p| p.name.to_string()),
        other => other.label(),
    });
    let summary = planner.slice(|s| s.model.architecture().map(|a| a.summary()).unwrap_or_default());
    // The text being typed; `None` shows the current model's name.
    let query = RwSignal::new(None::<String>);
    // The last text typed (kept after the box closes): a Hub id not in the catalogue can be
    // fetched.
    let typed = RwSignal::new(String::new());
    let hub_candidate = Signal::derive(move || typed.with(|t| hub_id(t)).filter(|id| model_preset(id).is_none()));
    let open = RwSignal::new(false);
    let active = RwSignal::new(0usize);
    let matches = Memo::new(move |_| matches_for(&query.get().unwrap_or_default()));
    let paste_error = planner.rejected_paste;

    let close = move || {
        query.set(None);
        open.set(false);
    };
    let choose = move |key: String| {
        planner.set(|s| s.model = ModelSpec::Preset(key));
        paste_error.set(None);
        close();
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let count = matches.with(Vec::len);
        match ev.key().as_str() {
            "ArrowDown" => {
                ev.prevent_default();
                if open.get_untracked() {
                    active.update(|i| *i = (*i + 1).min(count.saturating_sub(1)));
                } else {
                    open.set(true);
                }
            }
            "ArrowUp" => {
                ev.prevent_default();
                active.update(|i| *i = i.saturating_sub(1));
            }
            "Enter" => {
                ev.prevent_default();
                if let Some(m) = matches.with(|all| all.get(active.get_untracked()).cloned()) {
                    choose(m.key);
                }
            }
            "Escape" => close(),
            _ => {}
        }
    };
    // The text last pasted or typed: what the decoder reads once it is there.
    let pasted = StoredValue::new(String::new());
    let apply = move |decode: Decode| {
        let text = pasted.get_value();
        if text.trim().is_empty() {
            return paste_error.set(None);
        }
        match decode(&text) {
            Ok(model) => {
                paste_error.set(None);
                planner.set(|s| s.model = model);
            }
            Err(message) => paste_error.set(Some(message)),
        }
    };
    let decode_pasted = move || match READER.get() {
        Some(decode) => apply(decode),
        None => leptos::task::spawn_local(async move {
            match READER.load(config_reader).await {
                Ok(decode) => apply(decode),
                Err(_) => paste_error.set(Some("the config reader could not be loaded (are you offline?)".into())),
            }
        }),
    };
    // A paste past the limit is refused before its text is read; the plan keeps the model.
    let on_paste = move |ev: leptos::ev::Event| match textarea_text(&ev, "config.json", "a config", CONFIG_BYTES) {
        Ok(text) => {
            pasted.set_value(text);
            decode_pasted();
        }
        Err(message) => {
            pasted.set_value(String::new());
            paste_error.set(Some(message));
        }
    };
    // A config fetched from the Hub is read as if pasted, and shown in the paste box.
    let on_hub_config = Callback::new(move |text: String| {
        if let Some(area) = document().get_element_by_id("hf-config").and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok()) {
            area.set_value(&text);
        }
        pasted.set_value(text);
        decode_pasted();
    });
    let open_paste = Callback::new(move |()| {
        if let Some(details) = document().get_element_by_id("paste-details") {
            let _ = details.set_attribute("open", "");
        }
    });
    let option_id = |i: usize| format!("model-option-{i}");
    // Focusing or clicking the box while it shows the current model selects its text, so
    // typing replaces the name instead of appending to it.
    let select_name = move |input: web_sys::HtmlInputElement| {
        if query.with_untracked(Option::is_none) {
            input.select();
        }
    };
    let on_focus = move |ev: leptos::ev::FocusEvent| {
        // A pipeline may be chosen next: its parts' chunk is fetched now (`diffusion_parts`).
        crate::ui::diffusion_parts::prefetch();
        select_name(event_target(&ev))
    };
    let on_click = move |ev: leptos::ev::MouseEvent| select_name(event_target(&ev));
    view! {
        <fieldset class="group">
            <legend>"Model"</legend>
            <div class="control model-search">
                <label for="model">"Search models"</label>
                <input
                    id="model"
                    type="text"
                    role="combobox"
                    autocomplete="off"
                    spellcheck="false"
                    aria-autocomplete="list"
                    aria-controls="model-list"
                    aria-describedby="model-summary"
                    aria-expanded=move || open.get().to_string()
                    aria-activedescendant=move || if open.get() { option_id(active.get()) } else { String::new() }
                    data-key=move || current_key.get()
                    placeholder="Hub id or name: Qwen3-8B, gemma-2, deepseek…"
                    prop:value=move || query.get().unwrap_or_else(|| current_name.get())
                    on:focus=on_focus
                    on:click=on_click
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        typed.set(text.clone());
                        query.set(Some(text));
                        active.set(0);
                        open.set(true);
                    }
                    on:keydown=on_key
                    on:blur=move |_| close()
                />
                <ul id="model-list" class="model-list" role="listbox" aria-label="Matching models" hidden=move || !open.get()>
                    {move || {
                        let list = matches.get();
                        if list.is_empty() {
                            return view! { <li class="model-empty" role="presentation">"No model matches: fetch its config.json from the Hub, or paste it below"</li> }.into_any();
                        }
                        list.into_iter()
                            .enumerate()
                            .map(|(i, m)| {
                                let key = m.key.clone();
                                view! {
                                    <li
                                        id=option_id(i)
                                        role="option"
                                        class="model-option"
                                        aria-selected=move || (active.get() == i).to_string()
                                        on:mousedown=move |ev| {
                                            ev.prevent_default();
                                            choose(key.clone());
                                        }
                                    >
                                        <span class="model-name">{m.name}</span>
                                        <span class="model-detail">{m.detail}</span>
                                    </li>
                                }
                            })
                            .collect_view()
                            .into_any()
                    }}
                </ul>
                <p id="model-summary" class="hint">{move || summary.get()}</p>
                <HubFetch id=hub_candidate on_config=on_hub_config on_failure=open_paste />
                <FieldError field="model" />
            </div>
            <details class="control paste" id="paste-details">
                <summary>"Paste a Hugging Face config.json"</summary>
                <label for="hf-config" class="visually-hidden">"config.json content"</label>
                <textarea
                    id="hf-config"
                    rows="6"
                    spellcheck="false"
                    placeholder="{\"model_type\": \"qwen3\", \"hidden_size\": 4096, …}"
                    aria-describedby="hf-config-error"
                    on:input=on_paste
                ></textarea>
                <p id="hf-config-error" class="field-error" role="alert" hidden=move || paste_error.with(Option::is_none)>
                    {move || paste_error.get().map(|m| format!("{m} — the plan still shows the previous model")).unwrap_or_default()}
                </p>
            </details>
        </fieldset>
    }
}
