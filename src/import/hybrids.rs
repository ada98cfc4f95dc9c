//! Readers of the state-space and hybrid families: a `config.json` → a [`TransformerArch`]
//! whose `hybrid` part names the non-attention mixer and counts the blocks that hold each
//! part. Defaults are those of transformers 5.25's configuration classes
//! (`configuration_mamba.py`, `configuration_mamba2.py`, `configuration_jamba.py`,
//! `configuration_qwen3_next.py`, `configuration_qwen3_5.py`, `configuration_nemotron_h.py`,
//! `configuration_bamba.py`, `configuration_granitemoehybrid.py`,
//! `configuration_falcon_h1.py`, `configuration_lfm2.py`, `configuration_olmo_hybrid.py`); module trees from the matching
//! `modeling_*.py`. Each family's count is checked against transformers' own in
//! `tests/family_sweep.rs` and `tests/hybrids.rs`.

use super::families::{self, act, rope_fraction, Defaults};
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{AttentionPart, EmbeddingPart, HybridPart, LeadBlocks, Mixer, MlpPart, MoePart, NormKind, NormPart, QkNorm, Router, Stack, TransformerArch};

/// What one block holds, as a layer-type list names it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Attention,
    Mixer,
    Mlp,
    Moe,
}

/// Counts of each block kind in a list of layer types.
fn count(kinds: &[Block], kind: Block) -> u64 {
    kinds.iter().filter(|k| **k == kind).count() as u64
}

/// A layer-type name → a block kind, with transformers' legacy names
/// (`configuration_utils.py` `_LEGACY_LAYER_TYPE_REMAP`: "mamba" → "linear_attention",
/// "attention" → "full_attention") and LFM2's "conv".
fn kind_of(key: &str, name: &str) -> Result<Block, InputError> {
    Ok(match name {
        "linear_attention" | "mamba" | "conv" => Block::Mixer,
        "full_attention" | "attention" => Block::Attention,
        "mlp" => Block::Mlp,
        "moe" => Block::Moe,
        other => {
            return Err(InputError::new(key, format!("layer type \"{other}\" is not one Headroom knows (linear_attention, full_attention, mamba, attention, conv, mlp, moe)")))
        }
    })
}

/// A list of layer types under `key`, if the config has one, as block kinds.
fn layer_types(c: &Keys, key: &str) -> Result<Option<Vec<Block>>, InputError> {
    match c.strings(key)? {
        None => Ok(None),
        Some(list) if list.is_empty() => Err(InputError::new(key, "is empty")),
        Some(list) => list.iter().map(|s| kind_of(key, s)).collect::<Result<Vec<_>, _>>().map(Some),
    }
}

/// Attention (`true`) or mixer for each of `layers` blocks, from `layer_types` (or the
/// family's other key for it), else from `fallback(i)`. The list must cover every block.
fn mixer_or_attention(c: &Keys, keys: &[&str], layers: u64, fallback: impl Fn(u64) -> bool) -> Result<Vec<bool>, InputError> {
    for key in keys {
        if let Some(kinds) = layer_types(c, key)? {
            if kinds.len() as u64 != layers {
                return Err(InputError::new(*key, format!("lists {} layers, but num_hidden_layers is {layers}", kinds.len())));
            }
            if kinds.iter().any(|k| matches!(k, Block::Mlp | Block::Moe)) {
                return Err(InputError::new(*key, "lists MLP or MoE layers, which this family does not have"));
            }
            return Ok(kinds.into_iter().map(|k| k == Block::Attention).collect());
        }
    }
    Ok((0..layers).map(fallback).collect())
}

