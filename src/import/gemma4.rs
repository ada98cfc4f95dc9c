//! The Gemma 4 text reader: a `config.json` of `Gemma4TextConfig` (transformers 5.25
//! `models/gemma4/configuration_gemma4.py`) → a Gemma-3-shaped decoder whose full-attention
//! layers have their own head width and key/value heads (`AttentionPart::full_layers`), with
//! Gemma 3n's per-layer inputs and shared-KV layers (`model/arch/per_layer.rs`, without AltUp
//! or LAuReL), the double-wide MLP of the shared layers and the MoE block beside the dense
//! MLP (`MoePart::beside_dense`). Module trees from `modeling_gemma4.py`; checked against
//! transformers in `tests/gemma4.rs`.

use serde_json::Value;

use super::families::{act, check_heads};
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{AttentionPart, EmbeddingPart, KindShape, MlpPart, MoePart, NormKind, NormPart, PerLayerInputs, Placement, QkNorm, Router, Stack, TransformerArch};

/// `layer_types`, else `__post_init__`'s default (lines 185–190): every sixth layer full, the
/// rest sliding; the last layer is forced to full attention (lines 192–196). `true`: sliding.
fn sliding_flags(c: &Keys, layers: u64) -> Result<Vec<bool>, InputError> {
    let mut sliding = match c.strings("layer_types")? {
        Some(types) if types.len() as u64 == layers => types
            .iter()
            .map(|t| match *t {
                "sliding_attention" => Ok(true),
                "full_attention" => Ok(false),
                other => Err(InputError::new("layer_types", format!("\"{}\" is not a Gemma 4 layer type (sliding_attention, full_attention)", crate::safe_text::quoted(other)))),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(types) => return Err(InputError::new("layer_types", format!("lists {} layers, but num_hidden_layers is {layers}", types.len()))),
        None => (0..layers).map(|i| (i + 1) % 6 != 0).collect(),
    };
    if let Some(last) = sliding.last_mut() {
        if *last {
            c.note("layer_types: the last layer is forced to full_attention, as Gemma4TextConfig does");
            *last = false;
        }
    }
    Ok(sliding)
}

/// The full-attention layers' head width and key/value heads: `global_head_dim` (512) and,
/// with `attention_k_eq_v`, `num_global_key_value_heads` (lines 205–220); or, in a config
/// saved by transformers (`to_dict` writes `per_layer_config` instead, and `__post_init__`
/// then ignores the two keys), the overrides of `per_layer_config`, which must name every
/// full-attention layer with one shape and no sliding layer.
fn full_shape(c: &Keys, sliding: &[bool], head_dim: u64, kv_heads: u64, k_eq_v: bool) -> Result<(u64, u64), InputError> {
    const KEY: &str = "per_layer_config";
    match c.get(KEY) {
        None | Some(Value::Null) => {
            let global_head_dim = c.uint("global_head_dim", 512)?;
            let global_kv = match c.get("num_global_key_value_heads") {
                Some(v) if k_eq_v && !v.is_null() => c.uint("num_global_key_value_heads", kv_heads)?,
                _ => kv_heads,
            };
            Ok((global_head_dim, global_kv))
        }
        Some(Value::Object(entries)) => {
            let mut shape: Option<(u64, u64)> = None;
            let mut named = vec![false; sliding.len()];
            for (index, overrides) in entries {
                let i = index
                    .parse::<usize>()
                    .ok()
                    .filter(|i| *i < sliding.len())
                    .ok_or_else(|| InputError::new(KEY, format!("\"{}\" is not a layer index below {}", crate::safe_text::quoted(index), sliding.len())))?;
                let Value::Object(o) = overrides else {
                    return Err(InputError::new(KEY, format!("layer {i}: must be an object of overrides")));
                };
                if let Some(other) = o.keys().find(|k| !matches!(k.as_str(), "head_dim" | "num_key_value_heads")) {
                    return Err(InputError::new(
                        KEY,
                        format!("layer {i}: Headroom reads head_dim and num_key_value_heads overrides only, not \"{}\"", crate::safe_text::quoted(other)),
                    ));
                }
                if sliding[i] {
                    return Err(InputError::new(KEY, format!("layer {i} is a sliding layer; Headroom models overrides of the full-attention layers only")));
                }
                let read = |k: &str, default: u64| {
                    o.get(k).map_or(Ok(default), |v| {
                        v.as_u64()
                            .filter(|n| *n > 0 && *n <= crate::model::arch::MAX_DIM)
                            .ok_or_else(|| InputError::new(KEY, format!("layer {i}: {k} must be a positive whole number, got {v}")))
                    })
                };
                let this = (read("head_dim", head_dim)?, read("num_key_value_heads", kv_heads)?);
                if shape.is_some_and(|s| s != this) {
                    return Err(InputError::new(KEY, "gives the full-attention layers different shapes; Headroom models one shape per attention kind"));
                }
                shape = Some(this);
                named[i] = true;
            }
            if let Some(i) = (0..sliding.len()).find(|i| !sliding[*i] && !named[*i] && shape.is_some()) {
                return Err(InputError::new(KEY, format!("leaves full-attention layer {i} at the sliding layers' shape; Headroom models one shape per attention kind")));
            }
            Ok(shape.unwrap_or((head_dim, kv_heads)))
        }
        Some(v) => Err(InputError::new(KEY, format!("must be an object of per-layer overrides, got {v}"))),
    }
}

/// The shared-KV layers: the last `num_kv_shared_layers`; each layer type they use must be
/// computed by an earlier layer (`kv_sharing_modes`, lines 222–248). Returns (shared, of them
/// sliding).
fn kv_sharing(c: &Keys, sliding: &[bool]) -> Result<(u64, u64), InputError> {
    const KEY: &str = "num_kv_shared_layers";
    let layers = sliding.len() as u64;
    let shared = c.count(KEY, 0)?;
    if shared == 0 {
        return Ok((0, 0));
    }
    if shared >= layers {
        return Err(InputError::new(KEY, format!("is {shared}, but only {layers} layers exist: one must compute its own keys and values")));
    }
    let first = (layers - shared) as usize;
    for kind in [true, false] {
        if sliding[..first].contains(&kind) != sliding.contains(&kind) {
            return Err(InputError::new(KEY, "leaves a layer type whose keys and values no earlier layer computes (transformers refuses it)"));
        }
    }
    Ok((shared, sliding[first..].iter().filter(|s| **s).count() as u64))
}

/// `enable_moe_block`: `num_experts` experts of `moe_intermediate_size` beside the dense MLP,
/// `top_k_experts` per token (`Gemma4TextRouter`, `Gemma4TextExperts`); the three keys have no
/// default, so a config that enables the block must set them.
fn moe(c: &Keys) -> Result<Option<MoePart>, InputError> {
    if !c.flag("enable_moe_block", false)? {
        return Ok(None);
    }
    let required = |key: &str| match c.get(key) {
        None | Some(Value::Null) => Err(InputError::new(key, "must be set when enable_moe_block is true (Gemma4TextConfig has no default)")),
        Some(_) => c.uint(key, 0),
    };
    let experts = required("num_experts")?;
    let top_k = required("top_k_experts")?;
    if top_k > experts {
        return Err(InputError::new("top_k_experts", format!("{top_k} exceeds num_experts ({experts})")));
    }
    Ok(Some(MoePart {
        experts,
        top_k,
        expert_ffn: required("moe_intermediate_size")?,
        router: Router::ScaledSoftmax,
        beside_dense: true,
        // 3-D experts (`Gemma4TextExperts`, lines 1255–1265) that PEFT's target names and
        // bitsandbytes' quantisation do not reach.
        peft: super::moe_peft::moe_peft("gemma4_text"),
        ..MoePart::default()
    }))
}

/// `Gemma4TextConfig` → parts: Gemma-3's sandwich norms, per-head q/k norms and a weightless
/// `v_norm`, `Gemma4RMSNorm` (x · `torch.pow(mean x² + eps, −0.5)` in fp32, the weight
/// multiplied before the cast: `modeling_gemma4.py` lines 196–214), no attention
/// soft-capping, final logits capped only when `final_logit_softcapping` is set.
pub fn gemma4_text(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 2304)?;
    let layers = c.uint("num_hidden_layers", 30)?;
    let heads = c.uint("num_attention_heads", 8)?;
    let kv_heads = c.uint("num_key_value_heads", 4)?;
    check_heads(hidden, heads, kv_heads)?;
    let head_dim = c.uint("head_dim", 256)?;
    let bias = c.flag("attention_bias", false)?;
    let sliding = sliding_flags(c, layers)?;
    let k_eq_v = c.flag("attention_k_eq_v", false)?;
    let (full_head_dim, full_kv_heads) = full_shape(c, &sliding, head_dim, kv_heads, k_eq_v)?;
    if full_kv_heads > heads || !heads.is_multiple_of(full_kv_heads) {
        return Err(InputError::new("num_global_key_value_heads", format!("{full_kv_heads} must divide num_attention_heads ({heads})")));
    }
    let (kv_shared_layers, kv_shared_sliding) = kv_sharing(c, &sliding)?;
    let width = c.count("hidden_size_per_layer_input", 256)?;
    let wide_shared_mlp = c.flag("use_double_wide_mlp", false)?;
    let per_layer = (width > 0 || kv_shared_layers > 0).then(|| -> Result<_, InputError> {
        Ok(Box::new(PerLayerInputs {
            width,
            vocab: if width > 0 { c.uint("vocab_size_per_layer_input", 262_144)? } else { 0 },
            altup_inputs: 0,
            laurel_rank: 0,
            kv_shared_layers,
            kv_shared_sliding,
            sparse_layers: 0,
            wide_shared_mlp,
        }))
    });
    let mut window = c.uint("sliding_window", 512)?;
    // `use_bidirectional_attention: "all"` halves the window (lines 181–183); "vision" changes
    // only the masks of image tokens.
    if c.get("use_bidirectional_attention").and_then(Value::as_str) == Some("all") {
        window = window / 2 + 1;
        c.note("use_bidirectional_attention \"all\": every token attends both ways, and the sliding window is sliding_window / 2 + 1 (Gemma4TextConfig.__post_init__)");
    }
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers,
        vocab: c.uint("vocab_size", 262_144)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", true)?, logit_softcap: c.number("final_logit_softcapping", 0.0)? != 0.0, ..EmbeddingPart::default() },
        attention: AttentionPart {
            heads,
            kv_heads,
            head_dim,
            rotary_dim: head_dim,
            qkv_bias: bias,
            out_bias: bias,
            qk_norm: QkNorm::PerHead,
            v_norm: true,
            sliding_window: window,
            sliding_layers: sliding.iter().filter(|s| **s).count() as u64,
            full_layers: Some(KindShape { head_dim: full_head_dim, kv_heads: full_kv_heads, values_are_keys: k_eq_v }),
            ..AttentionPart::default()
        },
        norm: NormPart { kind: NormKind::RmsnormPow, placement: Placement::Sandwich },
        mlp: MlpPart { ffn: c.uint("intermediate_size", 9216)?, activation: act(c, "hidden_activation", "gelu_pytorch_tanh")?, ..MlpPart::default() },
        moe: moe(c)?,
        per_layer: per_layer.transpose()?,
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}
