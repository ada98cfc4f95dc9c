//! The paged KV cache's geometry on one GPU: bytes per token per layer, which layers keep
//! everything and which only a window, and what one request at the full context needs.
//! Shared by every engine (`vllm.rs`, `sglang.rs`, `tgi.rs`, `llama_cpp.rs`).
//!
//! Per token and layer an attention layer caches K and V of its KV heads (2·g·d elements,
//! Pope et al. 2022 §2), split over tensor-parallel ranks by KV head; when there are fewer KV
//! heads than ranks each rank keeps one whole head, replicated (vLLM
//! `model_executor/layers/linear.py` `QKVParallelLinear`: `num_kv_head_replicas =
//! divide(tp_size, total_num_kv_heads)`). Multi-head Latent Attention caches its latent and
//! the shared rotary key (kv_lora_rank + qk_rope_dim, DeepSeek-V2 §2.1.2), the same on every
//! rank; vLLM and SGLang store it once, not as K and V.
//!
//! Gemma 4's full-attention layers cache their own head width and KV heads, and shared-KV
//! layers (Gemma 3n, Gemma 4) cache nothing (`TransformerArch::cache_groups`): their full layers
//! are counted here as sliding-sized layers in proportion to their bytes, so the bytes per
//! token and per request are theirs; an engine's grouping of layers by page size (vLLM's) is
//! then approximate.

use crate::model::arch::{Stack, TransformerArch};
use crate::model::dtype::{Dtype, HALF};
use crate::model::inputs::{KvCacheFormat, Training};
use crate::model::layout::Layout;
use crate::model::precision::Precision;

/// The KV cache of one GPU, per token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KvGeometry {
    /// Bytes one token takes in one attention layer on this GPU.
    pub bytes_per_token_layer: f64,
    /// Layers on this GPU that keep every token.
    pub full_layers: f64,
    /// Layers on this GPU that keep only the last `window` tokens (sliding-window attention).
    pub window_layers: f64,
    /// The sliding window, in tokens (0: none).
    pub window: u64,
    /// Bytes per element of the cache.
    pub element_bytes: f64,
}

impl KvGeometry {
    /// Geometry of a decoder's cache on this GPU, or `None` for a model without one (an
    /// encoder, a CNN, a state-space model without attention blocks).
    pub fn new(t: &TransformerArch, training: &Training, layout: &Layout) -> Option<KvGeometry> {
        if !matches!(t.stack, Stack::Decoder | Stack::EncoderDecoder) || t.attention_layers() == 0 {
            return None;
        }
        let element_bytes = match training.serving.kv_cache {
            Some(KvCacheFormat::Fp8) => Dtype::Fp8.bytes(),
            Some(KvCacheFormat::Half) => HALF,
            None if training.precision == Precision::Fp32 => 4.0,
            None => HALF,
        };
        let a = &t.attention;
        let elements = |a: &crate::model::arch::AttentionPart| {
            if a.latent.is_some() {
                a.cached_per_token() as f64
            } else {
                let heads = if a.cache_all_heads { a.heads } else { a.kv_heads };
                2.0 * (heads as f64 / layout.tp).max(1.0).ceil() * a.head_dim as f64
            }
        };
        // Pipeline stages hold their share of the blocks; the window layers in proportion. A
        // hybrid caches K and V in its attention blocks only.
        let share = layout.layers_on_stage / t.layers.max(1) as f64;
        if a.full_layers.is_some() || t.per_layer.as_ref().is_some_and(|pl| pl.kv_shared_layers > 0) {
            // Per shape and own-cache blocks (Gemma 3n, Gemma 4), full layers in sliding units.
            let groups = t.cache_groups();
            let unit = groups.iter().find(|(part, own)| part.sliding_layers > 0 && *own > 0).map_or_else(|| elements(a), |(part, _)| elements(part));
            let (mut full_layers, mut window_layers) = (0.0, 0.0);
            for (part, own) in &groups {
                let sliding = if part.sliding_window > 0 { part.sliding_layers.min(*own) } else { 0 };
                let scale = elements(part) / unit;
                window_layers += sliding as f64 * scale * share;
                full_layers += (own - sliding) as f64 * scale * share;
            }
            return Some(KvGeometry { bytes_per_token_layer: unit * element_bytes, full_layers, window_layers, window: a.sliding_window, element_bytes });
        }
        let window_layers = if a.sliding_window > 0 { a.sliding_layers as f64 * share } else { 0.0 };
        let attention_layers = t.attention_layers() as f64 * share;
        Some(KvGeometry {
            bytes_per_token_layer: elements(a) * element_bytes,
            full_layers: (attention_layers - window_layers).max(0.0),
            window_layers,
            window: a.sliding_window,
            element_bytes,
        })
    }

    /// Bytes one token takes across every layer on this GPU, window layers included: what an
    /// engine that does not treat windows apart (SGLang's token pool, TGI) charges per token.
    pub fn bytes_per_token(&self) -> f64 {
        self.bytes_per_token_layer * (self.full_layers + self.window_layers)
    }

    /// Bytes one request of `context` tokens needs when window layers keep at most
    /// `window − 1 + chunk` tokens (vLLM `SlidingWindowSpec.max_memory_usage_bytes`: the window
    /// plus one scheduled chunk, capped by the context).
    pub fn request_bytes(&self, context: u64, chunk: u64) -> f64 {
        let windowed = if self.window > 0 { (self.window - 1 + chunk).min(context) } else { context };
        self.bytes_per_token_layer * (self.full_layers * context as f64 + self.window_layers * windowed as f64)
    }
}
