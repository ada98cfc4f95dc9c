//! The ladder's steps, one row each: its label, the scenario fields it may change, what it
//! costs, and the function that applies it (one per step, or per pair of steps that differ
//! only in a stage or a format). [`apply`] runs a step's row; `Step::label` reads its label.
//! `tests/rungs.rs` checks each row against what its function does.

use super::step::Step;
use super::{context_parallel_pays, global_batch, split_global_batch, MIN_CP_TOKENS};
use crate::estimate;
use crate::model::arch::Architecture;
use crate::model::inputs::{Attention, Checkpointing, Lora, LoraBase, Loss, Offload, Optimizer, Zero};
use crate::model::precision::Precision;
use crate::scenario::Scenario;

/// What a step costs besides the memory it saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// Nothing to speak of (a fused kernel, autocast, a loss without full logits).
    Nothing,
    /// Compute: part of the forward runs again in backward (`StepCosts::recompute_fraction`).
    Recompute,
    /// Traffic between GPUs per step (`StepCosts::communication_bytes`).
    Communication,
    /// Idle pipeline stages (`StepCosts::bubble_fraction`).
    Bubble,
    /// Traffic over the host link (offloaded states or activations).
    HostTraffic,
    /// Smaller kernels: the same work in more, smaller steps (micro-batches, VAE tiles).
    Throughput,
    /// Numerics: fewer bits or fewer trained weights.
    Accuracy,
    /// Fewer or shorter requests at once (serving), a smaller picture or clip (diffusion).
    Capacity,
}

/// One step of the ladder.
pub struct Rung {
    pub step: Step,
    /// Its name on the page and in the CLI.
    pub label: &'static str,
    /// The scenario fields it may change ([`crate::fields`] paths; a path covers the fields
    /// below it).
    pub changes: &'static [&'static str],
    pub cost: Cost,
    /// Sets the step on `n` (a copy of the scenario) and says what changed or why nothing did.
    apply: fn(&At, &mut Scenario) -> String,
}

/// What a step's function reads: the step, the scenario before it, the GPU budget, and the
/// model's attention heads, key/value heads and layers (a transformer's).
struct At<'a> {
    step: Step,
    s: &'a Scenario,
    gpus: u64,
    heads: Option<(u64, u64, u64)>,
}

