//! What every launch target shares: the [`Target`] itself, the error that says a framework
//! cannot run the plan as planned, the model's Hub id, the job's machines, and the command-line
//! writer. The targets import this sibling, never their parent module.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::import::presets::model_preset;
use crate::scenario::{ModelSpec, Scenario};

/// A framework to launch the plan with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    Deepspeed,
    Accelerate,
    Torchtune,
    Litgpt,
    Torchtitan,
    Megatron,
    Vllm,
    Sglang,
}

impl Target {
    pub const ALL: [Target; 8] = [Target::Deepspeed, Target::Accelerate, Target::Torchtune, Target::Litgpt, Target::Torchtitan, Target::Megatron, Target::Vllm, Target::Sglang];

    /// The id the CLI takes (`--for torchtune`).
    pub fn id(self) -> &'static str {
        match self {
            Target::Deepspeed => "deepspeed",
            Target::Accelerate => "accelerate",
            Target::Torchtune => "torchtune",
            Target::Litgpt => "litgpt",
            Target::Torchtitan => "torchtitan",
            Target::Megatron => "megatron",
            Target::Vllm => "vllm",
            Target::Sglang => "sglang",
        }
    }

    /// What the file is, for people.
    pub fn label(self) -> &'static str {
        match self {
            Target::Deepspeed => "DeepSpeed config (JSON)",
            Target::Accelerate => "accelerate config (YAML) + Trainer/TRL arguments",
            Target::Torchtune => "torchtune recipe and overrides",
            Target::Litgpt => "LitGPT command",
            Target::Torchtitan => "torchtitan job config (TOML)",
            Target::Megatron => "Megatron-Core arguments",
            Target::Vllm => "vllm serve command",
            Target::Sglang => "SGLang launch_server command",
        }
    }

    /// Whether the target serves (inference) rather than trains.
    pub fn serves(self) -> bool {
        matches!(self, Target::Vllm | Target::Sglang)
    }
}

/// "`target` cannot run `field` as planned: `why`", as an error naming the field.
pub(super) fn unsupported(target: Target, field: &str, why: &str) -> InputError {
    InputError::new(field, format!("{} {why}", target_name(target)))
}

pub(super) fn target_name(target: Target) -> &'static str {
    match target {
        Target::Deepspeed => "DeepSpeed",
        Target::Accelerate => "accelerate",
        Target::Torchtune => "torchtune",
        Target::Litgpt => "LitGPT",
        Target::Torchtitan => "torchtitan",
        Target::Megatron => "Megatron-Core",
        Target::Vllm => "vLLM",
        Target::Sglang => "SGLang",
    }
}

/// The model's Hugging Face Hub id: the preset's, or a pasted config's `_name_or_path`.
pub(super) fn hub_id(s: &Scenario) -> Option<String> {
    match &s.model {
        ModelSpec::Preset(id) => model_preset(id).map(|p| p.id.to_string()),
        ModelSpec::HfConfig { raw, .. } => raw.get("_name_or_path").and_then(|v| v.as_str()).filter(|n| !n.is_empty()).map(str::to_string),
        ModelSpec::Arch(_) | ModelSpec::Pipeline { .. } => None,
    }
}

/// The Hub id, or an error saying the target needs one.
pub(super) fn require_hub_id(s: &Scenario, target: Target) -> Result<String, InputError> {
    hub_id(s).ok_or_else(|| unsupported(target, "model", "loads a model by its Hub id: choose a catalogue model or paste a config.json with \"_name_or_path\""))
}

/// GPUs in the job and the nodes they need (the device's GPUs per node).
pub(super) fn machines(s: &Scenario) -> (u64, u64) {
    let world = s.parallel.world_size().max(1);
    let per_node = s.device.resolve_or_default().0.gpus_per_node.max(1);
    (world, world.div_ceil(per_node))
}

/// Fails with `why` naming `field` when `bad`.
pub(super) fn refuse(bad: bool, target: Target, field: &str, why: &str) -> Result<(), InputError> {
    if bad {
        Err(unsupported(target, field, why))
    } else {
        Ok(())
    }
}

/// A command line: the program and its flags, one flag per line with a trailing `\`.
pub(super) fn command(program: &str, args: &[(String, Option<String>)]) -> String {
    let mut out = program.to_string();
    for (flag, value) in args {
        out.push_str(" \\\n  ");
        out.push_str(flag);
        if let Some(v) = value {
            out.push(' ');
            out.push_str(&shell_word(v));
        }
    }
    out.push('\n');
    out
}

/// `v` quoted for a POSIX shell when it holds anything but safe characters.
pub(super) fn shell_word(v: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c)) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

pub(super) fn flag(name: &str, value: impl ToString) -> (String, Option<String>) {
    (name.to_string(), Some(value.to_string()))
}

pub(super) fn switch(name: &str) -> (String, Option<String>) {
    (name.to_string(), None)
}
