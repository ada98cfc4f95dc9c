//! The model catalogue: real Hugging Face `config.json` files named by their Hub id
//! (`Qwen/Qwen3-8B`), embedded at build time (`build.rs`) and imported by the same code as a
//! pasted config, limited to the catalogue's families (`import_catalogue_config`).
//!
//! Each file carries a `_headroom` block: the Hub id, a display name, the transformers class
//! it builds, and short aliases (the ids of earlier versions, e.g. `llama-3-8b`, which keep
//! old links working). Parameter counts (total and active) are checked against transformers
//! in `tests/fixtures/measured/param_counts.json`.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::hf_config::import_catalogue_config;
#[cfg(test)]
use super::hf_config::import_hf_config;
use crate::model::arch::Architecture;

/// One catalogue file: its names, known without parsing, and its `config.json` (compact,
/// without the `_headroom` block), parsed on first use.
pub struct CatalogueEntry {
    /// Hub id (`meta-llama/Meta-Llama-3-8B`).
    pub id: &'static str,
    /// Display name (`Llama 3 8B`).
    pub name: &'static str,
    /// Other ids that name this model (`llama-3-8b`).
    pub aliases: &'static [&'static str],
    config: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

/// A named, ready-to-use model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPreset {
    /// Hub id (`meta-llama/Meta-Llama-3-8B`).
    pub id: &'static str,
    /// Display name (`Llama 3 8B`).
    pub name: &'static str,
    /// Other ids that name this model (`llama-3-8b`).
    pub aliases: &'static [&'static str],
    pub arch: Architecture,
    /// What the importer noted (a multimodal wrapper's vision tower not counted, …).
    pub warnings: Vec<String>,
}

impl CatalogueEntry {
    /// Whether `id` names this model (Hub id or alias; case-insensitive).
    fn is_named(&self, id: &str) -> bool {
        self.id.eq_ignore_ascii_case(id) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(id))
    }
}

/// The model of catalogue entry `index`, parsed on first use (the page opens on one model:
/// parsing all 65 configs up front cost ~20 ms of its first chart). A file that fails to
/// parse gives `None` (and is caught by the `every_catalogue_file_parses` test), so the page
/// never dies on it.
fn preset_at(index: usize) -> Option<&'static ModelPreset> {
    static PARSED: OnceLock<Vec<OnceLock<Option<ModelPreset>>>> = OnceLock::new();
    let slots = PARSED.get_or_init(|| CATALOGUE.iter().map(|_| OnceLock::new()).collect());
    slots.get(index)?.get_or_init(|| parse_preset(&CATALOGUE[index])).as_ref()
}

/// All model presets, in catalogue order (each parsed on first use).
pub fn model_presets() -> impl Iterator<Item = &'static ModelPreset> {
    (0..CATALOGUE.len()).filter_map(preset_at)
}

/// The preset named `id` (Hub id or alias): an exact name through an index built once from
/// the names alone (every estimate resolves its model), else a case-insensitive match.
pub fn model_preset(id: &str) -> Option<&'static ModelPreset> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut map = HashMap::new();
        for (i, entry) in CATALOGUE.iter().enumerate() {
            for name in std::iter::once(&entry.id).chain(entry.aliases) {
                map.insert(*name, i);
            }
        }
        map
    });
    match index.get(id) {
        Some(&i) => preset_at(i),
        None => CATALOGUE.iter().position(|e| e.is_named(id)).and_then(preset_at),
    }
}

/// Hub ids of all models, in catalogue order, without parsing any.
pub fn model_preset_ids() -> impl Iterator<Item = &'static str> {
    CATALOGUE.iter().map(|e| e.id)
}

/// Hub ids and display names of all models, in catalogue order, without parsing any.
pub fn model_names() -> impl Iterator<Item = (&'static str, &'static str)> {
    CATALOGUE.iter().map(|e| (e.id, e.name))
}

/// Presets matching a typed query, best first, at most `limit`: every word of the query must
/// appear in the Hub id, an alias or the name (case-insensitive); an exact id or alias comes
/// first, then ids that start with the query, then the catalogue order. A query that matches
/// nothing and ends in an instruct suffix (`-Instruct`, `-it`, `-chat`) is tried without it.
/// Only the matches returned are parsed.
pub fn search_presets(query: &str, limit: usize) -> Vec<&'static ModelPreset> {
    let found = search_exact(query, limit);
    if !found.is_empty() {
        return found;
    }
    // An instruct or chat id not in the catalogue: its base model has the same architecture
    // (the fine-tuned weights have the base's shapes), so its memory is the same.
    let q = query.trim();
    let lower = q.to_ascii_lowercase();
    INSTRUCT_SUFFIXES.iter().find(|suffix| lower.ends_with(*suffix)).map_or(found, |suffix| search_exact(&q[..q.len() - suffix.len()], limit))
}

