//! Transient buffers alive at the memory peak: autocast weight copies, logits and loss
//! gradients, recomputation buffers, attention backward buffers, and the communication
//! buckets of DDP, ZeRO and FSDP (with FSDP2's gathered units, `fsdp2_buffers`), and the full
//! state dict a checkpoint save gathers.

use super::activations::{one_block_bytes, ActTerm, MicroBatch};
use super::arch::{Architecture, ParamTensor, Stack};
use super::breakdown::{Component, Lifetime, Moment, Span};
use super::dtype::{F32, HALF};
use super::layout::Layout;
use super::ledger::Ledger;
use super::states::StatesSummary;
use crate::model::inputs::{Attention, Checkpointing, Loss, Offload, Optimizer, OptimizerImpl, Training, Zero};

/// DeepSpeed's default `reduce_bucket_size` and `allgather_bucket_size`: 5e8 elements each
/// (DeepSpeed `runtime/zero/config.py`; printed as 500000000 in DeepSpeed's config dump).
const DEEPSPEED_BUCKET_ELEMENTS: f64 = 5e8;
/// DeepSpeed ZeRO-3's `stage3_prefetch_bucket_size` (5e7 elements) and
/// `stage3_max_live_parameters` (1e9) defaults (deepspeed/runtime/zero/config.py, `ZeroConfig`:
/// `prefetch_bucket_size: int = Field(pp_int(5e7), …)`, `max_live_parameters: int =
/// Field(pp_int(1e9), …)`, lines 215 and 238 at DeepSpeed edaa722).
const DEEPSPEED_PREFETCH_ELEMENTS: f64 = 5e7;
const DEEPSPEED_MAX_LIVE_ELEMENTS: f64 = 1e9;

