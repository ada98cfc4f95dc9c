//! What a vision-language model's vision tower and projector save for backward, per
//! micro-batch (`arch/tower.rs`).
//!
//! A trained tower's blocks save what the same block of a text transformer saves
//! (`transformer.rs`'s block assembled from `attention.rs`, `mlp.rs`, norms) at the tower's
//! width, over its patches: each image is one sequence of patches, so attention runs within
//! an image (Qwen2.5-VL's windows change which keys a patch sees, not what SDPA's flash or
//! memory-efficient kernels save: q, k, v, the output and the logsumexp). Its patch
//! embedding keeps the pixels (a Conv3d/Conv2d input). A frozen tower (`frozen.vision_tower`,
//! or LoRA without `Lora::vision_tower`) reads inputs that need no gradient, so autograd
//! saves nothing in it; a trained projector still keeps its inputs. Checked on tiny towers on
//! CPU in `tests/fixtures/measured/vlm_activations.json` (`tests/vlm.rs`).
//!
//! LoRA on the tower (`Lora::vision_tower`): its blocks save what a LoRA-adapted text block
//! saves (`lora.rs`: frozen norms without their weight's operand, the adapters' inputs and
//! `lora_A` outputs), the pixels are not kept (the patch embedding is frozen and its input
//! needs no gradient), and the frozen projector keeps only what its input's gradient needs.
//! Measured with PEFT in `tower_lora.json` (`tests/tower_lora.rs`).

use super::block::block_terms;
use super::norm::{norm_saved, residual_norm, weight_operand};
use super::term::{push, ActTerm, Ctx, LoraCtx, Place, Split};
use crate::model::arch::{Activation, AttentionPart, LinearKind, MlpPart, NormKind, NormPart, QkNorm, Stack, TowerKind, TransformerArch, VisionTower};
use crate::model::dtype::{F32, HALF};
use crate::model::inputs::{Attention, Checkpointing, Training};

/// The tower's blocks as a text transformer's: `layers` encoder blocks of its width.
fn tower_as_blocks(tower: &VisionTower) -> TransformerArch {
    let (h, heads) = (tower.hidden, tower.heads.max(1));
    // Qwen2.5-VL: RMSNorm and a gated SiLU MLP; Qwen3-VL: LayerNorm and a GELU MLP; both a
    // fused qkv with rotary positions. SigLIP and CLIP: LayerNorm, GELU, separate q/k/v.
    let qwen = matches!(tower.kind, TowerKind::Qwen25Vl | TowerKind::Qwen3Vl);
    let qwen25 = tower.kind == TowerKind::Qwen25Vl;
    if tower.kind == TowerKind::InternVl {
        // InternViT: LayerNorm or RMSNorm blocks, separate q/k/v, q/k RMSNorms over the whole
        // width, exact GELU (`hidden_act` "gelu").
        let o = tower.internvit;
        return TransformerArch {
            stack: Stack::Encoder,
            hidden: h,
            layers: tower.layers,
            vocab: 1,
            attention: AttentionPart {
                heads,
                kv_heads: heads,
                head_dim: h / heads,
                qkv_bias: o.attention_bias,
                out_bias: true,
                qk_norm: if o.qk_norm { QkNorm::Full } else { QkNorm::None },
                ..AttentionPart::default()
            },
            norm: NormPart { kind: if o.rms_norm { NormKind::Rmsnorm } else { NormKind::Layernorm }, ..NormPart::default() },
            mlp: MlpPart { ffn: tower.ffn, activation: Activation::Gelu, gated: false, fused_gate_up: false, bias: true },
            use_cache: false,
            ..TransformerArch::default()
        };
    }
    if tower.kind == TowerKind::Llama4 {
        // Llama 4's ViT: LayerNorm blocks, separate q/k/v/o with biases, exact GELU
        // (`nn.GELU()`). Its 2-D rotary multiplies q and k by a complex buffer
        // (`vision_apply_rotary_emb`), which keeps only the buffer: no rotary term.
        return TransformerArch {
            stack: Stack::Encoder,
            hidden: h,
            layers: tower.layers,
            vocab: 1,
            attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, qkv_bias: true, out_bias: true, ..AttentionPart::default() },
            norm: NormPart { kind: NormKind::Layernorm, ..NormPart::default() },
            mlp: MlpPart { ffn: tower.ffn, activation: Activation::Gelu, gated: false, fused_gate_up: false, bias: true },
            use_cache: false,
            ..TransformerArch::default()
        };
    }
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
        norm: NormPart { kind: if qwen25 { NormKind::Rmsnorm } else { NormKind::Layernorm }, ..NormPart::default() },
        mlp: MlpPart { ffn: tower.ffn, activation: if qwen25 { Activation::Silu } else { Activation::GeluTanh }, gated: qwen25, fused_gate_up: false, bias: true },
        use_cache: false,
        ..TransformerArch::default()
    }
}

