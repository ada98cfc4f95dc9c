//! Import of a raw Hugging Face `config.json` into an [`Architecture`].
//!
//! Supported `model_type`s: `gpt2`, `llama`, `mistral`, `qwen2`, `mixtral`, `bert`, `vit`
//! and `resnet`. Defaults for absent keys are the defaults of the matching
//! `transformers` configuration class (`LlamaConfig`, `GPT2Config`, …), so a pasted
//! config builds the same model transformers would. Unknown keys are ignored; a missing
//! or wrong required key is an [`InputError`] naming it.

use serde_json::{Map, Value};

use super::arch::{Architecture, Mlp, Norm, ResNetArch, Stack, TransformerArch};
use crate::error::InputError;

/// Model types this importer understands.
pub const SUPPORTED_MODEL_TYPES: [&str; 8] = ["gpt2", "llama", "mistral", "qwen2", "mixtral", "bert", "vit", "resnet"];

/// Build an architecture from the content of a `config.json`.
pub fn architecture_from_hf_config(config: &Value) -> Result<Architecture, InputError> {
    let arch = import(config)?;
    arch.check()?;
    Ok(arch)
}

fn import(config: &Value) -> Result<Architecture, InputError> {
    let map = config.as_object().ok_or_else(|| InputError::new("", "expected a JSON object (the content of config.json)"))?;
    let c = Keys(map);
    let model_type = match map.get("model_type") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(InputError::new("model_type", "must be a string")),
        None => return Err(InputError::new("model_type", format!("missing; supported: {}", SUPPORTED_MODEL_TYPES.join(", ")))),
    };
    match model_type {
        "gpt2" => gpt2(&c),
        "llama" | "mistral" | "qwen2" | "mixtral" => llama_like(&c, model_type),
        "bert" => bert(&c),
        "vit" => vit(&c),
        "resnet" => resnet(&c),
        other => Err(InputError::new(
            "model_type",
            format!("\"{other}\" is not supported; supported: {}", SUPPORTED_MODEL_TYPES.join(", ")),
        )),
    }
}

/// Typed access to config keys with transformers' defaults.
struct Keys<'a>(&'a Map<String, Value>);

/// Upper bound for any single dimension: far above any real model, low enough that
/// products of a few dimensions stay finite.
const MAX_DIM: u64 = 1 << 24;

impl Keys<'_> {
    fn uint(&self, key: &str, default: Option<u64>) -> Result<u64, InputError> {
        match self.0.get(key) {
            None | Some(Value::Null) => default.ok_or_else(|| InputError::new(key, "missing (required for this model type)")),
            Some(v) => match v.as_u64() {
                Some(n) if n == 0 => Err(InputError::new(key, "must be at least 1")),
                Some(n) if n > MAX_DIM => Err(InputError::new(key, format!("{n} is too large (at most {MAX_DIM})"))),
                Some(n) => Ok(n),
                None => Err(InputError::new(key, format!("must be a positive whole number, got {v}"))),
            },
        }
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, InputError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(InputError::new(key, format!("must be true or false, got {v}"))),
        }
    }

    fn text(&self, key: &str, default: &str) -> Result<String, InputError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(InputError::new(key, format!("must be a string, got {v}"))),
        }
    }

    fn uint_list(&self, key: &str, default: &[u64]) -> Result<Vec<u64>, InputError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(default.to_vec()),
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= 64 => items
                .iter()
                .map(|v| match v.as_u64() {
                    Some(n) if n > 0 && n <= MAX_DIM => Ok(n),
                    _ => Err(InputError::new(key, format!("every entry must be a positive whole number, got {v}"))),
                })
                .collect(),
            Some(v) => Err(InputError::new(key, format!("must be a list of 1 to 64 positive whole numbers, got {v}"))),
        }
    }

    /// `num_labels`, else the size of `id2label`, else transformers' default of 2.
    fn labels(&self) -> Result<u64, InputError> {
        if self.0.contains_key("num_labels") {
            return self.uint("num_labels", None);
        }
        match self.0.get("id2label") {
            Some(Value::Object(m)) if !m.is_empty() => Ok(m.len() as u64),
            _ => Ok(2),
        }
    }
}

