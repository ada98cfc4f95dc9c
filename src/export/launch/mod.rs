//! Launch configurations: the plan on screen written as the file or flags one framework reads
//! (`--for deepspeed | accelerate | torchtune | litgpt | torchtitan | megatron | vllm | sglang`),
//! one file per target.
//!
//! Every field written is traced to a scenario field (the comment beside it, or the table in
//! each target's module doc); settings the scenario does not decide (learning rate, dataset,
//! output directory) are left to the framework's defaults or the user. A scenario the framework
//! cannot run as planned (a layout, precision or optimizer it has no switch for) is an error
//! naming the field, never a file that would run something else.
//!
//! What this is not: a recipe generator. The files are checked by each framework's own parser
//! (`tests/measure/launch_configs.py`), not run.

mod accelerate;
mod deepspeed;
mod litgpt;
mod megatron;
mod sglang;
mod torchtitan;
mod torchtune;
mod vllm;

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::import::presets::model_preset;
use crate::model::inputs::{Mode, Zero};
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

/// The launch configuration of `s` for `target`, or why that framework cannot run it as planned.
pub fn launch(s: &Scenario, target: Target) -> Result<String, InputError> {
    let inference = s.training.mode == Mode::Inference;
    if target.serves() && !inference {
        return Err(unsupported(target, "training.mode", "serves models: set training.mode to \"inference\""));
    }
    if !target.serves() && inference {
        return Err(unsupported(target, "training.mode", "trains models: for serving choose vllm or sglang"));
    }
    match target {
        Target::Deepspeed => deepspeed::config(s),
        Target::Accelerate => accelerate::config(s),
        Target::Torchtune => torchtune::config(s),
        Target::Litgpt => litgpt::config(s),
        Target::Torchtitan => torchtitan::config(s),
        Target::Megatron => megatron::config(s),
        Target::Vllm => vllm::config(s),
        Target::Sglang => sglang::config(s),
    }
}

/// "`target` cannot run `field` as planned: `why`", as an error naming the field.
fn unsupported(target: Target, field: &str, why: &str) -> InputError {
    InputError::new(field, format!("{} {why}", target_name(target)))
}

fn target_name(target: Target) -> &'static str {
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
fn hub_id(s: &Scenario) -> Option<String> {
    match &s.model {
        ModelSpec::Preset(id) => model_preset(id).map(|p| p.id.to_string()),
        ModelSpec::HfConfig { raw, .. } => raw.get("_name_or_path").and_then(|v| v.as_str()).filter(|n| !n.is_empty()).map(str::to_string),
        ModelSpec::Arch(_) => None,
    }
}

/// The Hub id, or an error saying the target needs one.
fn require_hub_id(s: &Scenario, target: Target) -> Result<String, InputError> {
    hub_id(s).ok_or_else(|| unsupported(target, "model", "loads a model by its Hub id: choose a catalogue model or paste a config.json with \"_name_or_path\""))
}

/// GPUs in the job and the nodes they need (the device's GPUs per node).
fn machines(s: &Scenario) -> (u64, u64) {
    let world = s.parallel.world_size().max(1);
    let per_node = s.device.resolve_or_default().0.gpus_per_node.max(1);
    (world, world.div_ceil(per_node))
}

/// Fails with `why` naming `field` when `bad`.
fn refuse(bad: bool, target: Target, field: &str, why: &str) -> Result<(), InputError> {
    if bad {
        Err(unsupported(target, field, why))
    } else {
        Ok(())
    }
}

/// The ZeRO stage as a number (0–3).
fn zero_stage(z: Zero) -> u8 {
    z.stage()
}

/// A command line: the program and its flags, one flag per line with a trailing `\`.
fn command(program: &str, args: &[(String, Option<String>)]) -> String {
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
fn shell_word(v: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c)) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

fn flag(name: &str, value: impl ToString) -> (String, Option<String>) {
    (name.to_string(), Some(value.to_string()))
}

fn switch(name: &str) -> (String, Option<String>) {
    (name.to_string(), None)
}

#[cfg(test)]
mod tests;