/// A decoder of state-space blocks with no attention: embeddings, `layers` × (norm, mixer),
/// a final norm and the LM head (`MambaForCausalLM`, `Mamba2ForCausalLM`).
fn ssm_decoder(hidden: u64, layers: u64, vocab: u64, tied: bool, mixer: Mixer) -> TransformerArch {
    TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers,
        vocab,
        embedding: EmbeddingPart { tied, ..EmbeddingPart::default() },
        // No block holds attention; a placeholder that no count reads.
        attention: AttentionPart { heads: 1, kv_heads: 1, head_dim: 1, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart::default(),
        mlp: MlpPart { ffn: 1, ..MlpPart::default() },
        hybrid: Some(Box::new(HybridPart {
            mixer,
            attention_layers: 0,
            mixer_layers: layers,
            dense_layers: 0,
            moe_layers: 0,
            one_sublayer: true,
            shared: None,
            lead: LeadBlocks::default(),
        })),
        ..TransformerArch::default()
    }
}

/// `MambaConfig` (and `FalconMambaConfig`, whose extra RMSNorms on B, C and Δ have no
/// weights): `time_step_rank: "auto"` is ⌈h / 16⌉.
pub fn mamba(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 768)?;
    let expand = c.number("expand", 2.0)?;
    let dt_rank = match c.get("time_step_rank") {
        Some(serde_json::Value::String(s)) if s == "auto" => hidden.div_ceil(16),
        _ => c.uint("time_step_rank", hidden.div_ceil(16))?,
    };
    let mixer = Mixer::Mamba {
        inner: c.uint_or("intermediate_size", (expand * hidden as f64) as u64)?,
        state: c.uint("state_size", 16)?,
        conv: c.uint("conv_kernel", 4)?,
        dt_rank,
        conv_bias: c.flag("use_conv_bias", true)?,
        proj_bias: c.flag("use_bias", false)?,
        dt_norms: false,
        heads: None,
    };
    let mut t = ssm_decoder(hidden, c.uint("num_hidden_layers", 32)?, c.uint("vocab_size", 50280)?, c.flag("tie_word_embeddings", true)?, mixer);
    t.use_cache = c.flag("use_cache", true)?;
    Ok(t)
}

/// A Mamba-2 mixer from the keys of `Mamba2Config` (`num_heads`, `head_dim`, `n_groups`,
/// `state_size`, `conv_kernel`, `chunk_size`, `use_bias`, `use_conv_bias`), with d_inner =
/// `expand` · h as `Mamba2Mixer` computes it.
pub fn mamba2(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 4096)?;
    let expand = c.number("expand", 2.0)?;
    let mixer = Mixer::Mamba2 {
        inner: (expand * hidden as f64) as u64,
        heads: c.uint("num_heads", 128)?,
        head_dim: c.uint("head_dim", 64)?,
        groups: c.uint("n_groups", 8)?,
        state: c.uint("state_size", 128)?,
        conv: c.uint("conv_kernel", 4)?,
        chunk: c.uint("chunk_size", 256)?,
        conv_bias: c.flag("use_conv_bias", true)?,
        proj_bias: c.flag("use_bias", false)?,
        gated_norm: true,
        fp32_projection_scale: false,
    };
    let mut t = ssm_decoder(hidden, c.uint("num_hidden_layers", 64)?, c.uint("vocab_size", 32768)?, c.flag("tie_word_embeddings", false)?, mixer);
    t.use_cache = c.flag("use_cache", true)?;
    Ok(t)
}

/// The `mamba_*` keys of Bamba, Granite-4.0-H and Falcon-H1 (`mamba_n_heads`, `mamba_d_head`,
/// `mamba_n_groups`, `mamba_d_state`, `mamba_d_conv`, `mamba_chunk_size`, `mamba_conv_bias`,
/// `mamba_proj_bias`): d_inner = `mamba_expand` · h unless `d_ssm` says otherwise.
fn mamba2_keys(c: &Keys, hidden: u64, d_ssm: Option<u64>, gated_norm: bool) -> Result<Mixer, InputError> {
    let expand = c.uint("mamba_expand", 2)?;
    let heads = c.uint("mamba_n_heads", 128)?;
    let inner = d_ssm.unwrap_or(expand * hidden);
    Ok(Mixer::Mamba2 {
        inner,
        heads,
        head_dim: c.uint_or("mamba_d_head", inner / heads.max(1))?,
        groups: c.uint("mamba_n_groups", 1)?,
        state: c.uint("mamba_d_state", 256)?,
        conv: c.uint("mamba_d_conv", 4)?,
        chunk: c.uint("mamba_chunk_size", 256)?,
        conv_bias: c.flag("mamba_conv_bias", true)?,
        proj_bias: c.flag("mamba_proj_bias", false)?,
        gated_norm,
        fp32_projection_scale: false,
    })
}

