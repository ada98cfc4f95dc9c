//! One mapping per `model_type`: a `config.json`'s keys → the parts of a
//! [`TransformerArch`]. Defaults are those of the matching transformers configuration class
//! (`LlamaConfig`, `Gemma2Config`, `DeepseekV3Config`, … in transformers 5.24, dumped with
//! `AutoConfig.for_model(model_type)`); module structure from each `modeling_*.py`.
//!
//! Adding a family: write one function here that reads its keys into parts, and list its
//! `model_type` in `hf_config::FAMILIES` (see ARCHITECTURE.md).
//!
//! long: one short reader per model family (93 functions, all but one under 40 lines), side by side so a new family is written next to its nearest relative.

use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{Activation, AttentionPart, EmbeddingPart, LatentAttention, MlpPart, MoePart, NormKind, NormPart, Placement, QkNorm, Router, Stack, TransformerArch};

/// A family's defaults for the usual keys.
pub struct Defaults {
    pub hidden: u64,
    pub layers: u64,
    pub heads: u64,
    /// `None`: as many KV heads as query heads.
    pub kv_heads: Option<u64>,
    pub ffn: u64,
    pub vocab: u64,
    /// `None`: hidden / heads.
    pub head_dim: Option<u64>,
    pub tied: bool,
}

/// A decoder with the usual keys (`hidden_size`, `num_hidden_layers`, `num_attention_heads`,
/// `num_key_value_heads`, `head_dim`, `intermediate_size`, `vocab_size`,
/// `tie_word_embeddings`), Llama-style parts, and rotary positions over the whole head.
pub fn decoder(c: &Keys, d: &Defaults) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", d.hidden)?;
    let heads = c.uint("num_attention_heads", d.heads)?;
    let kv_heads = match d.kv_heads {
        Some(kv) => c.uint("num_key_value_heads", kv)?,
        None => c.uint_or("num_key_value_heads", heads)?,
    };
    check_heads(hidden, heads, kv_heads)?;
    let head_dim = match d.head_dim {
        // The class default applies even where hidden / heads differs (Qwen3, Gemma, gpt-oss).
        Some(hd) => c.uint("head_dim", hd)?,
        None => c.uint_or("head_dim", (hidden / heads).max(1))?,
    };
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers: c.uint("num_hidden_layers", d.layers)?,
        vocab: c.uint("vocab_size", d.vocab)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", d.tied)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads, head_dim, rotary_dim: head_dim, ..AttentionPart::default() },
        norm: NormPart::default(),
        mlp: MlpPart { ffn: c.uint("intermediate_size", d.ffn)?, ..MlpPart::default() },
        moe: None,
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

pub fn check_heads(hidden: u64, heads: u64, kv_heads: u64) -> Result<(), InputError> {
    if kv_heads > heads || !heads.is_multiple_of(kv_heads) {
        return Err(InputError::new("num_key_value_heads", format!("{kv_heads} must divide num_attention_heads ({heads})")));
    }
    if hidden < heads {
        return Err(InputError::new("num_attention_heads", format!("{heads} heads exceed the hidden size {hidden}")));
    }
    Ok(())
}

/// transformers' activation names (`ACT2FN` in `activations.py`).
pub fn activation(name: &str) -> Option<Activation> {
    Some(match name {
        "silu" | "swish" => Activation::Silu,
        "gelu" | "gelu_python" => Activation::Gelu,
        "gelu_pytorch_tanh" => Activation::GeluTanh,
        "gelu_new" | "gelu_fast" | "gelu_accurate" => Activation::GeluNew,
        "relu" => Activation::Relu,
        "relu2" => Activation::Relu2,
        _ => return None,
    })
}

pub(super) fn act(c: &Keys, key: &str, default: &str) -> Result<Activation, InputError> {
    let name = c.text(key, default)?;
    activation(&name)
        .ok_or_else(|| InputError::new(key, format!("\"{}\" is not an activation Headroom knows (silu, gelu, gelu_pytorch_tanh, gelu_new, relu)", crate::safe_text::quoted(&name))))
}

/// Sliding-window layers: those marked `sliding_attention` in `layer_types`, else every
/// `pattern`-th layer is global (Gemma-3's `sliding_window_pattern`), else all (Mistral) or
/// alternate ones (Gemma-2, gpt-oss), as the family's config class fills `layer_types`.
fn sliding(c: &Keys, t: &mut TransformerArch, window_default: Option<u64>, fallback: SlidingFallback) -> Result<(), InputError> {
    let window = match window_default {
        Some(w) => c.uint("sliding_window", w)?,
        None => match c.optional_uint("sliding_window")? {
            Some(w) => w,
            None => return Ok(()),
        },
    };
    let layers = t.layers;
    let sliding_layers = match c.strings("layer_types")? {
        Some(types) => types.iter().take(layers as usize).filter(|s| **s == "sliding_attention").count() as u64,
        None => match fallback {
            SlidingFallback::All => layers,
            SlidingFallback::EvenLayers => layers.div_ceil(2),
            SlidingFallback::Pattern(default) => {
                let pattern = c.uint_or("sliding_window_pattern", default)?;
                layers - layers / pattern
            }
        },
    };
    t.attention.sliding_window = window;
    t.attention.sliding_layers = sliding_layers;
    Ok(())
}

enum SlidingFallback {
    All,
    EvenLayers,
    Pattern(u64),
}

/// `LlamaConfig` (and Llama-shaped families such as Granite).
pub fn llama(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: None, ffn: 11008, vocab: 32000, head_dim: None, tied: false })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    Ok(t)
}

/// `GraniteConfig`: Llama's module tree; its multipliers scale values, not shapes.
pub fn granite(c: &Keys) -> Result<TransformerArch, InputError> {
    llama(c)
}

/// `MistralConfig`: Llama without biases, GQA 32/8 and a 4096-token sliding window by default.
pub fn mistral(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 32000, head_dim: None, tied: false })?;
    sliding(c, &mut t, None, SlidingFallback::All)?;
    Ok(t)
}

/// `MixtralConfig`: Mistral with 8 experts, top-2, in every block.
pub fn mixtral(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 32000, head_dim: None, tied: false })?;
    sliding(c, &mut t, None, SlidingFallback::All)?;
    t.moe = Some(MoePart { experts: c.uint("num_local_experts", 8)?, top_k: c.uint("num_experts_per_tok", 2)?, expert_ffn: t.mlp.ffn, ..MoePart::default() });
    Ok(t)
}

/// `Qwen2Config`: Llama with Q/K/V biases.
pub fn qwen2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: None, ffn: 22016, vocab: 151936, head_dim: None, tied: false })?;
    t.attention.qkv_bias = true;
    if c.flag("use_sliding_window", false)? {
        sliding(c, &mut t, Some(4096), SlidingFallback::All)?;
    }
    Ok(t)
}

/// MoE keys shared by the Qwen MoE families: `decoder_sparse_step`, `mlp_only_layers`.
fn qwen_moe(c: &Keys, experts_default: u64, top_k: u64, expert_ffn: u64) -> Result<MoePart, InputError> {
    let experts = if c.has("num_experts") { c.uint("num_experts", experts_default)? } else { c.uint("num_local_experts", experts_default)? };
    if let Some(serde_json::Value::Array(list)) = c.get("mlp_only_layers") {
        if !list.is_empty() {
            return Err(InputError::new("mlp_only_layers", "a list of dense layers is not supported yet (only decoder_sparse_step)"));
        }
    }
    Ok(MoePart {
        experts,
        top_k: c.uint("num_experts_per_tok", top_k)?,
        expert_ffn: c.uint("moe_intermediate_size", expert_ffn)?,
        every: c.uint_or("decoder_sparse_step", 1)?,
        router: if c.flag("norm_topk_prob", false)? { Router::SoftmaxNormalized } else { Router::SoftmaxRaw },
        ..MoePart::default()
    })
}

/// `Qwen2MoeConfig`: Qwen2 attention, 60 experts top-4, one shared expert with a sigmoid gate.
pub fn qwen2_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 24, heads: 16, kv_heads: None, ffn: 5632, vocab: 151936, head_dim: None, tied: false })?;
    t.attention.qkv_bias = c.flag("qkv_bias", true)?;
    let mut moe = qwen_moe(c, 60, 4, 1408)?;
    moe.shared_ffn = c.count("shared_expert_intermediate_size", 5632)?;
    moe.shared_gate = moe.shared_ffn > 0;
    t.moe = Some(moe);
    Ok(t)
}

/// `Qwen3Config`: Llama with a per-head q/k RMSNorm and a 128-wide head by default.
pub fn qwen3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: None, ffn: 22016, vocab: 151936, head_dim: Some(128), tied: false })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.attention.qk_norm = QkNorm::PerHead;
    Ok(t)
}

/// `Qwen3MoeConfig`: Qwen3 attention, 128 experts top-8 of width 768, no shared expert.
/// Unlike `Qwen3Config`, the class has no `head_dim` field: without the key the attention
/// uses hidden / heads (`getattr(config, "head_dim", …)` in `modeling_qwen3_moe.py`).
pub fn qwen3_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 24, heads: 32, kv_heads: Some(4), ffn: 6144, vocab: 151936, head_dim: None, tied: false })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.attention.qk_norm = QkNorm::PerHead;
    t.moe = Some(qwen_moe(c, 128, 8, 768)?);
    Ok(t)
}

/// The Gemma family's shared parts: `GemmaRMSNorm`, tanh-GELU gated MLP, tied head.
fn gemma_base(c: &Keys, d: &Defaults) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, d)?;
    t.norm.kind = NormKind::GemmaRmsnorm;
    let key = if c.has("hidden_activation") || !c.has("hidden_act") { "hidden_activation" } else { "hidden_act" };
    t.mlp.activation = act(c, key, "gelu_pytorch_tanh")?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    Ok(t)
}

