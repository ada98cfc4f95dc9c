//! The escalation ladder: apply memory-saving steps to a scenario in order and report, after
//! each, the Breakdown, whether the run fits, and what the step costs (recomputation,
//! communication and the part of it that overlaps compute, pipeline bubble, step time).
//!
//! The default ladder follows the usual playbook (HF "Efficient training on a single GPU",
//! the ZeRO and Megatron papers): mixed precision → activation checkpointing → ZeRO-2 →
//! ZeRO-3 → pipeline parallelism. Every step is evaluated, so a view can show the path past
//! the first fit greyed out; `first_fit` marks where the run first fits.
//!
//! The ladder only ever adds steps, so by the first fit some earlier ones may no longer be
//! needed: ZeRO-2 alone can fit where checkpointing alone did not, and checkpointing costs
//! a third more compute. [`Escalation::plan`] is the fewest steps that still fit: the
//! applied steps before the first fit are dropped one at a time, costliest in step time
//! first, as long as the run still fits with the safety margin and is no slower (a step
//! whose removal changes nothing is dropped too). Like the search, a run without a step
//! may take a smaller micro-batch and more accumulation to fit, the global batch kept, so
//! the plan and the search's best agree where both apply; where the ladder has its own
//! smaller-micro-batch step, that trade is the step's and the plan keeps it, so the plan
//! names every change it makes.
//!
//! The distributed steps lay the job out on the GPU budget they are given, never more; the
//! global batch (micro-batch × accumulation × dp) is kept whenever the new data-parallel
//! degree divides it, and the step's note says when it cannot be.

use serde::{Deserialize, Serialize};

use super::search::evaluate_layout;
use super::{context_parallel_pays, faster, fits_with_margin, global_batch, split_global_batch, DEFAULT_MARGIN, MIN_CP_TOKENS};
use crate::estimate;
use crate::model::arch::{Architecture, Tensors};
use crate::model::breakdown::{Breakdown, StepTime};
use crate::model::communication::communication;
use crate::model::device::Device;
use crate::model::inputs::{Attention, Checkpointing, Lora, LoraBase, Loss, Offload, Optimizer, PpSchedule, Zero};
use crate::model::precision::Precision;
use crate::model::step_time::step_time;
use crate::model::Inputs;
use crate::scenario::Scenario;

/// One memory-saving move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    MixedPrecision,
    SelectiveCheckpointing,
    ActivationCheckpointing,
    Zero2,
    Zero3,
    PipelineParallel,
    TensorParallel,
    ContextParallel,
    Optimizer8bit,
    CpuOffload,
    SmallerMicroBatch,
    FlashAttention,
    Lora,
    Qlora,
    OptimizerInBackward,
    ChunkedCrossEntropy,
    FusedCrossEntropy,
    ActivationOffload,
    PureBf16,
    /// Serving (`serving_ladder.rs`): an 8-bit KV cache.
    Fp8KvCache,
    /// Serving: FP8 weights.
    Fp8Weights,
    /// Serving: 4-bit weights (AWQ / GPTQ).
    Int4Weights,
    /// Serving: a larger share of the GPU for the engine.
    HigherMemoryFraction,
    /// Serving: a shorter context per request.
    ShorterContext,
    /// Serving: fewer sequences at once.
    FewerSequences,
    /// Diffusion (`diffusion_ladder.rs`): prompt embeddings computed once, text encoders freed.
    CacheTextEmbeddings,
    /// Diffusion: latents computed once, the VAE freed.
    CacheLatents,
    /// Diffusion generation: the VAE decodes tile by tile.
    VaeTiling,
    /// Diffusion generation: one part on the GPU at a time.
    ModelCpuOffload,
    /// Diffusion generation: one layer on the GPU at a time.
    SequentialCpuOffload,
    /// Diffusion: a smaller picture or fewer frames.
    SmallerPicture,
}

impl Step {
    pub const ALL: [Step; 31] = [
        Step::MixedPrecision,
        Step::SelectiveCheckpointing,
        Step::ActivationCheckpointing,
        Step::Zero2,
        Step::Zero3,
        Step::PipelineParallel,
        Step::TensorParallel,
        Step::ContextParallel,
        Step::Optimizer8bit,
        Step::CpuOffload,
        Step::SmallerMicroBatch,
        Step::FlashAttention,
        Step::Lora,
        Step::Qlora,
        Step::OptimizerInBackward,
        Step::ChunkedCrossEntropy,
        Step::FusedCrossEntropy,
        Step::ActivationOffload,
        Step::PureBf16,
        Step::Fp8KvCache,
        Step::Fp8Weights,
        Step::Int4Weights,
        Step::HigherMemoryFraction,
        Step::ShorterContext,
        Step::FewerSequences,
        Step::CacheTextEmbeddings,
        Step::CacheLatents,
        Step::VaeTiling,
        Step::ModelCpuOffload,
        Step::SequentialCpuOffload,
        Step::SmallerPicture,
    ];

    /// The seed flowchart's ladder.
    /// A smaller micro-batch with more accumulation comes first among the memory steps: it
    /// keeps the global batch and costs no recomputation or communication, so where it
    /// suffices nothing more invasive is needed.
    pub const DEFAULT_LADDER: [Step; 6] = [Step::MixedPrecision, Step::SmallerMicroBatch, Step::ActivationCheckpointing, Step::Zero2, Step::Zero3, Step::PipelineParallel];