/// A hybrid whose blocks each hold a norm, attention or the mixer, a second norm and a
/// dense MLP or an MoE: `attention` says which blocks hold attention, `moe` which hold experts.
fn two_norm_hybrid(t: &mut TransformerArch, mixer: Mixer, attention: &[bool], moe: impl Fn(u64) -> bool) {
    let layers = t.layers;
    let attention_layers = attention.iter().filter(|a| **a).count() as u64;
    let moe_layers = (0..layers).filter(|i| moe(*i)).count() as u64;
    t.hybrid = Some(Box::new(HybridPart {
        mixer,
        attention_layers,
        mixer_layers: layers - attention_layers,
        dense_layers: layers - moe_layers,
        moe_layers,
        one_sublayer: false,
        shared: None,
        lead: LeadBlocks::of(attention, moe, false),
    }));
}

/// `JambaConfig` (`modeling_jamba.py`): attention in blocks i with i % `attn_layer_period` ==
/// `attn_layer_offset`, Mamba (with RMSNorms on Δ, B and C) in the rest; experts in blocks
/// with i % `expert_layer_period` == `expert_layer_offset`, a SwiGLU MLP in the rest.
pub fn jamba(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 65536, head_dim: None, tied: false })?;
    t.attention.rotary_dim = 0;
    let layers = t.layers;
    let (attn_period, attn_offset) = (c.uint("attn_layer_period", 8)?, c.count("attn_layer_offset", 4)?);
    let (expert_period, expert_offset) = (c.uint("expert_layer_period", 2)?, c.count("expert_layer_offset", 1)?);
    if attn_offset >= attn_period {
        return Err(InputError::new("attn_layer_offset", format!("{attn_offset} must be smaller than attn_layer_period ({attn_period})")));
    }
    let experts = c.uint("num_experts", 16)?;
    let moe_at = |i: u64| experts > 1 && i % expert_period == expert_offset;
    if (0..layers).any(moe_at) {
        t.moe = Some(MoePart { experts, top_k: c.uint("num_experts_per_tok", 2)?, expert_ffn: t.mlp.ffn, ..MoePart::default() });
    }
    let hidden = t.hidden;
    let expand = c.uint("mamba_expand", 2)?;
    let mixer = Mixer::Mamba {
        inner: expand * hidden,
        state: c.uint("mamba_d_state", 16)?,
        conv: c.uint("mamba_d_conv", 4)?,
        dt_rank: match c.get("mamba_dt_rank") {
            Some(serde_json::Value::String(s)) if s == "auto" => hidden.div_ceil(16),
            _ => c.uint("mamba_dt_rank", hidden.div_ceil(16))?,
        },
        conv_bias: c.flag("mamba_conv_bias", true)?,
        proj_bias: c.flag("mamba_proj_bias", false)?,
        dt_norms: true,
        heads: None,
    };
    let attention: Vec<bool> = (0..layers).map(|i| i % attn_period == attn_offset).collect();
    two_norm_hybrid(&mut t, mixer, &attention, moe_at);
    Ok(t)
}