/// Every step, in [`Step::ALL`]'s order.
pub const RUNGS: [Rung; 31] = [
    Rung { step: Step::MixedPrecision, label: "Mixed precision (bf16)", changes: &["training.precision"], cost: Cost::Nothing, apply: mixed_precision },
    Rung { step: Step::SelectiveCheckpointing, label: "Selective checkpointing", changes: &["training.checkpointing"], cost: Cost::Recompute, apply: selective_checkpointing },
    Rung { step: Step::ActivationCheckpointing, label: "Activation checkpointing", changes: &["training.checkpointing"], cost: Cost::Recompute, apply: activation_checkpointing },
    Rung { step: Step::Zero2, label: "ZeRO-2", changes: &["parallel.zero", "parallel.dp", "training.micro_batch", "training.grad_accum"], cost: Cost::Communication, apply: zero },
    Rung {
        step: Step::Zero3,
        label: "ZeRO-3 / FSDP",
        changes: &["parallel.zero", "parallel.dp", "training.micro_batch", "training.grad_accum"],
        cost: Cost::Communication,
        apply: zero,
    },
    Rung {
        step: Step::PipelineParallel,
        label: "Pipeline parallel",
        changes: &["parallel.pp", "parallel.dp", "training.micro_batch", "training.grad_accum"],
        cost: Cost::Bubble,
        apply: pipeline_parallel,
    },
    Rung {
        step: Step::TensorParallel,
        label: "Tensor parallel",
        changes: &["parallel.tp", "parallel.sp", "parallel.dp", "training.micro_batch", "training.grad_accum"],
        cost: Cost::Communication,
        apply: tensor_parallel,
    },
    Rung {
        step: Step::ContextParallel,
        label: "Context parallel",
        changes: &["parallel.cp", "parallel.dp", "training.micro_batch", "training.grad_accum"],
        cost: Cost::Communication,
        apply: context_parallel,
    },
    Rung { step: Step::Optimizer8bit, label: "8-bit optimizer", changes: &["training.optimizer"], cost: Cost::Accuracy, apply: optimizer_8bit },
    Rung { step: Step::CpuOffload, label: "CPU offload", changes: &["parallel.offload", "parallel.zero"], cost: Cost::HostTraffic, apply: cpu_offload },
    Rung { step: Step::SmallerMicroBatch, label: "Smaller micro-batch", changes: &["training.micro_batch", "training.grad_accum"], cost: Cost::Throughput, apply: micro_batch },
    Rung { step: Step::FlashAttention, label: "Flash attention", changes: &["training.attention"], cost: Cost::Nothing, apply: flash_attention },
    Rung { step: Step::Lora, label: "LoRA", changes: &["training.lora"], cost: Cost::Accuracy, apply: lora },
    Rung { step: Step::Qlora, label: "QLoRA", changes: &["training.lora"], cost: Cost::Accuracy, apply: lora },
    Rung {
        step: Step::OptimizerInBackward,
        label: "Optimizer step in backward",
        changes: &["training.techniques.optimizer_in_backward"],
        cost: Cost::Nothing,
        apply: optimizer_in_backward,
    },
    Rung { step: Step::ChunkedCrossEntropy, label: "Chunked cross-entropy", changes: &["training.techniques.loss"], cost: Cost::Nothing, apply: cross_entropy },
    Rung { step: Step::FusedCrossEntropy, label: "Fused linear cross-entropy", changes: &["training.techniques.loss"], cost: Cost::Nothing, apply: cross_entropy },
    Rung {
        step: Step::ActivationOffload,
        label: "Activation offloading",
        changes: &["training.techniques.activation_offload"],
        cost: Cost::HostTraffic,
        apply: activation_offload,
    },
    Rung { step: Step::PureBf16, label: "Pure bf16 (no fp32 master)", changes: &["training.precision"], cost: Cost::Accuracy, apply: pure_bf16 },
    Rung { step: Step::Fp8KvCache, label: "FP8 KV cache", changes: &["training.serving.kv_cache"], cost: Cost::Accuracy, apply: serving },
    Rung { step: Step::Fp8Weights, label: "FP8 weights", changes: &["training.serving.weights"], cost: Cost::Accuracy, apply: serving },
    Rung { step: Step::Int4Weights, label: "4-bit weights (AWQ / GPTQ)", changes: &["training.serving.weights"], cost: Cost::Accuracy, apply: serving },
    Rung {
        step: Step::HigherMemoryFraction,
        label: "Larger memory fraction",
        changes: &["training.serving.gpu_memory_utilization", "training.serving.mem_fraction_static"],
        cost: Cost::Nothing,
        apply: serving,
    },
    Rung { step: Step::ShorterContext, label: "Shorter context", changes: &["training.seq_len", "training.serving.max_model_len"], cost: Cost::Capacity, apply: serving },
    Rung {
        step: Step::FewerSequences,
        label: "Fewer sequences at once",
        changes: &["training.micro_batch", "training.serving.max_num_seqs"],
        cost: Cost::Capacity,
        apply: serving,
    },
    Rung { step: Step::CacheTextEmbeddings, label: "Cache prompt embeddings", changes: &["training.diffusion.cache_text_embeddings"], cost: Cost::Nothing, apply: pipeline_only },
    Rung { step: Step::CacheLatents, label: "Cache latents", changes: &["training.diffusion.cache_latents"], cost: Cost::Nothing, apply: pipeline_only },
    Rung { step: Step::VaeTiling, label: "VAE tiling", changes: &["training.diffusion.vae_tiling"], cost: Cost::Throughput, apply: pipeline_only },
    Rung { step: Step::ModelCpuOffload, label: "Model CPU offload", changes: &["training.diffusion.offload"], cost: Cost::HostTraffic, apply: pipeline_only },
    Rung { step: Step::SequentialCpuOffload, label: "Sequential CPU offload", changes: &["training.diffusion.offload"], cost: Cost::HostTraffic, apply: pipeline_only },
    Rung { step: Step::SmallerPicture, label: "Smaller picture or clip", changes: &["training.resolution", "training.frames"], cost: Cost::Capacity, apply: pipeline_only },
];