/// `GemmaConfig` (Gemma 1): 256-wide heads, embeddings scaled by √h.
pub fn gemma(c: &Keys) -> Result<TransformerArch, InputError> {
    gemma_base(c, &Defaults { hidden: 3072, layers: 28, heads: 16, kv_heads: Some(16), ffn: 24576, vocab: 256000, head_dim: Some(256), tied: true })
}

/// `Gemma2Config`: sandwich norms, soft-capped attention and final logits, alternating
/// sliding (4096) and global layers.
pub fn gemma2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = gemma_base(c, &Defaults { hidden: 2304, layers: 26, heads: 8, kv_heads: Some(4), ffn: 9216, vocab: 256000, head_dim: Some(256), tied: true })?;
    t.norm.placement = Placement::Sandwich;
    t.attention.softcap = c.number("attn_logit_softcapping", 50.0)? != 0.0;
    t.embedding.logit_softcap = c.number("final_logit_softcapping", 30.0)? != 0.0;
    sliding(c, &mut t, Some(4096), SlidingFallback::EvenLayers)?;
    Ok(t)
}

/// `Gemma3TextConfig`: Gemma-2's sandwich norms plus per-head q/k norms, five sliding
/// (512…4096) layers per global one, no soft-capping by default.
pub fn gemma3_text(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = gemma_base(c, &Defaults { hidden: 2304, layers: 26, heads: 8, kv_heads: Some(4), ffn: 9216, vocab: 262208, head_dim: Some(256), tied: true })?;
    t.norm.placement = Placement::Sandwich;
    t.attention.qk_norm = QkNorm::PerHead;
    t.attention.softcap = c.number("attn_logit_softcapping", 0.0)? != 0.0;
    t.embedding.logit_softcap = c.number("final_logit_softcapping", 0.0)? != 0.0;
    sliding(c, &mut t, Some(4096), SlidingFallback::Pattern(6))?;
    Ok(t)
}

/// `Phi3Config` (Phi-3, Phi-4): one fused `qkv_proj` and one fused `gate_up_proj`.
pub fn phi3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 3072, layers: 32, heads: 32, kv_heads: None, ffn: 8192, vocab: 32064, head_dim: None, tied: false })?;
    t.attention.fused_qkv = true;
    t.attention.rotary_cat = true;
    t.mlp.fused_gate_up = true;
    sliding(c, &mut t, None, SlidingFallback::All)?;
    Ok(t)
}

/// `PhiConfig` (Phi-1/1.5/2): parallel attention and MLP on one LayerNorm, biases
/// everywhere (LM head included), a non-gated `gelu_new` MLP, partial rotary.
pub fn phi(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 24, heads: 32, kv_heads: None, ffn: 8192, vocab: 51200, head_dim: None, tied: false })?;
    if c.flag("qk_layernorm", false)? {
        return Err(InputError::new("qk_layernorm", "Phi's q/k LayerNorm is not supported yet"));
    }
    t.norm = NormPart { kind: NormKind::Layernorm, placement: Placement::ParallelShared };
    t.attention.qkv_bias = true;
    t.attention.out_bias = true;
    t.attention.rotary_dim = partial_rotary(c, t.attention.head_dim, 0.5)?;
    t.attention.rotary_cat = true;
    t.mlp = MlpPart { ffn: t.mlp.ffn, activation: act(c, "hidden_act", "gelu_new")?, gated: false, fused_gate_up: false, bias: true };
    t.embedding.head_bias = true;
    Ok(t)
}

/// Rotary width from `partial_rotary_factor` / `rotary_pct` (default `fraction`).
fn partial_rotary(c: &Keys, head_dim: u64, fraction: f64) -> Result<u64, InputError> {
    let key = if c.has("rotary_pct") { "rotary_pct" } else { "partial_rotary_factor" };
    let f = match c.get(key) {
        None => fraction,
        Some(v) => v.as_f64().filter(|x| (0.0..=1.0).contains(x)).ok_or_else(|| InputError::new(key, format!("must be a fraction between 0 and 1, got {v}")))?,
    };
    Ok(((head_dim as f64 * f) as u64).max(1))
}

/// DeepSeek's Multi-head Latent Attention and routed + shared experts after
/// `first_k_dense_replace` dense blocks (`modeling_deepseek_v2.py`, `modeling_deepseek_v3.py`).
#[allow(clippy::too_many_arguments)]
fn deepseek(c: &Keys, d: &Defaults, q_lora: u64, experts: u64, top_k: u64, expert_ffn: u64, shared: u64, first_dense: u64, router: Router) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, d)?;
    let latent = LatentAttention {
        // `q_lora_rank: null` (DeepSeek-V2-Lite) means a direct q_proj.
        q_lora_rank: if c.is_null("q_lora_rank") { 0 } else { c.uint("q_lora_rank", q_lora)? },
        kv_lora_rank: c.uint("kv_lora_rank", 512)?,
        qk_nope_dim: c.uint("qk_nope_head_dim", 128)?,
        qk_rope_dim: c.uint("qk_rope_head_dim", 64)?,
        v_head_dim: c.uint("v_head_dim", 128)?,
    };
    t.attention.head_dim = latent.qk_nope_dim + latent.qk_rope_dim;
    t.attention.kv_heads = t.attention.heads;
    t.attention.rotary_dim = latent.qk_rope_dim;
    t.attention.qkv_bias = c.flag("attention_bias", false)?;
    t.attention.out_bias = t.attention.qkv_bias;
    t.attention.latent = Some(latent);
    let expert_ffn = c.uint("moe_intermediate_size", expert_ffn)?;
    t.moe = Some(MoePart {
        experts: c.uint("n_routed_experts", experts)?,
        top_k: c.uint("num_experts_per_tok", top_k)?,
        expert_ffn,
        shared_ffn: c.count("n_shared_experts", shared)? * expert_ffn,
        first_dense: c.count("first_k_dense_replace", first_dense)?,
        router,
        ..MoePart::default()
    });
    Ok(t)
}

/// `DeepseekV2Config` (V2, V2-Lite: `q_lora_rank: null` gives a direct `q_proj`).
pub fn deepseek_v2(c: &Keys) -> Result<TransformerArch, InputError> {
    let d = Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: None, ffn: 11008, vocab: 102400, head_dim: None, tied: false };
    deepseek(c, &d, 1536, 64, 6, 1407, 2, 0, Router::SoftmaxGreedy)
}

/// `DeepseekV3Config`: 256 routed experts top-8, one shared, three dense blocks first.
/// The multi-token-prediction block (`num_nextn_predict_layers`) is not built by transformers.
pub fn deepseek_v3(c: &Keys) -> Result<TransformerArch, InputError> {
    let d = Defaults { hidden: 7168, layers: 61, heads: 128, kv_heads: None, ffn: 18432, vocab: 129280, head_dim: None, tied: false };
    deepseek(c, &d, 1536, 256, 8, 2048, 1, 3, Router::SigmoidGrouped)
}

/// `GptOssConfig`: biased attention with learned sinks, alternating 128-token sliding and
/// full layers, experts with biases behind a biased router in every block.
pub fn gpt_oss(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2880, layers: 36, heads: 64, kv_heads: Some(8), ffn: 2880, vocab: 201088, head_dim: Some(64), tied: false })?;
    t.attention.qkv_bias = c.flag("attention_bias", true)?;
    t.attention.out_bias = t.attention.qkv_bias;
    t.attention.sinks = true;
    sliding(c, &mut t, Some(128), SlidingFallback::EvenLayers)?;
    t.norm.kind = NormKind::RmsnormFp32Weight;
    t.mlp.activation = Activation::SwigluClamped;
    t.moe = Some(MoePart {
        experts: c.uint("num_local_experts", 128)?,
        top_k: c.uint("num_experts_per_tok", 4)?,
        expert_ffn: t.mlp.ffn,
        router_bias: true,
        expert_bias: true,
        router: Router::TopKSoftmax,
        ..MoePart::default()
    });
    Ok(t)
}

/// `Olmo2Config`: norms after each sublayer (before the residual add) and q/k norms over
/// the full projection width.
pub fn olmo2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: None, ffn: 11008, vocab: 50304, head_dim: None, tied: false })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.attention.qk_norm = QkNorm::Full;
    t.norm = NormPart { kind: NormKind::RmsnormFp32Weight, placement: Placement::PostSublayer };
    Ok(t)
}

/// `GraniteMoeConfig`: Granite attention with 8 experts top-2 (fused `input_linear`).
pub fn granitemoe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = llama(c)?;
    t.moe = Some(MoePart { experts: c.uint("num_local_experts", 8)?, top_k: c.uint("num_experts_per_tok", 2)?, expert_ffn: t.mlp.ffn, ..MoePart::default() });
    Ok(t)
}

