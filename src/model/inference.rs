//! Inference memory: weights, the KV cache and the forward workspace.
//!
//! KV cache: 2 (K and V) × layers × KV heads × head_dim × sequence × batch × bytes
//! (memory-formulas.md §A7; Pope et al. 2022 §2), per GPU after TP (heads split) and PP
//! (layers split); sliding-window layers keep at most their window (Mistral, Gemma-2/3,
//! gpt-oss); Multi-head Latent Attention caches its compressed latent and shared rotary key
//! (DeepSeek-V2 §2.1.2), as vLLM and SGLang do. Workspace: the prefill's live intermediates of one block under `torch.no_grad()`
//! (nothing is saved for backward; each tensor is freed after its last use) plus the fp32
//! logits of the last position (transformers' `generate` keeps only those).

use super::activations::{one_block_bytes, MicroBatch};
use super::arch::{Architecture, AttentionPart, LinearKind, ParamTensor, Scope, Stack};
use super::breakdown::{Component, Lifetime};
use super::dtype::{nf4_bytes_per_weight, Dtype, F32, HALF, INT64};
use super::gguf::{self, GgufRole};
use super::layout::Layout;
use super::ledger::Ledger;
use super::precision::Precision;
use crate::model::inputs::{KvCacheFormat, LoraBase, Training, WeightFormat};

const KV_FORMULA: &str = "2 × L × g × d × bytes per token (Pope et al. 2022 §2; KV heads, not query heads), split by TP over KV heads; sliding-window layers keep their last window − 1 tokens; MLA caches its latent, (kv_lora_rank + rope dim) × L × bytes (DeepSeek-V2 §2.1.2) — checked against transformers' caches in kv_cache.json";

/// The breakdown term of the recurrent and conv states of a hybrid or state-space model,
/// beside the KV cache.
pub const STATE_TERM: &str = "recurrent and conv state";

const STATE_FORMULA: &str = "per sequence and mixer block: conv state (channels × kernel width) in the model dtype + recurrent state (Mamba d_inner·N, Mamba-2 H·P·N, Gated DeltaNet Hv·dk·dv) in fp32, ÷ t (channels and heads split by TP); constant in the sequence length — transformers' LinearAttentionLayer (cache_utils.py), equal to its cache objects in hybrid_states.json";

/// Bytes of one sequence's conv and recurrent states in one mixer block on this GPU, as
/// transformers' `LinearAttentionLayer` holds them (`cache_utils.py`: `torch.zeros(…,
/// dtype=conv_states.dtype)` for the conv state, `zeros_like(recurrent_states)` for the
/// scan's final state): the conv state in the model dtype (`model_bytes`), the recurrent
/// state in fp32 whatever the model dtype (the scans accumulate and return it in fp32;
/// measured for fp32 and bf16 models in `hybrid_states.json`); split over tensor-parallel
/// ranks by channel and head.
pub fn mixer_state_bytes(mixer: &crate::model::arch::Mixer, hidden: u64, model_bytes: f64, tp: f64) -> f64 {
    (mixer.conv_state(hidden) as f64 * model_bytes + mixer.recurrent_state() as f64 * F32) / tp.max(1.0)
}

/// Elements cached per token per block on this GPU: MLA's latent is shared by all heads
/// (TP does not split it); K and V are split over the KV heads.
fn cached_per_token(a: &AttentionPart, layout: &Layout) -> f64 {
    if a.latent.is_some() {
        a.cached_per_token() as f64
    } else {
        let heads = if a.cache_all_heads { a.heads } else { a.kv_heads };
        2.0 * (heads as f64 / layout.tp).max(1.0) * a.head_dim as f64
    }
}