impl Step {
    /// The step's row.
    pub fn rung(self) -> &'static Rung {
        &RUNGS[self as usize]
    }

    pub fn label(self) -> &'static str {
        self.rung().label
    }
}

/// The scenario after `step`, and a sentence saying what changed or why nothing did.
pub fn apply(step: Step, s: &Scenario, gpus: u64) -> (Scenario, String) {
    // A pipeline's own meaning of a step first (`diffusion_ladder.rs`: LoRA with diffusers'
    // defaults, a smaller picture, caching, offload, tiling).
    if super::diffusion_ladder::is_pipeline(s) {
        if let Some(applied) = super::diffusion_ladder::apply(step, s) {
            return applied;
        }
    }
    let heads = match s.model.architecture().as_deref() {
        Some(Architecture::Transformer(t)) => Some((t.attention.heads, t.attention.kv_heads, t.layers)),
        _ => None,
    };
    let mut n = s.clone();
    let note = (step.rung().apply)(&At { step, s, gpus, heads }, &mut n);
    (n, note)
}

/// The serving steps (`serving_ladder.rs`).
fn serving(c: &At, n: &mut Scenario) -> String {
    let (next, note) = super::serving_ladder::apply(c.step, c.s);
    *n = next;
    note
}

/// The diffusion steps outside a pipeline (a pipeline's go to `diffusion_ladder.rs` first).
fn pipeline_only(_: &At, _: &mut Scenario) -> String {
    "only a diffusion pipeline has this step".into()
}

/// fp32 → bf16 autocast.
fn mixed_precision(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.precision == Precision::Fp32 {
        n.training.precision = Precision::Bf16Mixed;
        "fp32 → bf16 autocast: activations halve; weights stay fp32 as the master copy".into()
    } else {
        format!("already {}", crate::labels::precision_label(s.training.precision))
    }
}

/// bf16 weights, gradients and states without an fp32 master copy.
fn pure_bf16(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.precision == Precision::Bf16 {
        "already pure bf16".into()
    } else {
        n.training.precision = Precision::Bf16;
        "bf16 weights, gradients and optimizer states, no fp32 master copy (torchtune dtype: bf16, LitGPT bf16-true): updates smaller than bf16's resolution are lost".into()
    }
}

/// Recompute the attention core.
fn selective_checkpointing(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.checkpointing == Checkpointing::None {
        n.training.checkpointing = Checkpointing::Selective;
        "recompute the attention core in backward (no effect on memory with flash/SDPA, which never store it)".into()
    } else {
        "checkpointing already on".into()
    }
}

/// Recompute each block from its input.
fn activation_checkpointing(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.checkpointing != Checkpointing::Full {
        n.training.checkpointing = Checkpointing::Full;
        "keep only each block's input; recompute the block in backward (one extra forward)".into()
    } else {
        "already full checkpointing".into()
    }
}

/// Shard the states over the data-parallel GPUs (ZeRO-2: optimizer states and gradients; ZeRO-3: the weights too).
fn zero(c: &At, n: &mut Scenario) -> String {
    let (s, gpus, step) = (c.s, c.gpus, c.step);
    let stage = if step == Step::Zero2 { Zero::Gradients } else { Zero::Parameters };
    let batch = fill_data_parallel(n, gpus);
    if n.parallel.dp * n.parallel.cp < 2 {
        *n = s.clone();
        format!("needs more than one data-parallel GPU: the budget is {}; raise it to shard", gpus_text(gpus))
    } else if s.parallel.zero >= stage {
        *n = s.clone();
        format!("ZeRO-{} already on", s.parallel.zero)
    } else {
        n.parallel.zero = stage;
        let what = if stage == Zero::Gradients { "optimizer states and gradients" } else { "optimizer states, gradients and weights" };
        with_note(format!("shard {what} over {} data-parallel GPUs", n.parallel.dp * n.parallel.cp), batch)
    }
}