/// `FalconConfig`: fused `query_key_value`, multi-query (7B) or grouped (`new_decoder_architecture`,
/// 40B/180B), parallel attention and MLP, LayerNorm, a non-gated GELU MLP of 4h, tied head.
pub fn falcon(c: &Keys) -> Result<TransformerArch, InputError> {
    let hidden = c.uint("hidden_size", 4544)?;
    let heads = c.uint("num_attention_heads", 71)?;
    let new_arch = c.flag("new_decoder_architecture", false)?;
    let kv_heads = if new_arch {
        c.uint_or("num_kv_heads", heads)?
    } else if c.flag("multi_query", true)? {
        1
    } else {
        heads
    };
    check_heads(hidden, heads, kv_heads)?;
    let head_dim = hidden / heads;
    let bias = c.flag("bias", false)?;
    let parallel = c.flag("parallel_attn", true)?;
    let placement = if new_arch {
        if c.uint_or("num_ln_in_parallel_attn", 2)? == 2 {
            Placement::ParallelTwo
        } else {
            Placement::ParallelShared
        }
    } else if parallel {
        Placement::ParallelShared
    } else {
        Placement::Pre
    };
    let alibi = c.flag("alibi", false)?;
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden,
        layers: c.uint("num_hidden_layers", 32)?,
        vocab: c.uint("vocab_size", 65024)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart {
            heads,
            kv_heads,
            head_dim,
            fused_qkv: true,
            qkv_bias: bias,
            out_bias: bias,
            rotary_dim: if alibi { 0 } else { head_dim },
            cache_all_heads: new_arch,
            always_masked: true,
            ..AttentionPart::default()
        },
        norm: NormPart { kind: NormKind::Layernorm, placement },
        mlp: MlpPart { ffn: c.uint_or("ffn_hidden_size", 4 * hidden)?, activation: act(c, "activation", "gelu")?, gated: false, fused_gate_up: false, bias },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// `GPTNeoXConfig` (Pythia, GPT-NeoX-20B): fused biased `query_key_value`, parallel residual
/// with two LayerNorms, a non-gated GELU MLP with biases, partial rotary, untied `embed_out`.
pub fn gpt_neox(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 6144, layers: 44, heads: 64, kv_heads: None, ffn: 24576, vocab: 50432, head_dim: None, tied: false })?;
    let bias = c.flag("attention_bias", true)?;
    t.attention.fused_qkv = true;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.attention.rotary_dim = partial_rotary(c, t.attention.head_dim, 0.25)?;
    t.attention.rotary_cat = true;
    let parallel = c.flag("use_parallel_residual", true)?;
    t.norm = NormPart { kind: NormKind::Layernorm, placement: if parallel { Placement::ParallelTwo } else { Placement::Pre } };
    t.mlp = MlpPart { ffn: t.mlp.ffn, activation: act(c, "hidden_act", "gelu")?, gated: false, fused_gate_up: false, bias: true };
    Ok(t)
}

/// `Starcoder2Config`: biased projections, LayerNorm, a non-gated tanh-GELU MLP, GQA,
/// tied head.
pub fn starcoder2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 3072, layers: 30, heads: 24, kv_heads: Some(2), ffn: 12288, vocab: 49152, head_dim: None, tied: true })?;
    let bias = c.flag("use_bias", true)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.norm = NormPart { kind: NormKind::Layernorm, placement: Placement::Pre };
    t.mlp = MlpPart { ffn: t.mlp.ffn, activation: act(c, "hidden_act", "gelu_pytorch_tanh")?, gated: false, fused_gate_up: false, bias };
    sliding(c, &mut t, None, SlidingFallback::All)?;
    Ok(t)
}

/// `CohereConfig` (Command-R): parallel attention and SwiGLU on one bias-free LayerNorm,
/// optional per-head q/k LayerNorms, tied head.
pub fn cohere(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 8192, layers: 40, heads: 64, kv_heads: None, ffn: 22528, vocab: 256000, head_dim: None, tied: true })?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    if c.flag("use_qk_norm", false)? {
        t.attention.qk_norm = QkNorm::PerHeadWeights;
    }
    t.norm = NormPart { kind: NormKind::CohereLayernorm, placement: Placement::ParallelShared };
    Ok(t)
}

/// `GPT2Config`: fused biased `c_attn`, learned positions, op-by-op `gelu_new`, tied head.
pub fn gpt2(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("n_embd", 768)?;
    let heads = c.uint("n_head", 12)?;
    check_heads(h, heads, heads)?;
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layer", 12)?,
        vocab: c.uint("vocab_size", 50257)?,
        embedding: EmbeddingPart { max_positions: c.uint("n_positions", 1024)?, tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, fused_qkv: true, qkv_bias: true, out_bias: true, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: c.uint_or("n_inner", 4 * h)?, activation: act(c, "activation_function", "gelu_new")?, gated: false, fused_gate_up: false, bias: true },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

// ---------------------------------------------------------------------------------------
// Families added from the family sweep (tests/fixtures/measured/family_sweep.json): each
// matches transformers 5.24's parameter count exactly unless its doc comment says otherwise.
// ---------------------------------------------------------------------------------------

/// The rotary fraction of transformers 5's `rope_parameters.partial_rotary_factor`, else the
/// top-level `partial_rotary_factor` of older config.json files, else `fraction`.
pub(super) fn rope_fraction(c: &Keys, head_dim: u64, fraction: f64) -> Result<u64, InputError> {
    if let Some(f) = c.nested("rope_parameters").and_then(|r| r.get("partial_rotary_factor")).and_then(serde_json::Value::as_f64) {
        if (0.0..=1.0).contains(&f) {
            return Ok(((head_dim as f64 * f) as u64).max(1));
        }
        return Err(InputError::new("rope_parameters.partial_rotary_factor", format!("must be a fraction between 0 and 1, got {f}")));
    }
    partial_rotary(c, head_dim, fraction)
}

/// Q/K/V biases from `attention_bias`, and the output projection's from `out_key` (its own
/// key, or `attention_bias` again where the family ties them).
fn attention_biases(c: &Keys, t: &mut TransformerArch, default: bool, out_key: Option<(&str, bool)>) -> Result<(), InputError> {
    t.attention.qkv_bias = c.flag("attention_bias", default)?;
    t.attention.out_bias = match out_key {
        Some((key, d)) => c.flag(key, d)?,
        None => t.attention.qkv_bias,
    };
    Ok(())
}

/// An activation for a family whose default transformers' `ACT2FN` name Headroom does not
/// model by name: `relu2` (squared ReLU: Nemotron, Arcee) is counted as ReLU (same
/// parameters; its saved activations are those of ReLU plus the square's input).
fn act_or_relu2(c: &Keys, key: &str, default: &str) -> Result<Activation, InputError> {
    let name = c.text(key, default)?;
    match name.as_str() {
        "relu2" => {
            c.note(format!("{key} \"relu2\" (squared ReLU) is modelled as ReLU for activation memory; parameters are exact"));
            Ok(Activation::Relu)
        }
        other => activation(other).ok_or_else(|| {
            InputError::new(key, format!("\"{}\" is not an activation Headroom knows (silu, gelu, gelu_pytorch_tanh, gelu_new, relu, relu2)", crate::safe_text::quoted(other)))
        }),
    }
}

/// A list of MoE layer indices (`moe_layers`) as Headroom's `first_dense` / `every` rule
/// (`i >= first_dense && (i + 1) % every == 0`), when one reproduces it exactly.
pub fn moe_layer_rule(key: &str, list: &[u64], layers: u64) -> Result<Option<(u64, u64)>, InputError> {
    let wanted: Vec<u64> = list.iter().copied().filter(|i| *i < layers).collect();
    if wanted.is_empty() {
        return Ok(None);
    }
    for every in 1..=layers {
        for first_dense in 0..layers {
            let by_rule: Vec<u64> = (0..layers).filter(|i| *i >= first_dense && (i + 1) % every == 0).collect();
            if by_rule == wanted {
                return Ok(Some((first_dense, every)));
            }
        }
    }
    Err(InputError::new(key, format!("MoE layers {wanted:?} follow no \"dense first, then every n-th\" pattern; Headroom cannot model this layout yet")))
}

/// A whole-number list key (`moe_layers`), if present.
fn uint_list_opt(c: &Keys, key: &str) -> Result<Option<Vec<u64>>, InputError> {
    match c.get(key) {
        None => Ok(None),
        Some(serde_json::Value::Array(items)) => {
            items.iter().map(|v| v.as_u64().ok_or_else(|| InputError::new(key, format!("every entry must be a whole number, got {v}")))).collect::<Result<Vec<_>, _>>().map(Some)
        }
        Some(v) => Err(InputError::new(key, format!("must be a list of whole numbers, got {v}"))),
    }
}

/// A count that some configs write per layer (`[64, 64, …]`, HunYuan): one value, or a list
/// whose entries all agree.
fn uniform_count(c: &Keys, key: &str, default: u64) -> Result<u64, InputError> {
    match c.get(key) {
        Some(serde_json::Value::Array(items)) => {
            let first = items.first().and_then(serde_json::Value::as_u64).ok_or_else(|| InputError::new(key, "must be a positive whole number or a list of them"))?;
            if items.iter().any(|v| v.as_u64() != Some(first)) {
                return Err(InputError::new(key, "a different value per layer is not supported yet"));
            }
            if first == 0 {
                return Err(InputError::new(key, "must be at least 1"));
            }
            Ok(first)
        }
        _ => c.uint(key, default),
    }
}

/// `Llama4TextConfig` (Llama-4 Scout / Maverick text model, `modeling_llama4.py`
/// `Llama4TextDecoderLayer`): Llama attention (its q/k L2 norm has no weights), MoE blocks
/// at `moe_layers` (default every `interleave_moe_layer_step`-th) with a router, routed
/// experts of `intermediate_size` and one shared expert of the same width; the other
/// blocks a dense SwiGLU of `intermediate_size_mlp`. Chunked-attention layers
/// (`attention_chunk_size`) are modelled as sliding-window layers of that size.
pub fn llama4_text(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 5120, layers: 48, heads: 40, kv_heads: Some(8), ffn: 16384, vocab: 202048, head_dim: Some(128), tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.mlp.ffn = c.uint("intermediate_size_mlp", 16384)?;
    let expert_ffn = c.uint("intermediate_size", 8192)?;
    let rule = match uint_list_opt(c, "moe_layers")? {
        Some(list) => moe_layer_rule("moe_layers", &list, t.layers)?,
        None => Some((0, c.uint_or("interleave_moe_layer_step", 1)?)),
    };
    if let Some((first_dense, every)) = rule {
        t.moe = Some(MoePart {
            experts: c.uint("num_local_experts", 16)?,
            top_k: c.uint("num_experts_per_tok", 1)?,
            expert_ffn,
            shared_ffn: expert_ffn,
            first_dense,
            every,
            router: Router::TopKSoftmax,
            ..MoePart::default()
        });
    }
    if let (Some(chunk), Some(types)) = (c.optional_uint("attention_chunk_size")?, c.strings("layer_types")?) {
        t.attention.sliding_window = chunk;
        t.attention.sliding_layers = types.iter().take(t.layers as usize).filter(|s| **s == "chunked_attention").count() as u64;
    }
    Ok(t)
}

/// `OlmoeConfig` (`modeling_olmoe.py` `OlmoeDecoderLayer`): OLMo attention with q/k RMSNorms
/// over the full projection, 64 experts top-8 of `intermediate_size` in every block.
pub fn olmoe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 16, heads: 16, kv_heads: None, ffn: 2048, vocab: 50304, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.qk_norm = QkNorm::Full;
    let experts = if c.has("num_experts") { c.uint("num_experts", 64)? } else { c.uint("num_local_experts", 64)? };
    let router = if c.flag("norm_topk_prob", false)? { Router::SoftmaxNormalized } else { Router::SoftmaxRaw };
    t.moe = Some(MoePart { experts, top_k: c.uint("num_experts_per_tok", 8)?, expert_ffn: t.mlp.ffn, router, ..MoePart::default() });
    Ok(t)
}