/// Qwen3-Next and Qwen3.5 share their attention and Gated DeltaNet: attention every
/// `full_attention_interval`-th block (default 4) unless `layer_types` lists them, with an
/// output gate in `q_proj`, per-head q/k norms and a quarter of each head rotated; the
/// norms are zero-centred (`Qwen3NextRMSNorm`: x · (1 + w), computed in fp32).
/// `split_projections`: Qwen3.5's four input matrices in place of Qwen3-Next's two.
fn qwen_gated_deltanet(c: &Keys, d: &Defaults, split_projections: bool) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, d)?;
    t.attention.qkv_bias = c.flag("attention_bias", false)?;
    t.attention.out_bias = t.attention.qkv_bias;
    t.attention.qk_norm = QkNorm::PerHead;
    t.attention.output_gate = true;
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 0.25)?;
    t.norm.kind = NormKind::GemmaRmsnorm;
    let interval = c.uint_or("full_attention_interval", 4)?;
    let attention = mixer_or_attention(c, &["layer_types"], t.layers, |i| (i + 1) % interval == 0)?;
    let mixer = Mixer::GatedDeltaNet {
        key_heads: c.uint("linear_num_key_heads", 16)?,
        value_heads: c.uint("linear_num_value_heads", 32)?,
        key_dim: c.uint("linear_key_head_dim", 128)?,
        value_dim: c.uint("linear_value_head_dim", 128)?,
        conv: c.uint("linear_conv_kernel_dim", 4)?,
        split_projections,
        six_projections: false,
    };
    let moe = t.moe.clone();
    two_norm_hybrid(&mut t, mixer, &attention, |i| moe.as_ref().is_some_and(|m| m.is_moe_block(i)));
    Ok(t)
}

/// The experts of Qwen3-Next and Qwen3.5-MoE: routed experts (`num_experts`,
/// `num_experts_per_tok`, `moe_intermediate_size`) in every `decoder_sparse_step`-th block,
/// a shared expert with a sigmoid gate (`shared_expert_intermediate_size`), top-k weights
/// renormalised unless `norm_topk_prob` is false (Qwen3-Next's default is true; Qwen3.5-MoE
/// always renormalises). A list of dense layers (`mlp_only_layers`) is refused.
fn qwen_next_moe(c: &Keys, t: &mut TransformerArch, experts: u64, top_k: u64, norm_key: bool) -> Result<(), InputError> {
    if let Some(serde_json::Value::Array(list)) = c.get("mlp_only_layers") {
        if !list.is_empty() {
            return Err(InputError::new("mlp_only_layers", "a list of dense layers is not supported yet (only decoder_sparse_step)"));
        }
    }
    let shared_ffn = c.count("shared_expert_intermediate_size", 512)?;
    let normalized = !norm_key || c.flag("norm_topk_prob", true)?;
    let moe = MoePart {
        experts: c.uint("num_experts", experts)?,
        top_k: c.uint("num_experts_per_tok", top_k)?,
        expert_ffn: c.uint("moe_intermediate_size", 512)?,
        shared_ffn,
        shared_gate: shared_ffn > 0,
        every: c.uint_or("decoder_sparse_step", 1)?,
        router: if normalized { Router::SoftmaxNormalized } else { Router::SoftmaxRaw },
        ..MoePart::default()
    };
    let layers = t.layers;
    let moe_layers = moe.moe_blocks(layers);
    if let Some(hy) = t.hybrid.as_mut() {
        hy.moe_layers = moe_layers;
        hy.dense_layers = layers - moe_layers;
        hy.lead.moe = moe.moe_blocks(hy.lead.blocks);
        hy.lead.dense = hy.lead.blocks - hy.lead.moe;
    }
    t.moe = Some(moe);
    Ok(())
}

