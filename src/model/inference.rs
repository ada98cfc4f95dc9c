//! Inference memory: weights, the KV cache and the forward workspace.
//!
//! KV cache: 2 (K and V) × layers × KV heads × head_dim × sequence × batch × bytes
//! (memory-formulas.md §A7; Pope et al. 2022 §2), per GPU after TP (heads split) and PP
//! (layers split); sliding-window layers keep at most their window (Mistral, Gemma-2/3,
//! gpt-oss); Multi-head Latent Attention caches its compressed latent and shared rotary key
//! (DeepSeek-V2 §2.1.2), as vLLM and SGLang do. Workspace: one block's forward intermediates for the batch plus the fp32
//! logits of the last position (transformers' `generate` keeps only those).

use super::activations::{one_block_bytes, MicroBatch};
use super::arch::{Architecture, AttentionPart, Stack};
use super::breakdown::{Component, Lifetime};
use super::dtype::{Dtype, F32, HALF};
use super::layout::Layout;
use super::ledger::Ledger;
use super::precision::Precision;
use crate::model::inputs::{LoraBase, Training};

const KV_FORMULA: &str = "2 × L × g × d × bytes per token (Pope et al. 2022 §2; KV heads, not query heads), split by TP over KV heads; sliding-window layers keep their last window − 1 tokens; MLA caches its latent, (kv_lora_rank + rope dim) × L × bytes (DeepSeek-V2 §2.1.2) — checked against transformers' caches in kv_cache.json";

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

pub fn inference_memory(arch: &Architecture, training: &Training, layout: &Layout, mb: &MicroBatch, sp: bool, ledger: &mut Ledger) {
    let x = training.precision.activation_bytes() as f64;
    let nf4 = matches!(&training.lora, Some(l) if l.base == LoraBase::Nf4);
    let mut weights = 0.0;
    for t in arch.param_tensors() {
        let n = t.numel() * layout.copies(arch, &t);
        let bytes = if nf4 && t.linear.is_some() { Dtype::Nf4.bytes() + Dtype::U8.bytes() / 64.0 } else if training.precision == Precision::Fp32 { F32 } else { HALF };
        weights += n * bytes;
    }
    ledger.add(Component::Parameters, "weights", weights, "elements on this GPU × 2 B (4 B in fp32, ≈0.52 B for NF4 linears)", Lifetime::WholeStep);
    if let Some(t) = arch.transformer().filter(|t| matches!(t.stack, Stack::Decoder | Stack::EncoderDecoder)) {
        let (batch, seq) = (training.micro_batch.max(1) as f64, training.seq_len.max(1) as f64 / layout.cp);
        let per_token = cached_per_token(&t.attention, layout) * batch * x;
        if t.stack == Stack::EncoderDecoder {
            // T5: each decoder block caches its self-attention K/V and the cross-attention K/V
            // of the encoder's tokens (taken here as long as the decoder's); the encoder caches nothing.
            let decoder_blocks = layout.layers_on_stage * t.decoder_layers as f64 / t.layers.max(1) as f64;
            ledger.add(Component::Activations, "KV cache (decoder self-attention)", per_token * decoder_blocks * seq, KV_FORMULA, Lifetime::WholeStep);
            ledger.add(Component::Activations, "KV cache (cross-attention)", per_token * decoder_blocks * seq, KV_FORMULA, Lifetime::WholeStep);
        } else {
            ledger.add(Component::Activations, "KV cache", per_token * layout.layers_on_stage * t.attention.mean_cached_tokens(seq, t.layers), KV_FORMULA, Lifetime::WholeStep);
        }
        if layout.last {
            ledger.add(Component::Temporary, "last-position logits", F32 * batch * t.vocab as f64, "fp32 b × v", Lifetime::WholeStep);
        }
    }
    ledger.add(Component::Temporary, "forward workspace", one_block_bytes(mb, layout, sp), "one block's forward intermediates for the batch", Lifetime::WholeStep);
}