/// `PhimoeConfig` (Phi-3.5-MoE, `modeling_phimoe.py` `PhimoeDecoderLayer`): Mixtral's
/// experts (16, top-2) behind LayerNorms with biases, optional attention and LM-head biases.
pub fn phimoe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 6400, vocab: 32064, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.norm = NormPart { kind: NormKind::Layernorm, placement: Placement::Pre };
    t.embedding.head_bias = c.flag("lm_head_bias", false)?;
    sliding(c, &mut t, None, SlidingFallback::All)?;
    t.moe = Some(MoePart { experts: c.uint("num_local_experts", 16)?, top_k: c.uint("num_experts_per_tok", 2)?, expert_ffn: t.mlp.ffn, ..MoePart::default() });
    Ok(t)
}

/// `GlmConfig` (GLM-4-9B, `modeling_glm.py` `GlmDecoderLayer`): Q/K/V biases, a fused
/// `gate_up_proj`, half-width rotary.
pub fn glm(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 40, heads: 32, kv_heads: Some(2), ffn: 13696, vocab: 151552, head_dim: Some(128), tied: false })?;
    t.attention.qkv_bias = c.flag("attention_bias", true)?;
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 0.5)?;
    t.mlp.fused_gate_up = true;
    Ok(t)
}

/// `Glm4Config` (GLM-4-0414, `modeling_glm4.py` `Glm4DecoderLayer`): GLM with a norm after
/// attention and after the MLP as well (four per block).
pub fn glm4(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = glm(c)?;
    t.norm.placement = Placement::Sandwich;
    Ok(t)
}

/// `Glm4MoeConfig` (GLM-4.5 / 4.6 / 4.7, `modeling_glm4_moe.py` `Glm4MoeDecoderLayer`):
/// Q/K/V biases, optional per-head q/k norms, half-width rotary, `first_k_dense_replace`
/// dense blocks, then 128 routed experts top-8 plus `n_shared_experts` shared ones behind
/// a sigmoid router (its `e_score_correction_bias` is a buffer, not a parameter). The
/// multi-token-prediction layers (`num_nextn_predict_layers`) are not built by transformers.
pub fn glm4_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 46, heads: 96, kv_heads: Some(8), ffn: 10944, vocab: 151552, head_dim: None, tied: false })?;
    t.attention.qkv_bias = c.flag("attention_bias", false)?;
    if c.flag("use_qk_norm", false)? {
        t.attention.qk_norm = QkNorm::PerHead;
    }
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 0.5)?;
    let expert_ffn = c.uint("moe_intermediate_size", 1408)?;
    let experts = if c.has("n_routed_experts") { c.uint("n_routed_experts", 128)? } else { c.uint("num_local_experts", 128)? };
    t.moe = Some(MoePart {
        experts,
        top_k: c.uint("num_experts_per_tok", 8)?,
        expert_ffn,
        shared_ffn: c.count("n_shared_experts", 1)? * expert_ffn,
        first_dense: c.count("first_k_dense_replace", 1)?,
        router: Router::SigmoidGrouped,
        ..MoePart::default()
    });
    Ok(t)
}

/// `SmolLM3Config` (`modeling_smollm3.py`): Llama's modules (the no-RoPE layers have no
/// parameters of their own), tied head, optional sliding window.
pub fn smollm3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 36, heads: 16, kv_heads: Some(4), ffn: 11008, vocab: 128256, head_dim: None, tied: true })?;
    attention_biases(c, &mut t, false, None)?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    if c.flag("use_sliding_window", false)? {
        sliding(c, &mut t, None, SlidingFallback::All)?;
    }
    Ok(t)
}

/// `Ernie4_5Config` (ERNIE-4.5 0.3B, `modeling_ernie4_5.py`): Llama with every projection
/// biased by `use_bias`, tied head.
pub fn ernie4_5(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 1024, layers: 18, heads: 16, kv_heads: Some(2), ffn: 3072, vocab: 103424, head_dim: Some(128), tied: true })?;
    let bias = c.flag("use_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.mlp.bias = bias;
    Ok(t)
}

/// `Ernie4_5_MoeConfig` (ERNIE-4.5 21B-A3B / 300B-A47B, `modeling_ernie4_5_moe.py`
/// `Ernie4_5_MoeDecoderLayer`): MoE in blocks `moe_layer_start_index ..= moe_layer_end_index`
/// with `(i + 1) % moe_layer_interval == 0`, 64 experts top-6 plus `moe_num_shared_experts`
/// shared ones, a router whose `e_score_correction_bias` is a parameter, `use_bias` on every
/// projection (dense and shared MLPs included, the fused routed experts excepted) and on the
/// LM head.
pub fn ernie4_5_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2560, layers: 28, heads: 20, kv_heads: Some(4), ffn: 12288, vocab: 103424, head_dim: None, tied: true })?;
    let bias = c.flag("use_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.mlp.bias = bias;
    t.embedding.head_bias = bias;
    let start = c.count("moe_layer_start_index", 1)?;
    let end = match c.get("moe_layer_end_index") {
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(-1) => t.layers - 1,
        _ => c.count("moe_layer_end_index", 27)?,
    };
    if end < t.layers - 1 {
        return Err(InputError::new("moe_layer_end_index", format!("dense blocks after the last MoE block ({end} of {}) are not supported yet", t.layers)));
    }
    let expert_ffn = c.uint("moe_intermediate_size", 1536)?;
    t.moe = Some(MoePart {
        // `num_experts` / `num_experts_per_tok` are renamed to these (`hf_config::ATTRIBUTE_MAP`).
        experts: c.uint("moe_num_experts", 64)?,
        top_k: c.uint("moe_k", 6)?,
        expert_ffn,
        shared_ffn: c.count("moe_num_shared_experts", 2)? * expert_ffn,
        first_dense: start,
        every: c.uint_or("moe_layer_interval", 1)?,
        router_bias: true,
        router: Router::SoftmaxNormalized,
        ..MoePart::default()
    });
    Ok(t)
}

/// `Cohere2Config` (Command-R7B, Command-A, `modeling_cohere2.py` `Cohere2DecoderLayer`):
/// Cohere's parallel block on one bias-free LayerNorm, three sliding-window layers per
/// global one.
pub fn cohere2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 8192, layers: 40, heads: 64, kv_heads: None, ffn: 22528, vocab: 256000, head_dim: None, tied: true })?;
    attention_biases(c, &mut t, false, None)?;
    t.norm = NormPart { kind: NormKind::CohereLayernorm, placement: Placement::ParallelShared };
    sliding(c, &mut t, Some(4096), SlidingFallback::Pattern(4))?;
    Ok(t)
}

/// `Exaone4Config` (EXAONE-4.0, `modeling_exaone4.py` `Exaone4DecoderLayer`): norms after
/// each sublayer (OLMo-2 style), per-head q/k RMSNorms, sliding layers from `layer_types`.
pub fn exaone4(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 16384, vocab: 102400, head_dim: None, tied: false })?;
    t.attention.qk_norm = QkNorm::PerHead;
    t.norm.placement = Placement::PostSublayer;
    if c.strings("layer_types")?.is_some() || c.has("sliding_window_pattern") {
        sliding(c, &mut t, None, SlidingFallback::Pattern(4))?;
    }
    Ok(t)
}

/// `HunYuanDenseV1Config` (Hunyuan dense, `modeling_hunyuan_v1_dense.py`): Llama with
/// per-head q/k RMSNorms (`query_layernorm`, `key_layernorm`).
pub fn hunyuan_v1_dense(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 11008, vocab: 290943, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.qk_norm = QkNorm::PerHead;
    Ok(t)
}