/// Bytes per element of a weight tensor when serving: the chosen format for linear layers
/// (see [`WeightFormat`] for each one's source), otherwise the run's dtype; without a
/// choice, QLoRA's NF4 base keeps its linears in NF4. A GGUF type (llama.cpp) covers every
/// tensor, embeddings and head included (`gguf.rs`).
pub fn weight_bytes(t: &ParamTensor, training: &Training, layers: u64, tied: bool) -> f64 {
    let own = if training.precision == Precision::Fp32 { F32 } else { HALF };
    let format = match (training.serving.weights, &training.lora) {
        (Some(f), _) => f,
        (None, Some(l)) if l.base == LoraBase::Nf4 => WeightFormat::Nf4,
        (None, _) => return own,
    };
    if let Some(bytes) = gguf::bytes_per_weight(format, gguf_role(t, tied), layers) {
        return bytes;
    }
    if format == WeightFormat::Mxfp4 {
        return if t.scope == Scope::Expert { MXFP4_BYTES } else { own };
    }
    let Some((inputs, _)) = t.lora_dims.filter(|_| t.is_quantized_linear()) else {
        return own;
    };
    match format {
        WeightFormat::Half => HALF,
        WeightFormat::Fp8 => Dtype::Fp8.bytes(),
        // One fp32 scale per output row of `inputs` weights.
        WeightFormat::Int8 => Dtype::U8.bytes() + F32 / inputs.max(1) as f64,
        // Per group of 128 inputs: a 16-bit scale and a 4-bit zero point.
        WeightFormat::Int4 => Dtype::Nf4.bytes() + (HALF + Dtype::Nf4.bytes()) / INT4_GROUP,
        WeightFormat::Nf4 => nf4_bytes_per_weight(training.serving.double_quant),
        // Handled above.
        WeightFormat::Mxfp4 | WeightFormat::GgufQ8_0 | WeightFormat::GgufQ6K | WeightFormat::GgufQ5KM | WeightFormat::GgufQ4KM | WeightFormat::GgufQ4_0 => own,
    }
}

/// How llama.cpp's quantiser sees a tensor (`gguf::GgufRole`); a tied embedding is the head.
fn gguf_role(t: &ParamTensor, tied: bool) -> GgufRole {
    let kinds = if t.is_quantized_linear() { t.linear.unwrap_or(&[]) } else { &[] };
    if t.shape().iter().filter(|&&d| d > 1).count() <= 1 {
        GgufRole::Vector
    } else if t.scope == Scope::Output || (tied && t.table) {
        GgufRole::Output
    } else if kinds.contains(&LinearKind::V) && kinds.len() == 1 || kinds.contains(&LinearKind::Down) {
        GgufRole::MoreBitsCandidate
    } else {
        GgufRole::Matrix
    }
}

/// Bytes of the weights this GPU holds when serving, in the chosen storage format.
pub fn weights_on_gpu(arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout) -> f64 {
    let layers = arch.layers();
    tensors.iter().map(|t| t.numel() * layout.copies(arch, t) * weight_bytes(t, training, layers, layout.tied)).sum()
}

/// MXFP4: a 4-bit element per weight and one 8-bit shared scale per 32 (OCP MX v1.0 §5).
const MXFP4_BYTES: f64 = 17.0 / 32.0;

/// GPTQ / AWQ group size (`group_size=128`, the default of both).
const INT4_GROUP: f64 = 128.0;

/// How the weights term is computed, for every inference plan.
pub const WEIGHTS_FORMULA: &str = "elements on this GPU × bytes per element: 2 B (4 B in fp32); linears in FP8 1 B, int8 1 B + fp32 row scale, int4 0.5 B + (2 B scale + 0.5 B zero) per 128, NF4 0.5 B + absmax (≈0.516 B with double quantisation); GGUF Q8_0 34 B / 32, Q4_0 18 B / 32, Q4_K 144 B / 256, Q5_K 176 B / 256, Q6_K 210 B / 256 (head and half the attn_v / ffn_down in Q6_K for the _M types)";

const PREFILL_FORMULA: &str = "tokens × max(attention: 4h + (2q + 2k + v + o)/t, MLP: 4h + 3f/t gated or 2f/t, MoE: 5h + 2 experts' 3·k·f_e/E/t + int64 one-hot) + cos/sin 2·s·d, × bytes — live tensors of a no-grad forward in transformers' Llama/Mixtral code; dense cases within 1.4% of MemTracker (prefill_workspace.json); a hybrid's mixer: 4h + its in_proj, conv, scan and norm outputs (from its forward's order of operations, not measured)";