/// `Lfm2MoeConfig` (`modeling_lfm2_moe.py`, its defaults LFM2-8B-A1B-style): LFM2's blocks
/// (short convolutions and attention with per-head q/k norms by `layer_types`, which the model
/// indexes per layer and so must be given: 479, 506), a dense SwiGLU feed-forward of
/// `intermediate_size` as it is in the first `num_dense_layers` blocks (513–516; no LFM2
/// width adjustment), then `num_experts` experts of `moe_intermediate_size` without a shared
/// one (132–169). Its router (171–196) takes the sigmoid of the logits in the model dtype,
/// chooses by them plus an fp32 `expert_bias` buffer (not a parameter), and renormalises the
/// chosen weights when `norm_topk_prob`.
pub fn lfm2_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    if layer_types(c, "layer_types")?.is_none() {
        return Err(InputError::new("layer_types", "missing: LFM2-MoE reads each layer's kind from it (modeling_lfm2_moe.py 479, 506)"));
    }
    let mut t = families::decoder(c, &Defaults { hidden: 2048, layers: 32, heads: 32, kv_heads: Some(8), ffn: 7168, vocab: 65536, head_dim: None, tied: true })?;
    t.attention.qk_norm = QkNorm::PerHead;
    let layers = t.layers;
    let attention = mixer_or_attention(c, &["layer_types"], layers, |_| true)?;
    let mixer = Mixer::ShortConv { conv: c.uint("conv_L_cache", 3)?, bias: c.flag("conv_bias", false)? };
    let moe = MoePart {
        experts: c.uint("num_experts", 32)?,
        top_k: c.uint("num_experts_per_tok", 4)?,
        expert_ffn: c.uint("moe_intermediate_size", 1792)?,
        first_dense: c.count("num_dense_layers", 2)?,
        router: if c.flag("norm_topk_prob", true)? { Router::SigmoidNormalized } else { Router::SigmoidRaw },
        ..MoePart::default()
    };
    t.moe = Some(moe.clone());
    two_norm_hybrid(&mut t, mixer, &attention, |i| moe.is_moe_block(i));
    Ok(t)
}

/// `Qwen3NextConfig` (its defaults are Qwen3-Next-80B-A3B's): 512 experts top-10 of width
/// 512 and a gated shared expert in every block.
pub fn qwen3_next(c: &Keys) -> Result<TransformerArch, InputError> {
    let d = Defaults { hidden: 2048, layers: 48, heads: 16, kv_heads: Some(2), ffn: 5632, vocab: 151936, head_dim: Some(256), tied: false };
    let mut t = qwen_gated_deltanet(c, &d, false)?;
    qwen_next_moe(c, &mut t, 512, 10, true)?;
    Ok(t)
}

/// `Qwen3_5TextConfig`: Qwen3-Next's blocks with a dense SwiGLU MLP.
pub fn qwen3_5_text(c: &Keys) -> Result<TransformerArch, InputError> {
    qwen_gated_deltanet(c, &Defaults { hidden: 4096, layers: 32, heads: 16, kv_heads: Some(4), ffn: 12288, vocab: 248320, head_dim: Some(256), tied: false }, true)
}

/// `Qwen3_5MoeTextConfig`: Qwen3-Next's blocks, 256 experts top-8 of width 512 and a gated
/// shared expert.
pub fn qwen3_5_moe_text(c: &Keys) -> Result<TransformerArch, InputError> {
    let d = Defaults { hidden: 2048, layers: 40, heads: 16, kv_heads: Some(2), ffn: 512, vocab: 248320, head_dim: Some(256), tied: false };
    let mut t = qwen_gated_deltanet(c, &d, true)?;
    qwen_next_moe(c, &mut t, 256, 8, false)?;
    Ok(t)
}

