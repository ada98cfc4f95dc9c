//! Transient buffers alive at the memory peak: autocast weight copies, logits and loss
//! gradients, recomputation buffers, attention backward buffers, and the communication
//! buckets of DDP, ZeRO and FSDP.

use super::activations::{one_block_bytes, ActTerm, MicroBatch};
use super::arch::{Architecture, Stack};
use super::breakdown::{Component, Lifetime, Moment};
use super::dtype::{F32, HALF};
use super::layout::Layout;
use super::ledger::Ledger;
use super::states::StatesSummary;
use crate::model::inputs::{Attention, Checkpointing, Loss, Offload, Optimizer, Training, Zero};

/// DeepSpeed's default `reduce_bucket_size` and `allgather_bucket_size`: 5e8 elements each
/// (DeepSpeed `runtime/zero/config.py`; printed as 500000000 in DeepSpeed's config dump).
const DEEPSPEED_BUCKET_ELEMENTS: f64 = 5e8;

/// Everything `temporary_buffers` needs beyond the layout.
pub struct TemporaryInputs<'a> {
    pub arch: &'a Architecture,
    pub training: &'a Training,
    pub layout: &'a Layout,
    pub micro_batch: &'a MicroBatch,
    pub states: &'a StatesSummary,
    pub sp: bool,
    pub offload: Offload,
    /// Gradient bytes on this GPU (for DDP's bucket copies).
    pub gradient_bytes: f64,
}

/// A transient buffer: its moment, name, bytes and formula.
type Transient = (Moment, &'static str, f64, &'static str);

/// The loss's transients on top of the saved tensors, each a moment of forward or backward
/// (only the largest counts), for `tokens` = s·b on this rank, `logits` = s·b·v / t elements, x = bytes of the logits as the
/// model makes them, w = bytes of the output weight's gradient. Measured in `peaks.json` and
/// `techniques.json` (MemTracker on CPU).
/// - transformers: the logits and their fp32 upcast at the end of forward (x + 4, or 4 when the
///   logits are fp32 already), and two fp32 gradient buffers at the start of backward (8);
/// - torchtune's chunked loss (`CEWithChunkedOutputLoss` with `chunked_output`): every chunk's
///   logits stay in a list (x) plus one chunk's upcast; one chunk's gradient buffers (8/n);
///   later every chunk's logit gradient (x) waits for the output projection's backward while
///   three v·h weight-gradient buffers are added and the saved log-softmax (4) is gone;
/// - Liger's fused linear cross-entropy: fp32 logits and their gradient for one chunk of
///   next_pow2(ceil(BT / ceil(V/H))) rows (`fused_linear_cross_entropy_forward`; CUDA only,
///   derived from the source).
/// - compiled (`techniques.compile`, decoders; `activations/compile.rs`): the loss keeps the
///   logits as saved tensors and makes no fp32 copy, and its backward writes the logit
///   gradient in the logits' dtype in one kernel (x), freeing the saved logits as it goes —
///   measured in `compile.json` (allocator peak of backward).
fn loss_transients(arch: &crate::model::arch::TransformerArch, t: &Training, weight_grad_bytes: f64, tokens: f64, tp: f64) -> Vec<Transient> {
    let x = t.precision.activation_bytes() as f64;
    let upcast = if x == F32 { 0.0 } else { F32 };
    let (v, h) = (arch.vocab as f64, arch.hidden as f64);
    let logits = tokens * v / tp;
    let compiled = t.techniques.compile && arch.stack == Stack::Decoder;
    match t.techniques.loss {
        Loss::Standard if compiled => vec![(
            Moment::LossBackward,
            "loss gradient buffers",
            x * logits,
            "the logits' gradient in their dtype, written by the compiled loss's backward in one kernel (s·b·v·x) — measured in tests/fixtures/measured/compile.json",
        )],
        Loss::Chunked if compiled => {
            let n = t.techniques.loss_chunks.max(1) as f64;
            vec![
                (Moment::LossBackward, "loss gradient buffers (one chunk)", x * logits / n, "one chunk's logit gradient in the logits' dtype (compiled compute_cross_entropy)"),
                (
                    Moment::HeadBackward,
                    "chunk logit gradients and output-weight gradient buffers",
                    3.0 * v * h / tp * weight_grad_bytes,
                    "all chunks' logit gradients (x·s·b·v) wait for the output projection's backward while three v·h weight-gradient buffers are summed; the logits the compiled loss kept (x·s·b·v) are freed by then",
                ),
            ]
        }
        Loss::Standard => vec![
            (Moment::LossForward, "logits and their fp32 copy (end of forward)", (x + upcast) * logits, "s·b·v logits and the loss's fp32 upcast, at the end of forward"),
            (
                Moment::LossBackward,
                "loss gradient buffers",
                2.0 * F32 * logits,
                "two fp32 s·b·v buffers alive at the start of backward (the NLL gradient and the log-softmax input gradient; transformers upcasts logits to fp32) — measured in tests/fixtures/measured/peaks.json",
            ),
        ],
        Loss::Chunked => {
            let n = t.techniques.loss_chunks.max(1) as f64;
            vec![
                (Moment::LossForward, "chunked logits (end of forward)", (x + upcast / n) * logits, "every chunk's logits kept in the output list, plus one chunk's fp32 upcast (torchtune chunked_output)"),
                (Moment::LossBackward, "loss gradient buffers (one chunk)", 2.0 * F32 * logits / n, "the two fp32 gradient buffers of one chunk: 8·s·b·v / chunks (CEWithChunkedOutputLoss)"),
                (
                    Moment::HeadBackward,
                    "chunk logit gradients and output-weight gradient buffers",
                    x * logits + 3.0 * v * h / tp * weight_grad_bytes - F32 * logits,
                    "all chunks' logit gradients wait for the output projection's backward (x·s·b·v) while three v·h weight-gradient buffers are summed; the fp32 log-softmax (4·s·b·v) is freed by then — measured in techniques.json",
                ),
            ]
        }
        Loss::FusedLinear => {
            let chunk = (tokens / (v / h.max(1.0)).ceil()).ceil().max(1.0).log2().ceil().exp2().min(tokens.max(1.0));
            vec![(
                Moment::LossForward,
                "fused cross-entropy logits (one chunk)",
                2.0 * F32 * chunk * v / tp,
                "fp32 logits and their gradient for one chunk of next_pow2(ceil(BT / ceil(V/H))) rows (Liger fused_linear_cross_entropy_forward)",
            )]
        }
    }
}