/// The tower's and projector's saved tensors for one micro-batch, on the first stage.
pub fn tower_terms(tower: &VisionTower, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let visual = training.visual();
    let (patches, tokens) = tower.sample_tokens(visual);
    let (w, h) = visual.resolution.unwrap_or_else(|| tower.default_size());
    // Each image (Qwen: each temporal group; Idefics3: each tile) is its own sequence.
    let images = (visual.images * tower.sequences(w, h, visual.frames)).max(1) as f64;
    let per_image = patches as f64 / images;
    // LoRA on the tower's linears (`Lora::vision_tower`): a frozen tower whose blocks run
    // adapters, so everything after the first adapter needs a gradient.
    let adapted = c.lora.as_ref().filter(|_| training.lora.as_ref().is_some_and(|l| l.vision_tower));
    let frozen = training.frozen.vision_tower || (training.lora.is_some() && adapted.is_none());
    if !frozen {
        let blocks = tower_as_blocks(tower);
        let lora = adapted.map(|l| LoraCtx { rank: l.rank, dropout: l.dropout, fp32: l.fp32, targets: l.targets.clone() });
        let vc = Ctx { tokens: c.b * patches as f64, b: c.b * images, s: per_image, s_full: per_image, lora, frozen_norms: adapted.is_some(), ..*c };
        let mut inner = Vec::new();
        block_terms(&blocks, training, &vc, &mut inner);
        let mut per_block: f64 = inner.iter().map(|t| t.bytes).sum();
        if tower.kind == TowerKind::InternVl && adapted.is_none() {
            // The layer scales, `lambda_1 * attention_output` and `lambda_2 * layer_output`:
            // each keeps its input for the vector's gradient (none when the vector is frozen).
            per_block += 2.0 * c.x * vc.tokens * tower.hidden as f64;
        }
        if matches!(tower.kind, TowerKind::Qwen25Vl | TowerKind::Qwen3Vl) && training.attention != Attention::Flash {
            // Qwen's vision attention runs SDPA per image (window) and concatenates the outputs
            // (`modeling_qwen2_5_vl.py` `Qwen2_5_VLVisionAttention.forward`, lines 316–337:
            // `torch.cat(attn_outputs, dim=1)`; `modeling_qwen3_vl.py` line 320): `proj` reads
            // that copy, which it keeps (trained) or its adapter does (LoRA); flash attention's
            // one varlen call leaves a view.
            if adapted.is_none_or(|l| l.adapted(&[LinearKind::O], false) > 0.0) {
                per_block += c.x * vc.tokens * tower.hidden as f64;
            }
        }
        if tower.kind == TowerKind::Clip {
            // CLIP's `quick_gelu`, x · sigmoid(1.702 x), keeps the sigmoid's output beside its
            // input: one more intermediate-wide tensor than a fused GELU.
            per_block += c.x * vc.tokens * tower.ffn as f64;
            // `pre_layrnorm` before the first block (a LayerNorm: its input and two fp32
            // statistics per row), when its input (the embeddings) needs a gradient.
            if adapted.is_none() {
                push(out, "vision tower pre-norm", norm_saved(NormKind::Layernorm, vc.tokens, tower.hidden as f64, c.x), Split::Sequence, Place::Input);
            }
        }
        if tower.kind == TowerKind::Llama4 {
            // `layernorm_pre` over the patches and class tokens (`Llama4VisionModel.forward`).
            if adapted.is_none() {
                push(out, "vision tower pre-norm", norm_saved(NormKind::Layernorm, vc.tokens, tower.hidden as f64, c.x), Split::Sequence, Place::Input);
            }
            push(out, "vision tower pixel-shuffle adapter", llama4_adapter_bytes(tower, adapted.is_some(), c, tokens as f64), Split::Sequence, Place::Input);
        }
        // With LoRA on the tower, the first block's input (the frozen patch embedding's output)
        // needs no gradient: its attention norm keeps nothing.
        let first_norm = if adapted.is_some() { residual_norm(blocks.norm.kind, &vc, tower.hidden as f64) } else { 0.0 };
        // Qwen3-VL's DeepStack mergers run right after their blocks and their LayerNorm keeps
        // the block's output (a view of it, `use_postshuffle_norm`), counted with the projector:
        // the next block's norm1 keeps the same storage (`modeling_qwen3_vl.py`
        // `Qwen3VLVisionModel.forward`; every listed index is followed by a block in the Hub
        // configs, 8, 16 and 24 of 27).
        let deepstack_shared = if tower.kind == TowerKind::Qwen3Vl { tower.deepstack as f64 * c.r * vc.tokens * tower.hidden as f64 } else { 0.0 };
        if training.checkpointing == Checkpointing::Full {
            // `gradient_checkpointing_enable()` checkpoints every `GradientCheckpointingLayer`,
            // the tower's blocks included (transformers 5.25 `modeling_utils.py`
            // `_set_gradient_checkpointing`; `Qwen2_5_VLVisionBlock`, `SiglipEncoderLayer`,
            // `CLIPEncoderLayer` are such layers): each block keeps only its input hidden state
            // (the non-reentrant checkpoint's), measured in vlm_checkpointing.json. A block's
            // recomputed tensors exist again only while its own backward runs, after the
            // language model's (not added to the peak here).
            push(out, "vision tower block inputs (full checkpointing)", c.x * vc.tokens * tower.hidden as f64 * tower.layers as f64, Split::Sequence, Place::Input);
        } else {
            push(out, "vision tower blocks", per_block * tower.layers as f64 - first_norm - deepstack_shared, Split::Sequence, Place::Input);
        }
        let edges = tower_edges(tower, &vc, c, adapted.is_some());
        push(out, "vision tower rotary tables and final norm", edges, Split::Sequence, Place::Input);
        if adapted.is_none() {
            // The patch embedding keeps its input pixels (16-bit under autocast or in bf16) for
            // its weight's gradient; CLIP's class token is not a patch.
            let pixel = if c.x == F32 { F32 } else { HALF };
            let pixel_patches = if matches!(tower.kind, TowerKind::Clip | TowerKind::InternVl | TowerKind::Llama4) { patches as f64 - images } else { patches as f64 };
            let pixels_per_patch = (tower.channels * tower.temporal_patch * tower.patch * tower.patch) as f64;
            push(out, "vision tower patch-embedding input (pixels)", pixel * c.b * pixel_patches * pixels_per_patch, Split::Sequence, Place::Input);
        }
    }
    let counts = (patches as f64, tokens as f64, images);
    if frozen && adapted.is_none() && training.checkpointing == Checkpointing::Full {
        frozen_tower_under_checkpointing(tower, training, c, counts, out);
        return;
    }
    if adapted.is_some() {
        push(out, "projector input", frozen_projector_bytes(tower, c, counts), Split::Sequence, Place::Input);
        return;
    }
    if training.lora.is_some() {
        // LoRA adapts no tower or projector module here: nothing on the vision side needs a
        // gradient, so nothing is saved.
        return;
    }
    let bytes = projector_bytes(tower, frozen, c, counts);
    push(out, "projector input", bytes, Split::Sequence, Place::Input);
}