/// `HunYuanMoEV1Config` (Hunyuan-A13B, `modeling_hunyuan_v1_moe.py` `HunYuanMoEV1Moe`):
/// HunYuan attention, and in every block a shared SwiGLU plus routed experts, both of
/// `intermediate_size`, behind a bias-free router. Per-layer lists of expert counts must agree.
pub fn hunyuan_v1_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = hunyuan_v1_dense(c)?;
    let experts = if c.has("num_experts") { uniform_count(c, "num_experts", 1)? } else { uniform_count(c, "num_local_experts", 1)? };
    let top_k = if c.has("moe_topk") { uniform_count(c, "moe_topk", 1)? } else { c.uint("num_experts_per_tok", 1)? };
    t.moe = Some(MoePart { experts, top_k, expert_ffn: t.mlp.ffn, shared_ffn: t.mlp.ffn, ..MoePart::default() });
    Ok(t)
}

/// `SeedOssConfig` (Seed-OSS-36B, `modeling_seed_oss.py` `SeedOssAttention`): Llama with
/// Q/K/V biases (`attention_bias`) and a separate `attention_out_bias`.
pub fn seed_oss(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 64, heads: 80, kv_heads: Some(8), ffn: 27648, vocab: 155136, head_dim: Some(128), tied: false })?;
    attention_biases(c, &mut t, true, Some(("attention_out_bias", false)))?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    Ok(t)
}

/// `HeliumConfig` (Kyutai Helium, `modeling_helium.py`): Llama with Q/K/V biases only
/// (`o_proj` has none).
pub fn helium(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2560, layers: 24, heads: 20, kv_heads: Some(20), ffn: 7040, vocab: 48000, head_dim: Some(128), tied: false })?;
    t.attention.qkv_bias = c.flag("attention_bias", false)?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    Ok(t)
}

/// `MinistralConfig` (Ministral-8B, `modeling_ministral.py`): Mistral with sliding-window
/// layers from `layer_types`.
pub fn ministral(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 32000, head_dim: None, tied: false })?;
    sliding(c, &mut t, None, SlidingFallback::All)?;
    Ok(t)
}

/// `Ministral3Config` (Ministral-3 / Mistral-Small-3.x text model, `modeling_ministral3.py`):
/// Mistral's modules with 128-wide heads by default.
pub fn ministral3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 34, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 131072, head_dim: Some(128), tied: false })?;
    sliding(c, &mut t, None, SlidingFallback::All)?;
    Ok(t)
}

/// `StableLmConfig` (StableLM-2, `modeling_stablelm.py` `StableLmDecoderLayer`): LayerNorms
/// with biases, optional Q/K/V biases (`use_qkv_bias`), optional per-head bias-free q/k
/// LayerNorms (`qk_layernorm`), optional parallel residual on one norm, quarter rotary.
pub fn stablelm(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2560, layers: 32, heads: 32, kv_heads: Some(32), ffn: 6912, vocab: 50304, head_dim: None, tied: false })?;
    t.attention.qkv_bias = c.flag("use_qkv_bias", false)?;
    if c.flag("qk_layernorm", false)? {
        t.attention.qk_norm = QkNorm::PerHeadWeights;
    }
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 0.25)?;
    let parallel = c.flag("use_parallel_residual", false)?;
    t.norm = NormPart { kind: NormKind::Layernorm, placement: if parallel { Placement::ParallelShared } else { Placement::Pre } };
    t.mlp.activation = act(c, "hidden_act", "silu")?;
    Ok(t)
}

/// `NemotronConfig` (Nemotron-3/4, Minitron, `modeling_nemotron.py`): `LayerNorm1P` (weight
/// and bias), a non-gated squared-ReLU MLP, half-width rotary, optional biases.
pub fn nemotron(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 6144, layers: 32, heads: 48, kv_heads: None, ffn: 24576, vocab: 256000, head_dim: Some(128), tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 0.5)?;
    t.norm = NormPart { kind: NormKind::Layernorm, placement: Placement::Pre };
    t.mlp = MlpPart { ffn: t.mlp.ffn, activation: act_or_relu2(c, "hidden_act", "relu2")?, gated: false, fused_gate_up: false, bias: c.flag("mlp_bias", false)? };
    Ok(t)
}

/// `ArceeConfig` (AFM-4.5B, `modeling_arcee.py` `ArceeMLP`): Llama with a non-gated
/// squared-ReLU MLP.
pub fn arcee(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2560, layers: 32, heads: 32, kv_heads: None, ffn: 18432, vocab: 32000, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    let bias = c.flag("mlp_bias", false)?;
    t.mlp = MlpPart { ffn: t.mlp.ffn, activation: act_or_relu2(c, "hidden_act", "relu2")?, gated: false, fused_gate_up: false, bias };
    Ok(t)
}

/// `Olmo3Config` (OLMo-3, `modeling_olmo3.py`): OLMo-2's block with three sliding-window
/// layers per global one (`layer_types`).
pub fn olmo3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = olmo2(c)?;
    sliding(c, &mut t, Some(4096), SlidingFallback::Pattern(4))?;
    Ok(t)
}

/// `Dots1Config` (dots.llm1, `modeling_dots1.py` `Dots1DecoderLayer`): Qwen3-style attention
/// (per-head q/k norms), `first_k_dense_replace` dense blocks, then routed experts plus
/// `n_shared_experts` shared ones behind a sigmoid router (its correction bias is a buffer).
pub fn dots1(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4608, layers: 62, heads: 32, kv_heads: Some(32), ffn: 10944, vocab: 152064, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.qk_norm = QkNorm::PerHead;
    let expert_ffn = c.uint("moe_intermediate_size", 1408)?;
    for key in ["n_routed_experts", "num_experts_per_tok"] {
        if !c.has(key) {
            return Err(InputError::new(key, "missing (Dots1Config has no default for it)"));
        }
    }
    t.moe = Some(MoePart {
        experts: c.uint("n_routed_experts", 128)?,
        top_k: c.uint("num_experts_per_tok", 6)?,
        expert_ffn,
        shared_ffn: c.count("n_shared_experts", 0)? * expert_ffn,
        first_dense: c.count("first_k_dense_replace", 0)?,
        router: Router::SigmoidGrouped,
        ..MoePart::default()
    });
    if c.flag("use_sliding_window", false)? {
        sliding(c, &mut t, None, SlidingFallback::All)?;
    }
    Ok(t)
}

/// `MiniMaxM2Config` (MiniMax-M2, `modeling_minimax_m2.py` `MiniMaxM2DecoderLayer`): q/k
/// RMSNorms over the full projection, 256 experts top-8 of `intermediate_size` in every
/// block behind a sigmoid router (its correction bias is a buffer), no shared expert.
pub fn minimax_m2(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 3072, layers: 62, heads: 48, kv_heads: Some(8), ffn: 1536, vocab: 200064, head_dim: Some(128), tied: false })?;
    t.attention.qk_norm = QkNorm::Full;
    t.attention.rotary_dim = rope_fraction(c, t.attention.head_dim, 1.0)?;
    let experts = if c.has("num_local_experts") { c.uint("num_local_experts", 256)? } else { c.uint("num_experts", 256)? };
    t.moe = Some(MoePart { experts, top_k: c.uint("num_experts_per_tok", 8)?, expert_ffn: t.mlp.ffn, router: Router::SigmoidGrouped, ..MoePart::default() });
    Ok(t)
}

/// `GPTJConfig` (GPT-J-6B, `modeling_gptj.py` `GPTJBlock`): attention and MLP in parallel on
/// one LayerNorm, bias-free Q/K/V/out projections, a non-gated `gelu_new` MLP with biases
/// (`n_inner`, default 4h), partial rotary (`rotary_dim`), an untied LM head with a bias.
pub fn gptj(c: &Keys) -> Result<TransformerArch, InputError> {
    gptj_like(c, false)
}

/// `CodeGenConfig` (`modeling_codegen.py` `CodeGenBlock`): GPT-J's block with one fused
/// bias-free `qkv_proj`.
pub fn codegen(c: &Keys) -> Result<TransformerArch, InputError> {
    gptj_like(c, true)
}