/// Everything `temporary_buffers` needs beyond the layout.
pub struct TemporaryInputs<'a> {
    pub arch: &'a Architecture,
    /// `arch.param_tensors()`.
    pub tensors: &'a [ParamTensor],
    pub training: &'a Training,
    pub layout: &'a Layout,
    pub micro_batch: &'a MicroBatch,
    pub states: &'a StatesSummary,
    pub sp: bool,
    pub offload: Offload,
    /// Gradient bytes on this GPU (for DDP's bucket copies).
    pub gradient_bytes: f64,
    /// Micro-batches' worth of saved tensors alive at once on this stage.
    pub flight: f64,
    /// Whether a checkpoint save gathers a full state dict on the GPU.
    pub full_state_dict_on_save: bool,
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
///   measured in `compile.json` (allocator peak of backward);
/// - the whole model compiled (`techniques.compile_model`, standard loss): 2·x at the start of
///   backward, the logits' gradient and a zero-filled gradient for the logits the model returns.
///   The compiled graph's outputs are the loss and the logits; the loss alone is used, and
///   AOTAutograd's `CompiledFunction` is a `torch.autograd.Function` that never calls
///   `set_materialize_grads(False)` (torch 2.15 `_functorch/_aot_autograd/runtime_wrappers.py`
///   3513–3520 only stops it for non-differentiable outputs), so autograd expands the logits'
///   missing gradient "to tensors full of zeros prior to calling the backward"
///   (`autograd/function.py` 362–369). Inductor's backward takes it as `tangents_2`, adds the
///   cross-entropy's gradient into a new `(b, s, v)` buffer in the logits' dtype and only then
///   runs the head's matmuls (`extern_kernels.mm(buf1, …)`). Measured in `compile_whole.json`
///   on sizes where s·b, h and v differ: 2.000·x·s·b·v over 12 cases, and 1 buffer or fewer
///   when the compiled function returns the loss alone.
fn loss_transients(arch: &crate::model::arch::TransformerArch, t: &Training, weight_grad_bytes: f64, tokens: f64, tp: f64) -> Vec<Transient> {
    let x = t.precision.activation_bytes() as f64;
    let upcast = if x == F32 { 0.0 } else { F32 };
    let (v, h) = (arch.vocab as f64, arch.hidden as f64);
    let logits = tokens * v / tp;
    let compiled = t.techniques.compile && (t.techniques.compile_loss || t.techniques.compile_model) && arch.stack == Stack::Decoder;
    match t.techniques.loss {
        Loss::Standard if compiled && t.techniques.compile_model => vec![(
            Moment::LossBackward,
            "loss gradient buffers",
            2.0 * x * logits,
            "the whole model compiled returns the logits beside the loss, so autograd hands its backward a zero-filled gradient for them (s·b·v·x: torch.autograd.Function's materialize_grads, which AOTAutograd's CompiledFunction keeps), and the compiled backward writes the logits' gradient into a second s·b·v·x buffer — measured in tests/fixtures/measured/compile_whole.json",
        )],
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
        Loss::ChunkedNoUpcast => {
            // LitGPT: the chunked case above with the cross-entropy in the logits' dtype (fp32
            // under autocast, whose log_softmax runs in fp32): no upcast copy, and one chunk's
            // two gradient buffers in that dtype. Derived from the chunked case measured in
            // techniques.json with LitGPT's dtype (its saved tensors: litgpt_lora.json).
            let n = t.techniques.loss_chunks.max(1) as f64;
            let ce = if t.precision.is_mixed() { F32 } else { x };
            vec![
                (Moment::LossForward, "chunked logits (end of forward)", x * logits, "every chunk's logits kept in the model's output list; cross-entropy on each chunk as it is (LitGPT lm_head_chunk_size, chunked_cross_entropy)"),
                (Moment::LossBackward, "loss gradient buffers (one chunk)", 2.0 * ce * logits / n, "one chunk's two gradient buffers in the cross-entropy's dtype: 2·ce·s·b·v / chunks"),
                (
                    Moment::HeadBackward,
                    "chunk logit gradients and output-weight gradient buffers",
                    x * logits + 3.0 * v * h / tp * weight_grad_bytes - ce * logits,
                    "all chunks' logit gradients (x·s·b·v) wait for the output projection's backward while three v·h weight-gradient buffers are summed; the saved log-softmax (ce·s·b·v) is freed by then",
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

// long: one term per transient buffer of the step (autocast copies, the loss, recomputation, DDP/ZeRO buckets, FSDP units, checkpoint save), each cited where it is added; they share the step's dtype and layout locals.
pub fn temporary_buffers(i: &TemporaryInputs, ledger: &mut Ledger) {
    let t = i.training;
    let layout = i.layout;
    let precision = t.precision;
    let zero3 = layout.zero == Zero::Parameters || i.offload == crate::model::inputs::Offload::OptimizerAndParams;

    // A diffusion denoiser's saved terms carry the weight copies autocast makes for it, measured
    // with its own modules (`model/diffusion/`); its frozen VAE and text encoders run without
    // gradients, so autocast keeps no copy of theirs past their call.
    let diffusion = matches!(i.arch, crate::model::arch::Architecture::Diffusion(_));
    if precision.is_mixed() && !zero3 && t.lora.is_none() && !diffusion {
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
            // The language model's whole sequence: a VLM's image tokens run through the head and
            // the loss like the text's (their labels are -100, their logits are still computed).
            let s = arch.sample_tokens(t.seq_len, t.image_size, t.visual()) as f64;
            let tokens = t.micro_batch.max(1) as f64 * s / layout.cp;
            // A frozen output weight (LoRA, tied to frozen embeddings) has no gradient buffers.
            let head_grad_bytes = if crate::model::states::output_weight_trainable(arch.embedding.tied, t) { i.states.grad_bytes } else { 0.0 };
            transients.extend(loss_transients(arch, t, head_grad_bytes, tokens, layout.tp));
        }
        if crate::model::activations::transformer::effective_attention(arch, t) == Attention::Eager {
            let s = if arch.stack == Stack::Vision { t.seq_len.max(1) } else { arch.sample_tokens(t.seq_len, t.image_size, t.visual()) } as f64;
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
        // update's intermediates are alive at a time, during backward: an optimizer per
        // parameter, so foreach's list is that one tensor's square root, for-loop's its square
        // root and quotient, fused's nothing (`states::optimizer_step_intermediates`).
        let adam = matches!(t.optimizer, Optimizer::Adam | Optimizer::Adamw);
        let intermediates = match t.optimizer_impl {
            _ if !adam => 0.0,
            OptimizerImpl::Foreach => 1.0,
            OptimizerImpl::ForLoop => 2.0,
            OptimizerImpl::Fused => 0.0,
        };
        let per_element = i.states.grad_bytes + intermediates * t.precision.optimizer_state_bytes() as f64;
        transients.push((
            Moment::ParameterUpdate,
            "one parameter's gradient and update (optimizer step in backward)",
            i.states.largest_trainable_local * per_element,
            "largest trainable tensor × (gradient bytes + its update's intermediates: foreach 1, for-loop 2, fused 0 × state bytes): freed by its post-accumulate hook right after its update",
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
    if let Some((moment, bytes)) = nf4_dequantised_weight(i) {
        transients.push((moment, "NF4 weight dequantised (one linear)", bytes, NF4_DEQUANT_FORMULA));
    }
    for &(moment, name, bytes, formula) in &transients {
        ledger.add(Component::Temporary, name, bytes, formula, Lifetime::Transient(moment));
    }

    let data_parallel = layout.dp * layout.cp > 1.0;
    if layout.ddp() && !layout.bucket_view {
        // The reducer's flat buckets (`Reducer::initialize_buckets`, torch
        // `csrc/distributed/c10d/reducer.cpp`) are allocated when DDP wraps the model and kept
        // for its life; backward copies each gradient in, all-reduces, and copies back into
        // `.grad`. Measured in `ddp_buckets.json`: the parameter size alive from construction,
        // before the forward as after the optimizer step.
        ledger.add(
            Component::Temporary,
            "DDP gradient buckets",
            i.gradient_bytes,
            "DistributedDataParallel's flat all-reduce buckets (gradient_as_bucket_view=False), as large as the gradients and alive for the model's life — torch reducer.cpp initialize_buckets, PyTorch PR #41954; measured in ddp_buckets.json",
            Lifetime::WholeStep,
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
    if zero3 && layout.fsdp2() {
        fsdp2_buffers(i, &transients, ledger);
    } else if zero3 {
        deepspeed_zero3_buffers(i, ledger);
    }
    // DeepSpeed's 16-bit save gathers module by module and copies each to the CPU on rank 0
    // (deepspeed/runtime/engine.py `_zero3_consolidated_16bit_state_dict`: `param.detach().cpu()`
    // inside `GatheredParameters`): nothing beyond the gathered buffers above.
    if zero3 && layout.fsdp2() && i.full_state_dict_on_save {
        // Rank 0 ends up with an unsharded copy of every parameter, in the sharded weights'
        // dtype, kept on the GPU until the state dict is written. FSDP1 FULL_STATE_DICT
        // (offload_to_cpu=False) unshards one unit at a time and clones each parameter into
        // the state dict (torch 2.15 torch/distributed/fsdp/_state_dict_utils.py
        // `_full_post_state_dict_hook`, lines 304–345: `state_dict[fqn].detach().clone()`), so
        // one unit's unsharded weights exist besides the clones; FSDP2 through DCP
        // `get_model_state_dict(full_state_dict=True, cpu_offload=False)` all-gathers each
        // DTensor (`full_tensor()`) into the dict. Measured on a fake 4-rank group in
        // tests/fixtures/measured/fsdp.json: FSDP1 Ψ·4 + the largest unit's (here the root's)
        // 4 B per element, to 256 B; FSDP2 Ψ·4 exactly. The FSDP1 figure is the one modelled
        // (the larger, and the `FULL_STATE_DICT` API the option names).
        let st = i.states;
        // Frozen weights (LoRA bases, frozen layers) keep their own format (NF4 under QLoRA).
        let unit = (st.block_params_local - st.block_frozen_elements()) * st.weight_bytes + st.block_frozen_bytes_local;
        let root = (st.edge_params_local - st.edge_frozen_elements()) * st.weight_bytes + st.edge_frozen_bytes_local;
        ledger.add(
            Component::Temporary,
            "full state dict gathered for a checkpoint save",
            (st.params_local - st.frozen_elements()) * st.weight_bytes + st.frozen_bytes_local + unit.max(root),
            "every parameter unsharded on the GPU, in the sharded weights' dtype, plus one unit being gathered (FSDP1 FULL_STATE_DICT with offload_to_cpu=False: torch fsdp/_state_dict_utils.py 304–345; FSDP2: DCP get_model_state_dict(full_state_dict=True, cpu_offload=False)) — measured in fsdp.json",
            Lifetime::CheckpointSave,
        );
    }
}

const NF4_DEQUANT_FORMULA: &str = "the largest 4-bit linear's weight dequantised to the compute dtype for its matmul, n·k × (2 B + fp32 absmax copies) — bitsandbytes 0.50.2 MatMul4Bit (autograd/_functions.py 300–386), CUDA gemm_4bit fallback (backends/cuda/ops.py 904–982)";

/// QLoRA's transient: bitsandbytes dequantises a 4-bit weight for each matmul, one linear at a
/// time (bitsandbytes 0.50.2; CUDA only, derived from the source; the CPU run of the same code in
/// `lora.json` checks the pieces):
/// - forward: `MatMul4Bit.forward` calls `torch.ops.bitsandbytes.gemm_4bit`
///   (`autograd/_functions.py`, 323–345); on CUDA, past `_gemm_4bit_custom_max_m = 1536` rows
///   (training's b·s tokens) it runs `_dequant_linear_fallback` (`backends/cuda/ops.py`, 904–916,
///   954–978): `absmax_dq` (fp32, one per 64 weights) and `absmax_dq + absmax_offset` with double
///   quantisation, then `B_dq = torch.empty(shapeB, dtype=A.dtype)` and `F.linear`;
/// - backward: `F.dequantize_4bit(B, ctx.state).to(grad_output.dtype)` (`_functions.py`, 380–384),
///   the fp32 absmax rebuilt once (`functional.py`, `dequantize_4bit`).
///
/// The buffer lives during the matmul only: its own moment of each block's forward and backward,
/// or on top of the recomputed block under full checkpointing.
fn nf4_dequantised_weight(i: &TemporaryInputs) -> Option<(Moment, f64)> {
    let lora = i.training.lora.as_ref().filter(|l| l.base == crate::model::inputs::LoraBase::Nf4)?;
    // The 4-bit weights are the blocks' linears (`ParamTensor::linear`, as `states.rs` counts them);
    // a tensor-parallel rank dequantises its own shard.
    let largest = i.tensors.iter().filter(|t| crate::model::lora_reach::quantized(t, lora)).map(|t| t.numel() / i.layout.tp.max(1.0)).fold(0.0, f64::max);
    if largest == 0.0 {
        return None;
    }
    let compute = i.training.precision.activation_bytes() as f64;
    let t = i.training;
    let s = i.arch.transformer().map_or(t.seq_len.max(1), |a| a.sample_tokens(t.seq_len, t.image_size, t.visual()));
    let tokens = t.micro_batch.max(1) as f64 * s as f64 / i.layout.cp;
    // fp32 absmax copies per weight: two in the forward fallback, one in backward.
    let absmax = match (lora.double_quant, tokens > 1536.0) {
        (false, _) => 0.0,
        (true, true) => 2.0 * F32 / 64.0,
        (true, false) => F32 / 64.0,
    };
    let moment = if i.training.checkpointing == Checkpointing::Full { Moment::Recompute } else { Moment::Dequantize };
    Some((moment, largest * (compute + absmax)))
}

/// FSDP2 (`fully_shard`) with one unit per transformer block and the root unit holding the
/// rest (embeddings, final norm, head), as torch's FSDP2 examples and HF accelerate wrap
/// (torchtitan gives the embedding and the head units of their own: pytorch/torchtitan
/// `torchtitan/models/llama3/infra/parallelize.py` `apply_fsdp`). From torch 2.15.0's
/// `torch/distributed/fsdp/_fully_shard/`, line numbers of `_fsdp_param_group.py` as installed
/// and measured (pytorch/pytorch@002a76f has the same logic with a single
/// `reduce_scatter_state` in `post_backward`):
/// - the root's `reshard_after_forward` defaults to False (`_fsdp_state.py` `_lazy_init`: "For
///   the root, do not reshard after forward"), so its gathered weights live from the first
///   forward to the end of backward;
/// - in forward, a block's all-gather output is kept until the next block's copy-out
///   (`wait_for_unshard`, lines 505–583: `AllGatherState` "Defer free to allow for overlap"),
///   and the last one until the root's post-forward: one unit's gathered weights at the loss;
/// - in backward, each block gathers its weights again (reshard_after_forward=True) and
///   prefetches the next block's all-gather (`pre_backward` → `_backward_prefetch`, lines
///   679–693 and 1061–1097; the root prefetches the last block at the start of backward), its
///   gradients are computed unsharded in the gather dtype, and `post_backward` (lines 695–888)
///   copies them into a reduce-scatter input in `reduce_dtype` that is kept until the next
///   block's post-backward (`reduce_scatter_states`, at most
///   `reduce_scatter_max_input_buffers` = 1, lines 119 and 726–751);
/// - with reshard_after_forward=False the blocks' gathered weights stay from their forward to
///   their backward (`reshard`, lines 586–596) and backward gathers nothing.
///
/// Measured with FSDPMemTracker on a fake multi-rank group in `tests/fixtures/measured/fsdp.json`.
fn fsdp2_buffers(i: &TemporaryInputs, transients: &[Transient], ledger: &mut Ledger) {
    let (t, layout, st) = (i.training, i.layout, i.states);
    // MixedPrecisionPolicy(param_dtype=bf16) gathers 16-bit copies; gradients are computed in
    // that dtype and reduced in fp32 under the mixed modes (torchtitan's default
    // `mixed_precision_reduce = "float32"`), in the weights' own dtype otherwise.
    let p = if t.precision == crate::model::precision::Precision::Fp32 { F32 } else { HALF };
    let (g, r) = (p, if t.precision.is_mixed() { F32 } else { p });
    let u = st.block_params_local;
    let ut = st.block_trainable_local;
    // A block's and the root's weights as gathered: the trained ones in the gather dtype, the
    // frozen ones as stored (a LoRA base in 16 bits, QLoRA's NF4 packed).
    let block = (u - st.block_frozen_elements()) * p + st.block_frozen_bytes_local;
    let root = (st.edge_params_local - st.edge_frozen_elements()) * p + st.edge_frozen_bytes_local;
    let layers = layout.layers_on_stage.max(1.0);
    // Saved tensors of one block for one micro-batch, and the sharded gradient one block's
    // backward leaves (none new when accumulation or offload keeps the gradients anyway).
    let saved_block = ledger.sum_lifetime(Lifetime::Saved(Span::Blocks)) / (layers * i.flight.max(1.0));
    let grads_kept = t.grad_accum > 1 || i.offload != Offload::None || t.techniques.optimizer_in_backward;
    let sharded_grad = if grads_kept { 0.0 } else { ut * st.grad_bytes / layout.zero_shards() };
    ledger.add(
        Component::Temporary,
        "FSDP root unit's gathered weights",
        root,
        "embeddings, final norm and head gathered in the gather dtype from the first forward to the end of backward: the root's reshard_after_forward defaults to False (torch fsdp/_fully_shard/_fsdp_state.py _lazy_init) — measured in fsdp.json",
        Lifetime::ForwardBackward,
    );
    let reshard = layout.reshard_after_forward;
    if !reshard {
        ledger.add(
            Component::Temporary,
            "FSDP blocks' gathered weights (reshard_after_forward=False)",
            layers * block,
            "each block's weights stay gathered from its forward to its backward (FSDPParamGroup.reshard returns early in forward; _fsdp_param_group.py 586–596) — measured in fsdp.json",
            Lifetime::Saved(Span::Blocks),
        );
    }
    // A block's backward, against every saved tensor alive (the ledger's convention for
    // per-block moments): its gathered weights (re-gathered when blocks reshard), the next
    // block's prefetched all-gather (none for the stage's first block: the root is gathered
    // already), its unsharded gradients; and once k ≥ 1 blocks are done, the previous block's
    // reduce-scatter input, plus per block done its sharded gradient, less its saved tensors
    // (and, without resharding, its gathered weights). Linear in k, so the largest is the
    // stage's last block (k = 0), the one before it (k = 1), or the first two (k = L − 2, L − 1).
    let gathered = if reshard { block } else { 0.0 };
    let per_block_done = sharded_grad - saved_block - if reshard { 0.0 } else { block };
    let at = |k: f64| -> f64 {
        let prefetch = if reshard && k < layers - 1.0 { block } else { 0.0 };
        let reduce_scatter = if k >= 1.0 { ut * r } else { 0.0 };
        gathered + prefetch + ut * g + reduce_scatter + k * per_block_done
    };
    let in_block = [0.0, 1.0, layers - 2.0, layers - 1.0].into_iter().filter(|&k| k >= 0.0 && k < layers).map(at).fold(0.0, f64::max);
    const BLOCK: &str = "in a block's backward: its gathered weights and the next block's prefetched all-gather (reshard_after_forward=True), its unsharded gradients (gather dtype), the previous block's reduce-scatter input (reduce dtype), and per block done its sharded gradient less its saved tensors — the largest over the stage's blocks (torch _fsdp_param_group.py pre_backward 679–693, post_backward 695–888, reduce_scatter_states ≤ 1) — measured in fsdp.json";
    let mut block_moments: Vec<Moment> = Vec::new();
    for m in transients.iter().map(|x| x.0).chain([Moment::BlockBackward]) {
        if m.in_blocks() && !block_moments.contains(&m) {
            block_moments.push(m);
        }
    }
    for m in block_moments {
        ledger.add(Component::Temporary, "FSDP gathered weights, gradients and reduce-scatter buffers (one block)", in_block, BLOCK, Lifetime::Transient(m));
    }
    // At the loss: the last block's all-gather output is still held (forward) or prefetched
    // by the root's pre-backward (backward, only when blocks reshard).
    for (moment, bytes) in [(Moment::LossForward, block), (Moment::LossBackward, gathered), (Moment::HeadBackward, gathered)] {
        if transients.iter().any(|x| x.0 == moment) {
            ledger.add(
                Component::Temporary,
                "FSDP last block's all-gather (held or prefetched)",
                bytes,
                "the last block's all-gather output: kept until the root's post-forward at the end of forward, prefetched by the root at the start of backward when blocks reshard (_fsdp_param_group.py wait_for_unshard 505–583, _backward_prefetch 1061–1097) — measured in fsdp.json",
                Lifetime::Transient(moment),
            );
        }
    }
}

/// DeepSpeed ZeRO-3, from its source (not measured here: DeepSpeed needs CUDA):
/// - `PartitionedParameterCoordinator.fetch_sub_module` gathers one module's own parameters at
///   a time and prefetches at most `min(max_live_parameters − live, prefetch_bucket_size)`
///   more elements (deepspeed/runtime/zero/partitioned_param_coordinator.py lines 353–490,
///   the bound at 452–454): the largest module plus up to 5e7 elements, in 16 bits. (Parameters
///   reused within `stage3_max_reuse_distance` elements of the trace are kept gathered, and
///   tensors under `stage3_param_persistence_threshold` are never partitioned: not modelled.)
/// - DeepSpeed's own estimate adds 4 B × the largest layer (its 16-bit weight and gradient;
///   `estimate_zero3_model_states_mem_needs`, deepspeed/runtime/zero/stage3.py line 3755).
/// - With `contiguous_gradients` (default) the reduce bucket is allocated once at its full
///   `reduce_bucket_size` (5e8 elements) in the gradients' dtype (stage3.py lines 731–735).
fn deepspeed_zero3_buffers(i: &TemporaryInputs, ledger: &mut Ledger) {
    let st = i.states;
    let p = if i.training.precision == crate::model::precision::Precision::Fp32 { F32 } else { HALF };
    let module = st.largest_tensor_local;
    let prefetch = DEEPSPEED_PREFETCH_ELEMENTS.min((DEEPSPEED_MAX_LIVE_ELEMENTS - module).max(0.0));
    ledger.add(
        Component::Temporary,
        "DeepSpeed ZeRO-3 gathered parameters",
        (module + prefetch).min(st.params_local.max(module)) * p + module * st.grad_bytes,
        "the module being computed (largest tensor) + min(stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9 − live) prefetched elements, 16-bit, and that module's gradient (partitioned_param_coordinator.py 452–454; stage3.py 3755: 4 × largest layer)",
        Lifetime::ForwardBackward,
    );
    ledger.add(
        Component::Temporary,
        "DeepSpeed ZeRO-3 reduce bucket",
        DEEPSPEED_BUCKET_ELEMENTS * st.grad_bytes,
        "contiguous_gradients: one reduce_bucket_size (5e8 elements) buffer in the gradients' dtype, allocated at start-up (deepspeed/runtime/zero/stage3.py 731–735)",
        Lifetime::WholeStep,
    );
}
