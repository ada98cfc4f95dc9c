//! What Gemma 4's vision model and `embed_vision` save for backward, per micro-batch
//! (`arch/gemma4_vision.rs`; transformers 5.25 `modeling_gemma4.py`).
//!
//! Every image is the processor's padded patch budget, `max_soft_tokens · k²` patches, whatever
//! its size; the padding is masked out of attention, not cut. A trained tower (full fine-tuning):
//! - the patch embedder (lines 575–617): `input_proj` keeps its input, the rescaled pixels
//!   `2 · (pixel_values − 0.5)` (3 · patch² per patch); the two `F.embedding` lookups of the
//!   position table keep the clamped `(x, y)` ids (int64, one storage for both); `torch.where`
//!   keeps the padding flags (one bool per patch; the pooler's `masked_fill` keeps the same
//!   storage);
//! - the blocks (lines 962–1004) save what a Gemma 4 text block does (`Gemma4RMSNorm` sandwich
//!   norms, per-head q/k norms, the weightless `v_norm`, the gated `gelu_pytorch_tanh` MLP),
//!   at the tower's width over every padded patch, and SDPA's attention mask: the encoder's
//!   padding mask is boolean, which `scaled_dot_product_attention` turns into an additive mask in
//!   q's dtype on every call, so each block keeps its own `patches²` copy per image (measured:
//!   `[1, 1, 630, 630]` fp32 per block). The axial rotary table's cos and sin (head-wide, per
//!   patch) are made once and kept by every block's rotation (one storage each);
//! - the pooler (lines 620–684): `_avg_pool_by_positions` multiplies the fp32 one-hot pooling
//!   weights (`patches × max_soft_tokens` per image) by the hidden states, which keeps the
//!   weights; the valid soft tokens are picked with a bool mask (`max_soft_tokens` per image);
//! - `embed_vision` (lines 2117–2141): its weightless RMSNorm over the real soft tokens keeps its
//!   fp32 input and two fp32 statistics per row, `embedding_projection` its input.
//!
//! With LoRA on the tower's linears (`Lora::vision_tower`) the blocks save what LoRA-adapted text
//! blocks save, the first block's input norm nothing (the frozen embedder's output needs no
//! gradient); the embedder keeps nothing but the padding flags, the frozen `embed_vision` its
//! norm's input and statistics. A frozen tower (`frozen.vision_tower`, or LoRA on the language
//! model alone) saves nothing; a trained `embed_vision` after it keeps its linear's input.
//!
//! Under full checkpointing every `Gemma4VisionEncoderLayer` (a `GradientCheckpointingLayer`)
//! keeps its input hidden state; the embedder's, pooler's and projector's saves stay. A frozen
//! tower's checkpointed blocks keep their inputs too, by the non-reentrant checkpoint's own
//! record of its arguments: `Gemma4VisionModel` resolves no input embedding (no `embed_tokens`,
//! `embeddings`, `model` or `language_model`: transformers 5.25 `modeling_utils.py`
//! `get_input_embeddings`, lines 970–1007), so `enable_input_require_grads` hooks nothing in it
//! and nothing after the blocks needs a gradient. The blocks' keyword arguments (the rotary
//! table, the boolean mask, the position ids) are held by the checkpoints' closures, which the
//! saved-tensor measurement does not see; they are not counted.
//!
//! Measured on CPU for a tiny tower in fp32 at two image sizes and two budgets, and in pure bf16,
//! in `tests/fixtures/measured/gemma4_vision.json` (`tests/gemma4_vision.rs`). This follows the
//! installed transformers 5.25; another version of `modeling_gemma4.py` (a stored snapshot of the
//! repository, commit 0246b4f) differs where it matters here: its patch embedder multiplies a
//! one-hot of the positions by the table (`one_hot @ position_embedding_table`), which would keep a
//! `[2, patches, position_embedding_size]` one-hot per image for the table's gradient, and its
//! pooler returns the working dtype rather than fp32.

use super::block::block_terms;
use super::norm::{norm_saved, residual_norm, weight_operand};
use super::term::{push, ActTerm, Ctx, LoraCtx, Place, Split};
use crate::model::arch::{Activation, AttentionPart, MlpPart, NormKind, NormPart, Placement, QkNorm, Stack, TransformerArch, VisionTower};
use crate::model::dtype::{BOOL, F32, HALF, INT64};
use crate::model::inputs::{Checkpointing, Training};