fn check_heads(hidden: u64, heads: u64, kv_heads: u64) -> Result<(), InputError> {
    if kv_heads > heads || heads % kv_heads != 0 {
        return Err(InputError::new("num_key_value_heads", format!("{kv_heads} must divide num_attention_heads ({heads})")));
    }
    if hidden < heads {
        return Err(InputError::new("num_attention_heads", format!("{heads} heads exceed the hidden size {hidden}")));
    }
    Ok(())
}

/// `GPT2Config` defaults: n_embd 768, n_layer 12, n_head 12, n_positions 1024,
/// vocab 50257, n_inner None (4h), activation "gelu_new", tied LM head.
fn gpt2(c: &Keys) -> Result<Architecture, InputError> {
    let h = c.uint("n_embd", Some(768))?;
    let heads = c.uint("n_head", Some(12))?;
    check_heads(h, heads, heads)?;
    let activation = c.text("activation_function", "gelu_new")?;
    Ok(Architecture::Transformer(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layer", Some(12))?,
        heads,
        kv_heads: heads,
        head_dim: h / heads,
        ffn: c.uint("n_inner", Some(4 * h))?,
        vocab: c.uint("vocab_size", Some(50257))?,
        max_positions: c.uint("n_positions", Some(1024))?,
        token_types: 0,
        norm: Norm::Layernorm,
        mlp: if activation == "gelu_new" { Mlp::GeluTanh } else { Mlp::Gelu },
        fused_qkv: true,
        qkv_bias: true,
        out_bias: true,
        mlp_bias: true,
        tied_embeddings: c.flag("tie_word_embeddings", true)?,
        ..TransformerArch::default()
    }))
}

/// `LlamaConfig`, `MistralConfig`, `Qwen2Config` and `MixtralConfig`: SwiGLU, RMSNorm,
/// rotary positions, grouped-query attention. Qwen2 always has Q/K/V biases; Llama has
/// them only with `attention_bias`.
fn llama_like(c: &Keys, model_type: &str) -> Result<Architecture, InputError> {
    let h = c.uint("hidden_size", Some(4096))?;
    let heads = c.uint("num_attention_heads", Some(32))?;
    let kv_heads = c.uint("num_key_value_heads", Some(heads))?;
    check_heads(h, heads, kv_heads)?;
    let (experts, per_token) = if model_type == "mixtral" {
        (c.uint("num_local_experts", Some(8))?, c.uint("num_experts_per_tok", Some(2))?)
    } else {
        (0, 0)
    };
    if per_token > experts {
        return Err(InputError::new("num_experts_per_tok", format!("{per_token} exceeds num_local_experts ({experts})")));
    }
    let attention_bias = c.flag("attention_bias", false)?;
    Ok(Architecture::Transformer(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("num_hidden_layers", Some(32))?,
        heads,
        kv_heads,
        head_dim: c.uint("head_dim", Some(h / heads))?,
        ffn: c.uint("intermediate_size", Some(if model_type == "llama" { 11008 } else { 14336 }))?,
        vocab: c.uint("vocab_size", Some(32000))?,
        max_positions: 0,
        token_types: 0,
        norm: Norm::Rmsnorm,
        mlp: Mlp::Swiglu,
        fused_qkv: false,
        qkv_bias: model_type == "qwen2" || attention_bias,
        out_bias: model_type == "llama" && attention_bias,
        mlp_bias: model_type == "llama" && c.flag("mlp_bias", false)?,
        tied_embeddings: c.flag("tie_word_embeddings", false)?,
        experts,
        experts_per_token: per_token,
        ..TransformerArch::default()
    }))
}