/// A frozen tower when the run checkpoints: transformers' `gradient_checkpointing_enable()` ends
/// with `enable_input_require_grads()` (transformers 5.25 `modeling_utils.py` lines 3192–3200;
/// PEFT's `_prepare_model_for_gradient_checkpointing` calls it too, `peft_model.py` 728–735),
/// which hooks the `get_input_embeddings()` of every `PreTrainedModel` in the model (lines
/// 2149–2182), the vision tower's patch embedding included. The frozen tower's output then needs
/// a gradient, so its checkpointed blocks keep their inputs, its norms outside the blocks their
/// inputs and statistics, and the projector what its input's gradient needs (frozen under LoRA,
/// trained otherwise); the pixels are not kept (the patch embedding's weight is frozen). Qwen's
/// rotary tables stay with the checkpoints (as for a trained tower); its window order's int64
/// indices are kept, twice. Measured for the ten tiny VLMs in `vlm_frozen_checkpointing.json`
/// (`tests/vlm.rs`), and at full size on an H200 (`gpu_peak_owners.json`: Qwen2.5-VL-7B's 31
/// tower block inputs of 12.5 MB live at the step's peak).
fn frozen_tower_under_checkpointing(tower: &VisionTower, training: &Training, c: &Ctx, counts: (f64, f64, f64), out: &mut Vec<ActTerm>) {
    let (patches, tokens, _) = counts;
    let h = tower.hidden as f64;
    let vc = Ctx { tokens: c.b * patches, lora: None, ..*c };
    push(out, "vision tower block inputs (frozen, full checkpointing)", c.x * vc.tokens * h * tower.layers as f64, Split::Sequence, Place::Input);
    if tower.kind == TowerKind::Qwen3Vl {
        // `Qwen3VLVisionModel` resolves no input embedding (`get_input_embeddings`, lines
        // 978–995: no `embed_tokens`, `embeddings`, `model` or `language_model`), so nothing in
        // it is hooked and nothing after its blocks needs a gradient; the blocks' inputs are
        // still held, by the non-reentrant checkpoint's own record of its arguments
        // (`torch/utils/checkpoint.py` `_NoopSaveInputs`, applied with a dummy that requires grad).
        return;
    }
    push(out, "vision tower rotary tables and final norm", tower_edges(tower, &vc, c, false), Split::Sequence, Place::Input);
    if tower.kind == TowerKind::Qwen25Vl {
        // The window order and its reverse, int64 per merged token (`get_window_index`).
        push(out, "vision tower window indices", 2.0 * 8.0 * c.b * tokens, Split::Sequence, Place::Input);
    }
    let pre_norm = if matches!(tower.kind, TowerKind::Clip | TowerKind::Llama4) { norm_saved(NormKind::Layernorm, vc.tokens, h, c.x) } else { 0.0 };
    let adapter = if tower.kind == TowerKind::Llama4 { llama4_adapter_bytes(tower, true, c, tokens) } else { 0.0 };
    push(out, "vision tower pre-norm", pre_norm + adapter, Split::Sequence, Place::Input);
    let projector = if training.lora.is_some() { frozen_projector_bytes(tower, c, counts) } else { projector_bytes(tower, false, c, counts) };
    push(out, "projector input", projector, Split::Sequence, Place::Input);
}