fn gptj_like(c: &Keys, fused: bool) -> Result<TransformerArch, InputError> {
    let h = c.uint("n_embd", 4096)?;
    let heads = c.uint("n_head", 16)?;
    check_heads(h, heads, heads)?;
    let head_dim = h / heads;
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layer", 28)?,
        vocab: c.uint("vocab_size", 50400)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", false)?, head_bias: true, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim, fused_qkv: fused, rotary_dim: c.uint_or("rotary_dim", head_dim)?.min(head_dim), ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::ParallelShared },
        mlp: MlpPart { ffn: c.uint_or("n_inner", 4 * h)?, activation: act(c, "activation_function", "gelu_new")?, gated: false, fused_gate_up: false, bias: true },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// `GPTBigCodeConfig` (SantaCoder, StarCoder, `modeling_gpt_bigcode.py` `GPTBigCodeBlock`):
/// GPT-2's block with multi-query attention (`multi_query`, one K/V head) in one fused
/// biased `c_attn`, learned positions, a non-gated tanh-GELU MLP, tied head.
pub fn gpt_bigcode(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("n_embd", 768)?;
    let heads = c.uint("n_head", 12)?;
    let kv_heads = if c.flag("multi_query", true)? { 1 } else { heads };
    check_heads(h, heads, kv_heads)?;
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layer", 12)?,
        vocab: c.uint("vocab_size", 50257)?,
        embedding: EmbeddingPart { max_positions: c.uint("n_positions", 1024)?, tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads, head_dim: h / heads, fused_qkv: true, qkv_bias: true, out_bias: true, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: c.uint_or("n_inner", 4 * h)?, activation: act(c, "activation_function", "gelu_pytorch_tanh")?, gated: false, fused_gate_up: false, bias: true },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// `OPTConfig` (OPT-125M … 66B, `modeling_opt.py` `OPTDecoderLayer`): learned positions with
/// OPT's offset of 2 rows, biased Q/K/V/out projections, a non-gated ReLU MLP (`ffn_dim`)
/// with biases, LayerNorms, tied head. OPT-350M's differences (`word_embed_proj_dim` ≠
/// hidden with `project_in`/`project_out`, post-norm without the final norm) are counted
/// approximately, with a warning.
pub fn opt(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("hidden_size", 768)?;
    let heads = c.uint("num_attention_heads", 12)?;
    check_heads(h, heads, heads)?;
    let bias = c.flag("enable_bias", true)?;
    if c.uint_or("word_embed_proj_dim", h)? != h {
        c.note("approximate: word_embed_proj_dim differs from hidden_size; the embedding is counted at hidden_size and project_in/project_out are not counted");
    }
    if !c.flag("do_layer_norm_before", true)? {
        c.note("approximate: do_layer_norm_before = false (post-norm, no final LayerNorm) is counted as pre-norm with a final LayerNorm");
    }
    if !c.flag("layer_norm_elementwise_affine", true)? {
        c.note("approximate: LayerNorms without weights (layer_norm_elementwise_affine = false) are counted with weights and biases");
    }
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("num_hidden_layers", 12)?,
        vocab: c.uint("vocab_size", 50272)?,
        embedding: EmbeddingPart { max_positions: c.uint("max_position_embeddings", 2048)? + 2, tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, qkv_bias: bias, out_bias: bias, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: c.uint("ffn_dim", 3072)?, activation: act(c, "activation_function", "relu")?, gated: false, fused_gate_up: false, bias },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// `BloomConfig` (BLOOM, `modeling_bloom.py` `BloomBlock`): ALiBi, a fused biased
/// `query_key_value`, a non-gated GELU MLP of 4h with biases, LayerNorms, tied head.
/// Approximate by 2h: the LayerNorm on the word embeddings (`word_embeddings_layernorm`)
/// has no part in Headroom's decoder and is not counted.
pub fn bloom(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("hidden_size", 64)?;
    let heads = c.uint("n_head", 8)?;
    check_heads(h, heads, heads)?;
    c.note(format!("approximate: BLOOM's LayerNorm on the word embeddings ({} parameters) is not counted", 2 * h));
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layer", 2)?,
        vocab: c.uint("vocab_size", 250880)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, fused_qkv: true, qkv_bias: true, out_bias: true, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: 4 * h, activation: Activation::GeluNew, gated: false, fused_gate_up: false, bias: true },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// A nested config object's keys (`attn_config`, `ffn_config`), read with `f`; defaults it
/// takes are reported under `outer.key`.
fn with_nested<T>(c: &Keys, outer: &str, f: impl FnOnce(&Keys) -> Result<T, InputError>) -> Result<T, InputError> {
    let empty = serde_json::Map::new();
    let inner = Keys::new(c.nested(outer).unwrap_or(&empty));
    let out = f(&inner).map_err(|e| e.within(outer))?;
    for d in inner.defaulted() {
        c.note(format!("config.json does not set {outer}.{d}: transformers' default used"));
    }
    Ok(out)
}

/// `MptConfig` (MPT-7B/30B, `modeling_mpt.py` `MptBlock`): a fused bias-free `Wqkv`, ALiBi,
/// LayerNorms without biases, a non-gated GELU MLP of 4h without biases (transformers
/// ignores `expansion_ratio`), tied head.
pub fn mpt(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("d_model", 2048)?;
    let heads = c.uint("n_heads", 16)?;
    check_heads(h, heads, heads)?;
    let (alibi, qk_ln) = with_nested(c, "attn_config", |a| Ok((a.flag("alibi", true)?, a.flag("qk_ln", false)?)))?;
    if qk_ln {
        return Err(InputError::new("attn_config.qk_ln", "MPT's q/k LayerNorms are not supported yet"));
    }
    if !c.flag("no_bias", true)? {
        return Err(InputError::new("no_bias", "MPT with biases (no_bias = false) is not supported yet"));
    }
    let head_dim = h / heads;
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layers", 24)?,
        vocab: c.uint("vocab_size", 50368)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim, fused_qkv: true, rotary_dim: if alibi { 0 } else { head_dim }, ..AttentionPart::default() },
        // A LayerNorm whose bias is removed: h parameters, like Cohere's.
        norm: NormPart { kind: NormKind::CohereLayernorm, placement: Placement::Pre },
        // `MptMLP` is 4h wide whatever `expansion_ratio` says (`modeling_mpt.py`).
        mlp: MlpPart { ffn: 4 * h, activation: Activation::Gelu, gated: false, fused_gate_up: false, bias: false },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// `DbrxConfig` (DBRX, `modeling_dbrx.py` `DbrxBlock`): a fused bias-free `Wqkv` with
/// `attn_config.kv_n_heads` K/V heads, LayerNorms without biases, and in every block 16
/// experts top-4 (`ffn_config`) of gated width `ffn_hidden_size` behind a bias-free router.
pub fn dbrx(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("d_model", 2048)?;
    let heads = c.uint("n_heads", 16)?;
    let kv_heads = with_nested(c, "attn_config", |a| a.uint("kv_n_heads", 1))?;
    check_heads(h, heads, kv_heads)?;
    let (ffn, experts, top_k) = with_nested(c, "ffn_config", |f| Ok((f.uint("ffn_hidden_size", 3584)?, f.uint("moe_num_experts", 4)?, f.uint("moe_top_k", 1)?)))?;
    let head_dim = h / heads;
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers: c.uint("n_layers", 24)?,
        vocab: c.uint("vocab_size", 32000)?,
        embedding: EmbeddingPart { tied: c.flag("tie_word_embeddings", false)?, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads, head_dim, fused_qkv: true, rotary_dim: head_dim, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::CohereLayernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn, ..MlpPart::default() },
        moe: Some(MoePart { experts, top_k, expert_ffn: ffn, ..MoePart::default() }),
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// `GraniteMoeSharedConfig` (`modeling_granitemoeshared.py`): Granite-MoE plus a shared
/// SwiGLU expert of `shared_intermediate_size` (0: none).
pub fn granitemoeshared(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = granitemoe(c)?;
    if let Some(moe) = t.moe.as_mut() {
        moe.shared_ffn = c.count("shared_intermediate_size", 0)?;
    }
    Ok(t)
}

/// `OlmoConfig` (OLMo-1, `modeling_olmo.py` `OlmoLayerNorm`): Llama's modules, but its
/// LayerNorms have no weights at all. Approximate: Headroom's norms carry h weights, so
/// (2L + 1)·h parameters too many are counted.
pub fn olmo(c: &Keys) -> Result<TransformerArch, InputError> {
    let t = llama(c)?;
    c.note(format!("approximate: OLMo's LayerNorms have no parameters; {} norm weights are counted that the model does not have", (2 * t.layers + 1) * t.hidden));
    Ok(t)
}

/// A family transformers builds as `LlamaForCausalLM` from a configuration class of its own
/// defaults (its `attribute_map` spellings are renamed by `hf_config::ATTRIBUTE_MAP` first).
fn llama_alias(c: &Keys, d: &Defaults) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, d)?;
    let bias = c.flag("attention_bias", false)?;
    t.attention.qkv_bias = bias;
    t.attention.out_bias = bias;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    Ok(t)
}

/// `ExaoneConfig` (EXAONE-3.x, built as `LlamaForCausalLM`; `configuration_exaone.py`):
/// Llama's modules, GQA 32/8 by default.
pub fn exaone(c: &Keys) -> Result<TransformerArch, InputError> {
    llama_alias(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 102400, head_dim: None, tied: false })
}

/// `InternLM3Config` (built as `LlamaForCausalLM`; `configuration_internlm3.py`): Llama's
/// modules, 128-wide heads by default.
pub fn internlm3(c: &Keys) -> Result<TransformerArch, InputError> {
    llama_alias(c, &Defaults { hidden: 4096, layers: 48, heads: 32, kv_heads: Some(2), ffn: 10240, vocab: 128512, head_dim: Some(128), tied: false })
}

/// `IQuestCoderConfig` (built as `LlamaForCausalLM`; `configuration_iquestcoder.py`).
pub fn iquestcoder(c: &Keys) -> Result<TransformerArch, InputError> {
    llama_alias(c, &Defaults { hidden: 5120, layers: 80, heads: 40, kv_heads: Some(8), ffn: 27648, vocab: 76800, head_dim: Some(128), tied: false })
}

/// `Glm4MoeLiteConfig` (GLM-4.7-Flash, `modeling_glm4_moe_lite.py` `Glm4MoeLiteDecoderLayer`):
/// DeepSeek's Multi-head Latent Attention with GLM's defaults, dense blocks where
/// `mlp_layer_types` says "dense" (default: the first), elsewhere 64 routed experts top-4
/// plus `n_shared_experts` shared ones behind a sigmoid router (correction bias: a buffer).
pub fn glm4_moe_lite(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 47, heads: 20, kv_heads: None, ffn: 10240, vocab: 154880, head_dim: None, tied: false })?;
    latent_attention(c, &mut t, [768, 512, 192, 64, 256])?;
    let sparse: Vec<u64> = match c.strings("mlp_layer_types")? {
        Some(types) => types.iter().take(t.layers as usize).enumerate().filter(|(_, ty)| **ty == "sparse").map(|(i, _)| i as u64).collect(),
        None => (c.count("first_k_dense_replace", 1)?..t.layers).collect(),
    };
    if let Some((first_dense, every)) = moe_layer_rule("mlp_layer_types", &sparse, t.layers)? {
        let expert_ffn = c.uint("moe_intermediate_size", 1536)?;
        t.moe = Some(MoePart {
            experts: c.uint("n_routed_experts", 64)?,
            top_k: c.uint("num_experts_per_tok", 4)?,
            expert_ffn,
            shared_ffn: c.count("n_shared_experts", 1)? * expert_ffn,
            first_dense,
            every,
            router: Router::SigmoidGrouped,
            ..MoePart::default()
        });
    }
    Ok(t)
}

