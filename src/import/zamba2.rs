//! The Zamba2 reader: a `config.json` of `Zamba2Config` (transformers 5.25
//! `models/zamba2/configuration_zamba2.py`) → a hybrid [`TransformerArch`] whose every
//! layer holds a Mamba-2 mixer and whose "hybrid" layers also invoke one of `num_mem_blocks`
//! shared attention + MLP blocks (`model/arch/shared.rs`, module trees from
//! `modeling_zamba2.py`). Checked against transformers in `tests/zamba2.rs`.

use super::families::act;
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{AttentionPart, EmbeddingPart, HybridPart, Mixer, MlpPart, NormPart, SharedBlocks, Stack, TransformerArch};

/// `Zamba2Config.__post_init__`'s layer list when none is given: 54 layers, the hybrid ones
/// at 6, 12, …, 42, 47 and 51.
fn default_layers() -> Vec<bool> {
    let mut hybrid = vec![false];
    for _ in 0..7 {
        hybrid.extend([false; 5]);
        hybrid.push(true);
    }
    hybrid.extend([false; 4]);
    hybrid.push(true);
    hybrid.extend([false; 3]);
    hybrid.push(true);
    hybrid.extend([false; 2]);
    hybrid
}

/// Which layers are hybrid (the shared block beside the mixer) and which run the mixer alone,
/// from `layers_block_type` (`layer_types` by the config's `attribute_map`); "mamba" is
/// transformers' legacy name for "linear_attention" (`remap_legacy_layer_types`). Without a
/// list, the family's `default` schedule. The list must have one entry per layer
/// (`PreTrainedConfig.validate_layer_type`): `num_hidden_layers`, when given, must agree.
/// Shared by Zamba (`zamba.rs`) and Zamba2.
pub(super) fn hybrid_schedule(c: &Keys, family: &str, default: impl FnOnce() -> Result<Vec<bool>, InputError>) -> Result<Vec<bool>, InputError> {
    let mut listed = None;
    for key in ["layers_block_type", "layer_types"] {
        if let Some(list) = c.strings(key)? {
            let kinds = list
                .iter()
                .map(|name| match *name {
                    "hybrid" => Ok(true),
                    "mamba" | "linear_attention" => Ok(false),
                    other => Err(InputError::new(key, format!("layer type \"{}\" is not one {family} has (hybrid, mamba, linear_attention)", crate::safe_text::quoted(other)))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            listed = Some(kinds);
            break;
        }
    }
    let kinds = match listed {
        Some(kinds) => kinds,
        None => default()?,
    };
    let layers = kinds.len() as u64;
    let declared = c.uint_or("num_hidden_layers", layers)?;
    if declared != layers {
        return Err(InputError::new("num_hidden_layers", format!("is {declared}, but layers_block_type lists {layers} layers")));
    }
    Ok(kinds)
}

/// `Zamba2Config` → parts. Every layer is a `Zamba2MambaDecoderLayer` (one RMSNorm and a
/// Mamba-2 mixer whose conv always has a bias: `nn.Conv1d(..., bias=True)`,
/// `modeling_zamba2.py` lines 860–867, `use_conv_bias` unread); a hybrid layer also runs a
/// shared block on the concatenation of its input and the embeddings (attention heads of
/// 2·hidden / heads, rotary with `use_mem_rope`, a fused gated MLP with `hidden_act`) and
/// its own `linear` before the mixer (`Zamba2HybridLayer`, lines 1130–1193).
pub fn zamba2(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 2560)?;
    let kinds = hybrid_schedule(c, "Zamba2", || Ok(default_layers()))?;
    let layers = kinds.len() as u64;
    let invocations = kinds.iter().filter(|h| **h).count() as u64;
    let heads = c.uint("num_attention_heads", 32)?;
    let kv_heads = c.uint_or("num_key_value_heads", heads)?;
    if hidden * 2 % heads != 0 {
        return Err(InputError::new("num_attention_heads", format!("{heads} must divide 2 · hidden_size ({})", 2 * hidden)));
    }
    let head_dim = 2 * hidden / heads;
    let rotary = c.flag("use_mem_rope", false)?;
    let bias = c.flag("add_bias_linear", false)?;
    let expand = c.uint("mamba_expand", 2)?;
    let inner = expand * hidden;
    let mamba_heads = c.uint("n_mamba_heads", 8)?;
    let mixer = Mixer::Mamba2 {
        inner,
        heads: mamba_heads,
        head_dim: inner / mamba_heads,
        groups: c.uint("mamba_ngroups", 1)?,
        state: c.uint("mamba_d_state", 64)?,
        conv: c.uint("mamba_d_conv", 4)?,
        chunk: c.uint("chunk_size", 256)?,
        conv_bias: true,
        proj_bias: bias,
        gated_norm: true,
        fp32_projection_scale: false,
    };
    let ffn = match c.get("intermediate_size") {
        None | Some(serde_json::Value::Null) => 4 * hidden,
        Some(_) => c.uint("intermediate_size", 4 * hidden)?,
    };
    // transformers ties the shared blocks through `_tied_weights_keys`, which
    // `PreTrainedModel.get_expanded_tied_weights_keys` empties when `tie_word_embeddings` is
    // false (`modeling_utils.py` lines 2494–2496): every invocation then keeps its own block
    // with every adapter slot of its block id (`SharedBlocks::tied`).
    let tied = c.flag("tie_word_embeddings", true)?;
    // transformers keeps a `hybrid_layer_ids` given in the config over the one it derives
    // (`PreTrainedConfig.__post_init__` sets the remaining kwargs last), and sizes each
    // block's adapter list by it.
    let adapter_slots = match c.get("hybrid_layer_ids") {
        Some(serde_json::Value::Array(ids)) => ids.len() as u64,
        Some(serde_json::Value::Null) | None => invocations,
        Some(other) => return Err(InputError::new("hybrid_layer_ids", format!("must be a list of layer indices, got {other}"))),
    };
    let shared = SharedBlocks {
        adapter_slots,
        blocks: c.uint("num_mem_blocks", 1)?,
        adapter_rank: c.uint("adapter_rank", 128)?,
        attention_adapters: c.flag("use_shared_attention_adapter", false)?,
        mlp_adapter: true,
        tied,
    };
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers,
        vocab: c.uint("vocab_size", 32000)?,
        embedding: EmbeddingPart { tied, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads, head_dim, rotary_dim: if rotary { head_dim } else { 0 }, ..AttentionPart::default() },
        norm: NormPart::default(),
        mlp: MlpPart { ffn, activation: act(c, "hidden_act", "gelu")?, gated: true, fused_gate_up: true, bias },
        hybrid: Some(Box::new(HybridPart::with_shared_blocks(mixer, layers, invocations, shared))),
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}