/// Elements per token alive at once in one block's prefill under `torch.no_grad()`, on one
/// GPU, the larger of the block's two halves — from the order of operations in transformers'
/// `LlamaModel.forward` / `LlamaDecoderLayer.forward`, measured in `prefill_workspace.json`:
/// - always: the input embeddings (a local of `LlamaModel.forward` until it returns), the
///   block's input (held by the caller's loop variable), the residual sum and the norm's
///   output — four hidden-sized tensors, whole unless sequence parallelism splits them;
/// - attention: q, k and v, the rotated q and k (`apply_rotary_pos_emb` returns new
///   tensors), the attention output (TP splits these);
/// - dense MLP: `act(gate(x))`, `up(x)` and their product alive together
///   (`down_proj(act_fn(gate_proj(x)) * up_proj(x))`; the raw gate is freed once
///   activated); an ungated MLP holds `fc1(x)` and its activation;
/// - MoE (`MixtralExperts.forward`): the output accumulator, the int64 one-hot of the
///   top-k choices (k·(E + 1) per token), and two experts' tensors at once (the loop's
///   variables keep the previous expert's until reassigned), each on its k/E share of the
///   tokens if routing is balanced — an assumption: the tiny randomly initialised Mixtral in
///   the fixture routes unevenly and peaks about 4× higher, so MoE is not checked there.
fn prefill_elements_per_token(t: &crate::model::arch::TransformerArch, tp: f64, sp: bool, activation_bytes: f64) -> f64 {
    let h = t.hidden as f64;
    let whole = if sp { h / tp } else { h };
    let a = &t.attention;
    let attention = 4.0 * whole + (2.0 * a.q_width() as f64 + 2.0 * a.k_width() as f64 + a.v_width() as f64 + a.out_width() as f64) / tp;
    let mlp_width = |f: f64| if t.mlp.gated { 3.0 * f } else { 2.0 * f };
    let has_dense = t.blocks(crate::model::arch::Scope::DenseMlp) > 0;
    let dense = if has_dense { 4.0 * whole + mlp_width(t.mlp.ffn as f64) / tp } else { 0.0 };
    let moe = t.moe.as_ref().map_or(0.0, |m| {
        let per_expert = m.expert_ffn as f64 * m.top_k as f64 / m.experts.max(1) as f64;
        let one_hot = m.top_k as f64 * (m.experts + 1) as f64 * INT64 / activation_bytes;
        5.0 * whole + one_hot + 2.0 * mlp_width(per_expert).max(mlp_width(m.shared_ffn as f64)) / tp
    });
    let attention = if t.attention_layers() > 0 { attention } else { 0.0 };
    let mixer = t.hybrid.as_ref().map_or(0.0, |hy| 4.0 * whole + mixer_prefill_width(&hy.mixer, t.hidden) / tp);
    attention.max(dense).max(moe).max(mixer)
}

/// Elements per token a mixer's prefill holds at once, from the order of operations in its
/// forward (not measured): the input projection's output, the conv's output, the scan's
/// output and the gated norm's output (Mamba: 2·d + d + d + d; Mamba-2: the in_proj width +
/// the conv channels + 2·d; Gated DeltaNet: q, k, v, z + the conv output + 2·V; short
/// conv: 3h + h + h + h).
fn mixer_prefill_width(mixer: &crate::model::arch::Mixer, hidden: u64) -> f64 {
    use crate::model::arch::Mixer;
    let conv = mixer.conv_channels(hidden) as f64;
    match *mixer {
        Mixer::Mamba { inner, .. } => 5.0 * inner as f64,
        Mixer::Mamba2 { inner, heads, groups, state, .. } => (2 * inner + 2 * groups * state + heads) as f64 + conv + 2.0 * inner as f64,
        Mixer::GatedDeltaNet { value_heads, value_dim, .. } => {
            let v = (value_heads * value_dim) as f64;
            conv + v + conv + 2.0 * v
        }
        Mixer::ShortConv { .. } => 6.0 * hidden as f64,
    }
}

const CROSS_KV_FORMULA: &str =
    "2 · kv_heads · head_dim · images · max_num_tiles · (patches + 1) · b bytes per cross-attention layer, constant in the text length (modeling_mllama.py _prepare_static_cache)";

