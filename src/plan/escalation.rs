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

pub use super::rungs::apply;
use super::search::evaluate_layout;
pub use super::step::Step;
pub use super::step_costs::{costs, step_costs, StepCosts};
use super::{faster, fits_with_margin, global_batch, DEFAULT_MARGIN};
use crate::estimate;
use crate::model::breakdown::Breakdown;
use crate::scenario::Scenario;

/// The ladders by kind of run (here, not in `step.rs`: it reads the serving and diffusion
/// ladders, which import `Step`).
impl Step {
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

/// [`escalate_with_margin`] over an edited ladder (the Strategy view's): each step in order with
/// whether it is on; a step that is off is left out, as if it were not on the ladder.
pub fn escalate_ladder(start: &Scenario, ladder: &[(Step, bool)], gpus: u64, margin: f64) -> Escalation {
    let on: Vec<Step> = ladder.iter().filter(|&&(_, on)| on).map(|&(step, _)| step).collect();
    escalate_with_margin(start, &on, gpus, margin)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::inputs::{Checkpointing, Zero};

    /// A step switched off in the edited ladder is not run: the same escalation as the ladder
    /// without it, and not the one with it (ZeRO-2 is what makes the default scenario fit on 8).
    #[test]
    fn an_edited_ladder_runs_only_the_steps_that_are_on() {
        let s = Scenario::default();
        let edited: Vec<(Step, bool)> = Step::DEFAULT_LADDER.iter().map(|&step| (step, step != Step::Zero2)).collect();
        let without: Vec<Step> = Step::DEFAULT_LADDER.iter().copied().filter(|&step| step != Step::Zero2).collect();
        let e = escalate_ladder(&s, &edited, 8, 0.1);
        assert_eq!(e, escalate_with_margin(&s, &without, 8, 0.1));
        assert_ne!(e, escalate_with_margin(&s, &Step::DEFAULT_LADDER, 8, 0.1));
        assert!(e.steps.iter().all(|st| st.step != Some(Step::Zero2)));
        let all_on: Vec<(Step, bool)> = Step::DEFAULT_LADDER.iter().map(|&step| (step, true)).collect();
        assert_eq!(escalate_ladder(&s, &all_on, 8, DEFAULT_MARGIN), escalate(&s, &Step::DEFAULT_LADDER, 8));
    }

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