/// `NemotronHConfig` (`modeling_nemotron_h.py`): each block is one norm and one of Mamba-2,
/// attention (no positions), a squared-ReLU MLP or a mixture of squared-ReLU experts with
/// a shared expert and DeepSeek-V3's sigmoid router (attention without biases); the list is `layers_block_type` (or
/// the Hub's older `hybrid_override_pattern`: M, *, -, E).
pub fn nemotron_h(c: &Keys) -> Result<TransformerArch, InputError> {
    let kinds: Vec<Block> = match c.get("hybrid_override_pattern").and_then(serde_json::Value::as_str) {
        Some(p) if !c.has("layers_block_type") && !c.has("layer_types") => p
            .chars()
            .map(|ch| match ch {
                'M' => Ok(Block::Mixer),
                '*' => Ok(Block::Attention),
                '-' => Ok(Block::Mlp),
                'E' => Ok(Block::Moe),
                other => Err(InputError::new("hybrid_override_pattern", format!("'{other}' is not a layer kind (M, *, -, E)"))),
            })
            .collect::<Result<_, _>>()?,
        _ => match layer_types(c, "layers_block_type")? {
            Some(k) => k,
            None => layer_types(c, "layer_types")?.unwrap_or_else(|| vec![Block::Mixer, Block::Moe, Block::Attention, Block::Mlp]),
        },
    };
    if kinds.is_empty() {
        return Err(InputError::new("hybrid_override_pattern", "is empty"));
    }
    if c.has("moe_latent_size") {
        return Err(InputError::new("moe_latent_size", "latent MoE projections (fc1/fc2_latent_proj) are not supported yet"));
    }
    let hidden = c.uint("hidden_size", 4096)?;
    let heads = c.uint("num_attention_heads", 32)?;
    let kv_heads = c.uint("num_key_value_heads", 8)?;
    families::check_heads(hidden, heads, kv_heads)?;
    let layers = kinds.len() as u64;
    let mut t = TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers,
        vocab: c.uint("vocab_size", 131072)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", false)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads, head_dim: c.uint("head_dim", 128)?, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart::default(),
        mlp: MlpPart {
            ffn: c.uint("intermediate_size", 21504)?,
            activation: act(c, "mlp_hidden_act", "relu2")?,
            gated: false,
            fused_gate_up: false,
            bias: c.flag("mlp_bias", false)?,
        },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    };
    // `NemotronHAttention` builds q/k/v/o with `bias=False` whatever `attention_bias` says.
    let moe_layers = count(&kinds, Block::Moe);
    if moe_layers > 0 {
        let expert_ffn = c.uint("moe_intermediate_size", 7688)?;
        t.moe = Some(MoePart {
            experts: c.uint("n_routed_experts", 8)?,
            top_k: c.uint("num_experts_per_tok", 2)?,
            expert_ffn,
            shared_ffn: c.count("n_shared_experts", 1)? * c.uint("moe_shared_expert_intermediate_size", 7688)?,
            router: Router::SigmoidGrouped,
            ..MoePart::default()
        });
    }
    let heads_m = c.uint("mamba_num_heads", 128)?;
    let head_dim_m = c.uint("mamba_head_dim", 64)?;
    let mixer = Mixer::Mamba2 {
        inner: heads_m * head_dim_m,
        heads: heads_m,
        head_dim: head_dim_m,
        groups: c.uint("n_groups", 8)?,
        state: c.uint("ssm_state_size", 128)?,
        conv: c.uint("conv_kernel", 4)?,
        chunk: c.uint("chunk_size", 128)?,
        conv_bias: c.flag("use_conv_bias", true)?,
        proj_bias: c.flag("use_bias", false)?,
        gated_norm: true,
        fp32_projection_scale: false,
    };
    t.hybrid = Some(Box::new(HybridPart {
        mixer,
        attention_layers: count(&kinds, Block::Attention),
        mixer_layers: count(&kinds, Block::Mixer),
        dense_layers: count(&kinds, Block::Mlp),
        moe_layers,
        one_sublayer: true,
        shared: None,
        lead: LeadBlocks::of(&kinds.iter().map(|k| *k == Block::Attention).collect::<Vec<_>>(), |i| kinds[i as usize] == Block::Moe, true),
    }));
    Ok(t)
}

/// `BambaConfig` (`modeling_bamba.py`): Mamba-2 blocks with attention at
/// `attn_layer_indices`, a SwiGLU MLP in every block, half of each head rotated.
pub fn bamba(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 128000, head_dim: None, tied: false })?;
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 0.5)?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    let indices: Vec<u64> = match c.get("attn_layer_indices") {
        Some(serde_json::Value::Array(list)) => {
            list.iter().map(|v| v.as_u64().ok_or_else(|| InputError::new("attn_layer_indices", format!("every entry must be a layer index, got {v}")))).collect::<Result<_, _>>()?
        }
        _ => Vec::new(),
    };
    let attention: Vec<bool> = (0..t.layers).map(|i| indices.contains(&i)).collect();
    let mixer = mamba2_keys(c, t.hidden, None, true)?;
    two_norm_hybrid(&mut t, mixer, &attention, |_| false);
    Ok(t)
}

