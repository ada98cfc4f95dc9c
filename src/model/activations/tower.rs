//! What a vision-language model's vision tower and projector save for backward, per
//! micro-batch (`arch/tower.rs`).
//!
//! A trained tower's blocks save what the same block of a text transformer saves
//! (`transformer.rs`'s block assembled from `attention.rs`, `mlp.rs`, norms) at the tower's
//! width, over its patches: each image is one sequence of patches, so attention runs within
//! an image (Qwen2.5-VL's windows change which keys a patch sees, not what SDPA's flash or
//! memory-efficient kernels save: q, k, v, the output and the logsumexp). Its patch
//! embedding keeps the pixels (a Conv3d/Conv2d input). A frozen tower (`frozen.vision_tower`,
//! or LoRA, which adapts no tower module here) reads inputs that need no gradient, so
//! autograd saves nothing in it; a trained projector still keeps its input. Derived from the
//! text blocks' measured terms, not measured on a tower itself.

use super::transformer::{block_terms, push, Ctx};
use super::{ActTerm, Place, Split};
use crate::model::arch::{Activation, AttentionPart, MlpPart, NormKind, NormPart, Stack, TowerKind, TransformerArch, VisionTower};
use crate::model::dtype::{F32, HALF};
use crate::model::inputs::Training;

/// The tower's blocks as a text transformer's: `layers` encoder blocks of its width.
fn tower_as_blocks(tower: &VisionTower) -> TransformerArch {
    let (h, heads) = (tower.hidden, tower.heads.max(1));
    let qwen = tower.kind == TowerKind::Qwen25Vl;
    TransformerArch {
        stack: Stack::Encoder,
        hidden: h,
        layers: tower.layers,
        vocab: 1,
        attention: AttentionPart {
            heads,
            kv_heads: heads,
            head_dim: h / heads,
            qkv_bias: true,
            out_bias: true,
            fused_qkv: qwen,
            rotary_dim: if qwen { h / heads } else { 0 },
            ..AttentionPart::default()
        },
        norm: NormPart { kind: if qwen { NormKind::Rmsnorm } else { NormKind::Layernorm }, ..NormPart::default() },
        mlp: MlpPart { ffn: tower.ffn, activation: if qwen { Activation::Silu } else { Activation::GeluTanh }, gated: qwen, fused_gate_up: false, bias: true },
        use_cache: false,
        ..TransformerArch::default()
    }
}

/// The tower's and projector's saved tensors for one micro-batch, on the first stage.
pub fn tower_terms(tower: &VisionTower, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let visual = training.visual();
    let (patches, tokens) = tower.sample_tokens(visual);
    let images = (visual.images * visual.frames.max(1).div_ceil(tower.temporal_patch.max(1))).max(1) as f64;
    let per_image = patches as f64 / images;
    let frozen = training.frozen.vision_tower || training.lora.is_some();
    if !frozen {
        let blocks = tower_as_blocks(tower);
        let vc = Ctx { tokens: c.b * patches as f64, b: c.b * images, s: per_image, s_full: per_image, lora: None, frozen_norms: false, ..*c };
        let mut inner = Vec::new();
        block_terms(&blocks, training, &vc, &mut inner);
        let per_block: f64 = inner.iter().map(|t| t.bytes).sum();
        push(out, "vision tower blocks", per_block * tower.layers as f64, Split::Sequence, Place::Input);
        // The patch embedding keeps its input pixels (16-bit under autocast or in bf16).
        let pixel = if c.x == F32 { F32 } else { HALF };
        let pixels_per_patch = (tower.channels * tower.temporal_patch * tower.patch * tower.patch) as f64;
        push(out, "vision tower patch-embedding input (pixels)", pixel * c.b * patches as f64 * pixels_per_patch, Split::Sequence, Place::Input);
    }
    if training.lora.is_none() {
        // The projector's first matmul keeps its input: the merged patches (Qwen2.5-VL:
        // merge² · h per token), the pooled, normed patches (Gemma 3), or the patch features
        // (LLaVA).
        let width = match tower.kind {
            TowerKind::Qwen25Vl => tower.hidden * tower.merge * tower.merge,
            _ => tower.hidden,
        } as f64;
        push(out, "projector input", c.x * c.b * tokens as f64 * width, Split::Sequence, Place::Input);
    }
}