/// Suffixes of instruction-tuned and chat checkpoints' ids (`-Instruct`, Gemma's `-it`, …).
const INSTRUCT_SUFFIXES: [&str; 4] = ["-instruct", "-it", "-chat", "-hf"];

/// [`search_presets`] without the instruct fallback.
fn search_exact(query: &str, limit: usize) -> Vec<&'static ModelPreset> {
    let q = query.trim().to_ascii_lowercase();
    let words: Vec<&str> = q.split(|c: char| c.is_whitespace() || c == '/').filter(|w| !w.is_empty()).collect();
    let mut hits: Vec<(u8, usize)> = CATALOGUE
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let haystack = format!("{} {} {}", e.id, e.name, e.aliases.join(" ")).to_ascii_lowercase();
            if !words.iter().all(|w| haystack.contains(w)) {
                return None;
            }
            let rank = if e.is_named(&q) {
                0
            } else if e.id.to_ascii_lowercase().split('/').any(|part| part.starts_with(&q)) || e.name.to_ascii_lowercase().starts_with(&q) {
                1
            } else {
                2
            };
            Some((rank, i))
        })
        .collect();
    // Keys are unique (the catalogue index): an unstable sort gives the same order, with less code.
    hits.sort_unstable();
    hits.into_iter().filter_map(|(_, i)| preset_at(i)).take(limit).collect()
}