/// What the tower keeps outside its blocks: Qwen's rotary tables, or the final norm's input.
fn tower_edges(tower: &VisionTower, vc: &Ctx, c: &Ctx, adapted: bool) -> f64 {
    match tower.kind {
        // The rotary cos and sin of every patch (fp32, head-wide), shared by all blocks.
        TowerKind::Qwen25Vl | TowerKind::Qwen3Vl => 2.0 * F32 * vc.tokens * (tower.hidden / tower.heads.max(1)) as f64,
        // SigLIP's `post_layernorm` over every patch (Gemma 3 reads the last hidden state).
        TowerKind::Siglip | TowerKind::PaliGemma => norm_saved(NormKind::Layernorm, vc.tokens, tower.hidden as f64, c.x),
        // Idefics3's too, and the position ids its embedding computes per tile (bucketed
        // fractional coordinates, int64: `Idefics3VisionEmbeddings.forward`), which a trained
        // position embedding keeps for its backward; SigLIP's are a buffer.
        TowerKind::Idefics3 => norm_saved(NormKind::Layernorm, vc.tokens, tower.hidden as f64, c.x) + if !adapted { 8.0 * vc.tokens } else { 0.0 },
        // CLIP's `post_layernorm` runs on the pooled class token only
        // (`last_hidden_state[:, 0, :]`, `modeling_clip.py` `CLIPVisionTransformer.forward`),
        // but the input it keeps is that select's view, which keeps the whole last hidden
        // state's storage alive; its two fp32 statistics are per class token.
        TowerKind::Clip => c.x * vc.tokens * tower.hidden as f64 + 2.0 * F32 * vc.b,
        // InternViT's final LayerNorm over every token, unless it mean-pools.
        TowerKind::InternVl if tower.internvit.final_norm => norm_saved(NormKind::Layernorm, vc.tokens, tower.hidden as f64, c.x),
        TowerKind::InternVl => 0.0,
        // `layernorm_post` over every tile's tokens, before the class token is sliced off.
        TowerKind::Llama4 => norm_saved(NormKind::Layernorm, vc.tokens, tower.hidden as f64, c.x),
        // mllama's and Gemma 4's towers are `mllama.rs`'s and `gemma4_vision.rs`'s
        // (`transformer.rs` calls them instead of `tower_terms`).
        TowerKind::Mllama | TowerKind::Gemma4 => 0.0,
    }
}