/// The tower's blocks as Gemma 4 text blocks: `layers` encoder blocks of its width, the mask
/// always kept when the patches are padded.
fn tower_as_blocks(tower: &VisionTower, padded: bool) -> TransformerArch {
    let g = tower.gemma4;
    TransformerArch {
        stack: Stack::Encoder,
        hidden: tower.hidden,
        layers: tower.layers,
        vocab: 1,
        attention: AttentionPart {
            heads: tower.heads.max(1),
            kv_heads: g.kv_heads.max(1),
            head_dim: g.head_dim,
            rotary_dim: g.head_dim,
            qk_norm: QkNorm::PerHead,
            v_norm: true,
            always_masked: padded,
            ..AttentionPart::default()
        },
        norm: NormPart { kind: NormKind::RmsnormPow, placement: Placement::Sandwich },
        mlp: MlpPart { ffn: tower.ffn, activation: Activation::GeluTanh, gated: true, fused_gate_up: false, bias: false },
        use_cache: false,
        ..TransformerArch::default()
    }
}

/// The tower's and `embed_vision`'s saved tensors for one micro-batch, on the first stage.
pub fn tower_terms(tower: &VisionTower, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let visual = training.visual();
    let (patches, tokens) = tower.sample_tokens(visual);
    let images = (visual.images * visual.frames.max(1)).max(1) as f64;
    let per_image = patches as f64 / images;
    let (h, k) = (tower.hidden as f64, tower.merge.max(1) as f64);
    let rows = c.b * patches as f64;
    let soft = c.b * tokens as f64;
    let block_inputs = c.x * rows * h * tower.layers as f64;
    let adapted = c.lora.as_ref().filter(|_| training.lora.as_ref().is_some_and(|l| l.vision_tower));
    let frozen = training.frozen.vision_tower || (training.lora.is_some() && adapted.is_none());
    let checkpointed = training.checkpointing == Checkpointing::Full;
    if frozen && adapted.is_none() {
        if checkpointed {
            push(out, "vision tower block inputs (frozen, full checkpointing)", block_inputs, Split::Sequence, Place::Input);
        }
        if training.lora.is_none() {
            // A trained `embedding_projection` keeps its input; the norm before it, whose input
            // needs no gradient, nothing.
            push(out, "projector input", c.x * soft * h, Split::Sequence, Place::Input);
        }
        return;
    }
    if checkpointed {
        push(out, "vision tower block inputs (full checkpointing)", block_inputs, Split::Sequence, Place::Input);
    } else {
        // The soft tokens of a full image fill the budget; fewer leave padding, and a mask.
        let padded = tokens as f64 * k * k < patches as f64;
        let blocks = tower_as_blocks(tower, padded);
        let lora = adapted.map(|l| LoraCtx { rank: l.rank, dropout: l.dropout, fp32: l.fp32, targets: l.targets.clone() });
        let vc = Ctx { tokens: rows, b: c.b * images, s: per_image, s_full: per_image, lora, frozen_norms: adapted.is_some(), ..*c };
        let mut inner = Vec::new();
        block_terms(&blocks, training, &vc, &mut inner);
        let per_block: f64 = inner.iter().map(|t| t.bytes).sum();
        // With LoRA on the tower the first block's input (the frozen embedder's output) needs no
        // gradient: its input norm keeps nothing.
        let first_norm = if adapted.is_some() { residual_norm(NormKind::RmsnormPow, &vc, h) } else { 0.0 };
        push(out, "vision tower blocks", per_block * tower.layers as f64 - first_norm, Split::Sequence, Place::Input);
        push(out, "vision tower rotary tables and final norm", 2.0 * c.x * rows * tower.gemma4.head_dim as f64, Split::Sequence, Place::Input);
    }
    // The padding flags, then (trained embedder) the rescaled pixels and the position ids.
    let mut embedder = BOOL * rows;
    if adapted.is_none() {
        let pixel = if c.x == F32 { F32 } else { HALF };
        embedder += pixel * rows * (3 * tower.patch * tower.patch) as f64 + 2.0 * INT64 * rows;
    }
    push(out, "vision tower patch-embedding input (pixels)", embedder, Split::Sequence, Place::Input);
    // The pooling weights (fp32, patches × budget per image) and the soft-token mask; the budget
    // is the padded patches over k² (a video frame's is the video processor's).
    let budget = per_image / (k * k);
    let pool = if k > 1.0 { F32 * rows * budget } else { 0.0 };
    let picked = BOOL * c.b * images * if k > 1.0 { budget } else { per_image };
    push(out, "vision tower pooler", pool + picked, Split::Sequence, Place::Input);
    let frozen_norm = norm_saved(NormKind::RmsnormPow, soft, h, c.x) - weight_operand(NormKind::RmsnormPow, soft, h, c.x);
    let linear = if adapted.is_some() { 0.0 } else { c.x * soft * h };
    push(out, "projector input", frozen_norm + linear, Split::Sequence, Place::Input);
}