/// The shared shape of BERT and ViT (both `*-base` defaults): post-LN/pre-LN blocks with
/// biases, LayerNorm and an exact-GELU MLP of width `intermediate_size`.
fn bert_like_block(c: &Keys, stack: Stack) -> Result<TransformerArch, InputError> {
    let h = c.uint("hidden_size", Some(768))?;
    let heads = c.uint("num_attention_heads", Some(12))?;
    check_heads(h, heads, heads)?;
    Ok(TransformerArch {
        stack,
        hidden: h,
        layers: c.uint("num_hidden_layers", Some(12))?,
        heads,
        kv_heads: heads,
        head_dim: h / heads,
        ffn: c.uint("intermediate_size", Some(3072))?,
        vocab: 0,
        max_positions: 0,
        norm: Norm::Layernorm,
        mlp: Mlp::Gelu,
        fused_qkv: false,
        qkv_bias: true,
        out_bias: true,
        mlp_bias: true,
        tied_embeddings: false,
        ..TransformerArch::default()
    })
}

/// `BertConfig` defaults (bert-base-uncased shapes), built as `BertForMaskedLM`.
fn bert(c: &Keys) -> Result<Architecture, InputError> {
    Ok(Architecture::Transformer(TransformerArch {
        vocab: c.uint("vocab_size", Some(30522))?,
        max_positions: c.uint("max_position_embeddings", Some(512))?,
        token_types: c.uint("type_vocab_size", Some(2))?,
        tied_embeddings: c.flag("tie_word_embeddings", true)?,
        ..bert_like_block(c, Stack::Encoder)?
    }))
}

/// `ViTConfig` defaults (vit-base-patch16-224 shapes), built as `ViTForImageClassification`.
fn vit(c: &Keys) -> Result<Architecture, InputError> {
    let patch = c.uint("patch_size", Some(16))?;
    let image_size = c.uint("image_size", Some(224))?;
    if patch > image_size {
        return Err(InputError::new("patch_size", format!("{patch} is larger than image_size {image_size}")));
    }
    Ok(Architecture::Transformer(TransformerArch {
        qkv_bias: c.flag("qkv_bias", true)?,
        classes: c.labels()?,
        patch,
        image_size,
        channels: c.uint("num_channels", Some(3))?,
        ..bert_like_block(c, Stack::Vision)?
    }))
}

/// `ResNetConfig` defaults (microsoft/resnet-50 shapes), built as `ResNetForImageClassification`.
fn resnet(c: &Keys) -> Result<Architecture, InputError> {
    let widths = c.uint_list("hidden_sizes", &[256, 512, 1024, 2048])?;
    let depths = c.uint_list("depths", &[3, 4, 6, 3])?;
    if widths.len() != depths.len() {
        return Err(InputError::new("depths", format!("has {} stages but hidden_sizes has {}", depths.len(), widths.len())));
    }
    let layer_type = c.text("layer_type", "bottleneck")?;
    let bottleneck = match layer_type.as_str() {
        "bottleneck" => true,
        "basic" => false,
        other => return Err(InputError::new("layer_type", format!("\"{other}\" is not \"basic\" or \"bottleneck\""))),
    };
    Ok(Architecture::Resnet(ResNetArch {
        stem_width: c.uint("embedding_size", Some(64))?,
        widths,
        depths,
        bottleneck,
        channels: c.uint("num_channels", Some(3))?,
        classes: c.labels()?,
        image_size: c.uint("image_size", Some(224))?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_model_type_names_the_field() {
        let err = architecture_from_hf_config(&json!({"model_type": "t5"})).unwrap_err();
        assert_eq!(err.field, "model_type");
        assert!(err.message.contains("not supported"));
    }

    #[test]
    fn bad_number_names_the_field() {
        let err = architecture_from_hf_config(&json!({"model_type": "llama", "hidden_size": "big"})).unwrap_err();
        assert_eq!(err.field, "hidden_size");
    }

    #[test]
    fn gqa_heads_must_divide() {
        let err = architecture_from_hf_config(&json!({"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 5})).unwrap_err();
        assert_eq!(err.field, "num_key_value_heads");
    }

    #[test]
    fn gpt2_defaults_build_gpt2_small() {
        let arch = architecture_from_hf_config(&json!({"model_type": "gpt2"})).unwrap();
        assert_eq!(arch.param_count(), 124_439_808.0);
    }
}
