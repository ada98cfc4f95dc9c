//! A pipeline's `text_encoder*/config.json` (transformers) → a [`TextEncoder`]: the class
//! its `architectures` names decides what is built (`CLIPTextModel`,
//! `CLIPTextModelWithProjection`, `T5EncoderModel`, `UMT5EncoderModel`, `LlamaModel`,
//! `Gemma2Model`); missing keys take the defaults of `CLIPTextConfig`, `T5Config`,
//! `UMT5Config` (transformers 5.25, `configuration_clip.py`, `configuration_t5.py`,
//! `configuration_umt5.py`), and `LlamaConfig`/`Gemma2Config` through Headroom's LLM
//! importer (`import/families.rs` `llama`, `gemma2`).

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::text_encoder::{TextEncoder, TextEncoderKind};

/// The text-encoder classes Headroom builds, by the name a config's `architectures` gives.
pub const CLASSES: [&str; 6] = ["CLIPTextModel", "CLIPTextModelWithProjection", "T5EncoderModel", "UMT5EncoderModel", "LlamaModel", "Gemma2Model"];

/// The class a config names, if it is a text encoder Headroom reads.
pub fn kind_of(cfg: &Value) -> Option<TextEncoderKind> {
    let class = cfg.get("architectures")?.as_array()?.first()?.as_str()?;
    match class {
        "CLIPTextModel" => Some(TextEncoderKind::Clip),
        "CLIPTextModelWithProjection" => Some(TextEncoderKind::ClipWithProjection),
        "T5EncoderModel" => Some(TextEncoderKind::T5),
        "UMT5EncoderModel" => Some(TextEncoderKind::Umt5),
        "LlamaModel" => Some(TextEncoderKind::Llama),
        "Gemma2Model" => Some(TextEncoderKind::Gemma2),
        _ => None,
    }
}

/// Read a text encoder's config; `max_tokens`: what the pipeline encodes (CLIP: its own 77
/// positions when `None`; T5 and the LLMs: 512 when `None`, Flux's `max_sequence_length`).
pub fn read(cfg: &Value, max_tokens: Option<u64>) -> Result<TextEncoder, InputError> {
    let kind = kind_of(cfg).ok_or_else(|| InputError::new("architectures", format!("expected one of {}", CLASSES.join(", "))))?;
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let encoder = match kind {
        TextEncoderKind::Clip | TextEncoderKind::ClipWithProjection => {
            let hidden = c.uint("hidden_size", 512)?;
            let heads = c.uint("num_attention_heads", 8)?;
            let positions = c.uint("max_position_embeddings", 77)?;
            let act = c.text("hidden_act", "quick_gelu")?;
            TextEncoder {
                kind,
                hidden,
                layers: c.uint("num_hidden_layers", 12)?,
                heads,
                head_dim: hidden / heads.max(1),
                ffn: c.uint("intermediate_size", 2048)?,
                gated: false,
                quick_gelu: act == "quick_gelu",
                vocab: c.uint("vocab_size", 49408)?,
                positions,
                projection: c.uint("projection_dim", 512)?,
                max_tokens: max_tokens.unwrap_or(positions).min(positions),
                decoder: None,
            }
        }
        TextEncoderKind::T5 | TextEncoderKind::Umt5 => {
            let umt5 = kind == TextEncoderKind::Umt5;
            let proj = c.text("feed_forward_proj", if umt5 { "gated-gelu" } else { "relu" })?;
            TextEncoder {
                kind,
                hidden: c.uint("d_model", 512)?,
                layers: c.uint("num_layers", if umt5 { 8 } else { 6 })?,
                heads: c.uint("num_heads", if umt5 { 6 } else { 8 })?,
                head_dim: c.uint("d_kv", 64)?,
                ffn: c.uint("d_ff", if umt5 { 1024 } else { 2048 })?,
                gated: proj.starts_with("gated-"),
                quick_gelu: false,
                vocab: c.uint("vocab_size", if umt5 { 250112 } else { 32128 })?,
                positions: c.uint("relative_attention_num_buckets", 32)?,
                projection: 0,
                max_tokens: max_tokens.unwrap_or(512),
                decoder: None,
            }
        }
        TextEncoderKind::Llama | TextEncoderKind::Gemma2 => {
            let arch = if kind == TextEncoderKind::Llama { crate::import::families::llama(&c)? } else { crate::import::families::gemma2(&c)? };
            let a = &arch.attention;
            TextEncoder {
                kind,
                hidden: arch.hidden,
                layers: arch.layers,
                heads: a.heads,
                head_dim: a.head_dim,
                ffn: arch.mlp.ffn,
                gated: true,
                quick_gelu: false,
                vocab: arch.vocab,
                positions: c.uint("max_position_embeddings", 8192)?,
                projection: 0,
                max_tokens: max_tokens.unwrap_or(512),
                decoder: Some(Box::new(arch)),
            }
        }
    };
    encoder.check()?;
    Ok(encoder)
}
