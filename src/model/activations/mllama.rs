//! What Llama 3.2 Vision's (mllama) vision model and projector save for backward, per
//! micro-batch (`arch/mllama_vision.rs`; transformers 5.25 `modeling_mllama.py` lines
//! 120–329 and 877–1013).
//!
//! Every image is `max_num_tiles` tiles of (patches + 1) tokens, each tile padded to a multiple
//! of 8; both encoders run over all of an image's padded tokens as one sequence with a float
//! mask in the model's dtype (`_prepare_aspect_ratio_attention_mask`, lines 93–117), one tensor
//! SDPA keeps for every block. A trained tower keeps:
//! - the pixels (the patch conv's input), the gated tile embeddings' outputs before and after
//!   the local encoder (`MllamaPrecomputedAspectRatioEmbedding`: max_num_tiles · h per image),
//!   the gated positional embedding's tile table row (max_num_tiles · (patches + 1) · h per
//!   image), the aspect-ratio ids (int64) and the gates' tanh outputs;
//! - `layernorm_pre` over the unpadded tokens, `layernorm_post` over the padded ones;
//! - each block as a text encoder's block of LayerNorms, q/k/v/o without biases and a GELU MLP
//!   with biases (`block.rs`), over the padded tokens; the global blocks' two gates also keep
//!   the attention's and the MLP's outputs. The vision blocks are not checkpointed with the
//!   language model (they are not `GradientCheckpointingLayer`s);
//! - the projector its input, the concatenated output (`vision_output_dim` wide, unpadded),
//!   trained tower or frozen.
//!
//! With LoRA on the tower (`Lora::vision_tower`) its blocks are LoRA-adapted blocks (`lora.rs`)
//! and nothing before the first adapter keeps anything. A frozen tower keeps nothing, unless
//! gradient checkpointing is on: transformers then makes the
//! patch conv's output require a gradient, and the frozen blocks keep what that gradient needs
//! (LayerNorms, the attention's tensors, the GELU's input), as under LoRA on the tower.
//!
//! The intermediate layers' outputs are stacked and concatenated without being saved. Under
//! autocast the embeddings' fp32 tables keep the hidden states in fp32 and the mask, a matmul's
//! output, is 16-bit. Measured on CPU in `mllama.json` (`tests/mllama.rs`: fp32, pure bf16,
//! autocast).

use super::block::block_terms;
use super::norm::norm_saved;
use super::term::{push, ActTerm, Ctx, LoraCtx, Place, Split};
use super::tower::{frozen_projector_bytes, projector_bytes};
use crate::model::arch::{Activation, AttentionPart, MlpPart, NormKind, NormPart, Stack, TransformerArch, VisionTower};
use crate::model::dtype::{F32, HALF, INT64};
use crate::model::inputs::{Checkpointing, Training};

/// A vision block as a text encoder's block: LayerNorms, q/k/v/o without biases, an exact-GELU
/// MLP with biases (`hidden_act` "gelu").
fn vision_blocks(tower: &VisionTower) -> TransformerArch {
    let heads = tower.heads.max(1);
    TransformerArch {
        stack: Stack::Encoder,
        hidden: tower.hidden,
        layers: tower.layers + tower.mllama.global_layers,
        vocab: 1,
        attention: AttentionPart { heads, kv_heads: heads, head_dim: tower.hidden / heads, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, ..NormPart::default() },
        mlp: MlpPart { ffn: tower.ffn, activation: Activation::Gelu, gated: false, fused_gate_up: false, bias: true },
        use_cache: false,
        ..TransformerArch::default()
    }
}

