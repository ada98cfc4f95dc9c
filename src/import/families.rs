//! One mapping per `model_type`: a `config.json`'s keys → the parts of a
//! [`TransformerArch`]. Defaults are those of the matching transformers configuration class
//! (`LlamaConfig`, `Gemma2Config`, `DeepseekV3Config`, … in transformers 5.24, dumped with
//! `AutoConfig.for_model(model_type)`); module structure from each `modeling_*.py`.
//!
//! Adding a family: write one function here that reads its keys into parts, and list its
//! `model_type` in `hf_config::FAMILIES` (see ARCHITECTURE.md).

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
        _ => return None,
    })
}

fn act(c: &Keys, key: &str, default: &str) -> Result<Activation, InputError> {
    let name = c.text(key, default)?;
    activation(&name).ok_or_else(|| InputError::new(key, format!("\"{name}\" is not an activation Headroom knows (silu, gelu, gelu_pytorch_tanh, gelu_new, relu)")))
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
pub fn qwen3_moe(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = decoder(c, &Defaults { hidden: 2048, layers: 24, heads: 32, kv_heads: Some(4), ffn: 6144, vocab: 151936, head_dim: Some(128), tied: false })?;
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