/// The projector's saved tensors when it is frozen but its input needs a gradient (LoRA on the
/// tower, `Lora::vision_tower`): its linears keep nothing (their weights need no gradient), its
/// norms their input and statistics but not the weight's operand, its GELU its input. Measured
/// for Qwen2.5-VL, Gemma 3 and LLaVA (`tower_lora.json`); the other projectors follow the same
/// rules over their modules.
pub(super) fn frozen_projector_bytes(tower: &VisionTower, c: &Ctx, (patches, tokens, images): (f64, f64, f64)) -> f64 {
    let (x, b) = (c.x, c.b);
    let h = tower.hidden as f64;
    let merged = h * (tower.merge * tower.merge) as f64;
    let frozen_norm = |kind: NormKind, rows: f64, width: f64| norm_saved(kind, rows, width, x) - weight_operand(kind, rows, width, x);
    let gelu = |width: f64| x * b * tokens * width;
    match tower.kind {
        // ln_q over the patches, the GELU between mlp.0 and mlp.2.
        TowerKind::Qwen25Vl => b * frozen_norm(NormKind::Rmsnorm, patches, h) + gelu(merged),
        // The merger's LayerNorm over the patches and its GELU; each DeepStack merger's
        // LayerNorm over the merged tokens and its GELU.
        TowerKind::Qwen3Vl => {
            b * frozen_norm(NormKind::Layernorm, patches, h) + gelu(merged) + tower.deepstack as f64 * (b * frozen_norm(NormKind::Layernorm, tokens, merged) + gelu(merged))
        }
        // The average pool's input, `mm_soft_emb_norm` over the pooled tokens.
        TowerKind::Siglip => x * b * patches * h + b * frozen_norm(NormKind::GemmaRmsnorm, tokens, h),
        // One frozen linear; the pixel shuffle and one frozen linear.
        TowerKind::PaliGemma | TowerKind::Idefics3 => 0.0,
        // LayerNorm over the shuffled tokens, the GELU between the two linears (text-wide).
        TowerKind::InternVl => b * frozen_norm(NormKind::Layernorm, tokens, merged) + gelu(tower.text_hidden as f64),
        // The GELU between linear_1 and linear_2 over the patch features, text-wide.
        TowerKind::Clip => x * b * (patches - images) * tower.text_hidden as f64,
        // One frozen linear; Gemma 4's is `gemma4_vision.rs`'s.
        TowerKind::Llama4 | TowerKind::Mllama | TowerKind::Gemma4 => 0.0,
    }
}

/// Llama 4's pixel-shuffle adapter inside the vision model (`Llama4VisionPixelShuffleMLP`,
/// `Llama4VisionMLP2`), over the language model's `tokens` of one sample: trained, `fc1` keeps
/// the shuffled copy (`pixel_shuffle`'s `.contiguous()`, merge² · h wide per token, as many
/// values as the patches), the first GELU its input and `fc2` its output
/// (`projector_input_dim` wide), the second GELU its input (`projector_output_dim` wide); the
/// projector keeps the second GELU's output. `frozen_linears` (LoRA on the tower): the
/// bias-free linears keep nothing, the GELUs their inputs (not measured).
fn llama4_adapter_bytes(tower: &VisionTower, frozen_linears: bool, c: &Ctx, tokens: f64) -> f64 {
    let (x, b) = (c.x, c.b);
    let (inner, output) = (tower.llama4.input as f64, tower.llama4.output as f64);
    let gelus = x * b * tokens * (inner + output);
    if frozen_linears {
        gelus
    } else {
        x * b * tokens * (tower.hidden * tower.merge * tower.merge) as f64 + x * b * tokens * inner + gelus
    }
}