fn parse_preset(entry: &CatalogueEntry) -> Option<ModelPreset> {
    let config: Value = serde_json::from_str(entry.config).ok()?;
    // A diffusion pipeline: `{"pipeline": {"model_index": …, "unet": …, …}}`.
    if let Some(pipeline) = config.get("pipeline") {
        let (arch, warnings) = super::diffusers::read_pipeline(pipeline).ok()?;
        return Some(ModelPreset { id: entry.id, name: entry.name, aliases: entry.aliases, arch: Architecture::Diffusion(Box::new(arch)), warnings });
    }
    let imported = import_catalogue_config(&config).ok()?;
    let warnings = imported.warnings.into_iter().filter(|w| !w.starts_with("config.json does not set")).collect();
    Some(ModelPreset { id: entry.id, name: entry.name, aliases: entry.aliases, arch: imported.arch, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_file_parses() {
        let failed: Vec<_> = CATALOGUE
            .iter()
            .filter(|e| parse_preset(e).is_none())
            .map(|e| {
                let v: Value = serde_json::from_str(e.config).unwrap_or(Value::Null);
                format!("{}: {:?}", e.id, import_hf_config(&v).err())
            })
            .collect();
        assert!(failed.is_empty(), "{failed:?}");
        assert!(model_presets().count() >= 50, "{} presets", model_presets().count());
    }

    /// The catalogue is read with its families alone (the page's first download); that must
    /// give what the full importer gives, architecture and warnings, for every file.
    #[test]
    fn the_catalogue_reads_the_same_with_its_families_alone() {
        for e in CATALOGUE {
            let v: Value = serde_json::from_str(e.config).expect("JSON");
            // Diffusion pipelines are read by `diffusers::read_pipeline` in both.
            if v.get("pipeline").is_some() {
                continue;
            }
            let (alone, full) = (import_catalogue_config(&v).expect(e.id), import_hf_config(&v).expect(e.id));
            assert_eq!(format!("{:?}", alone.arch), format!("{:?}", full.arch), "{}", e.id);
            assert_eq!((alone.model_type, alone.warnings), (full.model_type, full.warnings), "{}", e.id);
        }
        // And it is a smaller reader: a family outside the catalogue is not read.
        let olmoe = serde_json::json!({"model_type": "olmoe"});
        assert!(import_hf_config(&olmoe).is_ok());
        assert!(import_catalogue_config(&olmoe).unwrap_err().message.contains("not a family of the catalogue"));
    }

    #[test]
    fn old_short_ids_still_resolve() {
        for id in [
            "gpt2", "gpt2-medium", "gpt2-xl", "llama-2-7b", "llama-2-13b", "llama-3-8b", "llama-3-70b", "llama-3.2-1b", "mistral-7b", "qwen2-7b", "mixtral-8x7b", "bert-base",
            "bert-large", "vit-base-16", "vit-large-16", "resnet-50",
        ] {
            assert!(model_preset(id).is_some(), "missing preset {id}");
        }
    }

    #[test]
    fn search_finds_by_id_name_or_alias() {
        let first = |q: &str| search_presets(q, 5).first().map(|p| p.id);
        assert_eq!(first("qwen3 8b"), Some("Qwen/Qwen3-8B"));
        assert_eq!(first("llama-3-8b"), Some("meta-llama/Meta-Llama-3-8B"));
        assert_eq!(first("deepseek-ai/DeepSeek-V3"), Some("deepseek-ai/DeepSeek-V3"));
        assert!(search_presets("gemma", 50).len() >= 6);
        assert!(search_presets("no such model", 5).is_empty());
        assert_eq!(search_presets("", 8).len(), 8);
    }

    /// The instruct, chat and distilled checkpoints added for issue 20 (their configs typed
    /// from the published files; since issue 23, param_counts.py measures each of them too, and
    /// `tests/accuracy.rs` holds them to transformers' counts): where one shares its
    /// base model's architecture, its parameter count equals the base's, which
    /// `tests/fixtures/measured/param_counts.json` measured with transformers; the others
    /// are within the stated tolerance of the total their model cards publish.
    #[test]
    fn chat_checkpoints_match_their_bases_or_published_totals() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/param_counts.json")).expect("fixture");
        let fixture: Value = serde_json::from_str(&text).expect("JSON");
        let measured = |id: &str| {
            fixture["cases"].as_array().expect("cases").iter().find(|c| c["preset"] == id).and_then(|c| c["param_count"].as_f64()).unwrap_or_else(|| panic!("{id} not measured"))
        };
        let count = |id: &str| model_preset(id).unwrap_or_else(|| panic!("{id} missing")).arch.param_count();
        for (id, base) in [
            ("meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.1-70B"),
            ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "meta-llama/Llama-3.1-70B"),
            ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "meta-llama/Llama-3.1-8B"),
            ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B"),
            ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "Qwen/Qwen2.5-7B"),
            ("Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B"),
            ("google/gemma-3-1b-it", "google/gemma-3-1b-pt"),
            ("google/gemma-3-12b-it", "google/gemma-3-12b-pt"),
        ] {
            assert_eq!(count(id), measured(base), "{id} vs {base}");
        }
        // Published totals (model cards): Qwen2.5 14B "14.7B"; Qwen2.5 32B (and its R1
        // distill) "32.8B" as the Hub's safetensors metadata gives it (its card's "32.5B"
        // is 0.8% lower than any count of its config); Qwen3 4B "4.0B", Qwen3 14B "14.8B", Mistral Small 3 "24B" (23.6B on the
        // Hub); Gemma 3 4B and 27B, 4.3B and 27.4B on the Hub, SigLIP vision tower and
        // projector included (the catalogue builds the whole model).
        for (id, published, tolerance) in [
            ("Qwen/Qwen2.5-14B-Instruct", 14.7e9, 0.005),
            ("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 0.005),
            ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", 32.8e9, 0.005),
            ("Qwen/Qwen3-4B", 4.0e9, 0.01),
            ("Qwen/Qwen3-14B", 14.8e9, 0.005),
            ("mistralai/Mistral-Small-24B-Instruct-2501", 23.6e9, 0.005),
            ("google/gemma-3-4b-it", 4.3e9, 0.005),
            ("google/gemma-3-27b-it", 27.4e9, 0.005),
        ] {
            let n = count(id);
            assert!((n - published).abs() / published <= tolerance, "{id}: {n} vs {published}");
            println!("{id:<48} {n:>16.0} published {published:.3e}");
        }
    }

    /// Issue 20: "Qwen/Qwen2.5-7B-Instruct" and Llama 3.3 70B are found by id, by name and by
    /// their words; an instruct id not in the catalogue finds its base model.
    #[test]
    fn instruct_ids_are_found() {
        let first = |q: &str| search_presets(q, 5).first().map(|p| p.id);
        assert_eq!(first("Qwen/Qwen2.5-7B-Instruct"), Some("Qwen/Qwen2.5-7B-Instruct"));
        assert_eq!(first("qwen2.5 7b instruct"), Some("Qwen/Qwen2.5-7B-Instruct"));
        assert_eq!(first("Llama 3.3 70B"), Some("meta-llama/Llama-3.3-70B-Instruct"));
        assert_eq!(first("meta-llama/Llama-3.3-70B-Instruct"), Some("meta-llama/Llama-3.3-70B-Instruct"));
        assert_eq!(first("gemma-3-27b-it"), Some("google/gemma-3-27b-it"));
        assert_eq!(first("r1 distill llama 8b"), Some("deepseek-ai/DeepSeek-R1-Distill-Llama-8B"));
        // Not in the catalogue: the same architecture without the suffix.
        assert_eq!(first("Qwen/Qwen3-8B-Instruct"), Some("Qwen/Qwen3-8B"));
        assert_eq!(first("meta-llama/Llama-3.1-8B-Instruct"), Some("meta-llama/Llama-3.1-8B"));
        assert_eq!(first("google/gemma-2-9b-it"), Some("google/gemma-2-9b"));
    }

    /// Issue 23: the hybrid, state-space and vision-language models are found by the words
    /// people type for them, and the first match is the model meant.
    #[test]
    fn hybrid_and_vision_language_models_are_found() {
        let first = |q: &str| search_presets(q, 5).first().map(|p| p.id);
        assert_eq!(first("qwen3-next"), Some("Qwen/Qwen3-Next-80B-A3B-Instruct"));
        assert_eq!(first("Qwen/Qwen3-Next-80B-A3B-Instruct"), Some("Qwen/Qwen3-Next-80B-A3B-Instruct"));
        assert_eq!(first("jamba"), Some("ai21labs/AI21-Jamba-1.5-Mini"));
        assert_eq!(first("nemotron-h"), Some("nvidia/Nemotron-H-8B-Base-8K"));
        assert_eq!(first("qwen2.5-vl 7b"), Some("Qwen/Qwen2.5-VL-7B-Instruct"));
        assert_eq!(first("qwen3-vl"), Some("Qwen/Qwen3-VL-8B-Instruct"));
        assert_eq!(first("mamba"), Some("state-spaces/mamba-2.8b-hf"));
        assert_eq!(first("codestral-mamba"), Some("mistralai/Mamba-Codestral-7B-v0.1"));
        assert_eq!(first("lfm2"), Some("LiquidAI/LFM2-1.2B"));
        assert_eq!(first("granite-4.0-h"), Some("ibm-granite/granite-4.0-h-350m"));
        assert_eq!(first("llava"), Some("llava-hf/llava-1.5-7b-hf"));
        let ids = |q: &str| search_presets(q, 10).into_iter().map(|p| p.id).collect::<Vec<_>>();
        assert_eq!(ids("qwen2.5-vl"), ["Qwen/Qwen2.5-VL-3B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct"]);
        // Each is read with the catalogue's families alone and keeps its own layers: a
        // hybrid's mixer, a vision-language model's tower.
        for id in [
            "Qwen/Qwen3-Next-80B-A3B-Instruct", "ai21labs/AI21-Jamba-1.5-Mini", "nvidia/Nemotron-H-8B-Base-8K", "state-spaces/mamba-2.8b-hf", "mistralai/Mamba-Codestral-7B-v0.1",
            "LiquidAI/LFM2-1.2B", "ibm-granite/granite-4.0-h-350m",
        ] {
            let t = model_preset(id).and_then(|p| p.arch.transformer()).unwrap_or_else(|| panic!("{id}"));
            assert!(t.hybrid.is_some(), "{id}: no mixer layers");
        }
        for id in [
            "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-3B-Instruct", "Qwen/Qwen3-VL-8B-Instruct", "llava-hf/llava-1.5-7b-hf", "google/gemma-3-4b-it", "google/gemma-3-12b-pt",
            "google/gemma-3-27b-it",
        ] {
            let t = model_preset(id).and_then(|p| p.arch.transformer()).unwrap_or_else(|| panic!("{id}"));
            assert!(t.tower.is_some(), "{id}: no vision tower");
        }
    }

    #[test]
    fn ids_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for p in model_presets() {
            for name in std::iter::once(&p.id).chain(p.aliases) {
                assert!(seen.insert(name.to_ascii_lowercase()), "{name} names two presets");
            }
        }
    }
}