    /// The ladder for one GPU, where nothing can be sharded: the frameworks' single-device
    /// techniques, cheapest in step time first — a smaller micro-batch with more
    /// accumulation (the global batch kept), the loss without full logits (Liger), block
    /// recomputation, bf16 weights and states (torchtune `dtype: bf16`), 8-bit states
    /// (bitsandbytes), the optimizer step fused into backward (torchtune `optimizer_in_bwd`),
    /// activations and then optimizer states moved to host memory (torchtune
    /// `enable_activation_offloading`, DeepSpeed ZeRO-Offload).
    pub const SINGLE_GPU_LADDER: [Step; 9] = [
        Step::SmallerMicroBatch,
        Step::FusedCrossEntropy,
        Step::ActivationCheckpointing,
        Step::PureBf16,
        Step::Optimizer8bit,
        Step::OptimizerInBackward,
        Step::ActivationOffload,
        Step::CpuOffload,
        Step::Qlora,
    ];

    /// The ladder a view starts from for a budget of `gpus`.
    pub fn default_ladder(gpus: u64) -> &'static [Step] {
        if gpus <= 1 {
            &Step::SINGLE_GPU_LADDER
        } else {
            &Step::DEFAULT_LADDER
        }
    }

    /// The ladder a view starts from for `s` on a budget of `gpus`: serving fixes for an
    /// inference scenario (`serving_ladder.rs`), training ones otherwise.
    pub fn ladder_for(s: &Scenario, gpus: u64) -> &'static [Step] {
        let inference = s.training.mode == crate::model::inputs::Mode::Inference;
        if super::diffusion_ladder::is_pipeline(s) {
            return if inference { &super::diffusion_ladder::GENERATION_LADDER } else { &super::diffusion_ladder::TRAINING_LADDER };
        }
        if inference {
            &super::serving_ladder::SERVING_LADDER
        } else {
            Step::default_ladder(gpus)
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Step::MixedPrecision => "Mixed precision (bf16)",
            Step::SelectiveCheckpointing => "Selective checkpointing",
            Step::ActivationCheckpointing => "Activation checkpointing",
            Step::Zero2 => "ZeRO-2",
            Step::Zero3 => "ZeRO-3 / FSDP",
            Step::PipelineParallel => "Pipeline parallel",
            Step::TensorParallel => "Tensor parallel",
            Step::ContextParallel => "Context parallel",
            Step::Optimizer8bit => "8-bit optimizer",
            Step::CpuOffload => "CPU offload",
            Step::SmallerMicroBatch => "Smaller micro-batch",
            Step::FlashAttention => "Flash attention",
            Step::Lora => "LoRA",
            Step::Qlora => "QLoRA",
            Step::OptimizerInBackward => "Optimizer step in backward",
            Step::ChunkedCrossEntropy => "Chunked cross-entropy",
            Step::FusedCrossEntropy => "Fused linear cross-entropy",
            Step::ActivationOffload => "Activation offloading",
            Step::PureBf16 => "Pure bf16 (no fp32 master)",
            Step::Fp8KvCache => "FP8 KV cache",
            Step::Fp8Weights => "FP8 weights",
            Step::Int4Weights => "4-bit weights (AWQ / GPTQ)",
            Step::HigherMemoryFraction => "Larger memory fraction",
            Step::ShorterContext => "Shorter context",
            Step::FewerSequences => "Fewer sequences at once",
            Step::CacheTextEmbeddings => "Cache prompt embeddings",
            Step::CacheLatents => "Cache latents",
            Step::VaeTiling => "VAE tiling",
            Step::ModelCpuOffload => "Model CPU offload",
            Step::SequentialCpuOffload => "Sequential CPU offload",
            Step::SmallerPicture => "Smaller picture or clip",
        }
    }
}

/// What a step costs, measured on the scenario after it.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct StepCosts {
    /// Extra compute from recomputation, as a fraction of the step without it.
    pub recompute_fraction: f64,
    /// Bytes one GPU sends per step, all collectives.
    pub communication_bytes: f64,
    /// Communication time on the critical path per step, seconds.
    pub communication_seconds: f64,
    /// Data-parallel communication hidden behind the backward pass, seconds.
    pub overlapped_seconds: f64,
    /// Pipeline bubble as a fraction of the ideal step: (p − 1)/(m·v).
    pub bubble_fraction: f64,
    /// Estimated step time including exposed communication, seconds.
    pub step_seconds: f64,
    pub tokens_per_second: f64,
}

/// The ladder evaluated after one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EscalationStep {
    pub name: String,
    /// `None` for the starting point and for the plan.
    pub step: Option<Step>,
    /// Whether the step changed the scenario.
    pub applied: bool,
    /// What the step did, or why it did nothing.
    pub note: String,
    pub scenario: Scenario,
    /// Flattened, so the step's JSON carries every Breakdown field (`fits` included).
    #[serde(flatten)]
    pub breakdown: Breakdown,
    pub costs: StepCosts,
}

impl EscalationStep {
    pub fn fits(&self) -> bool {
        self.breakdown.fits
    }
}

/// The fewest ladder steps that still fit, found from the first fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Steps the plan applies, in ladder order (the first fit's step last).
    pub kept: Vec<Step>,
    /// Steps applied before the first fit that the plan leaves out, in the order dropped.
    pub dropped: Vec<Step>,
    /// The plan evaluated.
    pub result: EscalationStep,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Escalation {
    pub steps: Vec<EscalationStep>,
    /// Index in `steps` of the first one that fits.
    pub first_fit: Option<usize>,
    /// GPUs the distributed steps could use.
    pub gpus: u64,
    /// What to launch: the first fit without the earlier steps it does not need; `None`
    /// when nothing fits.
    pub plan: Option<Plan>,
}