/// Double the pipeline stages until the run fits, with enough micro-batches for a small bubble.
fn pipeline_parallel(c: &At, n: &mut Scenario) -> String {
    let (s, gpus, heads) = (c.s, c.gpus, c.heads);
    let room = gpus / s.parallel.tp.max(1).saturating_mul(s.parallel.cp.max(1));
    let layers = heads.map(|h| h.2).unwrap_or(1);
    let (next, batch) = double_until_fits(
        s,
        s.parallel.pp,
        |pp| pp <= room && pp <= layers,
        |t, pp| {
            t.parallel.pp = pp;
            let note = fill_data_parallel(t, gpus);
            // 1F1B wants at least 2·pp micro-batches for a small bubble: take them from
            // the micro-batch while the replica's share of the global batch allows.
            let per_replica = t.training.micro_batch.saturating_mul(t.training.grad_accum);
            if t.training.grad_accum < pp.saturating_mul(2) {
                split_global_batch(&mut t.training, per_replica, 1, (per_replica / pp.saturating_mul(2)).max(1));
            }
            note
        },
    );
    *n = next;
    if n.parallel.pp == s.parallel.pp {
        format!("no room: the budget is {} for {layers} layers", gpus_text(gpus))
    } else {
        let bubble = (n.parallel.pp - 1) as f64 / n.training.grad_accum.max(1) as f64;
        with_note(format!("{} stages (1F1B), {} micro-batches of {} per step: bubble {:.0}%", n.parallel.pp, n.training.grad_accum, n.training.micro_batch, bubble * 100.0), batch)
    }
}

/// Double the tensor-parallel group (dividing the heads) until the run fits.
fn tensor_parallel(c: &At, n: &mut Scenario) -> String {
    let (s, gpus, heads) = (c.s, c.gpus, c.heads);
    let (a, g, _) = heads.unwrap_or((1, 1, 1));
    let room = power_of_two_at_most(gpus / s.parallel.pp.max(1).saturating_mul(s.parallel.cp.max(1))).min(super::search::MAX_TP);
    let divides_heads = |tp: u64| tp <= room && a % tp == 0 && (g % tp == 0 || tp.is_multiple_of(g));
    let (next, batch) = double_until_fits(s, s.parallel.tp, divides_heads, |t, tp| {
        t.parallel.tp = tp;
        t.parallel.sp = true;
        fill_data_parallel(t, gpus)
    });
    *n = next;
    if n.parallel.tp == s.parallel.tp {
        "no room for a larger tensor-parallel group (heads, or GPUs)".into()
    } else {
        with_note(format!("tensor parallel over {} GPUs with sequence parallelism", n.parallel.tp), batch)
    }
}

/// Split each sequence over twice the GPUs.
fn context_parallel(c: &At, n: &mut Scenario) -> String {
    let (s, gpus) = (c.s, c.gpus);
    let room = gpus / s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1));
    let cp = s.parallel.cp.max(1).saturating_mul(2);
    if room < cp {
        format!("no room for context parallelism: the budget is {}", gpus_text(gpus))
    } else if !context_parallel_pays(s.training.seq_len, cp) {
        format!("{}-token sequences are too short to split over {cp} GPUs: context parallelism pays from {MIN_CP_TOKENS} tokens per GPU", s.training.seq_len)
    } else {
        n.parallel.cp = cp;
        let batch = fill_data_parallel(n, gpus);
        with_note(format!("split each sequence over {cp} GPUs (ring attention)"), batch)
    }
}