/// `ApertusConfig` (Swiss AI Apertus, `modeling_apertus.py` `ApertusDecoderLayer`): Llama
/// attention with per-head q/k RMSNorms and a non-gated xIELU MLP. Approximate by 2 per
/// block: xIELU's two learned scalars (`alpha_p`, `alpha_n`) have no part in Headroom; its
/// activation memory is modelled as SiLU's.
pub fn apertus(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 14336, vocab: 131072, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.qk_norm = QkNorm::PerHead;
    let name = c.text("hidden_act", "xielu")?;
    let activation = if name == "xielu" {
        c.note(format!("approximate: xIELU's 2 learned scalars per block ({} parameters) are not counted, and its activation memory is modelled as SiLU's", 2 * t.layers));
        Activation::Silu
    } else {
        activation(&name).ok_or_else(|| InputError::new("hidden_act", format!("\"{}\" is not an activation Headroom knows", crate::safe_text::quoted(&name))))?
    };
    t.mlp = MlpPart { ffn: t.mlp.ffn, activation, gated: false, fused_gate_up: false, bias: false };
    Ok(t)
}

/// `CwmConfig` (Meta Code World Model, `modeling_cwm.py`): Llama's modules, sliding-window
/// layers from `layer_types`.
pub fn cwm(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 6144, layers: 64, heads: 48, kv_heads: Some(8), ffn: 21504, vocab: 128256, head_dim: Some(128), tied: false })?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    sliding(c, &mut t, Some(8192), SlidingFallback::Pattern(4))?;
    Ok(t)
}

/// `VaultGemmaConfig` (VaultGemma, `modeling_vaultgemma.py` `VaultGemmaDecoderLayer`):
/// Gemma-2's attention (soft-capped, alternating 4096-token sliding and global layers) with
/// only the two pre-norms, tied head.
pub fn vaultgemma(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = gemma_base(c, &Defaults { hidden: 2304, layers: 26, heads: 8, kv_heads: Some(4), ffn: 9216, vocab: 256000, head_dim: Some(256), tied: true })?;
    t.attention.softcap = c.number("attn_logit_softcapping", 50.0)? != 0.0;
    t.embedding.logit_softcap = c.number("final_logit_softcapping", 30.0)? != 0.0;
    sliding(c, &mut t, Some(4096), SlidingFallback::EvenLayers)?;
    Ok(t)
}

/// `DeepseekV32Config` (DeepSeek-V3.2, `modeling_deepseek_v32.py` `DeepseekV32Attention`):
/// DeepSeek-V3's blocks plus a lightning indexer in each attention that picks the keys each
/// query attends to. Approximate: the indexer's parameters (`wq_b`, `wk`, `k_norm`,
/// `weights_proj`; counted in the warning) have no part in Headroom, and its top-k sparse
/// attention is modelled as dense attention.
pub fn deepseek_v32(c: &Keys) -> Result<TransformerArch, InputError> {
    let t = deepseek_v3(c)?;
    let (heads, dim) = (c.uint("index_n_heads", 64)?, c.uint("index_head_dim", 128)?);
    let q_lora = t.attention.latent.as_ref().map_or(0, |m| m.q_lora_rank);
    let per_layer = q_lora * heads * dim + t.hidden * dim + 2 * dim + t.hidden * heads;
    c.note(format!(
        "approximate: DeepSeek-V3.2's lightning indexer ({per_layer} parameters per block, {} in all) is not counted, and its top-k sparse attention is modelled as dense",
        per_layer * t.layers
    ));
    Ok(t)
}

/// `GPTNeoConfig` (GPT-Neo 125M…2.7B, `modeling_gpt_neo.py` `GPTNeoBlock`): GPT-2's block
/// with bias-free Q/K/V (the output projection keeps its bias), learned positions, local
/// layers attending to the last `window_size` tokens (`attention_layers`, default
/// alternating global/local), tied head.
pub fn gpt_neo(c: &Keys) -> Result<TransformerArch, InputError> {
    let h = c.uint("hidden_size", 2048)?;
    let heads = c.uint("num_heads", 16)?;
    check_heads(h, heads, heads)?;
    let layers = c.uint("num_layers", 24)?;
    let local = match c.strings("attention_layers")? {
        Some(types) => types.iter().take(layers as usize).filter(|s| **s == "local").count() as u64,
        None => layers / 2,
    };
    Ok(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers,
        vocab: c.uint("vocab_size", 50257)?,
        embedding: EmbeddingPart { max_positions: c.uint("max_position_embeddings", 2048)?, tied: c.flag("tie_word_embeddings", true)?, ..EmbeddingPart::default() },
        attention: AttentionPart {
            heads,
            kv_heads: heads,
            head_dim: h / heads,
            out_bias: true,
            rotary_dim: 0,
            sliding_window: c.uint("window_size", 256)?,
            sliding_layers: local,
            ..AttentionPart::default()
        },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: c.uint_or("intermediate_size", 4 * h)?, activation: act(c, "activation_function", "gelu_new")?, gated: false, fused_gate_up: false, bias: true },
        use_cache: c.flag("use_cache", true)?,
        ..TransformerArch::default()
    })
}

/// The MoE blocks of a family that lists them in `mlp_layer_types` ("dense" / "sparse"),
/// else after `first_k_dense_replace` (default `first_dense`) dense blocks, as Headroom's
/// (first_dense, every) rule; `None` when no block is sparse.
fn sparse_layer_rule(c: &Keys, layers: u64, first_dense: u64) -> Result<Option<(u64, u64)>, InputError> {
    let sparse: Vec<u64> = match c.strings("mlp_layer_types")? {
        Some(types) => types.iter().take(layers as usize).enumerate().filter(|(_, ty)| **ty == "sparse").map(|(i, _)| i as u64).collect(),
        None => (c.count("first_k_dense_replace", first_dense)?..layers).collect(),
    };
    moe_layer_rule("mlp_layer_types", &sparse, layers)
}

/// `FlexOlmoConfig` (FlexOlmo, `modeling_flex_olmo.py` `FlexOlmoDecoderLayer`): OLMo-2's
/// block (norms after each sublayer, full-width q/k norms) with 7 experts top-5 of
/// `intermediate_size` in every block.
pub fn flex_olmo(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 11008, vocab: 100352, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.qk_norm = QkNorm::Full;
    t.norm = NormPart { kind: NormKind::RmsnormFp32Weight, placement: Placement::PostSublayer };
    let experts = if c.has("num_experts") { c.uint("num_experts", 7)? } else { c.uint("num_local_experts", 7)? };
    let router = if c.flag("norm_topk_prob", false)? { Router::SoftmaxNormalized } else { Router::SoftmaxRaw };
    t.moe = Some(MoePart { experts, top_k: c.uint("num_experts_per_tok", 5)?, expert_ffn: t.mlp.ffn, router, ..MoePart::default() });
    Ok(t)
}

/// `GraniteSWAConfig` (`modeling_granite_swa.py` `GraniteSWAAttention`): Granite with one
/// learned attention sink per head and sliding-window layers from `layer_types`.
pub fn granite_swa(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2560, layers: 24, heads: 20, kv_heads: Some(4), ffn: 8192, vocab: 100352, head_dim: None, tied: true })?;
    attention_biases(c, &mut t, false, None)?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    t.attention.sinks = true;
    sliding(c, &mut t, Some(128), SlidingFallback::Pattern(3))?;
    Ok(t)
}

/// `GraniteMoeSWAConfig` (`modeling_granitemoe_swa.py`): Granite-MoE (8 experts top-2, an
/// optional shared expert of `shared_intermediate_size`) with attention sinks and
/// sliding-window layers from `layer_types`.
pub fn granitemoe_swa(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 11008, vocab: 32000, head_dim: None, tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.sinks = true;
    sliding(c, &mut t, Some(128), SlidingFallback::Pattern(3))?;
    t.moe = Some(MoePart {
        experts: c.uint("num_local_experts", 8)?,
        top_k: c.uint("num_experts_per_tok", 2)?,
        expert_ffn: t.mlp.ffn,
        shared_ffn: c.count("shared_intermediate_size", 0)?,
        ..MoePart::default()
    });
    Ok(t)
}

/// `HyperCLOVAXConfig` (HyperCLOVA X SEED, `modeling_hyperclovax.py`
/// `HyperCLOVAXDecoderLayer`): Llama with a norm after attention and after the MLP as well
/// when `use_post_norm` (four per block); its multipliers scale values, not shapes.
pub fn hyperclovax(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 11008, vocab: 32000, head_dim: Some(128), tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    if c.flag("use_post_norm", true)? {
        t.norm.placement = Placement::Sandwich;
    }
    Ok(t)
}

/// `ExaoneMoeConfig` (K-EXAONE, `modeling_exaone_moe.py` `ExaoneMoeDecoderLayer`): pre-norm
/// blocks with per-head q/k norms, sliding layers from `layer_types`, dense blocks where
/// `mlp_layer_types` says so (default the first), elsewhere 64 experts top-8 plus
/// `num_shared_experts` shared ones behind a sigmoid router (correction bias: a buffer).
pub fn exaone_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 32, heads: 32, kv_heads: Some(32), ffn: 16384, vocab: 102400, head_dim: None, tied: false })?;
    t.attention.qk_norm = QkNorm::PerHead;
    if c.strings("layer_types")?.is_some() {
        sliding(c, &mut t, Some(4096), SlidingFallback::Pattern(4))?;
    }
    if let Some((first_dense, every)) = sparse_layer_rule(c, t.layers, 1)? {
        let expert_ffn = c.uint("moe_intermediate_size", 1024)?;
        t.moe = Some(MoePart {
            experts: c.uint("num_experts", 64)?,
            top_k: c.uint("num_experts_per_tok", 8)?,
            expert_ffn,
            shared_ffn: c.count("num_shared_experts", 1)? * expert_ffn,
            first_dense,
            every,
            router: Router::SigmoidGrouped,
            ..MoePart::default()
        });
    }
    Ok(t)
}

