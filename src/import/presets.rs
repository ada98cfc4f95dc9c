//! The model catalogue: real Hugging Face `config.json` files named by their Hub id
//! (`Qwen/Qwen3-8B`), embedded at build time (`build.rs`) and imported through the same
//! path as a pasted config.
//!
//! Each file carries a `_headroom` block: the Hub id, a display name, the transformers class
//! it builds, and short aliases (the ids of earlier versions, e.g. `llama-3-8b`, which keep
//! old links working). Parameter counts (total and active) are checked against transformers
//! in `tests/fixtures/measured/param_counts.json`.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::hf_config::import_hf_config;
use crate::model::arch::Architecture;

include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

/// A named, ready-to-use model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPreset {
    /// Hub id (`meta-llama/Meta-Llama-3-8B`).
    pub id: String,
    /// Display name (`Llama 3 8B`).
    pub name: String,
    /// Other ids that name this model (`llama-3-8b`).
    pub aliases: Vec<String>,
    pub arch: Architecture,
    /// What the importer noted (a multimodal wrapper's vision tower not counted, …).
    pub warnings: Vec<String>,
}

impl ModelPreset {
    /// Whether `id` names this model (Hub id or alias; case-insensitive).
    pub fn is_named(&self, id: &str) -> bool {
        self.id.eq_ignore_ascii_case(id) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(id))
    }
}

/// All model presets, parsed once. A file that fails to parse is left out (and caught by
/// the `every_catalogue_file_parses` test), so the page never dies on it.
pub fn model_presets() -> &'static [ModelPreset] {
    static PRESETS: OnceLock<Vec<ModelPreset>> = OnceLock::new();
    PRESETS.get_or_init(|| CATALOGUE_FILES.iter().filter_map(|(stem, text)| parse_preset(stem, text)).collect())
}

/// The preset named `id` (Hub id or alias): an exact name through an index built once
/// (every estimate resolves its model), else a case-insensitive match.
pub fn model_preset(id: &str) -> Option<&'static ModelPreset> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut map = HashMap::new();
        for (i, p) in model_presets().iter().enumerate() {
            for name in std::iter::once(&p.id).chain(&p.aliases) {
                map.insert(name.as_str(), i);
            }
        }
        map
    });
    match index.get(id) {
        Some(&i) => model_presets().get(i),
        None => model_presets().iter().find(|p| p.is_named(id)),
    }
}

/// Hub ids of all model presets, in catalogue order.
pub fn model_preset_ids() -> impl Iterator<Item = &'static str> {
    model_presets().iter().map(|p| p.id.as_str())
}

/// Presets matching a typed query, best first, at most `limit`: every word of the query must
/// appear in the Hub id, an alias or the name (case-insensitive); an exact id or alias comes
/// first, then ids that start with the query, then the catalogue order.
pub fn search_presets(query: &str, limit: usize) -> Vec<&'static ModelPreset> {
    let q = query.trim().to_ascii_lowercase();
    let words: Vec<&str> = q.split(|c: char| c.is_whitespace() || c == '/').filter(|w| !w.is_empty()).collect();
    let mut hits: Vec<(u8, usize, &ModelPreset)> = model_presets()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let haystack = format!("{} {} {}", p.id, p.name, p.aliases.join(" ")).to_ascii_lowercase();
            if !words.iter().all(|w| haystack.contains(w)) {
                return None;
            }
            let rank = if p.is_named(&q) {
                0
            } else if p.id.to_ascii_lowercase().split('/').any(|part| part.starts_with(&q)) || p.name.to_ascii_lowercase().starts_with(&q) {
                1
            } else {
                2
            };
            Some((rank, i, p))
        })
        .collect();
    // Keys are unique (the catalogue index): an unstable sort gives the same order, with less code.
    hits.sort_unstable_by_key(|(rank, i, _)| (*rank, *i));
    hits.into_iter().take(limit).map(|(_, _, p)| p).collect()
}

fn parse_preset(stem: &str, text: &str) -> Option<ModelPreset> {
    let mut config: Value = serde_json::from_str(text).ok()?;
    let meta = config.as_object_mut()?.remove("_headroom").unwrap_or(Value::Null);
    let imported = import_hf_config(&config).ok()?;
    let field = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_string);
    let id = field("id").unwrap_or_else(|| stem.replace("--", "/"));
    let aliases = meta.get("aliases").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default();
    let warnings = imported.warnings.into_iter().filter(|w| !w.starts_with("config.json does not set")).collect();
    Some(ModelPreset { name: field("name").unwrap_or_else(|| id.clone()), id, aliases, arch: imported.arch, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_file_parses() {
        let failed: Vec<_> = CATALOGUE_FILES
            .iter()
            .filter(|(stem, text)| parse_preset(stem, text).is_none())
            .map(|(stem, text)| {
                let mut v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                if let Some(o) = v.as_object_mut() {
                    o.remove("_headroom");
                }
                format!("{stem}: {:?}", import_hf_config(&v).err())
            })
            .collect();
        assert!(failed.is_empty(), "{failed:?}");
        assert!(model_presets().len() >= 50, "{} presets", model_presets().len());
    }

    #[test]
    fn old_short_ids_still_resolve() {
        for id in [
            "gpt2", "gpt2-medium", "gpt2-xl", "llama-2-7b", "llama-2-13b", "llama-3-8b", "llama-3-70b", "llama-3.2-1b", "mistral-7b",
            "qwen2-7b", "mixtral-8x7b", "bert-base", "bert-large", "vit-base-16", "vit-large-16", "resnet-50",
        ] {
            assert!(model_preset(id).is_some(), "missing preset {id}");
        }
    }

    #[test]
    fn search_finds_by_id_name_or_alias() {
        let first = |q: &str| search_presets(q, 5).first().map(|p| p.id.clone());
        assert_eq!(first("qwen3 8b").as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(first("llama-3-8b").as_deref(), Some("meta-llama/Meta-Llama-3-8B"));
        assert_eq!(first("deepseek-ai/DeepSeek-V3").as_deref(), Some("deepseek-ai/DeepSeek-V3"));
        assert!(search_presets("gemma", 50).len() >= 6);
        assert!(search_presets("no such model", 5).is_empty());
        assert_eq!(search_presets("", 8).len(), 8);
    }

    #[test]
    fn ids_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for p in model_presets() {
            for name in std::iter::once(&p.id).chain(&p.aliases) {
                assert!(seen.insert(name.to_ascii_lowercase()), "{name} names two presets");
            }
        }
    }
}
