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
mod shared;
mod torchtitan;
mod torchtune;
mod vllm;

use crate::error::InputError;
use crate::model::inputs::Mode;
use crate::scenario::Scenario;
use shared::unsupported;
pub use shared::Target;

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

#[cfg(test)]
mod tests;