/// Run `ladder` on `start` with a budget of `gpus` GPUs for the distributed steps, the plan
/// keeping the default safety margin.
pub fn escalate(start: &Scenario, ladder: &[Step], gpus: u64) -> Escalation {
    escalate_with_margin(start, ladder, gpus, DEFAULT_MARGIN)
}

/// [`escalate`] with the share of capacity the plan must leave free when it drops a step.
pub fn escalate_with_margin(start: &Scenario, ladder: &[Step], gpus: u64, margin: f64) -> Escalation {
    let gpus = gpus.max(1);
    let world = start.parallel.world_size();
    let note = if world > gpus { format!("your scenario as entered: it already uses {world} GPUs, over the budget of {gpus}") } else { "your scenario as entered".into() };
    let mut current = start.clone();
    let mut steps = vec![evaluate("Start", None, true, note, current.clone())];
    for &step in ladder {
        let (next, note) = apply(step, &current, gpus);
        let applied = next != current;
        current = next;
        steps.push(evaluate(step.label(), Some(step), applied, note, current.clone()));
    }
    let first_fit = steps.iter().position(|s| s.fits());
    let plan = first_fit.map(|f| minimal_plan(start, &steps, f, gpus, margin));
    Escalation { steps, first_fit, gpus, plan }
}

fn evaluate(name: &str, step: Option<Step>, applied: bool, note: String, scenario: Scenario) -> EscalationStep {
    let breakdown = estimate(&scenario);
    let costs = costs(&scenario, &breakdown);
    EscalationStep { name: name.into(), step, applied, note, scenario, breakdown, costs }
}

/// `start` with the ladder steps `steps` applied in order.
fn replay(start: &Scenario, steps: &[Step], gpus: u64) -> Scenario {
    steps.iter().fold(start.clone(), |s, &step| apply(step, &s, gpus).0)
}

/// The first fit's steps less those it does not need: each applied step before the first
/// fit, costliest in step time first, is dropped when the run without it is the same run,
/// or fits with `margin` and is no slower (by more than [`super::SAME_TIME`]). A run
/// without the step that does not fit at its micro-batch is tried, as the search would, at
/// the largest micro-batch that fits with the global batch kept (more accumulation steps);
/// the smaller-micro-batch step is not dropped for that trade, which is its own.
fn minimal_plan(start: &Scenario, steps: &[EscalationStep], first_fit: usize, gpus: u64, margin: f64) -> Plan {
    // Indices into `steps` of the steps that changed something, up to the first fit.
    let mut kept: Vec<usize> = (1..=first_fit).filter(|&k| steps[k].applied && steps[k].step.is_some()).collect();
    let mut candidates: Vec<(usize, f64)> = kept.iter().filter(|&&k| k < first_fit).map(|&k| (k, steps[k].costs.step_seconds - steps[k - 1].costs.step_seconds)).collect();
    candidates.sort_by(|a, b| b.1.total_cmp(&a.1));
    let ladder = |kept: &[usize]| kept.iter().filter_map(|&k| steps[k].step).collect::<Vec<_>>();
    let mut best = steps[first_fit].clone();
    let mut dropped = Vec::new();
    for (k, _) in candidates {
        let trial: Vec<usize> = kept.iter().copied().filter(|&i| i != k).collect();
        let scenario = replay(start, &ladder(&trial), gpus);
        let drop = scenario == best.scenario
            || match fitting(scenario, margin) {
                // The same run only because the micro-batch was traded for accumulation: that
                // trade is the micro-batch step's own, which then stays in the plan.
                Some(c) if c.scenario == best.scenario => steps[k].step != Some(Step::SmallerMicroBatch),
                // Fits and is not slower: fewer steps (a smaller micro-batch that is no
                // longer needed costs nothing to drop, and changes less).
                Some(c) if !faster(best.costs.step_seconds, c.costs.step_seconds) => {
                    best = c;
                    true
                }
                _ => false,
            };
        if drop {
            kept = trial;
            dropped.extend(steps[k].step);
        }
    }
    let kept = ladder(&kept);
    let names = |s: &[Step]| s.iter().map(|s| s.label()).collect::<Vec<_>>().join(", ");
    best.name = "Plan".into();
    best.step = None;
    best.applied = true;
    best.note = match (kept.is_empty(), dropped.is_empty()) {
        (true, _) => "fits as entered".into(),
        (false, true) => format!("{}: every step up to the first fit is needed", names(&kept)),
        (false, false) => format!("{} without {}: fits and is no slower", names(&kept), names(&dropped)),
    };
    let (was, now) = (&steps[first_fit].scenario.training, &best.scenario.training);
    if was.micro_batch != now.micro_batch {
        best.note.push_str(&format!("; micro-batch {} → {} with {} accumulation steps, the same global batch", was.micro_batch, now.micro_batch, now.grad_accum));
    }
    Plan { kept, dropped, result: best }
}

/// `s` evaluated if it fits with `margin`; otherwise at the largest micro-batch that does,
/// keeping the global batch ([`evaluate_layout`]); `None` when nothing fits.
fn fitting(s: Scenario, margin: f64) -> Option<EscalationStep> {
    let step = evaluate("Plan", None, true, String::new(), s);
    if fits_with_margin(&step.breakdown, margin) {
        return Some(step);
    }
    let c = evaluate_layout(&step.scenario, global_batch(&step.scenario), margin, &mut 0)?;
    Some(EscalationStep { scenario: c.scenario, breakdown: c.breakdown, costs: c.costs, ..step })
}

