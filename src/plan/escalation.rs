//! The escalation ladder: apply memory-saving steps to a scenario in order and report, after
//! each, the Breakdown, whether the run fits, and what the step costs (recomputation,
//! communication, pipeline bubble, step time).
//!
//! The default ladder follows the usual playbook (HF "Efficient training on a single GPU",
//! the ZeRO and Megatron papers): mixed precision → activation checkpointing → ZeRO-2 →
//! ZeRO-3 → pipeline parallelism. Every step is evaluated, so a view can show the path past
//! the first fit greyed out; `first_fit` marks where the run first fits.

use serde::{Deserialize, Serialize};

use crate::estimate;
use crate::model::arch::Architecture;
use crate::model::breakdown::Breakdown;
use crate::model::communication::communication;
use crate::model::device::Device;
use crate::model::precision::Precision;
use crate::model::step_time::step_time;
use crate::model::Inputs;
use crate::model::inputs::{Attention, Checkpointing, Lora, LoraBase, Loss, Offload, Optimizer, PpSchedule, Zero};
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
}

impl Step {
    pub const ALL: [Step; 18] = [
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
    ];

    /// The seed flowchart's ladder.
    pub const DEFAULT_LADDER: [Step; 5] = [Step::MixedPrecision, Step::ActivationCheckpointing, Step::Zero2, Step::Zero3, Step::PipelineParallel];

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
    /// `None` for the starting point.
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Escalation {
    pub steps: Vec<EscalationStep>,
    /// Index in `steps` of the first one that fits.
    pub first_fit: Option<usize>,
}

/// Run `ladder` on `start` with up to `gpus` GPUs available to the distributed steps.
pub fn escalate(start: &Scenario, ladder: &[Step], gpus: u64) -> Escalation {
    let gpus = gpus.max(start.parallel.world_size()).max(1);
    let mut current = start.clone();
    let mut steps = vec![evaluate("Start", None, true, "your scenario as entered".into(), current.clone())];
    for &step in ladder {
        let (next, note) = apply(step, &current, gpus);
        let applied = next != current;
        current = next;
        steps.push(evaluate(step.label(), Some(step), applied, note, current.clone()));
    }
    let first_fit = steps.iter().position(|s| s.fits());
    Escalation { steps, first_fit }
}

fn evaluate(name: &str, step: Option<Step>, applied: bool, note: String, scenario: Scenario) -> EscalationStep {
    let breakdown = estimate(&scenario);
    let costs = costs(&scenario, &breakdown);
    EscalationStep { name: name.into(), step, applied, note, scenario, breakdown, costs }
}

/// Costs of a scenario: recomputation from the step-time FLOPs, communication from
/// `communication.rs`, the bubble from the schedule.
pub fn costs(s: &Scenario, b: &Breakdown) -> StepCosts {
    let Some(arch) = s.model.architecture() else { return StepCosts::default() };
    let (device, _) = s.device.resolve_or_default();
    let mut plain = s.clone();
    plain.training.checkpointing = Checkpointing::None;
    let plain_flops = estimate_flops(&arch, &plain, &device);
    let recompute_fraction = if plain_flops > 0.0 { b.step_time.flops_per_gpu / plain_flops - 1.0 } else { 0.0 };
    let comm = communication(&inputs(&arch, s, &device), b.trainable_params as f64 / (s.parallel.tp.max(1) * s.parallel.pp.max(1)) as f64);
    let p = &s.parallel;
    let v = if p.pp_schedule == PpSchedule::Interleaved { p.virtual_stages.max(1) as f64 } else { 1.0 };
    let bubble_fraction = if p.pp > 1 { (p.pp as f64 - 1.0) / (s.training.grad_accum.max(1) as f64 * v) } else { 0.0 };
    // Data-parallel traffic hides behind the backward pass when shorter: DDP all-reduces each
    // bucket as its gradients appear (Li et al. 2020, "PyTorch Distributed", §3.2.3), and ZeRO
    // overlaps its reduce-scatter the same way. Backward is all but the one forward: the forward
    // is a third of the step without recomputation (backward twice the forward, Kaplan et al.
    // 2020 §2.1), so 2/3 of the compute, more when recomputation runs inside backward.
    let compute = b.step_time.seconds;
    let flops = b.step_time.flops_per_gpu;
    let backward_share = if flops > 0.0 && plain_flops > 0.0 { (1.0 - plain_flops / 3.0 / flops).clamp(0.0, 1.0) } else { 0.0 };
    let exposed_dp = (comm.data_parallel_seconds - compute * backward_share).max(0.0);
    let step_seconds = compute + comm.exposed_seconds + exposed_dp;
    let tokens = b.step_time.tokens_per_second * compute;
    StepCosts {
        recompute_fraction: recompute_fraction.max(0.0),
        communication_bytes: comm.bytes_per_step,
        communication_seconds: comm.exposed_seconds + exposed_dp,
        bubble_fraction,
        step_seconds,
        tokens_per_second: if step_seconds > 0.0 { tokens / step_seconds } else { 0.0 },
    }
}

fn estimate_flops(arch: &Architecture, s: &Scenario, device: &Device) -> f64 {
    step_time(&inputs(arch, s, device), &Default::default(), &Default::default(), 0.0, 0.0).flops_per_gpu
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

/// Re-spread the GPU budget over data parallelism after a model-parallel change.
fn fill_data_parallel(s: &mut Scenario, gpus: u64) {
    let model_parallel = s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1)).saturating_mul(s.parallel.cp.max(1));
    s.parallel.dp = (gpus / model_parallel).max(1);
}

