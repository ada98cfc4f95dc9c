//! How transformers 5 stores a mixture of experts, and so which of its tensors PEFT 0.21's
//! LoRA reaches (measured: `tests/measure/lora_experts.py` → `lora_experts.json`).
//!
//! - transformers 5.25 keeps every MoE family's routed experts as two fused 3-D parameters
//!   (`@use_experts_implementation` classes, e.g. `Qwen3MoeExperts`: `gate_up_proj`
//!   `[E, 2f, h]`, `down_proj` `[E, h, f]`, `modeling_qwen3_moe.py` lines 211–220) and its
//!   routers as modules holding a `weight` parameter (`Qwen3MoeTopKRouter`); Llama 4's and
//!   PhiMoE's routers are still `nn.Linear` subclasses (`Llama4Router(nn.Linear)`,
//!   `PhimoeTopKRouter(nn.Linear)`). PEFT's `"all-linear"` collects `nn.Linear`/`Conv1D`
//!   modules only (`peft/tuners/tuners_utils.py` `_maybe_include_all_linear_layers`, lines
//!   2445–2451), so by itself it reaches neither.
//! - PEFT's `inject_adapter` first rewrites the config of the model types transformers maps
//!   to the `mixtral` or `qwen2_moe` conversion pattern (`tuners_utils.py` 833–849;
//!   `peft/utils/transformers_weight_conversion.py` `_convert_peft_config_moe`, 402–482, with
//!   `_MOE_TARGET_MODULE_MAPPING` 332–345 and PEFT's own `mixtral → mixtral` at line 45;
//!   `qwen2_moe` itself is not a key of `transformers/conversion_mapping.py`'s
//!   `_MODEL_TO_CONVERSION_PATTERN`, lines 49–121, so it is not converted): the names
//!   `gate_proj`/`up_proj`/`down_proj` (Mixtral: `w1`/`w3`/`w2`) and the router's `gate` move
//!   from `target_modules` to `target_parameters` (`gate_up_proj`, `down_proj`,
//!   `gate.weight`); "all-linear" is first resolved to its modules' leaf names plus every v4
//!   name (`_resolve_string_target_modules`, 369–373), so it reaches the router too. Both
//!   gate and up named give `gate_up_proj` rank 2r (`rank_pattern`, 473–479); one without
//!   the other is refused (467).
//! - The names moved are gone from `target_modules`: under the Qwen2-MoE pattern the shared
//!   experts' and the dense layers' `gate_proj`/`up_proj`/`down_proj` linears get no adapter.
//! - `lora.ParamWrapper` (`peft/tuners/lora/layer.py` 2335, 2455–2456) on a 3-D
//!   `[E, a, b]` parameter makes `lora_A` `(in, r·E)` and `lora_B` `(r·E, out)`: r·E·(a + b) per
//!   parameter, rank r per expert.

use serde::{Deserialize, Serialize};

use super::param::PeftReach;

/// PEFT's transformers v4 → v5 conversion pattern of a model type (`_MOE_TARGET_MODULE_MAPPING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeftConversion {
    /// `w1`, `w3` → `gate_up_proj`; `w2` → `down_proj`; `gate` → `gate.weight`.
    Mixtral,
    /// `gate_proj`, `up_proj` → `gate_up_proj`; `down_proj` → `down_proj`; `gate` →
    /// `gate.weight`.
    Qwen2Moe,
}

/// How a mixture of experts is stored, for PEFT. The default is one `nn.Linear` per expert
/// and a router PEFT does not adapt (transformers 4's layout, and an architecture written
/// by hand); configs read from the Hub get transformers 5's (`import::moe_peft`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MoePeft {
    /// The routed experts are fused 3-D parameters (transformers 5).
    pub fused: bool,
    /// PEFT's conversion of this model type's config, if any.
    pub conversion: Option<PeftConversion>,
    /// The router is an `nn.Linear` ("all-linear" adapts it as a `lora.Linear`).
    pub router_linear: bool,
}

impl MoePeft {
    /// Whether the default (transformers 4's per-expert linears): left out of the JSON then.
    pub fn is_default(&self) -> bool {
        *self == MoePeft::default()
    }

    /// How PEFT reaches a routed expert's fused parameter standing for `kinds` linears.
    pub fn expert_reach(&self, kinds: usize) -> PeftReach {
        match (self.fused, self.conversion) {
            (false, _) => PeftReach::Module,
            (true, Some(_)) => PeftReach::Wrapped { rank_factor: kinds.max(1) as u64, all_linear_only: false },
            (true, None) => PeftReach::Unreached,
        }
    }

    /// How PEFT reaches the router's weight, `None` where it does not.
    pub fn router_reach(&self) -> Option<PeftReach> {
        match (self.fused, self.conversion) {
            (false, _) => None,
            // An `nn.Linear` router keeps its own name (DBRX's `router.layer`, Hunyuan's
            // `gate.wg`): "all-linear" adapts it as a module, and `gate.weight` matches nothing.
            (true, _) if self.router_linear => Some(PeftReach::AllLinearModule),
            (true, Some(_)) => Some(PeftReach::Wrapped { rank_factor: 1, all_linear_only: true }),
            (true, None) => None,
        }
    }

    /// A linear outside the routed experts that PEFT's conversion leaves without an
    /// adapter: named `gate_proj`, `up_proj` or `down_proj` under the Qwen2-MoE pattern.
    pub fn drops_linear(&self, name: &str) -> bool {
        self.fused && self.conversion == Some(PeftConversion::Qwen2Moe) && matches!(name, "gate_proj" | "up_proj" | "down_proj")
    }
}