pub fn temporary_buffers(i: &TemporaryInputs, ledger: &mut Ledger) {
    let t = i.training;
    let layout = i.layout;
    let precision = t.precision;
    let zero3 = layout.zero == Zero::Parameters || i.offload == crate::model::inputs::Offload::OptimizerAndParams;

    if precision.is_mixed() && !zero3 && t.lora.is_none() {
        ledger.add(
            Component::Temporary,
            "autocast weight copies",
            i.states.matmul_weights_local * precision.matmul_weight_bytes() as f64,
            "one 16-bit (FP8: 8-bit) copy of every matmul weight, cached by torch.autocast for the forward and saved for backward",
            Lifetime::ForwardBackward,
        );
    }

    // Backward's transients come one after another, not together: the loss gradients at its
    // start, then per block the recomputed activations (checkpointing) and the softmax
    // gradients (eager attention). Each is recorded with its moment; the ledger counts only
    // the largest moment (peaks.json: the llama cases peak at the loss backward with
    // checkpointing on or off).
    let mut transients: Vec<Transient> = Vec::new();
    if let Architecture::Transformer(arch) = i.arch {
        if arch.stack != Stack::Vision && layout.last {
            let tokens = t.micro_batch.max(1) as f64 * t.seq_len.max(1) as f64 / layout.cp;
            // A frozen output weight (LoRA, tied to frozen embeddings) has no gradient buffers.
            let head_grad_bytes = if crate::model::states::output_weight_trainable(arch.embedding.tied, t) { i.states.grad_bytes } else { 0.0 };
            transients.extend(loss_transients(arch, t, head_grad_bytes, tokens, layout.tp));
        }
        if crate::model::activations::transformer::effective_attention(arch, t) == Attention::Eager {
            let s = t.seq_len.max(1) as f64;
            transients.push((
                Moment::SoftmaxBackward,
                "softmax backward buffers",
                2.0 * F32 * t.micro_batch.max(1) as f64 * arch.attention.heads as f64 * (s / layout.cp) * s / layout.tp,
                "gradient in and out of one block's softmax backward: 2 × 4·b·a·s² bytes",
            ));
        }
    }
    if t.techniques.activation_offload {
        transients.push((
            Moment::Reload,
            "activations brought back (one block)",
            one_block_bytes(i.micro_batch, layout, i.sp),
            "offloaded activations return block by block in backward and are held until the next autograd node (torchtune OffloadActivations, lines 263–282 and 334–338)",
        ));
    }
    if t.techniques.optimizer_in_backward {
        // PyTorch tutorial "How to save memory by fusing the optimizer step into the backward
        // pass" (register_post_accumulate_grad_hook); torchtune `optimizer_in_bwd`: each
        // gradient is freed right after its own update, so one tensor's gradient and its
        // update's foreach intermediate are alive at a time, during backward.
        let foreach = matches!(t.optimizer, Optimizer::Adam | Optimizer::Adamw);
        let per_element = i.states.grad_bytes + if foreach { t.precision.optimizer_state_bytes() as f64 } else { 0.0 };
        transients.push((
            Moment::ParameterUpdate,
            "one parameter's gradient and update (optimizer step in backward)",
            i.states.largest_trainable_local * per_element,
            "largest trainable tensor × (gradient bytes + one foreach intermediate): freed by its post-accumulate hook right after its update",
        ));
    }
    match t.checkpointing {
        Checkpointing::Full => transients.push((
            Moment::Recompute,
            "recompute buffer",
            one_block_bytes(i.micro_batch, layout, i.sp),
            "one block's saved tensors, rebuilt during its backward (Chen et al. 2016, §3)",
        )),
        Checkpointing::Selective => {
            let core: f64 = i.micro_batch.terms.iter().filter(|a: &&ActTerm| a.attention_core).map(|a| a.bytes / layout.tp).sum();
            transients.push((Moment::Recompute, "recompute buffer", core, "one block's attention core, recomputed in its backward (Korthikanti et al. 2022 §4.2)"));
        }
        Checkpointing::None => {}
    }
    for (moment, name, bytes, formula) in transients {
        ledger.add(Component::Temporary, name, bytes, formula, Lifetime::Transient(moment));
    }

    let data_parallel = layout.dp * layout.cp > 1.0;
    if data_parallel && layout.zero == Zero::Off {
        ledger.add(
            Component::Temporary,
            "DDP gradient buckets",
            i.gradient_bytes,
            "DistributedDataParallel copies gradients into its all-reduce buckets (gradient_as_bucket_view=False): as large as the gradients (PyTorch PR #41954: ~1 GB on a 1 GB model)",
            Lifetime::ForwardBackward,
        );
    }
    if data_parallel && matches!(layout.zero, Zero::Optimizer | Zero::Gradients) && !zero3 {
        let elements = i.states.trainable_local.min(DEEPSPEED_BUCKET_ELEMENTS);
        ledger.add(
            Component::Temporary,
            "ZeRO reduce and all-gather buckets",
            2.0 * elements * HALF,
            "reduce_bucket_size + allgather_bucket_size (5e8 elements each by default, capped at the local parameters) × 2 B",
            Lifetime::ForwardBackward,
        );
    }
    if zero3 {
        let weight = if precision == crate::model::precision::Precision::Fp32 { F32 } else { HALF };
        let gathered = i.states.block_params_local.max(i.states.largest_edge_tensor_local);
        ledger.add(
            Component::Temporary,
            "ZeRO-3 / FSDP gathered parameters and gradients",
            2.0 * gathered * weight + i.states.block_params_local * weight,
            "unsharded weights of the current and the prefetched block (or the embedding / head) + one block's unsharded gradients before reduce-scatter — PyTorch FSDP (Zhao et al. 2023, §3.2); DeepSpeed's 4 × largest layer",
            Lifetime::ForwardBackward,
        );
    }
}