/// Costs of a scenario: recomputation from the step-time FLOPs, communication from
/// `communication.rs`, the bubble from the schedule.
pub fn costs(s: &Scenario, b: &Breakdown) -> StepCosts {
    let Some(arch) = s.model.architecture() else {
        return StepCosts::default();
    };
    let (device, _) = s.device.resolve_or_default();
    step_costs(s, &arch, &Tensors::new(&arch), &device, &b.step_time, b.trainable_params)
}

/// [`costs`] from an estimate's step time and trainable parameters, with the scenario's
/// model (`arch` and its `tensors`) and device resolved by the caller.
pub fn step_costs(s: &Scenario, arch: &Architecture, tensors: &Tensors, device: &Device, step_time: &StepTime, trainable_params: u64) -> StepCosts {
    let mut plain = s.training.clone();
    plain.checkpointing = Checkpointing::None;
    let plain_flops = estimate_flops(&Inputs { training: &plain, ..inputs(arch, s, device) }, tensors);
    let recompute_fraction = if plain_flops > 0.0 { step_time.flops_per_gpu / plain_flops - 1.0 } else { 0.0 };
    let comm = communication(&inputs(arch, s, device), trainable_params as f64 / (s.parallel.tp.max(1) * s.parallel.pp.max(1)) as f64);
    let p = &s.parallel;
    let v = if p.pp_schedule == PpSchedule::Interleaved { p.virtual_stages.max(1) as f64 } else { 1.0 };
    let bubble_fraction = if p.pp > 1 { (p.pp as f64 - 1.0) / (s.training.grad_accum.max(1) as f64 * v) } else { 0.0 };
    // Data-parallel traffic hides behind the backward pass when shorter: DDP all-reduces each
    // bucket as its gradients appear (Li et al. 2020, "PyTorch Distributed", §3.2.3), and ZeRO
    // overlaps its reduce-scatter the same way. Backward is all but the one forward: the forward
    // is a third of the step without recomputation (backward twice the forward, Kaplan et al.
    // 2020 §2.1), so 2/3 of the compute, more when recomputation runs inside backward.
    let compute = step_time.seconds;
    let flops = step_time.flops_per_gpu;
    let backward_share = if flops > 0.0 && plain_flops > 0.0 { (1.0 - plain_flops / 3.0 / flops).clamp(0.0, 1.0) } else { 0.0 };
    let exposed_dp = (comm.data_parallel_seconds - compute * backward_share).max(0.0);
    let step_seconds = compute + comm.exposed_seconds + exposed_dp;
    let tokens = step_time.tokens_per_second * compute;
    StepCosts {
        recompute_fraction: recompute_fraction.max(0.0),
        communication_bytes: comm.bytes_per_step,
        communication_seconds: comm.exposed_seconds + exposed_dp,
        overlapped_seconds: comm.data_parallel_seconds - exposed_dp,
        bubble_fraction,
        step_seconds,
        tokens_per_second: if step_seconds > 0.0 { tokens / step_seconds } else { 0.0 },
    }
}

fn estimate_flops(inputs: &Inputs, tensors: &Tensors) -> f64 {
    step_time(inputs, tensors, &Default::default(), &Default::default(), 0.0, 0.0).flops_per_gpu
}

fn inputs<'a>(arch: &'a Architecture, s: &'a Scenario, device: &'a Device) -> Inputs<'a> {
    Inputs { arch, training: &s.training, parallel: &s.parallel, device, runtime: &s.runtime }
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