/// Update each parameter in backward.
fn optimizer_in_backward(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.techniques.optimizer_in_backward {
        "already fused into backward".into()
    } else if s.training.grad_accum > 1 {
        "needs gradient accumulation 1: each gradient is freed by its update".into()
    } else {
        n.training.techniques.optimizer_in_backward = true;
        "update each parameter in backward and free its gradient: no gradients and no optimizer-step peak (register_post_accumulate_grad_hook)".into()
    }
}

/// Saved activations to host memory.
fn activation_offload(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.techniques.activation_offload {
        "activations already offloaded".into()
    } else {
        n.training.techniques.activation_offload = true;
        "saved activations to host memory in forward, back in backward (torchtune OffloadActivations): the GPU keeps one block's worth".into()
    }
}

/// A loss without the full fp32 logits (chunked, or fused with the output projection).
fn cross_entropy(c: &At, n: &mut Scenario) -> String {
    let (s, step) = (c.s, c.step);
    let want = if step == Step::ChunkedCrossEntropy { Loss::Chunked } else { Loss::FusedLinear };
    let loss = s.training.techniques.loss;
    if loss == want || loss == Loss::FusedLinear || (want == Loss::Chunked && loss == Loss::ChunkedNoUpcast) {
        "the loss already avoids the full fp32 logits".into()
    } else {
        n.training.techniques.loss = want;
        if want == Loss::Chunked {
            format!("cross-entropy in {} chunks (torchtune): the fp32 logit gradients of one chunk at a time", n.training.techniques.loss_chunks)
        } else {
            "output projection and cross-entropy fused (Liger, CUDA): no logits at all".into()
        }
    }
}

/// Adam's states in 8 bits.
fn optimizer_8bit(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if matches!(s.training.optimizer, Optimizer::Adamw | Optimizer::Adam) {
        n.training.optimizer = Optimizer::Adamw8bit;
        "Adam states in 8 bits: 8 → 2 bytes per parameter (bitsandbytes)".into()
    } else {
        "only Adam/AdamW have an 8-bit variant here".into()
    }
}

/// Optimizer states to CPU memory (ZeRO-Offload).
fn cpu_offload(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.parallel.offload == Offload::None {
        n.parallel.offload = Offload::Optimizer;
        n.parallel.zero = n.parallel.zero.max(Zero::Gradients);
        "optimizer states (and gradient partitions) to CPU memory, ZeRO-Offload".into()
    } else {
        "offload already on".into()
    }
}

/// The largest smaller micro-batch that fits ([`smaller_micro_batch`]).
fn micro_batch(c: &At, n: &mut Scenario) -> String {
    smaller_micro_batch(c.s, n)
}

/// A fused attention kernel instead of eager.
fn flash_attention(c: &At, n: &mut Scenario) -> String {
    let s = c.s;
    if s.training.attention == Attention::Eager {
        n.training.attention = Attention::Flash;
        "FlashAttention never stores the s×s scores".into()
    } else {
        "already a fused attention kernel".into()
    }
}

/// LoRA or QLoRA adapters on a frozen base.
fn lora(c: &At, n: &mut Scenario) -> String {
    let (s, step) = (c.s, c.step);
    let base = if step == Step::Qlora { LoraBase::Nf4 } else { LoraBase::Bf16 };
    if s.training.lora.as_ref().is_some_and(|l| l.base == base) {
        "already on".into()
    } else {
        n.training.lora = Some(Lora { base, ..Lora::default() });
        if base == LoraBase::Nf4 {
            "frozen 4-bit NF4 base, rank-16 adapters on all linears".into()
        } else {
            "frozen 16-bit base, rank-16 adapters on all linears".into()
        }
    }
}

/// Largest power of two ≤ `n`.
fn power_of_two_at_most(n: u64) -> u64 {
    if n == 0 {
        1
    } else {
        1 << (63 - n.leading_zeros())
    }
}

/// "1 GPU" / "8 GPUs".
fn gpus_text(n: u64) -> String {
    format!("{n} GPU{}", if n == 1 { "" } else { "s" })
}

