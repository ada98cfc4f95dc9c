//! The Gemma 3n text reader: a `config.json` of `Gemma3nTextConfig` (transformers 5.25
//! `models/gemma3n/configuration_gemma3n.py`) → a Gemma-3-shaped decoder with per-layer
//! inputs, AltUp, LAuReL and shared-KV layers (`model/arch/per_layer.rs`, module trees from
//! `modeling_gemma3n.py`). Checked against transformers in `tests/gemma3n.rs`.

use super::families::{act, check_heads};
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{AttentionPart, EmbeddingPart, MlpPart, NormKind, NormPart, PerLayerInputs, Placement, QkNorm, Stack, TransformerArch};

/// `intermediate_size`: one width for every layer, or a list with one per layer
/// (`Gemma3nTextConfig.__post_init__`, lines 129–138). Layers of different widths are refused
/// by name: one MLP width serves every block here.
fn ffn(c: &Keys, layers: u64) -> Result<u64, InputError> {
    const KEY: &str = "intermediate_size";
    if !matches!(c.get(KEY), Some(serde_json::Value::Array(_))) {
        return c.uint(KEY, 16_384);
    }
    let widths = c.uint_list(KEY, &[])?;
    if widths.len() as u64 != layers {
        return Err(InputError::new(KEY, format!("lists {} widths, but num_hidden_layers is {layers} (transformers needs one per layer)", widths.len())));
    }
    match widths.iter().all(|w| *w == widths[0]) {
        true => Ok(widths[0]),
        false => Err(InputError::new(KEY, "lists different widths per layer; Headroom models one MLP width for every layer")),
    }
}

/// `layer_types`, else `__post_init__`'s default: every fifth layer global, the rest sliding.
fn sliding_flags(c: &Keys, layers: u64) -> Result<Vec<bool>, InputError> {
    match c.strings("layer_types")? {
        Some(types) if types.len() as u64 == layers => Ok(types.iter().map(|t| *t == "sliding_attention").collect()),
        Some(types) => Err(InputError::new("layer_types", format!("lists {} layers, but num_hidden_layers is {layers}", types.len()))),
        None => Ok((0..layers).map(|i| (i + 1) % 5 != 0).collect()),
    }
}

/// Layers whose MLP runs the Gaussian top-k: entries of `activation_sparsity_pattern` above 0,
/// else `__post_init__`'s default (lines 145–149): the first 10 when there are more than 10.
fn sparse_layers(c: &Keys, layers: u64) -> Result<u64, InputError> {
    const KEY: &str = "activation_sparsity_pattern";
    match c.get(KEY) {
        None | Some(serde_json::Value::Null) => Ok(if layers > 10 { 10 } else { 0 }),
        Some(serde_json::Value::Array(items)) if items.len() as u64 == layers => items
            .iter()
            .map(|v| match v.as_f64() {
                Some(f) if (0.0..1.0).contains(&f) => Ok(u64::from(f > 0.0)),
                _ => Err(InputError::new(KEY, format!("every entry must be a sparsity from 0 to below 1, got {v}"))),
            })
            .sum(),
        Some(v) => Err(InputError::new(KEY, format!("must list one sparsity per layer ({layers}), got {v}"))),
    }
}

/// `Gemma3nTextConfig` → parts: Gemma-3's sandwich norms and per-head q/k norms (`v_norm`
/// has no weight), no attention soft-capping, final logits capped at 30, `Gemma3nRMSNorm`
/// (x · `torch.pow(mean x² + eps, −0.5)` in fp32, weight multiplied before the cast: lines
/// 118–136, the same code as `Gemma4RMSNorm`: `NormKind::RmsnormPow`), and the per-layer inputs.
pub fn gemma3n_text(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 2048)?;
    let layers = c.uint("num_hidden_layers", 35)?;
    let heads = c.uint("num_attention_heads", 8)?;
    let kv_heads = c.uint("num_key_value_heads", 2)?;
    check_heads(hidden, heads, kv_heads)?;
    let head_dim = c.uint("head_dim", 256)?;
    let bias = c.flag("attention_bias", false)?;
    let ffn = ffn(c, layers)?;
    let sliding = sliding_flags(c, layers)?;
    let kv_shared_layers = c.count("num_kv_shared_layers", 15)?;
    if kv_shared_layers >= layers.max(1) {
        return Err(InputError::new("num_kv_shared_layers", format!("is {kv_shared_layers}, but only {layers} layers exist: one must compute its own keys and values")));
    }
    let first_shared = (layers - kv_shared_layers) as usize;
    // A layer type the shared layers read must be produced by an earlier one
    // (`kv_sharing_modes`, `configuration_gemma3n.py` lines 216–221).
    if kv_shared_layers > 0 {
        for kind in [true, false] {
            if sliding[first_shared..].contains(&kind) && !sliding[..first_shared].contains(&kind) {
                return Err(InputError::new("num_kv_shared_layers", "leaves a layer type whose keys and values no earlier layer computes"));
            }
        }
    }
    let per_layer = PerLayerInputs {
        width: c.uint("hidden_size_per_layer_input", 256)?,
        vocab: c.uint("vocab_size_per_layer_input", 262_144)?,
        altup_inputs: c.uint("altup_num_inputs", 4)?,
        laurel_rank: c.uint("laurel_rank", 64)?,
        kv_shared_layers,
        kv_shared_sliding: sliding[first_shared..].iter().filter(|s| **s).count() as u64,
        sparse_layers: sparse_layers(c, layers)?,
        wide_shared_mlp: false,
    };
    let key = if c.has("hidden_activation") || !c.has("hidden_act") { "hidden_activation" } else { "hidden_act" };
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers,
        vocab: c.uint("vocab_size", 262_400)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", true)?, logit_softcap: c.number("final_logit_softcapping", 30.0)? != 0.0, ..EmbeddingPart::default() },
        attention: AttentionPart {
            heads,
            kv_heads,
            head_dim,
            rotary_dim: head_dim,
            qkv_bias: bias,
            out_bias: bias,
            qk_norm: QkNorm::PerHead,
            v_norm: true,
            sliding_window: c.uint("sliding_window", 512)?,
            sliding_layers: sliding.iter().filter(|s| **s).count() as u64,
            ..AttentionPart::default()
        },
        norm: NormPart { kind: NormKind::RmsnormPow, placement: Placement::Sandwich },
        mlp: MlpPart { ffn, activation: act(c, key, "gelu_pytorch_tanh")?, ..MlpPart::default() },
        per_layer: Some(Box::new(per_layer)),
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}
