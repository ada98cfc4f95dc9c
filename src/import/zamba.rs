//! The Zamba (v1) reader: a `config.json` of `ZambaConfig` (transformers 5.25
//! `models/zamba/configuration_zamba.py`) → a hybrid [`TransformerArch`] whose every layer
//! holds a multi-head Mamba mixer (`Mixer::Mamba` with `heads`) and whose "hybrid" layers also
//! invoke the one shared attention + MLP block (`model/arch/shared.rs`, without adapters),
//! module trees from `modeling_zamba.py`. Checked against transformers in `tests/zamba.rs`.

use super::families::act;
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{AttentionPart, EmbeddingPart, HybridPart, Mixer, MlpPart, NormPart, SharedBlocks, Stack, TransformerArch};

/// `ZambaConfig.__post_init__`'s layer list when none is given: two Mamba layers, a hybrid
/// one, then a hybrid layer wherever i % `attn_layer_period` == `attn_layer_offset` over the
/// remaining `num_hidden_layers` − 3 (3 entries below 3 layers, which transformers' own
/// `validate_layer_type` then refuses, as [`zamba`] does).
fn default_layers(c: &Keys, layers: u64) -> Result<Vec<bool>, InputError> {
    let period = c.uint("attn_layer_period", 6)?;
    if period == 0 {
        return Err(InputError::new("attn_layer_period", "must be at least 1"));
    }
    let offset = c.uint("attn_layer_offset", 4)?;
    let mut hybrid = vec![false, false, true];
    hybrid.extend((0..layers.saturating_sub(3)).map(|i| i % period == offset));
    Ok(hybrid)
}

/// `ZambaConfig` → parts. Every layer is a `ZambaMambaDecoderLayer` (one RMSNorm and a
/// `ZambaMambaMixer`: `in_proj` h → 2·d, a depthwise conv (bias with `mamba_conv_bias`),
/// per-head `x_proj_weight` and `dt_proj_weight`, `dt_proj_bias`, `A_log`, `D`, `out_proj`;
/// lines 499–557); a hybrid layer also runs the shared `ZambaAttentionDecoderLayer` on the
/// concatenation of its input and the embeddings (q/k/v read `attention_hidden_size` = 2·h,
/// heads of `attention_head_dim` = 2·h / heads, no rotary, no bias; an unfused gated MLP with
/// `hidden_act`; lines 151–177, 685–708) and its own `linear` h → h (`ZambaModel.__init__`,
/// lines 912–923). transformers ties every hybrid layer's block to the first one's through
/// `_tied_weights_keys`, which it applies only with `tie_word_embeddings`
/// (`modeling_utils.py` `get_expanded_tied_weights_keys`, lines 2494–2496).
pub fn zamba(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 3712)?;
    let kinds = super::zamba2::hybrid_schedule(c, "Zamba", || default_layers(c, c.uint("num_hidden_layers", 76)?))?;
    let layers = kinds.len() as u64;
    let invocations = kinds.iter().filter(|h| **h).count() as u64;
    // The block reads the hidden state concatenated with the embeddings (`ZambaHybridLayer.forward`).
    let wide = c.uint_or("attention_hidden_size", 2 * hidden)?;
    if wide != 2 * hidden {
        return Err(InputError::new(
            "attention_hidden_size",
            format!("is {wide}, but the shared block reads the hidden state and the embeddings side by side (2 · hidden_size = {})", 2 * hidden),
        ));
    }
    let heads = c.uint("num_attention_heads", 16)?;
    let kv_heads = c.uint("num_key_value_heads", 16)?;
    // `head_dim` is `attention_head_dim` by the config's `attribute_map`.
    let key = if c.get("attention_head_dim").is_some() { "attention_head_dim" } else { "head_dim" };
    let head_dim = match c.get(key) {
        Some(_) => c.uint_or(key, 0)?,
        None => {
            if heads == 0 || 2 * hidden % heads != 0 {
                return Err(InputError::new("num_attention_heads", format!("{heads} must divide 2 · hidden_size ({})", 2 * hidden)));
            }
            2 * hidden / heads
        }
    };
    let dt_rank = match c.get("mamba_dt_rank") {
        Some(serde_json::Value::String(s)) if s == "auto" => hidden.div_ceil(16),
        _ => c.uint("mamba_dt_rank", hidden.div_ceil(16))?,
    };
    let mixer = Mixer::Mamba {
        inner: c.uint("mamba_expand", 2)? * hidden,
        state: c.uint("mamba_d_state", 16)?,
        conv: c.uint("mamba_d_conv", 4)?,
        dt_rank,
        conv_bias: c.flag("mamba_conv_bias", true)?,
        proj_bias: c.flag("mamba_proj_bias", false)?,
        dt_norms: false,
        heads: Some(c.uint("n_mamba_heads", 2)?),
    };
    let tied = c.flag("tie_word_embeddings", true)?;
    let shared = SharedBlocks { blocks: 1, adapter_rank: 0, adapter_slots: 0, attention_adapters: false, mlp_adapter: false, tied };
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers,
        vocab: c.uint("vocab_size", 32000)?,
        embedding: EmbeddingPart { tied, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads, head_dim, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart::default(),
        mlp: MlpPart { ffn: c.uint("intermediate_size", 14848)?, activation: act(c, "hidden_act", "gelu")?, gated: true, fused_gate_up: false, bias: false },
        hybrid: Some(Box::new(HybridPart::with_shared_blocks(mixer, layers, invocations, shared))),
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}
