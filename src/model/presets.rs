//! Built-in model presets: real Hugging Face `config.json` files, embedded at build time
//! and imported through the same path as a pasted config.
//!
//! The files under `presets/models/` carry the published hyperparameters of each model
//! (and a `_headroom` block with its display name and Hub source); their parameter
//! counts are checked against transformers in `tests/fixtures/measured/param_counts.json`.

use std::sync::OnceLock;

use serde_json::Value;

use super::arch::Architecture;
use super::hf_config::architecture_from_hf_config;

/// A named, ready-to-use model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPreset {
    /// Kebab-case id used in scenarios and URLs (`llama-3-8b`).
    pub id: &'static str,
    /// Display name (`Llama 3 8B`).
    pub name: String,
    /// Hub repository the config comes from.
    pub source: String,
    pub arch: Architecture,
}

macro_rules! preset_files {
    ($($id:literal),* $(,)?) => {
        [$(($id, include_str!(concat!("presets/models/", $id, ".json")))),*]
    };
}

/// Preset ids with their embedded `config.json`; the order is the order of the menu.
const PRESET_FILES: [(&str, &str); 21] = preset_files![
    "llama-3-8b", "llama-3-70b", "llama-3.2-1b", "llama-3.2-3b", "llama-2-7b", "llama-2-13b",
    "mistral-7b", "mixtral-8x7b", "qwen2-0.5b", "qwen2-7b",
    "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl",
    "bert-base", "bert-large", "vit-base-16", "vit-large-16",
    "resnet-18", "resnet-50", "resnet-101",
];

/// All model presets, parsed once. A file that fails to parse is left out (and caught by
/// the `every_preset_parses` test), so the page never dies on it.
pub fn model_presets() -> &'static [ModelPreset] {
    static PRESETS: OnceLock<Vec<ModelPreset>> = OnceLock::new();
    PRESETS.get_or_init(|| PRESET_FILES.iter().filter_map(|(id, text)| parse_preset(id, text)).collect())
}

/// The preset with this id.
pub fn model_preset(id: &str) -> Option<&'static ModelPreset> {
    model_presets().iter().find(|p| p.id == id)
}

/// Ids of all model presets, in menu order.
pub fn model_preset_ids() -> impl Iterator<Item = &'static str> {
    PRESET_FILES.iter().map(|(id, _)| *id)
}

fn parse_preset(id: &'static str, text: &str) -> Option<ModelPreset> {
    let config: Value = serde_json::from_str(text).ok()?;
    let arch = architecture_from_hf_config(&config).ok()?;
    let meta = config.get("_headroom");
    let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or(id).to_string();
    Some(ModelPreset { id, name: field("name"), source: field("source"), arch })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses() {
        assert_eq!(model_presets().len(), PRESET_FILES.len());
    }

    #[test]
    fn design_card_presets_exist() {
        for id in [
            "gpt2", "gpt2-medium", "gpt2-xl", "llama-2-7b", "llama-2-13b", "llama-3-8b", "llama-3-70b",
            "llama-3.2-1b", "mistral-7b", "qwen2-7b", "mixtral-8x7b", "bert-base", "bert-large",
            "vit-base-16", "vit-large-16", "resnet-50",
        ] {
            assert!(model_preset(id).is_some(), "missing preset {id}");
        }
    }
}
