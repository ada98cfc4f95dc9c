//! Tensors a Hugging Face transformer saves for backward, for one micro-batch: the block
//! assembled from its parts (norms here, `attention.rs`, `mlp.rs`), the embeddings and
//! the head. The terms' types and `Ctx` are in `term.rs`, one block in `block.rs`.
//!
//! Each term names the tensor(s) as autograd saves them in transformers 5.x with PyTorch
//! 2.x on CUDA (see `tests/measure/saved_tensors_report.md` and `parts_report.md` for the
//! op-by-op listings). Under autocast each linear makes its own 16-bit copy of an fp32
//! input, so separate q/k/v (or gate/up) projections save several copies of the same norm
//! output. Dropout saves a 1-byte bool mask.
//! Dtype flow: x = bytes of matmul outputs (4 fp32, 2 otherwise); r = bytes of the residual
//! stream (4 fp32 and under autocast, where fp32 embeddings promote the sum; 2 pure bf16).

use super::block::block_terms;
use super::norm::{linear_inputs, residual_norm};
use super::term::{push, ActTerm, Ctx, LoraCtx, Place, Split};
use crate::model::arch::{Stack, TowerKind, TransformerArch};
use crate::model::dtype::{BOOL, F32, HALF, INT64};
use crate::model::inputs::{LoraBase, Loss, Training};
use crate::model::precision::Precision;

pub use super::attention::effective_attention;

/// Saved tensors of the whole model for one micro-batch (`Block` terms for one block), and
/// the bytes full checkpointing keeps per block: the block input in the residual dtype
/// (`torch.utils.checkpoint` saves only the block's arguments).
pub fn terms(t: &TransformerArch, training: &Training, cp: f64) -> (Vec<ActTerm>, f64) {
    let precision = training.precision;
    let b = training.micro_batch.max(1) as f64;
    let s_full = t.sample_tokens(training.seq_len, training.image_size, training.visual()) as f64;
    let s = s_full / cp.max(1.0);
    let fp32_unquantised = training.lora.as_ref().is_some_and(|l| l.base == LoraBase::Nf4 && l.fp32_unquantised);
    let c = Ctx {
        tokens: b * s,
        b,
        s,
        s_full,
        x: precision.activation_bytes() as f64,
        // The residual stream has the embeddings' dtype: 16-bit in pure bf16, and under
        // autocast when LoRA's frozen base is stored in 16-bit (`LoraBase::Bf16`: the embedding
        // output and every block's residual sum stay bf16, only fp32 master weights promote it;
        // measured on an H200, `gpu_peak_owners.json`: Qwen2.5-VL-7B's checkpointed block inputs
        // are 2 bytes per element). QLoRA: PEFT's `prepare_model_for_kbit_training` casts every
        // 16-bit parameter that is not 4-bit to fp32 (embeddings, norms, head; `states.rs`), so
        // the residual stream is fp32; torchtune casts nothing (`Lora::fp32_unquantised`).
        r: if sixteen_bit_residual(precision, training) && !fp32_unquantised { HALF } else { F32 },
        mixed: precision.is_mixed(),
        bf16: precision == Precision::Bf16,
        dropout: training.dropout > 0.0,
        loss: training.techniques.loss,
        head_trainable: crate::model::states::output_weight_trainable(t.embedding.tied, training),
        liger: training.techniques.liger_kernels,
        frozen_norms: training.lora.is_some(),
        lora: training.lora.as_ref().map(|l| LoraCtx { rank: l.rank as f64, dropout: l.dropout > 0.0, fp32: l.fp32_adapters, targets: l.targets.clone() }),
    };
    let mut out = Vec::with_capacity(32);
    block_terms(t, training, &c, &mut out);
    if t.vision_cross.is_some() {
        super::cross_attention::terms(t, training, &c, &mut out);
    }
    input_terms(t, training, &c, &mut out);
    match &t.tower {
        Some(tower) if tower.kind == TowerKind::Mllama => super::mllama::tower_terms(tower, training, &c, &mut out),
        Some(tower) if tower.kind == TowerKind::Gemma4 => super::gemma4_vision::tower_terms(tower, training, &c, &mut out),
        Some(tower) => super::tower::tower_terms(tower, training, &c, &mut out),
        None => {}
    }
    output_terms(t, &c, &mut out);
    if let Some(pl) = &t.per_layer {
        super::per_layer::per_layer_edge_terms(t, pl, &c, &mut out);
    }
    if training.techniques.compile {
        super::compile::apply(t, &c, training.techniques.compile_loss || training.techniques.compile_model, &mut out);
    }
    (out, c.r * c.tokens * t.hidden as f64)
}

/// Whether the embeddings (and so the residual stream) are stored in 16-bit: pure bf16, or a
/// LoRA run on a 16-bit or 4-bit frozen base.
fn sixteen_bit_residual(precision: Precision, training: &Training) -> bool {
    precision == Precision::Bf16 || (precision.is_mixed() && training.lora.is_some())
}