/// The scenario after `step`, and a sentence saying what changed or why nothing did.
pub fn apply(step: Step, s: &Scenario, gpus: u64) -> (Scenario, String) {
    if super::diffusion_ladder::is_pipeline(s) {
        if let Some(applied) = super::diffusion_ladder::apply(step, s) {
            return applied;
        }
    }
    let mut n = s.clone();
    let heads = match s.model.architecture().as_deref() {
        Some(Architecture::Transformer(t)) => Some((t.attention.heads, t.attention.kv_heads, t.layers)),
        _ => None,
    };
    let note = match step {
        Step::Fp8KvCache | Step::Fp8Weights | Step::Int4Weights | Step::HigherMemoryFraction | Step::ShorterContext | Step::FewerSequences => {
            return super::serving_ladder::apply(step, s)
        }
        Step::CacheTextEmbeddings | Step::CacheLatents | Step::VaeTiling | Step::ModelCpuOffload | Step::SequentialCpuOffload | Step::SmallerPicture => {
            "only a diffusion pipeline has this step".into()
        }
        Step::MixedPrecision => {
            if s.training.precision == Precision::Fp32 {
                n.training.precision = Precision::Bf16Mixed;
                "fp32 → bf16 autocast: activations halve; weights stay fp32 as the master copy".into()
            } else {
                format!("already {}", crate::labels::precision_label(s.training.precision))
            }
        }
        Step::PureBf16 => {
            if s.training.precision == Precision::Bf16 {
                "already pure bf16".into()
            } else {
                n.training.precision = Precision::Bf16;
                "bf16 weights, gradients and optimizer states, no fp32 master copy (torchtune dtype: bf16, LitGPT bf16-true): updates smaller than bf16's resolution are lost"
                    .into()
            }
        }
        Step::SelectiveCheckpointing => {
            if s.training.checkpointing == Checkpointing::None {
                n.training.checkpointing = Checkpointing::Selective;
                "recompute the attention core in backward (no effect on memory with flash/SDPA, which never store it)".into()
            } else {
                "checkpointing already on".into()
            }
        }
        Step::ActivationCheckpointing => {
            if s.training.checkpointing != Checkpointing::Full {
                n.training.checkpointing = Checkpointing::Full;
                "keep only each block's input; recompute the block in backward (one extra forward)".into()
            } else {
                "already full checkpointing".into()
            }
        }
        Step::Zero2 | Step::Zero3 => {
            let stage = if step == Step::Zero2 { Zero::Gradients } else { Zero::Parameters };
            let batch = fill_data_parallel(&mut n, gpus);
            if n.parallel.dp * n.parallel.cp < 2 {
                n = s.clone();
                format!("needs more than one data-parallel GPU: the budget is {}; raise it to shard", gpus_text(gpus))
            } else if s.parallel.zero >= stage {
                n = s.clone();
                format!("ZeRO-{} already on", s.parallel.zero)
            } else {
                n.parallel.zero = stage;
                let what = if stage == Zero::Gradients { "optimizer states and gradients" } else { "optimizer states, gradients and weights" };
                with_note(format!("shard {what} over {} data-parallel GPUs", n.parallel.dp * n.parallel.cp), batch)
            }
        }
        Step::PipelineParallel => {
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
            n = next;
            if n.parallel.pp == s.parallel.pp {
                format!("no room: the budget is {} for {layers} layers", gpus_text(gpus))
            } else {
                let bubble = (n.parallel.pp - 1) as f64 / n.training.grad_accum.max(1) as f64;
                with_note(
                    format!("{} stages (1F1B), {} micro-batches of {} per step: bubble {:.0}%", n.parallel.pp, n.training.grad_accum, n.training.micro_batch, bubble * 100.0),
                    batch,
                )
            }
        }
        Step::TensorParallel => {
            let (a, g, _) = heads.unwrap_or((1, 1, 1));
            let room = power_of_two_at_most(gpus / s.parallel.pp.max(1).saturating_mul(s.parallel.cp.max(1))).min(super::search::MAX_TP);
            let divides_heads = |tp: u64| tp <= room && a % tp == 0 && (g % tp == 0 || tp.is_multiple_of(g));
            let (next, batch) = double_until_fits(s, s.parallel.tp, divides_heads, |t, tp| {
                t.parallel.tp = tp;
                t.parallel.sp = true;
                fill_data_parallel(t, gpus)
            });
            n = next;
            if n.parallel.tp == s.parallel.tp {
                "no room for a larger tensor-parallel group (heads, or GPUs)".into()
            } else {
                with_note(format!("tensor parallel over {} GPUs with sequence parallelism", n.parallel.tp), batch)
            }
        }
        Step::ContextParallel => {
            let room = gpus / s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1));
            let cp = s.parallel.cp.max(1).saturating_mul(2);
            if room < cp {
                format!("no room for context parallelism: the budget is {}", gpus_text(gpus))
            } else if !context_parallel_pays(s.training.seq_len, cp) {
                format!("{}-token sequences are too short to split over {cp} GPUs: context parallelism pays from {MIN_CP_TOKENS} tokens per GPU", s.training.seq_len)
            } else {
                n.parallel.cp = cp;
                let batch = fill_data_parallel(&mut n, gpus);
                with_note(format!("split each sequence over {cp} GPUs (ring attention)"), batch)
            }
        }
        Step::OptimizerInBackward => {
            if s.training.techniques.optimizer_in_backward {
                "already fused into backward".into()
            } else if s.training.grad_accum > 1 {
                "needs gradient accumulation 1: each gradient is freed by its update".into()
            } else {
                n.training.techniques.optimizer_in_backward = true;
                "update each parameter in backward and free its gradient: no gradients and no optimizer-step peak (register_post_accumulate_grad_hook)".into()
            }
        }
        Step::ActivationOffload => {
            if s.training.techniques.activation_offload {
                "activations already offloaded".into()
            } else {
                n.training.techniques.activation_offload = true;
                "saved activations to host memory in forward, back in backward (torchtune OffloadActivations): the GPU keeps one block's worth".into()
            }
        }
        Step::ChunkedCrossEntropy | Step::FusedCrossEntropy => {
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
        Step::Optimizer8bit => {
            if matches!(s.training.optimizer, Optimizer::Adamw | Optimizer::Adam) {
                n.training.optimizer = Optimizer::Adamw8bit;
                "Adam states in 8 bits: 8 → 2 bytes per parameter (bitsandbytes)".into()
            } else {
                "only Adam/AdamW have an 8-bit variant here".into()
            }
        }
        Step::CpuOffload => {
            if s.parallel.offload == Offload::None {
                n.parallel.offload = Offload::Optimizer;
                n.parallel.zero = n.parallel.zero.max(Zero::Gradients);
                "optimizer states (and gradient partitions) to CPU memory, ZeRO-Offload".into()
            } else {
                "offload already on".into()
            }
        }
        Step::SmallerMicroBatch => smaller_micro_batch(s, &mut n),
        Step::FlashAttention => {
            if s.training.attention == Attention::Eager {
                n.training.attention = Attention::Flash;
                "FlashAttention never stores the s×s scores".into()
            } else {
                "already a fused attention kernel".into()
            }
        }
        Step::Lora | Step::Qlora => {
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
    };
    (n, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 10's case: Llama-3-8B full fine-tuning on one 24 GB GPU (RTX 4090, Linux: out of
    /// memory, no spill) cannot shard anything; the single-GPU ladder reaches a fitting plan,
    /// each rung saying what it did, memory never growing along the way.
    #[test]
    fn single_gpu_ladder_fits_llama3_8b_full_fine_tuning_on_24_gb() {
        let mut s = Scenario { device: crate::scenario::DeviceSpec::preset("rtx-4090-24gb"), ..Scenario::default() };
        s.runtime.platform = crate::model::inputs::Platform::Linux;
        assert_eq!(Step::default_ladder(1), &Step::SINGLE_GPU_LADDER);
        let e = escalate(&s, Step::default_ladder(1), 1);
        let first = e.first_fit.expect("a rung where it fits");
        let applied: Vec<_> = e.steps[..=first].iter().filter(|st| st.applied).collect();
        for pair in applied.windows(2) {
            assert!(pair[1].breakdown.total <= pair[0].breakdown.total, "{} grew memory", pair[1].name);
        }
        assert!(e.steps.iter().all(|st| !st.note.is_empty()));
        let plan = e.plan.expect("a plan");
        assert!(plan.result.breakdown.fits);
        assert_eq!(plan.result.scenario.parallel.world_size(), 1);
        assert_eq!(plan.result.scenario.training.lora, None, "full fine-tuning, not an adapter");
        assert!(plan.kept.contains(&Step::PureBf16) && plan.kept.contains(&Step::CpuOffload), "{:?}", plan.kept);
    }

    /// The design's acceptance case: Llama-3-8B (bf16-mixed AdamW, batch 1, seq 4096) with
    /// 8 × 80 GB: the ladder stops at the first fit, every step up to it lowers per-GPU
    /// memory or says why not, and every step says what it did. Past the first fit a step
    /// may cost memory: pipeline parallelism after ZeRO-3 takes two micro-batches, and FSDP2
    /// keeps its sharded gradients from one to the next (measured in fsdp.json, `ga2`).
    #[test]
    fn default_ladder_on_llama3_8b_with_eight_gpus() {
        let e = escalate(&Scenario::default(), &Step::DEFAULT_LADDER, 8);
        assert_eq!(e.steps.len(), 7);
        assert!(!e.steps[0].fits(), "the default scenario does not fit on one GPU");
        let first = e.first_fit.expect("fits somewhere on 8 × 80 GB");
        assert!(e.steps[..first].iter().all(|s| !s.fits()));
        for pair in e.steps[..=first].windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if b.applied {
                assert!(b.breakdown.total <= a.breakdown.total, "{} raised memory: {} → {}", b.name, a.breakdown.total, b.breakdown.total);
            } else {
                assert!(!b.note.is_empty(), "{} did nothing and said nothing", b.name);
            }
        }
        assert!(e.steps.iter().all(|s| !s.note.is_empty()));
        assert_eq!(e.steps[1].note, "already bf16 mixed (AMP)");
        assert!(!e.steps[1].applied);
        for s in &e.steps {
            println!("{:<28} fits {:<5} total {:>6.1} GiB  {}", s.name, s.fits(), s.breakdown.total as f64 / (1u64 << 30) as f64, s.note);
        }
    }

    #[test]
    fn model_parallel_steps_split_llama3_70b() {
        let s = Scenario { model: crate::scenario::ModelSpec::Preset("llama-3-70b".into()), ..Scenario::default() };
        let e = escalate(&s, &[Step::ActivationCheckpointing, Step::TensorParallel, Step::PipelineParallel], 64);
        let tp = &e.steps[2];
        assert!(tp.applied && tp.scenario.parallel.tp > 1 && tp.scenario.parallel.sp);
        let pp = &e.steps[3];
        assert!(pp.scenario.parallel.world_size() <= 64);
        for pair in e.steps.windows(2) {
            assert!(!pair[1].applied || pair[1].breakdown.total <= pair[0].breakdown.total, "{}", pair[1].name);
        }
    }

    /// Hand-computed costs. Full checkpointing adds one forward of the blocks, not of the
    /// embedding or the untied head (Narayanan et al. 2021, Appendix eq. (3)): Llama-3-8B at
    /// 4096 tokens does 2(Ψ − Vh) + 2·L·s·h FLOPs per token forward, of which the blocks are
    /// 2(Ψ − 2Vh − h) + 2·L·s·h, so recomputation adds blocks / (3 × forward) ≈ 31.2%. ZeRO-2
    /// on 8 GPUs moves 2·(8−1)/8 of the 16-bit gradients per step (ring all-reduce volume), all of it behind the backward pass.
    #[test]
    fn step_costs_match_hand_computation() {
        let mut s = Scenario::default();
        s.training.checkpointing = Checkpointing::Full;
        let b = estimate(&s);
        let c = costs(&s, &b);
        let (psi, v, h, l, seq) = (8_030_261_248.0, 128_256.0, 4096.0, 32.0, 4096.0);
        let forward = 2.0 * (psi - v * h) + 2.0 * l * seq * h;
        let blocks = 2.0 * (psi - 2.0 * v * h - h) + 2.0 * l * seq * h;
        let expected = blocks / (3.0 * forward);
        assert!((c.recompute_fraction - expected).abs() < 1e-9, "{} vs {expected}", c.recompute_fraction);

        let mut z = Scenario::default();
        z.parallel.dp = 8;
        z.parallel.zero = Zero::Gradients;
        let bz = estimate(&z);
        let cz = costs(&z, &bz);
        let expected = 2.0 * 7.0 / 8.0 * 8_030_261_248.0 * 2.0;
        assert!((cz.communication_bytes - expected).abs() / expected < 1e-9, "{} vs {expected}", cz.communication_bytes);
        assert_eq!(cz.bubble_fraction, 0.0);
        // NVLink, 450 GB/s each way (H100 SXM): 28.1 GB take 62 ms, hidden behind backward.
        let (device, _) = z.device.resolve_or_default();
        assert!((cz.overlapped_seconds - expected / device.interconnect_bandwidth).abs() < 1e-12, "{}", cz.overlapped_seconds);
        assert_eq!(cz.communication_seconds, 0.0);
        assert!((cz.step_seconds - bz.step_time.seconds).abs() < 1e-12);
    }

    /// The user study's case: Llama-3-8B, sequence 2048, 8 × A100 80GB (dp 8).
    fn llama3_8b_on_8_a100() -> Scenario {
        let mut s = Scenario::default();
        s.training.seq_len = 2048;
        s.parallel.dp = 8;
        s.device = crate::scenario::DeviceSpec::preset("a100-80gb");
        s
    }

    /// The ladder first fits at ZeRO-2 with full checkpointing still on (1.02 s per step);
    /// ZeRO-2 alone fits and takes 765 ms, so the plan drops checkpointing.
    #[test]
    fn the_plan_drops_checkpointing_once_zero2_fits() {
        let e = escalate(&llama3_8b_on_8_a100(), &Step::DEFAULT_LADDER, 8);
        assert_eq!(e.first_fit, Some(4));
        let at_fit = &e.steps[4];
        assert_eq!(at_fit.scenario.training.checkpointing, Checkpointing::Full);
        let plan = e.plan.expect("a plan where something fits");
        assert_eq!(plan.kept, vec![Step::Zero2]);
        assert_eq!(plan.dropped, vec![Step::ActivationCheckpointing]);
        let r = &plan.result;
        assert_eq!(r.scenario.training.checkpointing, Checkpointing::None);
        assert_eq!((r.scenario.parallel.zero, r.scenario.parallel.dp), (Zero::Gradients, 8));
        assert!(fits_with_margin(&r.breakdown, DEFAULT_MARGIN));
        // Exactly the recomputation saved: one forward of the blocks (31% here, see
        // `step_costs_match_hand_computation`).
        let ratio = at_fit.costs.step_seconds / r.costs.step_seconds;
        assert!((ratio - (1.0 + at_fit.costs.recompute_fraction)).abs() < 1e-6, "{ratio}");
        assert!((r.costs.step_seconds - 0.765).abs() < 0.005, "{}", r.costs.step_seconds);
        assert!(r.note.contains("without Activation checkpointing"), "{}", r.note);
    }

    /// Four sequences per micro-batch (issue 20's case): no micro-batch fits alone, so the
    /// micro-batch step takes 1 × 4 accumulation steps (global batch 32 kept) and says so;
    /// ZeRO-2 then fits, and the plan keeps both and drops checkpointing, still a quarter
    /// faster. The micro-batch trade is a step of the plan, not a silent change.
    #[test]
    fn the_plan_may_trade_micro_batch_for_accumulation() {
        let mut s = llama3_8b_on_8_a100();
        s.training.micro_batch = 4;
        let e = escalate(&s, &Step::DEFAULT_LADDER, 8);
        assert_eq!(e.steps[2].note, "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32: not enough alone");
        assert_eq!(e.first_fit, Some(4));
        let plan = e.plan.expect("plan");
        assert_eq!(plan.kept, vec![Step::SmallerMicroBatch, Step::Zero2]);
        assert_eq!(plan.dropped, vec![Step::ActivationCheckpointing]);
        let t = &plan.result.scenario.training;
        assert_eq!((t.micro_batch, t.grad_accum, plan.result.scenario.parallel.dp), (1, 4, 8));
        assert_eq!(crate::plan::global_batch(&plan.result.scenario), 32);
        assert!(fits_with_margin(&plan.result.breakdown, DEFAULT_MARGIN));
        assert!(faster(plan.result.costs.step_seconds, e.steps[4].costs.step_seconds));
        assert_eq!(plan.result.note, "Smaller micro-batch, ZeRO-2 without Activation checkpointing: fits and is no slower");
        assert_eq!(crate::plan::changes::changes_text(&s, &plan.result.scenario), "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2");
    }

    /// Issue 20's one-GPU case: a micro-batch one past the largest that fits gets a fix, the
    /// smaller micro-batch alone (nothing more invasive), the global batch kept; and where a
    /// divisor of it fits, the largest such divisor rather than 1.
    #[test]
    fn one_past_the_largest_micro_batch_gets_the_micro_batch_step() {
        let mut s = Scenario { model: crate::scenario::ModelSpec::Preset("gpt2".into()), device: crate::scenario::DeviceSpec::preset("rtx-4090-24gb"), ..Scenario::default() };
        s.training.seq_len = 1024;
        let largest = crate::plan::limits::limits(&s).max_micro_batch.expect("gpt2 fits").value;
        assert!(largest >= 4, "{largest}");
        for micro in [largest + 1, 2 * largest] {
            s.training.micro_batch = micro;
            assert!(!estimate(&s).fits);
            let e = escalate(&s, Step::default_ladder(1), 1);
            assert_eq!(e.first_fit, Some(1), "{micro}: {}", e.steps[1].note);
            let plan = e.plan.expect("a fix");
            assert_eq!(plan.kept, vec![Step::SmallerMicroBatch]);
            let t = &plan.result.scenario.training;
            assert_eq!(t.micro_batch * t.grad_accum, micro, "global batch kept");
            // The largest divisor of the batch that fits.
            let expect = (1..=largest).rev().find(|d| micro % d == 0).expect("1 divides");
            assert_eq!(t.micro_batch, expect, "{micro}");
        }
        // Inference has no accumulation to trade for: the step changes nothing there.
        s.training.mode = crate::scenario::Mode::Inference;
        let (same, note) = apply(Step::SmallerMicroBatch, &s, 1);
        assert_eq!(same, s);
        assert!(note.starts_with("inference accumulates nothing"), "{note}");
    }

    /// Where the first fit needs what came before it, the plan is the first fit: at 4096
    /// tokens ZeRO-2 alone leaves less than the margin free.
    #[test]
    fn the_plan_keeps_the_steps_it_needs() {
        let mut s = llama3_8b_on_8_a100();
        s.training.seq_len = 4096;
        let e = escalate(&s, &Step::DEFAULT_LADDER, 8);
        assert_eq!(e.first_fit, Some(4));
        let plan = e.plan.expect("plan");
        assert!(!fits_with_margin(&escalate(&s, &[Step::Zero2], 8).steps[1].breakdown, DEFAULT_MARGIN));
        assert_eq!(plan.kept, vec![Step::ActivationCheckpointing, Step::Zero2]);
        assert!(plan.dropped.is_empty(), "{:?}", plan.dropped);
        assert_eq!(plan.result.scenario, e.steps[4].scenario);
        assert!(plan.result.note.contains("every step up to the first fit is needed"), "{}", plan.result.note);
    }

    /// A step the first fit overrides (ZeRO-2 before ZeRO-3) is dropped: the run is the same.
    /// At 16k tokens checkpointing stays: ZeRO-3 needs it.
    #[test]
    fn the_plan_drops_steps_that_change_nothing() {
        let mut s = llama3_8b_on_8_a100();
        s.training.seq_len = 16_384;
        let e = escalate(&s, &Step::DEFAULT_LADDER, 8);
        assert_eq!(e.first_fit, Some(5), "{:?}", e.steps.iter().map(|s| (s.name.clone(), s.fits())).collect::<Vec<_>>());
        let plan = e.plan.expect("plan");
        assert_eq!(plan.kept, vec![Step::ActivationCheckpointing, Step::Zero3]);
        assert_eq!(plan.dropped, vec![Step::Zero2]);
        assert_eq!(plan.result.scenario, e.steps[5].scenario);
        // Nothing to drop when the scenario fits as entered; no plan when nothing fits.
        let none = escalate(&llama3_8b_on_8_a100(), &[], 8);
        assert_eq!(none.first_fit, None);
        assert!(none.plan.is_none());
        let gpt2 = Scenario { model: crate::scenario::ModelSpec::Preset("gpt2".into()), ..Scenario::default() };
        let plan = escalate(&gpt2, &Step::DEFAULT_LADDER, 1).plan.expect("gpt2 fits");
        assert!(plan.kept.is_empty() && plan.dropped.is_empty());
        assert_eq!(plan.result.note, "fits as entered");
    }

    /// The budget is the most any step lays out (a single RTX 4090 user was told to launch on
    /// 8 GPUs): on 1 GPU the distributed steps say they need more.
    #[test]
    fn no_step_uses_more_gpus_than_the_budget() {
        for model in ["llama-3-8b", "llama-3-70b", "gpt2"] {
            let mut s = Scenario { model: crate::scenario::ModelSpec::Preset(model.into()), ..Scenario::default() };
            s.training.seq_len = 32_768;
            for gpus in [1, 2, 3, 6, 8, 16] {
                let e = escalate(&s, &Step::ALL, gpus);
                for step in &e.steps {
                    assert!(step.scenario.parallel.world_size() <= gpus, "{model} on {gpus}: {} uses {}", step.name, step.scenario.parallel.world_size());
                }
                if let Some(plan) = &e.plan {
                    assert!(plan.result.scenario.parallel.world_size() <= gpus);
                }
            }
        }
        let one = Scenario { device: crate::scenario::DeviceSpec::preset("rtx-4090-24gb"), ..Scenario::default() };
        let e = escalate(&one, &Step::DEFAULT_LADDER, 1);
        for k in [4, 5] {
            assert!(!e.steps[k].applied);
            assert!(e.steps[k].note.starts_with("needs more than one data-parallel GPU: the budget is 1 GPU"), "{}", e.steps[k].note);
        }
        assert!(e.steps[6].note.starts_with("no room"), "{}", e.steps[6].note);
    }

    /// The distributed steps keep micro-batch × accumulation × dp, or say why not.
    #[test]
    fn the_ladder_keeps_the_global_batch() {
        let mut s = llama3_8b_on_8_a100();
        s.parallel.dp = 1;
        s.training.micro_batch = 4;
        s.training.grad_accum = 8;
        s.training.seq_len = 8192;
        let e = escalate(&s, &[Step::ActivationCheckpointing, Step::Zero2, Step::TensorParallel, Step::PipelineParallel], 8);
        for step in &e.steps {
            assert_eq!(crate::plan::global_batch(&step.scenario), 32, "{}: {}", step.name, step.note);
        }
        assert_eq!(e.steps[2].scenario.parallel.dp, 8);
        // One sequence cannot be shared by 8 data-parallel GPUs: the note says so.
        let e = escalate(&Scenario::default(), &[Step::Zero2], 8);
        assert!(e.steps[1].note.contains("global batch 1 → 8"), "{}", e.steps[1].note);
    }

    #[test]
    fn context_parallel_waits_for_long_sequences() {
        let mut s = llama3_8b_on_8_a100();
        s.parallel.dp = 1;
        let (same, note) = apply(Step::ContextParallel, &s, 8);
        assert_eq!(same, s);
        assert!(note.contains("too short"), "{note}");
        s.training.seq_len = 65_536;
        let (split, _) = apply(Step::ContextParallel, &s, 8);
        assert_eq!(split.parallel.cp, 2);
        assert!(split.parallel.world_size() <= 8);
    }
}