pub fn inference_memory(arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout, mb: &MicroBatch, sp: bool, ledger: &mut Ledger) {
    let x = match training.serving.kv_cache {
        Some(KvCacheFormat::Fp8) => Dtype::Fp8.bytes(),
        Some(KvCacheFormat::Half) => HALF,
        None => training.precision.activation_bytes() as f64,
    };
    ledger.add(Component::Parameters, "weights", weights_on_gpu(arch, tensors, training, layout), WEIGHTS_FORMULA, Lifetime::WholeStep);
    if let Some(t) = arch.transformer().filter(|t| matches!(t.stack, Stack::Decoder | Stack::EncoderDecoder)) {
        // A vision-language model caches its image tokens too.
        let tokens = t.sample_tokens(training.seq_len, training.image_size, training.visual());
        let (batch, seq) = (training.micro_batch.max(1) as f64, tokens as f64 / layout.cp);
        let per_token = cached_per_token(&t.attention, layout) * batch * x;
        if t.stack == Stack::EncoderDecoder {
            // T5: each decoder block caches its self-attention K/V and the cross-attention K/V
            // of the encoder's tokens (taken here as long as the decoder's); the encoder caches nothing.
            let decoder_blocks = layout.layers_on_stage * t.decoder_layers as f64 / t.layers.max(1) as f64;
            ledger.add(Component::Activations, "KV cache (decoder self-attention)", per_token * decoder_blocks * seq, KV_FORMULA, Lifetime::WholeStep);
            ledger.add(Component::Activations, "KV cache (cross-attention)", per_token * decoder_blocks * seq, KV_FORMULA, Lifetime::WholeStep);
        } else {
            // A hybrid caches K and V in its attention blocks only.
            let attention_blocks = layout.layers_on_stage * t.attention_layers() as f64 / t.layers.max(1) as f64;
            if t.attention.full_layers.is_some() {
                // Gemma 4: each attention kind caches its own head width and KV heads, the
                // sliding blocks their window; shared-KV blocks nothing.
                let share = layout.layers_on_stage / t.layers.max(1) as f64;
                let kv: f64 =
                    t.cache_groups().iter().map(|(part, own)| cached_per_token(part, layout) * batch * x * share * *own as f64 * part.mean_cached_tokens(seq, *own)).sum();
                ledger.add(Component::Activations, "KV cache", kv, KV_FORMULA, Lifetime::WholeStep);
            } else if attention_blocks > 0.0 {
                ledger.add(Component::Activations, "KV cache", per_token * attention_blocks * t.mean_cached_tokens(seq), KV_FORMULA, Lifetime::WholeStep);
            }
            // mllama's cross-attention layers cache the vision tokens' keys and values, the same
            // length whatever the text's (`modeling_mllama.py` lines 443–453, 1518–1532).
            let vision = t.vision_kv_tokens(training.visual());
            if vision > 0 {
                let cross_blocks = layout.layers_on_stage * t.blocks(crate::model::arch::Scope::Cross) as f64 / t.layers.max(1) as f64;
                ledger.add(Component::Activations, "KV cache (vision cross-attention)", per_token * cross_blocks * vision as f64, CROSS_KV_FORMULA, Lifetime::WholeStep);
            }
            if let Some(hy) = &t.hybrid {
                let mixer_blocks = layout.layers_on_stage * hy.mixer_layers as f64 / t.layers.max(1) as f64;
                let model_bytes = training.precision.activation_bytes() as f64;
                let state = mixer_state_bytes(&hy.mixer, t.hidden, model_bytes, layout.tp) * batch * mixer_blocks;
                ledger.add(Component::Activations, STATE_TERM, state, STATE_FORMULA, Lifetime::WholeStep);
            }
        }
        if layout.last {
            ledger.add(Component::Temporary, "last-position logits", F32 * batch * t.vocab as f64, "fp32 b × v", Lifetime::WholeStep);
        }
    }
    let workspace = match arch.transformer() {
        Some(t) => {
            let x = training.precision.activation_bytes() as f64;
            let seq = t.sample_tokens(training.seq_len, training.image_size, training.visual()) as f64 / layout.cp;
            let per_token = prefill_elements_per_token(t, layout.tp, sp, x);
            // The rotary cos and sin, (1, s, head_dim) each, shared by the batch.
            let rotary = if t.rotary() { 2.0 * seq * t.attention.head_dim as f64 } else { 0.0 };
            (training.micro_batch.max(1) as f64 * seq * per_token + rotary) * x
        }
        // A CNN's forward holds a layer's input and output at a time; one block's tensors bound it.
        None => one_block_bytes(mb, layout, sp),
    };
    ledger.add(Component::Temporary, "prefill workspace", workspace, PREFILL_FORMULA, Lifetime::WholeStep);
}