/// The vision model's and projector's saved tensors for one micro-batch, on the first stage.
pub(super) fn tower_terms(tower: &VisionTower, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let visual = training.visual();
    let images = (visual.images.max(1) * visual.frames.max(1)) as f64;
    let tiles = tower.max_tiles as f64;
    let (tile_tokens, padded) = (tower.mllama_tile_tokens() as f64, tower.mllama_padded_tile_tokens() as f64);
    let (b, x, h) = (c.b, c.x, tower.hidden as f64);
    let adapted = c.lora.as_ref().filter(|_| training.lora.as_ref().is_some_and(|l| l.vision_tower));
    let frozen = training.frozen.vision_tower || (training.lora.is_some() && adapted.is_none());
    // `gradient_checkpointing_enable()` calls `enable_input_require_grads()` (transformers 5.25
    // `modeling_utils.py` lines 3192–3199), which makes every sub-model's input embeddings'
    // output require a gradient: the vision model's is its patch conv (`get_input_embeddings`,
    // line 862), so a frozen tower then keeps what its input's gradient needs (measured).
    let input_grad = training.checkpointing == Checkpointing::Full;
    let place = Place::Input;
    if !frozen || input_grad {
        // The tower's weights are frozen (LoRA on it, or frozen with an input that needs a
        // gradient): its linears keep no inputs, its gates and embeddings nothing but the tanh.
        let frozen_weights = frozen || adapted.is_some();
        let per_image = tiles * padded;
        let lora = match adapted {
            Some(l) => Some(LoraCtx { rank: l.rank, dropout: l.dropout, fp32: l.fp32, targets: l.targets.clone() }),
            None if frozen_weights => Some(LoraCtx { rank: 0.0, dropout: false, fp32: false, targets: Vec::new() }),
            None => None,
        };
        let vc = Ctx { tokens: b * images * per_image, b: b * images, s: per_image, s_full: per_image, lora, frozen_norms: frozen_weights, ..*c };
        let blocks = vision_blocks(tower);
        let global = tower.mllama.global_layers as f64;
        let scalar = if c.mixed { F32 } else { x };
        // `MllamaVisionEncoderLayer` is a plain `nn.Module`, not a `GradientCheckpointingLayer`
        // (line 289): `gradient_checkpointing_enable()` leaves the vision blocks whole.
        let mut inner = Vec::new();
        block_terms(&blocks, training, &vc, &mut inner);
        let per_block: f64 = inner.iter().map(|t| t.bytes).sum();
        let gated = if frozen_weights { 0.0 } else { 2.0 * x * vc.tokens * h };
        // With LoRA on the tower and no checkpointing, nothing before the first adapter needs a
        // gradient: `layernorm_pre` and the first block's attention norm keep nothing.
        let cold_start = adapted.is_some() && !input_grad;
        let first_norm = if cold_start { norm_saved(NormKind::Layernorm, vc.tokens, h, c.r) } else { 0.0 };
        push(out, "vision tower blocks", per_block * blocks.layers as f64 + global * (gated + 2.0 * scalar) - first_norm, Split::Sequence, place);
        // One float mask per image over its padded tokens, made by a matmul (16-bit under
        // autocast), kept once for every block.
        push(out, "vision tower attention mask", x * vc.b * per_image * per_image, Split::Sequence, place);
        let unpadded = b * images * tiles * tile_tokens;
        // The hidden states are in the residual dtype (fp32 under autocast: the embeddings'
        // fp32 tables promote the patch conv's output), and so are the embeddings' outputs.
        let pre = if cold_start { 0.0 } else { norm_saved(NormKind::Layernorm, unpadded, h, c.r) };
        let norms = pre + norm_saved(NormKind::Layernorm, vc.tokens, h, c.r);
        push(out, "vision tower pre- and post-norm", norms, Split::Sequence, place);
        if !frozen_weights {
            let embeddings = scalar * (2.0 * b * images * tiles * h + unpadded * h) + INT64 * b * images + 5.0 * scalar;
            push(out, "vision tower tile and position embeddings", embeddings, Split::Sequence, place);
            let pixel = if x == F32 { F32 } else { HALF };
            let pixels = (tower.channels * tower.image_size * tower.image_size) as f64;
            push(out, "vision tower patch-embedding input (pixels)", pixel * b * images * tiles * pixels, Split::Sequence, place);
        }
    }
    let counts = (images * tiles * tile_tokens, 0.0, images);
    if adapted.is_some() {
        // LoRA on the tower: the frozen projector's one linear keeps nothing.
        push(out, "projector input", frozen_projector_bytes(tower, c, counts), Split::Sequence, place);
    } else if training.lora.is_none() {
        // Trained (or after a frozen tower): its input, the concatenated vision output.
        push(out, "projector input", projector_bytes(tower, frozen, c, counts), Split::Sequence, place);
    }
}
