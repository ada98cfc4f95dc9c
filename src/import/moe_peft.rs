//! How transformers 5.25 stores a family's mixture of experts, and PEFT 0.21.2's config
//! conversion for it, by `model_type` (the model's own: a vision-language wrapper's, not its
//! text model's). Every MoE class of transformers 5.25 keeps its routed experts as fused 3-D
//! parameters (`@use_experts_implementation`, `transformers/integrations/moe.py` 582–641,
//! on every `*Experts` class). What PEFT makes of them: `model::arch::moe_peft`.

use crate::model::arch::{MoePeft, PeftConversion};

/// Model types `transformers/conversion_mapping.py` `_MODEL_TO_CONVERSION_PATTERN` (lines
/// 49–121) maps to `mixtral`, with `mixtral` itself, which PEFT adds
/// (`peft/utils/transformers_weight_conversion.py` line 45).
const MIXTRAL: [&str; 3] = ["mixtral", "minimax", "minimax_m2"];

/// Model types the same table maps to `qwen2_moe` (`qwen2_moe` itself is not among them).
const QWEN2_MOE: [&str; 27] = [
    "afmoe", "beam", "cohere2_moe", "deepseek_v2", "deepseek_v3", "deepseek_v32", "dots1", "ernie4_5_moe", "exaone_moe", "flex_olmo", "glm4_moe", "glm4_moe_lite", "glm4v_moe",
    "glm_moe_dsa", "hunyuan_v1_moe", "longcat_flash", "mellum", "olmoe", "qwen3_moe", "qwen3_next", "qwen3_omni_moe", "qwen3_omni_moe_text", "qwen3_omni_moe_thinker",
    "sarvam_mla", "solar_open", "Dots3NoteTextModel", "UnlimitedOcrTextModel",
];

/// Routers that are, or hold, an `nn.Linear` (`Llama4Router(nn.Linear)`, `modeling_llama4.py`
/// 145; `PhimoeTopKRouter(nn.Linear)`, `modeling_phimoe.py` 463; `DbrxRouter.layer`,
/// `modeling_dbrx.py` 316; Hunyuan's `gate.wg`, `modeling_hunyuan_v1_moe.py` 232).
const LINEAR_ROUTERS: [&str; 5] = ["llama4", "llama4_text", "phimoe", "dbrx", "hunyuan_v1_moe"];

/// transformers 5's storage of `model_type`'s experts and PEFT's conversion of its config.
pub fn moe_peft(model_type: &str) -> MoePeft {
    let conversion = if MIXTRAL.contains(&model_type) {
        Some(PeftConversion::Mixtral)
    } else if QWEN2_MOE.contains(&model_type) {
        Some(PeftConversion::Qwen2Moe)
    } else {
        None
    };
    MoePeft { fused: true, conversion, router_linear: LINEAR_ROUTERS.contains(&model_type) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert_eq!(moe_peft("qwen3_next").conversion, Some(PeftConversion::Qwen2Moe));
        assert_eq!(moe_peft("mixtral").conversion, Some(PeftConversion::Mixtral));
        assert_eq!(moe_peft("qwen2_moe").conversion, None);
        assert_eq!(moe_peft("jamba").conversion, None);
        assert!(moe_peft("llama4").router_linear && !moe_peft("qwen3_moe").router_linear);
    }
}