/// `GraniteMoeHybridConfig` (Granite 4.0-H, `modeling_granitemoehybrid.py`): Mamba-2 or
/// attention per `layer_types`, then experts (fused `input_linear`) when
/// `num_local_experts` > 0 and a shared SwiGLU MLP of `shared_intermediate_size` in every
/// block (the block's only MLP when there are no experts). Positions: rotary or none
/// (`position_embedding_type`), no parameters either way.
pub fn granitemoehybrid(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: None, ffn: 11008, vocab: 32000, head_dim: None, tied: false })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    if c.text("position_embedding_type", "rope").ok().as_deref() == Some("nope") {
        t.attention.rotary_dim = 0;
    }
    let attention = mixer_or_attention(c, &["layer_types", "layers_block_type"], t.layers, |_| false)?;
    let shared = c.count("shared_intermediate_size", 1024)?;
    let experts = c.count("num_local_experts", 8)?;
    if experts > 0 {
        t.moe = Some(MoePart { experts, top_k: c.uint("num_experts_per_tok", 2)?, expert_ffn: t.mlp.ffn, shared_ffn: shared, ..MoePart::default() });
    } else {
        t.mlp.ffn = shared.max(1);
    }
    let mixer = mamba2_keys(c, t.hidden, None, true)?;
    two_norm_hybrid(&mut t, mixer, &attention, |_| experts > 0);
    Ok(t)
}

/// `FalconH1Config` (`modeling_falcon_h1.py`): attention and Mamba-2 side by side in every
/// block on one norm, then a second norm and a SwiGLU MLP; the Mamba-2 width is
/// `mamba_d_ssm` (else `mamba_expand` · h) and its gated norm is there only with
/// `mamba_rms_norm`.
pub fn falcon_h1(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 128000, head_dim: None, tied: false })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    let d_ssm = c.optional_uint("mamba_d_ssm")?;
    let mut mixer = mamba2_keys(c, t.hidden, d_ssm, c.flag("mamba_rms_norm", false)?)?;
    if let Mixer::Mamba2 { fp32_projection_scale, .. } = &mut mixer {
        *fp32_projection_scale = true;
    }
    if c.flag("projectors_bias", false)? {
        return Err(InputError::new("projectors_bias", "Falcon-H1's projector biases are not supported yet"));
    }
    let layers = t.layers;
    t.hybrid = Some(Box::new(HybridPart {
        mixer,
        attention_layers: layers,
        mixer_layers: layers,
        dense_layers: layers,
        moe_layers: 0,
        one_sublayer: false,
        shared: None,
        lead: LeadBlocks::default(),
    }));
    Ok(t)
}

/// `Lfm2Config` (`modeling_lfm2.py`): attention (per-head q/k norms) in the blocks
/// `layer_types` marks `full_attention` (else those in `full_attn_idxs`), gated short
/// convolutions in the rest, a SwiGLU MLP whose width `block_auto_adjust_ff_dim` rounds
/// (⅔ · f, × `block_ffn_dim_multiplier`, up to a multiple of `block_multiple_of`), a final
/// norm (`embedding_norm`) and a tied head.
pub fn lfm2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, &Defaults { hidden: 2560, layers: 32, heads: 32, kv_heads: Some(8), ffn: 12288, vocab: 65536, head_dim: None, tied: true })?;
    t.attention.qk_norm = QkNorm::PerHead;
    let mut ffn = t.mlp.ffn;
    if c.flag("block_auto_adjust_ff_dim", true)? {
        ffn = 2 * ffn / 3;
        let multiplier = c.number("block_ffn_dim_multiplier", 1.0)?;
        ffn = (multiplier * ffn as f64) as u64;
        let multiple = c.uint("block_multiple_of", 256)?;
        ffn = multiple * ffn.div_ceil(multiple);
    }
    t.mlp.ffn = ffn.max(1);
    let layers = t.layers;
    let full: Option<Vec<u64>> = match c.get("full_attn_idxs") {
        Some(serde_json::Value::Array(list)) => Some(list.iter().filter_map(serde_json::Value::as_u64).collect()),
        _ => None,
    };
    let attention = mixer_or_attention(c, &["layer_types"], layers, |i| full.as_ref().is_none_or(|f| f.contains(&i)))?;
    let mixer = Mixer::ShortConv { conv: c.uint("conv_L_cache", 3)?, bias: c.flag("conv_bias", false)? };
    two_norm_hybrid(&mut t, mixer, &attention, |_| false);
    Ok(t)
}