/// The projector's saved tensors for one micro-batch: `patches` the tower read, `tokens` the
/// language model reads, over `images` sequences per sample; `frozen`: the tower is.
pub(super) fn projector_bytes(tower: &VisionTower, frozen: bool, c: &Ctx, (patches, tokens, images): (f64, f64, f64)) -> f64 {
    let (x, b) = (c.x, c.b);
    let h = tower.hidden as f64;
    // The projector's norm keeps its input and statistics when the tower before it is trained,
    // only the weight's operand when the tower is frozen (its input needs no gradient).
    let norm = |kind: NormKind, rows: f64| if frozen { weight_operand(kind, rows, h, x) } else { norm_saved(kind, rows, h, x) };
    match tower.kind {
        // `Qwen2_5_VLPatchMerger`: ln_q over the patches, then mlp.0's input, the GELU's input
        // and mlp.2's input, merge² · h wide per token.
        TowerKind::Qwen25Vl => {
            let merged = h * (tower.merge * tower.merge) as f64;
            b * norm(NormKind::Rmsnorm, patches) + 3.0 * x * b * tokens * merged
        }
        // `Qwen3VLVisionPatchMerger`: the merger's LayerNorm over the patches, then like
        // Qwen2.5-VL's; each DeepStack merger a LayerNorm over the shuffled 4h-wide tokens and
        // the same three inputs. A LayerNorm with a trained weight keeps its input and
        // statistics whether or not its input needs a gradient.
        TowerKind::Qwen3Vl => {
            let merged = h * (tower.merge * tower.merge) as f64;
            let mlp = 3.0 * x * b * tokens * merged;
            let merger = b * norm_saved(NormKind::Layernorm, patches, h, x) + mlp;
            let deepstack = tower.deepstack as f64 * (b * norm_saved(NormKind::Layernorm, tokens, merged, x) + mlp);
            merger + deepstack
        }
        // `Gemma3MultiModalProjector`: the average pool's input (when the tower is trained),
        // the `mm_soft_emb_norm` over the pooled tokens, the matmul's input.
        TowerKind::Siglip => {
            let pool = if frozen { 0.0 } else { x * b * patches * h };
            pool + b * norm(NormKind::GemmaRmsnorm, tokens) + x * b * tokens * h
        }
        // `PaliGemmaMultiModalProjector`: the linear's input, the post-norm's output (its
        // weight is trained either way).
        TowerKind::PaliGemma => x * b * patches * h,
        // `Idefics3Connector`: the pixel shuffle's copy, the projection's input (s² · h wide per
        // token, as many values as the patches).
        TowerKind::Idefics3 => x * b * patches * h,
        // `InternVLMultiModalProjector`: LayerNorm(s² · h) over the shuffled tokens (its input
        // and statistics, whether or not the tower is trained), linear_1's input (the norm's
        // output), the GELU's input and linear_2's input, text-wide.
        TowerKind::InternVl => {
            let merged = h * (tower.merge * tower.merge) as f64;
            b * norm_saved(NormKind::Layernorm, tokens, merged, x) + x * b * tokens * merged + 2.0 * x * b * tokens * tower.text_hidden as f64
        }
        // `LlavaMultiModalProjector`: linear_1's input (the selected layer's output, which a
        // trained tower already keeps), the GELU's input and linear_2's input, text-wide.
        // The projector runs on every tile's patch features (LLaVA-NeXT packs them into fewer
        // tokens only after it: `pack_image_features`), the class tokens dropped by slicing
        // `[:, 1:]`. Of one sequence the slice is a view linear_1 flattens in place (its input
        // is then the selected layer's whole output); of several, flattening copies it, and the
        // copy is what linear_1 keeps, trained tower or frozen.
        // `Llama4MultiModalProjector`: linear_1's input, the adapter's last GELU output,
        // trained tower or frozen.
        TowerKind::Llama4 => x * b * tokens * tower.llama4.vision_output as f64,
        // `multi_modal_projector`: its input, the concatenated vision output (`mllama.rs`).
        TowerKind::Mllama => x * b * patches * tower.mllama.vision_output as f64,
        // `gemma4_vision.rs` (`transformer.rs` calls it instead of `tower_terms`).
        TowerKind::Gemma4 => 0.0,
        TowerKind::Clip => {
            let rows = patches - images;
            let features = if b * images > 1.0 {
                x * b * rows * h
            } else if frozen {
                x * b * patches * h
            } else {
                0.0
            };
            features + 2.0 * x * b * rows * tower.text_hidden as f64
        }
    }
}
