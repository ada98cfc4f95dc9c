//! What the commands read: the scenario argument they share (`Input`: a scenario file or a
//! Hugging Face config.json, from a file or stdin, bounded before reading), the output format,
//! and JSON output.

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::input_limits::{check_size, CONFIG_BYTES, SCENARIO_BYTES};
use crate::scenario::Scenario;

/// Output format of `estimate` and `check`.
#[derive(Clone, Copy, Default, ValueEnum)]
pub(super) enum Format {
    #[default]
    Json,
    #[value(alias = "md")]
    Markdown,
}

/// The scenario argument shared by the commands that plan one.
#[derive(Args)]
pub(super) struct Input {
    /// Scenario JSON file; `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
    /// FILE is a Hugging Face config.json rather than a scenario: plan that model with the
    /// default training settings.
    #[arg(long)]
    hf_config: bool,
    /// System RAM of the machine in GiB (sets `runtime.host_memory_bytes`) [default: the scenario's, or the GPU class's usual machine].
    #[arg(long, value_name = "GIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
    host_memory: Option<u64>,
}

impl Input {
    pub(super) fn is_stdin(&self) -> bool {
        self.input.as_deref().is_none_or(|p| p.as_os_str() == "-")
    }

    /// The scenario, validated; decoding warnings are returned for the output.
    pub(super) fn scenario(&self) -> Result<(Scenario, Vec<String>), String> {
        let path = self.input.as_deref().filter(|_| !self.is_stdin());
        let (max, what) = if self.hf_config { (CONFIG_BYTES, "a config.json") } else { (SCENARIO_BYTES, "a scenario") };
        let bytes = read_bounded(path, max, what)?;
        let source = path.map_or_else(|| "stdin".to_string(), |p| p.display().to_string());
        let text = String::from_utf8(bytes).map_err(|_| format!("{source}: not UTF-8 text"))?;
        let mut decoded = if self.hf_config {
            let raw: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{source}: not JSON: {e}"))?;
            // A diffusers pipeline (`{"model_index": …, "<component>": …}`) or one config.json.
            let model = if raw.get("model_index").is_some() {
                crate::scenario::ModelSpec::from_pipeline(raw).map_err(|e| e.within("pipeline").to_string())?
            } else {
                crate::scenario::ModelSpec::from_hf_config(raw).map_err(|e| e.within("config.json").to_string())?
            };
            crate::scenario::Decoded { scenario: Scenario { model, ..Scenario::default() }, warnings: Vec::new() }
        } else {
            if looks_like_hf_config(&text) {
                let file = path.map_or_else(|| "-".to_string(), |p| p.display().to_string());
                return Err(format!(
                    "{source} is a Hugging Face or diffusers config.json (it has a model_type, architectures, _class_name or model_index), not a scenario: run `headroom estimate --hf-config {file}` to plan it with the default training settings, or put it in a scenario as {{\"model\": {{\"hf_config\": …}}}}"
                ));
            }
            Scenario::from_json(&text).map_err(|e| e.to_string())?
        };
        if let Some(gib) = self.host_memory {
            decoded.scenario.runtime.host_memory_bytes = Some(gib << 30);
        }
        if let Some(first) = decoded.scenario.validate().into_iter().next() {
            return Err(first.to_string());
        }
        Ok((decoded.scenario, decoded.warnings))
    }
}

/// The bytes of a file (or stdin for `None`), refused before reading past `max` bytes: a
/// file by its size, stdin by reading at most one byte more than the limit
/// ([`crate::input_limits`]).
pub(crate) fn read_bounded(path: Option<&std::path::Path>, max: usize, what: &str) -> Result<Vec<u8>, String> {
    let source = path.map_or_else(|| "stdin".to_string(), |p| p.display().to_string());
    let reader: Box<dyn Read> = match path {
        Some(p) => {
            let file = std::fs::File::open(p).map_err(|e| format!("{source}: {e}"))?;
            if let Ok(meta) = file.metadata() {
                if meta.is_file() {
                    check_size(&source, what, usize::try_from(meta.len()).unwrap_or(usize::MAX), max).map_err(|e| e.to_string())?;
                }
            }
            Box::new(file)
        }
        None => Box::new(std::io::stdin()),
    };
    let mut bytes = Vec::new();
    reader.take(max as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("{source}: {e}"))?;
    if bytes.len() > max {
        return Err(format!("{source}: {what} of more than {max} bytes is larger than Headroom reads; nothing was read from it"));
    }
    Ok(bytes)
}

/// Whether a JSON text is a bare Hugging Face `config.json` (a top-level `model_type` or
/// `architectures`), a diffusers component config (`_class_name`) or a pipeline object
/// (`model_index`), with none of a scenario's sections.
fn looks_like_hf_config(text: &str) -> bool {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    let scenario_keys = ["model", "training", "parallel", "device", "runtime", "version", "framework"];
    ["model_type", "architectures", "_class_name", "model_index"].iter().any(|k| map.contains_key(*k)) && !scenario_keys.iter().any(|k| map.contains_key(*k))
}

/// Pretty JSON of a result.
pub(super) fn json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}