/// Double a parallel degree (starting from `current`) while `allowed` says the next value is
/// possible, stopping at the first value that fits; the data-parallel degree absorbs the
/// rest of the GPU budget. Returns `s` unchanged when no doubling is allowed.
fn double_until_fits(s: &Scenario, gpus: u64, current: u64, allowed: impl Fn(u64) -> bool, set: impl Fn(&mut Scenario, u64)) -> Scenario {
    let mut degree = current.max(1);
    let mut chosen = s.clone();
    while allowed(degree.saturating_mul(2)) {
        degree = degree.saturating_mul(2);
        chosen = s.clone();
        set(&mut chosen, degree);
        fill_data_parallel(&mut chosen, gpus);
        if estimate(&chosen).fits {
            break;
        }
    }
    chosen
}

/// The scenario after `step`, and a sentence saying what changed or why nothing did.
pub fn apply(step: Step, s: &Scenario, gpus: u64) -> (Scenario, String) {
    let mut n = s.clone();
    let heads = match s.model.architecture().as_deref() {
        Some(Architecture::Transformer(t)) => Some((t.attention.heads, t.attention.kv_heads, t.layers)),
        _ => None,
    };
    let note = match step {
        Step::MixedPrecision => {
            if s.training.precision == Precision::Fp32 {
                n.training.precision = Precision::Bf16Mixed;
                "fp32 → bf16 autocast: activations halve; weights stay fp32 as the master copy".into()
            } else {
                format!("already {}", s.training.precision.id())
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
            fill_data_parallel(&mut n, gpus);
            if n.parallel.dp * n.parallel.cp < 2 {
                n = s.clone();
                format!("needs more than one data-parallel GPU ({gpus} GPU(s) available)")
            } else if s.parallel.zero >= stage {
                n.parallel.zero = s.parallel.zero;
                format!("ZeRO-{} already on", s.parallel.zero)
            } else {
                n.parallel.zero = stage;
                format!("shard {} over {} data-parallel GPUs", if stage == Zero::Gradients { "optimizer states and gradients" } else { "optimizer states, gradients and weights" }, n.parallel.dp * n.parallel.cp)
            }
        }
        Step::PipelineParallel => {
            let room = gpus / s.parallel.tp.max(1).saturating_mul(s.parallel.cp.max(1));
            let layers = heads.map(|h| h.2).unwrap_or(1);
            n = double_until_fits(s, gpus, s.parallel.pp, |pp| pp <= room && pp <= layers, |t, pp| {
                t.parallel.pp = pp;
                t.training.grad_accum = t.training.grad_accum.max(pp.saturating_mul(2));
            });
            if n.parallel.pp == s.parallel.pp {
                format!("no room: {gpus} GPU(s), {layers} layers")
            } else {
                format!("{} stages (1F1B), {} micro-batches per step to keep the bubble small", n.parallel.pp, n.training.grad_accum)
            }
        }
        Step::TensorParallel => {
            let (a, g, _) = heads.unwrap_or((1, 1, 1));
            let room = power_of_two_at_most(gpus / s.parallel.pp.max(1).saturating_mul(s.parallel.cp.max(1))).min(super::search::MAX_TP);
            let divides_heads = |tp: u64| tp <= room && a % tp == 0 && (g % tp == 0 || tp % g == 0);
            n = double_until_fits(s, gpus, s.parallel.tp, divides_heads, |t, tp| {
                t.parallel.tp = tp;
                t.parallel.sp = true;
            });
            if n.parallel.tp == s.parallel.tp {
                "no room for a larger tensor-parallel group (heads, or GPUs)".into()
            } else {
                format!("tensor parallel over {} GPUs with sequence parallelism", n.parallel.tp)
            }
        }
        Step::ContextParallel => {
            let room = gpus / s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1));
            if room >= 2 && s.training.seq_len % s.parallel.cp.max(1).saturating_mul(4) == 0 {
                n.parallel.cp = s.parallel.cp.max(1).saturating_mul(2);
                fill_data_parallel(&mut n, gpus);
                format!("split each sequence over {} GPUs (ring attention)", n.parallel.cp)
            } else {
                "no room for context parallelism".into()
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
            if s.training.techniques.loss == want || s.training.techniques.loss == Loss::FusedLinear {
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
        Step::SmallerMicroBatch => {
            if s.training.micro_batch > 1 {
                n.training.grad_accum = s.training.grad_accum.saturating_mul(s.training.micro_batch);
                n.training.micro_batch = 1;
                format!("micro-batch 1 × {} accumulation steps: same global batch", n.training.grad_accum)
            } else {
                "micro-batch already 1".into()
            }
        }
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

    /// The design's acceptance case: Llama-3-8B (bf16-mixed AdamW, batch 1, seq 4096) with
    /// 8 × 80 GB: the ladder stops at the first fit, and every later step lowers per-GPU
    /// memory or says why not.
    #[test]
    fn default_ladder_on_llama3_8b_with_eight_gpus() {
        let e = escalate(&Scenario::default(), &Step::DEFAULT_LADDER, 8);
        assert_eq!(e.steps.len(), 6);
        assert!(!e.steps[0].fits(), "the default scenario does not fit on one GPU");
        let first = e.first_fit.expect("fits somewhere on 8 × 80 GB");
        assert!(e.steps[..first].iter().all(|s| !s.fits()));
        for pair in e.steps.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if b.applied {
                assert!(b.breakdown.total <= a.breakdown.total, "{} raised memory: {} → {}", b.name, a.breakdown.total, b.breakdown.total);
            } else {
                assert!(!b.note.is_empty(), "{} did nothing and said nothing", b.name);
            }
        }
        assert_eq!(e.steps[1].note, "already bf16-mixed");
        assert!(!e.steps[1].applied);
        for s in &e.steps {
            println!("{:<28} fits {:<5} total {:>6.1} GiB  {}", s.name, s.fits(), s.breakdown.total as f64 / (1u64 << 30) as f64, s.note);
        }
    }

    #[test]
    fn model_parallel_steps_split_llama3_70b() {
        let mut s = Scenario::default();
        s.model = crate::scenario::ModelSpec::Preset("llama-3-70b".into());
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
    /// on 8 GPUs moves 2·(8−1)/8 of the 16-bit gradients per step (ring all-reduce volume).
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
    }
}