fn input_terms(t: &TransformerArch, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let h = t.hidden as f64;
    let place = Place::Input;
    match t.stack {
        Stack::Vision => {
            let image = training.image_size.unwrap_or(t.vision.image_size).max(1) as f64;
            let pixel_bytes = if c.x == F32 { F32 } else { HALF };
            push(out, "input pixels (patch projection input)", pixel_bytes * c.b * t.vision.channels as f64 * image * image, Split::Sequence, place);
        }
        _ => {
            let stacks = if t.stack == Stack::EncoderDecoder { 2.0 } else { 1.0 };
            push(out, "input ids", INT64 * c.tokens * stacks, Split::Sequence, place);
            if t.attention.relative_buckets > 0 {
                // T5: the int64 relative-position buckets of each stack's first block.
                push(out, "relative position buckets", INT64 * c.s * c.s_full * stacks, Split::Sequence, place);
            }
            // LitGPT's cos and sin are buffers sliced per forward (`Techniques::litgpt_modules`).
            if t.rotary() && !training.techniques.litgpt_modules {
                // Rotary cos and sin, shared by all blocks (fp32 under autocast); one pair per
                // attention kind where the kinds' head widths differ (Gemma 4, measured in gemma4.json).
                let bytes = if c.mixed { F32 } else { c.x };
                let width: u64 = t.attention.kinds().iter().map(|(_, part)| part.rotary_dim).sum();
                push(out, "rotary cos/sin", 2.0 * bytes * c.s * width as f64, Split::Sequence, place);
            }
        }
    }
    if t.stack == Stack::Encoder {
        push(out, "embedding norm", residual_norm(t.norm.kind, c, h), Split::Sequence, place);
    }
    if c.dropout {
        push(out, "embedding dropout mask", BOOL * c.tokens * h, Split::Sequence, place);
    }
}

/// Bytes per logit of `CrossEntropyLoss` on logits in the model dtype (BERT/RoBERTa MLM, T5):
/// fp32: one fp32 log-softmax; pure bf16: one bf16 log-softmax; autocast: a 16-bit
/// log-softmax and the fp32 copy the NLL loss saves.
fn cross_entropy_bytes(c: &Ctx) -> f64 {
    if c.x == F32 {
        F32
    } else if c.mixed {
        HALF + F32
    } else {
        HALF
    }
}

fn output_terms(t: &TransformerArch, c: &Ctx, out: &mut Vec<ActTerm>) {
    let (h, v) = (t.hidden as f64, t.vocab as f64);
    let tok = c.tokens;
    let place = Place::Output;
    match t.stack {
        Stack::Decoder => {
            push(out, "final norm", residual_norm(t.norm.kind, c, h), Split::Sequence, place);
            if c.loss == Loss::FusedLinear {
                // Liger's fused linear cross-entropy computes the gradients of the hidden
                // states and of the output weight chunk by chunk in forward and saves them
                // instead of any logits (`liger_kernel/ops/fused_linear_cross_entropy.py`,
                // `fused_linear_cross_entropy_forward`: grad_input like the input, grad_weight
                // like the weight). CUDA/Triton only: derived from the source, not measured.
                // No grad_weight for a frozen weight (`weight.requires_grad`).
                let weight_bytes = if !c.head_trainable {
                    0.0
                } else if c.bf16 || c.mixed {
                    HALF
                } else {
                    F32
                };
                push(out, "fused linear cross-entropy gradients (hidden and output weight)", c.x * tok * h + weight_bytes * v * h, Split::Tensor, place);
                return;
            }
            // Saved for the output weight's gradient only.
            if c.head_trainable {
                push(out, "LM head input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            }
            if t.embedding.logit_softcap {
                // Gemma-2: tanh(logits / cap) · cap; tanh saves its output.
                push(out, "soft-capped logits (tanh output)", c.x * tok * v, Split::Tensor, place);
            }
            // transformers' ForCausalLMLoss upcasts logits to fp32 and log_softmax saves its
            // output; torchtune's chunked loss upcasts chunk by chunk, and every chunk's
            // log-softmax is saved all the same.
            // Plus the int64 target per token. LitGPT's chunked cross-entropy runs on the logits
            // as they are: a 16-bit log-softmax in a pure 16-bit run (`litgpt_lora.json`).
            if c.loss == Loss::ChunkedNoUpcast {
                let bytes = if c.mixed { F32 } else { c.x };
                push(out, "log-softmax of the logits (chunked, no upcast)", bytes * tok * v + INT64 * tok, Split::Tensor, place);
            } else {
                push(out, "fp32 log-softmax of the logits", F32 * tok * v + INT64 * tok, Split::Tensor, place);
            }
        }
        Stack::EncoderDecoder => {
            // T5: both stacks' final norms; the encoder output, read by every decoder block's
            // cross-attention k/v projections, saved once; the loss on the logits as they are.
            push(out, "final norms", 2.0 * residual_norm(t.norm.kind, c, h), Split::Sequence, place);
            if !c.mixed {
                push(out, "encoder output (cross-attention keys and values)", c.r * tok * h, Split::Sequence, place);
            }
            push(out, "LM head input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            push(out, "log-softmax of the logits", cross_entropy_bytes(c) * tok * v + INT64 * tok, Split::Tensor, place);
        }
        Stack::Encoder => {
            // BertForMaskedLM head: dense → GELU → LayerNorm → decoder.
            push(out, "MLM transform input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            push(out, "MLM GELU input", c.x * tok * h, Split::Sequence, place);
            let ln_input = if c.bf16 { HALF } else { F32 };
            push(out, "MLM norm", ln_input * tok * h + 2.0 * F32 * tok, Split::Sequence, place);
            push(out, "MLM decoder input", linear_inputs(c, h, 1.0), Split::Sequence, place);
            push(out, "log-softmax of the logits", cross_entropy_bytes(c) * tok * v + INT64 * tok, Split::Tensor, place);
        }
        Stack::Vision => {
            push(out, "final norm", residual_norm(t.norm.kind, c, h), Split::Sequence, place);
            // The classifier reads the [CLS] row: a view that keeps the whole norm output alive,
            // or under autocast a fresh 16-bit copy of just that row.
            let cls = if c.mixed { HALF * c.b * h } else { c.r * tok * h };
            push(out, "classifier input", cls + F32 * c.b * t.vision.classes as f64, Split::Sequence, place);
        }
    }
}