/// Lays the GPU budget out as data parallelism around the model-parallel degrees, keeping
/// the global batch when the new data-parallel degree divides it (the micro-batch may
/// shrink; accumulation makes up the rest). Returns a note when the global batch changed.
fn fill_data_parallel(s: &mut Scenario, gpus: u64) -> Option<String> {
    let global = global_batch(s);
    let model_parallel = s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1)).saturating_mul(s.parallel.cp.max(1));
    s.parallel.dp = (gpus / model_parallel).max(1);
    let micro = s.training.micro_batch;
    if split_global_batch(&mut s.training, global, s.parallel.dp, micro) {
        None
    } else {
        Some(format!("global batch {global} → {}: {global} does not split over {} data-parallel GPUs", global_batch(s), s.parallel.dp))
    }
}

/// `text`, followed by "; `extra`" when there is one.
fn with_note(text: String, extra: Option<String>) -> String {
    match extra {
        Some(extra) => format!("{text}; {extra}"),
        None => text,
    }
}

/// Double a parallel degree (starting from `current`) while `allowed` says the next value is
/// possible, stopping at the first value that fits; `set` applies a degree and lays the
/// budget out around it (its note is returned with the chosen scenario). Returns `s`
/// unchanged when no doubling is allowed.
fn double_until_fits(s: &Scenario, current: u64, allowed: impl Fn(u64) -> bool, set: impl Fn(&mut Scenario, u64) -> Option<String>) -> (Scenario, Option<String>) {
    let mut degree = current.max(1);
    let mut chosen = (s.clone(), None);
    while allowed(degree.saturating_mul(2)) {
        degree = degree.saturating_mul(2);
        let mut next = s.clone();
        let note = set(&mut next, degree);
        let fits = estimate(&next).fits;
        chosen = (next, note);
        if fits {
            break;
        }
    }
    chosen
}

/// The micro-batch step: the largest smaller micro-batch that fits, accumulation making up
/// the rest so micro-batch × accumulation (and the global batch) is kept: what accelerate's
/// `find_executable_batch_size` finds by trial, with `gradient_accumulation_steps` raised to
/// match (HF "Efficient training on a single GPU", "Batch size choice" and "Gradient
/// accumulation"). Only divisors of the replica's share keep it exactly; when none fits,
/// the smallest (1), which saves the most for the steps after it.
fn smaller_micro_batch(s: &Scenario, n: &mut Scenario) -> String {
    /// Candidates below the micro-batch looked at: more than any micro-batch accepted.
    const MICRO_SCAN: u64 = 1 << 21;
    let (micro, accum) = (s.training.micro_batch.max(1), s.training.grad_accum.max(1));
    if s.training.mode == crate::scenario::Mode::Inference {
        return "inference accumulates nothing: fewer concurrent sequences is a serving step".into();
    }
    if micro == 1 {
        return "micro-batch already 1".into();
    }
    let share = micro.saturating_mul(accum);
    // The divisors below the micro-batch, smallest first (at most `MICRO_SCAN` looked at, so
    // absurd unvalidated sizes answer at once); memory grows with the micro-batch, so the
    // ones that fit are a prefix, and bisection finds its end.
    let divisors: Vec<u64> = std::iter::once(1).chain((micro.saturating_sub(MICRO_SCAN).max(2)..micro).filter(|d| share.is_multiple_of(*d))).collect();
    let fits_at = |d: u64| {
        let mut tried = s.clone();
        split_global_batch(&mut tried.training, share, 1, d);
        estimate(&tried).fits
    };
    let fitting_count = divisors.partition_point(|&d| fits_at(d));
    let fitting = fitting_count.checked_sub(1).map(|i| divisors[i]);
    split_global_batch(&mut n.training, share, 1, fitting.unwrap_or(1));
    let changes = super::changes::changes_text(s, n);
    if fitting.is_some() {
        changes
    } else {
        format!("{changes}: not enough alone")
    }
}