/// `HYV3Config` (Hunyuan 3, `modeling_hy_v3.py` `HYV3DecoderLayer`): per-head q/k norms,
/// dense blocks where `mlp_layer_types` says so (default the first), elsewhere 192 experts
/// top-8 plus `num_shared_experts` shared ones behind a bias-free fp32 router (correction
/// bias: a buffer).
pub fn hy_v3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 4096, layers: 80, heads: 64, kv_heads: Some(8), ffn: 13312, vocab: 120832, head_dim: Some(128), tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    t.attention.qk_norm = QkNorm::PerHead;
    if let Some((first_dense, every)) = sparse_layer_rule(c, t.layers, 1)? {
        let expert_ffn = c.uint("moe_intermediate_size", 1536)?;
        let experts = if c.has("num_experts") { c.uint("num_experts", 192)? } else { c.uint("num_local_experts", 192)? };
        t.moe = Some(MoePart {
            experts,
            top_k: c.uint("num_experts_per_tok", 8)?,
            expert_ffn,
            shared_ffn: c.count("num_shared_experts", 1)? * expert_ffn,
            first_dense,
            every,
            expert_bias: false,
            router: Router::SigmoidGrouped,
            ..MoePart::default()
        });
    }
    Ok(t)
}

/// `MellumConfig` (JetBrains Mellum, `modeling_mellum.py` `MellumDecoderLayer`): per-head q/k
/// norms, sliding layers from `layer_types`, and where `mlp_layer_types` says "sparse"
/// (default all) 64 experts top-8 of `moe_intermediate_size` behind a bias-free softmax
/// router; "dense" blocks a SwiGLU of `intermediate_size`.
pub fn mellum(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2304, layers: 28, heads: 32, kv_heads: Some(4), ffn: 7168, vocab: 98304, head_dim: Some(128), tied: false })?;
    attention_biases(c, &mut t, false, None)?;
    t.attention.qk_norm = QkNorm::PerHead;
    if c.strings("layer_types")?.is_some() {
        sliding(c, &mut t, Some(1024), SlidingFallback::All)?;
    }
    if let Some((first_dense, every)) = sparse_layer_rule(c, t.layers, 0)? {
        let experts = if c.has("num_local_experts") { c.uint("num_local_experts", 64)? } else { c.uint("num_experts", 64)? };
        let router = if c.flag("norm_topk_prob", true)? { Router::SoftmaxNormalized } else { Router::SoftmaxRaw };
        t.moe = Some(MoePart {
            experts,
            top_k: c.uint("num_experts_per_tok", 8)?,
            expert_ffn: c.uint("moe_intermediate_size", 896)?,
            first_dense,
            every,
            router,
            ..MoePart::default()
        });
    }
    Ok(t)
}

/// `Cohere2MoeConfig` (`modeling_cohere2_moe.py` `Cohere2MoeDecoderLayer`): Cohere-2's
/// parallel block on one norm (an RMSNorm when `rms_norm_eps` is set, else Cohere's
/// bias-free LayerNorm), and where `mlp_layer_types` says "sparse" (default all) 8 experts
/// top-2 of `intermediate_size` plus `num_shared_experts` shared ones of the same width;
/// "dense" blocks a SwiGLU of `prefix_dense_intermediate_size`.
pub fn cohere2_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 8192, layers: 40, heads: 64, kv_heads: Some(64), ffn: 22528, vocab: 256000, head_dim: Some(128), tied: true })?;
    attention_biases(c, &mut t, false, None)?;
    let kind = if c.get("rms_norm_eps").is_some() { NormKind::Rmsnorm } else { NormKind::CohereLayernorm };
    t.norm = NormPart { kind, placement: Placement::ParallelShared };
    sliding(c, &mut t, Some(4096), SlidingFallback::Pattern(4))?;
    let expert_ffn = t.mlp.ffn;
    if let Some((first_dense, every)) = sparse_layer_rule(c, t.layers, 0)? {
        if first_dense > 0 || every > 1 {
            t.mlp.ffn = c.uint("prefix_dense_intermediate_size", expert_ffn)?;
        }
        let router = if c.flag("norm_topk_prob", true)? { Router::SoftmaxNormalized } else { Router::SoftmaxRaw };
        t.moe = Some(MoePart {
            experts: c.uint("num_experts", 8)?,
            top_k: c.uint("num_experts_per_tok", 2)?,
            expert_ffn,
            shared_ffn: c.count("num_shared_experts", 0)? * expert_ffn,
            first_dense,
            every,
            router,
            ..MoePart::default()
        });
    } else {
        t.mlp.ffn = c.uint("prefix_dense_intermediate_size", expert_ffn)?;
    }
    Ok(t)
}

/// Multi-head Latent Attention (`q_lora_rank` null: a direct `q_proj`) read with a
/// family's defaults (q_lora, kv_lora, nope, rope, v), biases on `q_a_proj`,
/// `kv_a_proj_with_mqa` and `o_proj` from `attention_bias`.
fn latent_attention(c: &Keys, t: &mut TransformerArch, d: [u64; 5]) -> Result<(), InputError> {
    let latent = LatentAttention {
        q_lora_rank: if c.is_null("q_lora_rank") { 0 } else { c.uint("q_lora_rank", d[0])? },
        kv_lora_rank: c.uint("kv_lora_rank", d[1])?,
        qk_nope_dim: c.uint("qk_nope_head_dim", d[2])?,
        qk_rope_dim: c.uint("qk_rope_head_dim", d[3])?,
        v_head_dim: c.uint("v_head_dim", d[4])?,
    };
    t.attention.head_dim = latent.qk_nope_dim + latent.qk_rope_dim;
    t.attention.kv_heads = t.attention.heads;
    t.attention.rotary_dim = latent.qk_rope_dim;
    attention_biases(c, t, false, None)?;
    t.attention.latent = Some(latent);
    Ok(())
}

/// `MiniCPM3Config` (MiniCPM3-4B, `modeling_minicpm3.py` `MiniCPM3Attention`): DeepSeek-V2's
/// Multi-head Latent Attention in front of a dense SwiGLU (`mlp_bias`), tied head; its
/// `scale_emb` / `scale_depth` scale values, not shapes.
pub fn minicpm3(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2560, layers: 62, heads: 40, kv_heads: None, ffn: 6400, vocab: 73448, head_dim: None, tied: true })?;
    latent_attention(c, &mut t, [768, 256, 64, 32, 64])?;
    t.mlp.bias = c.flag("mlp_bias", false)?;
    Ok(t)
}

/// `YoutuConfig` (Youtu-LLM, `modeling_youtu.py` `YoutuAttention`): Multi-head Latent
/// Attention in front of a dense SwiGLU, tied head.
pub fn youtu(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 32, heads: 16, kv_heads: None, ffn: 6144, vocab: 128256, head_dim: None, tied: true })?;
    latent_attention(c, &mut t, [1536, 512, 128, 64, 128])?;
    Ok(t)
}

/// `GlmMoeDsaConfig` (GLM-5, `modeling_glm_moe_dsa.py` `GlmMoeDsaDecoderLayer`): GLM-4.7-Flash's
/// Multi-head Latent Attention and MoE (dense blocks where `mlp_layer_types` says so, default
/// the first three; 256 experts top-8 plus `n_shared_experts` shared ones) with DeepSeek's
/// sparse attention. Approximate: the lightning indexer of each layer whose
/// `indexer_types` entry is "full" (`wq_b`, `wk`, `k_norm`, `weights_proj`; counted in the
/// warning) has no part in Headroom, and its top-k sparse attention is modelled as dense.
pub fn glm_moe_dsa(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 6144, layers: 78, heads: 64, kv_heads: None, ffn: 12288, vocab: 154880, head_dim: None, tied: false })?;
    latent_attention(c, &mut t, [2048, 512, 192, 64, 256])?;
    if let Some((first_dense, every)) = sparse_layer_rule(c, t.layers, 3)? {
        let expert_ffn = c.uint("moe_intermediate_size", 2048)?;
        t.moe = Some(MoePart {
            experts: c.uint("n_routed_experts", 256)?,
            top_k: c.uint("num_experts_per_tok", 8)?,
            expert_ffn,
            shared_ffn: c.count("n_shared_experts", 1)? * expert_ffn,
            first_dense,
            every,
            router: Router::SigmoidGrouped,
            ..MoePart::default()
        });
    }
    let (heads, dim) = (c.uint("index_n_heads", 32)?, c.uint("index_head_dim", 128)?);
    let q_lora = t.attention.latent.as_ref().map_or(0, |m| m.q_lora_rank);
    let per_layer = q_lora * heads * dim + t.hidden * dim + 2 * dim + t.hidden * heads;
    let indexers = match c.strings("indexer_types")? {
        Some(types) => types.iter().take(t.layers as usize).filter(|s| **s != "shared").count() as u64,
        None => t.layers,
    };
    c.note(format!(
        "approximate: the lightning indexers of DeepSeek sparse attention ({per_layer} parameters in each of {indexers} blocks, {} in all) are not counted, and the top-k sparse attention is modelled as dense",
        per_layer * indexers
    ));
    Ok(t)
}