/// `OlmoHybridConfig` (transformers 5.25 `models/olmo_hybrid/`): OLMo-3's attention (q/k
/// RMSNorms over all heads, rotary, no biases unless `attention_bias`) in every block i with
/// i % 4 == 3 unless `layer_types` lists them (the last block when none is), Gated DeltaNet
/// in the rest, a SwiGLU MLP in every block. The mixer (`OlmoHybridGatedDeltaNet`,
/// `modeling_olmo_hybrid.py` lines 630–689) has separate q, k, v, a, b and g projections,
/// the elements of Qwen3.5's four matrices in six modules (`six_projections`), a conv over q, k and v
/// without bias, `A_log` and `dt_bias` per value head and a gated RMSNorm over a value head;
/// its heads default to `num_attention_heads`, its key width to ⌊0.75 · h / heads⌋ and its
/// value width to twice that (`OlmoHybridConfig.__post_init__`). Attention blocks put their
/// norms after each sublayer (`OlmoHybridAttentionDecoderLayer`), Gated DeltaNet blocks
/// before (`OlmoHybridLinearAttentionDecoderLayer`): two norms of h either way.
pub fn olmo_hybrid(c: &Keys) -> Result<TransformerArch, InputError> {
    let d = Defaults { hidden: 3840, layers: 32, heads: 30, kv_heads: None, ffn: 11008, vocab: 100352, head_dim: None, tied: false };
    let mut t = families::decoder(c, &d)?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.attention.qk_norm = QkNorm::Full;
    // `OlmoHybridRMSNorm`: the weight applied in fp32, as OLMo-2's.
    t.norm.kind = NormKind::RmsnormFp32Weight;
    let (layers, hidden, heads) = (t.layers, t.hidden, t.attention.heads);
    let mut attention = mixer_or_attention(c, &["layer_types"], layers, |i| i % 4 == 3)?;
    if !c.has("layer_types") && !attention.contains(&true) {
        if let Some(last) = attention.last_mut() {
            *last = true;
        }
    }
    // `OlmoHybridConfig.validate_architecture`: at least one block of each kind.
    if attention.iter().all(|a| *a) {
        return Err(InputError::new("layer_types", "lists no linear_attention layer (OlmoHybridConfig requires one)"));
    }
    if !attention.contains(&true) {
        return Err(InputError::new("layer_types", "lists no full_attention layer (OlmoHybridConfig requires one)"));
    }
    let key_heads = c.uint_or("linear_num_key_heads", heads)?;
    let key_dim = c.uint_or("linear_key_head_dim", (0.75 * hidden as f64 / key_heads as f64) as u64)?;
    let mixer = Mixer::GatedDeltaNet {
        key_heads,
        value_heads: c.uint_or("linear_num_value_heads", heads)?,
        key_dim,
        value_dim: c.uint_or("linear_value_head_dim", 2 * key_dim)?,
        conv: c.uint("linear_conv_kernel_dim", 4)?,
        split_projections: true,
        six_projections: true,
    };
    // Not modelled (parameters, states and activations are exact, `tests/olmo_hybrid.rs`,
    // `tests/mixer_torch.rs`): PEFT matches target names, not Headroom's kinds.
    c.note(
        "OLMo-Hybrid's Gated DeltaNet names three of its six input projections as attention does: under LoRA, PEFT's q_proj/k_proj/v_proj targets also match its q_proj, k_proj and v_proj, \
         adapters this plan does not count (r · (3h + 2·K + V) per Gated DeltaNet block at most)",
    );
    two_norm_hybrid(&mut t, mixer, &attention, |_| false);
    Ok(t)
}
