//! `ModelPicker`: a model preset, or a pasted Hugging Face `config.json`.
//!
//! A pasted config goes through the same importer as the CLI's `{"hf_config": …}`; when it
//! does not decode, its message is shown beside the text box and the last valid model is
//! kept.

use leptos::prelude::*;
use serde_json::Value;

use super::field_error::FieldError;
use super::state::Planner;
use crate::format;
use crate::import::presets::model_presets;
use crate::scenario::ModelSpec;

/// `<option>` value standing for a pasted config.
const CUSTOM: &str = "custom";

/// Decodes pasted text into a model, or a message naming the bad field.
fn decode_config(text: &str) -> Result<ModelSpec, String> {
    let raw: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    ModelSpec::from_hf_config(raw).map_err(|e| e.within("config.json").to_string())
}

/// Preset select plus the config.json text box.
#[component]
pub fn ModelPicker() -> impl IntoView {
    let planner = Planner::get();
    let selected = planner.slice(|s| match &s.model {
        ModelSpec::Preset(id) => id.clone(),
        _ => CUSTOM.to_string(),
    });
    let custom_label = planner.slice(|s| match &s.model {
        ModelSpec::Preset(_) => None,
        other => Some(other.label()),
    });
    let paste_error = RwSignal::new(None::<String>);
    let params = Memo::new(move |_| planner.plan.with(|p| p.breakdown.param_count));
    let on_paste = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        if text.trim().is_empty() {
            paste_error.set(None);
            return;
        }
        match decode_config(&text) {
            Ok(model) => {
                paste_error.set(None);
                planner.set(|s| s.model = model);
            }
            Err(message) => paste_error.set(Some(message)),
        }
    };
    view! {
        <fieldset class="group">
            <legend>"Model"</legend>
            <div class="control select">
                <label for="model">"Model preset"</label>
                <select
                    id="model"
                    on:change=move |ev| {
                        let id = event_target_value(&ev);
                        if id != CUSTOM {
                            planner.set(|s| s.model = ModelSpec::Preset(id));
                        }
                    }
                >
                    {model_presets()
                        .iter()
                        .map(|p| {
                            let id = p.id;
                            view! { <option value=id prop:selected=move || selected.with(|s| s == id)>{p.name.clone()}</option> }
                        })
                        .collect_view()}
                    <option value=CUSTOM hidden=move || custom_label.with(Option::is_none) prop:selected=move || selected.with(|s| s == CUSTOM)>
                        {move || custom_label.get().unwrap_or_else(|| "pasted config.json".into())}
                    </option>
                </select>
                <p class="hint">{move || format!("{} parameters", format::count(params.get()))}</p>
                <FieldError field="model" />
            </div>
            <details class="control paste">
                <summary>"Paste a Hugging Face config.json"</summary>
                <label for="hf-config" class="visually-hidden">"config.json content"</label>
                <textarea
                    id="hf-config"
                    rows="6"
                    spellcheck="false"
                    placeholder="{\"model_type\": \"llama\", \"hidden_size\": 4096, …}"
                    aria-describedby="hf-config-error"
                    on:input=on_paste
                ></textarea>
                <p id="hf-config-error" class="field-error" role="alert" hidden=move || paste_error.with(Option::is_none)>
                    {move || paste_error.get().unwrap_or_default()}
                </p>
            </details>
        </fieldset>
    }
}
