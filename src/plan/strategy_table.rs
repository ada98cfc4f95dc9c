//! The seed's strategy table: for data, tensor and pipeline parallelism, ZeRO-1/2/3 and mixed
//! precision, the per-GPU memory each saves against a scenario and the communication each
//! adds, each applied on its own ([`strategy_rows`]). Tensor and pipeline parallelism, ZeRO-2/3
//! and mixed precision are the ladder's own steps ([`apply`]); plain data parallelism and
//! ZeRO-1 are not ladder steps (neither saves what a ladder needs), so they are set here.
//! Read by the Compare view.

use crate::estimate;
use crate::labels::precision_label;
use crate::model::precision::Precision;
use crate::plan::escalation::{apply, costs, Step};
use crate::scenario::{Scenario, Zero};

/// One row of the strategy table.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyRow {
    pub name: &'static str,
    /// What the strategy did to the scenario, or why it could not.
    pub note: String,
    /// False when the strategy left the scenario as it was.
    pub applied: bool,
    /// Per-GPU total before and after.
    pub before: u64,
    pub after: u64,
    /// Communication per GPU per step before and after, bytes and exposed seconds.
    pub comm_bytes_before: f64,
    pub comm_bytes_after: f64,
    pub comm_seconds_before: f64,
    pub comm_seconds_after: f64,
    /// What happens after the strategy: fits, spills or out of memory.
    pub outcome_after: crate::model::breakdown::Outcome,
    /// The scenario after the strategy.
    pub scenario: Scenario,
}

impl StrategyRow {
    /// Bytes saved per GPU (negative when the strategy costs memory).
    pub fn saved(&self) -> i128 {
        self.before as i128 - self.after as i128
    }

    pub fn comm_bytes_added(&self) -> f64 {
        self.comm_bytes_after - self.comm_bytes_before
    }

    pub fn comm_seconds_added(&self) -> f64 {
        self.comm_seconds_after - self.comm_seconds_before
    }
}

fn row(name: &'static str, before: &Scenario, after: Scenario, note: String) -> StrategyRow {
    let b0 = estimate(before);
    let c0 = costs(before, &b0);
    let b1 = estimate(&after);
    let c1 = costs(&after, &b1);
    StrategyRow {
        name,
        note,
        applied: after != *before,
        before: b0.total,
        after: b1.total,
        comm_bytes_before: c0.communication_bytes,
        comm_bytes_after: c1.communication_bytes,
        comm_seconds_before: c0.communication_seconds,
        comm_seconds_after: c1.communication_seconds,
        outcome_after: b1.spill.outcome,
        scenario: after,
    }
}

/// The seed's strategy table for `s` with up to `gpus` GPUs: data parallel, tensor parallel,
/// pipeline parallel, ZeRO-1, ZeRO-2, ZeRO-3 and mixed precision, each applied on its own
/// to `s`. Mixed precision, when `s` already uses it, is shown against the fp32 version of
/// `s` (what it saved), since applying it again would change nothing.
pub fn strategy_rows(s: &Scenario, gpus: u64) -> Vec<StrategyRow> {
    let gpus = gpus.max(s.parallel.world_size()).max(1);
    let model_parallel = s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1)).saturating_mul(s.parallel.cp.max(1));
    let dp = (gpus / model_parallel).max(1);
    let mut rows = Vec::with_capacity(7);

    let mut data = s.clone();
    data.parallel.dp = dp;
    let note = if dp > s.parallel.dp { format!("replicate the model on {dp} data-parallel GPUs; all-reduce the gradients") } else { "no more GPUs for data parallelism".into() };
    rows.push(row("Data parallel", s, data, note));

    let (tp, note) = apply(Step::TensorParallel, s, gpus);
    rows.push(row("Tensor parallel", s, tp, note));
    let (pp, note) = apply(Step::PipelineParallel, s, gpus);
    rows.push(row("Pipeline parallel", s, pp, note));

    let mut zero1 = s.clone();
    zero1.parallel.dp = dp;
    let note = if dp * s.parallel.cp.max(1) < 2 {
        zero1 = s.clone();
        format!("needs more than one data-parallel GPU ({gpus} GPU(s) available)")
    } else if s.parallel.zero >= Zero::Optimizer {
        zero1.parallel.zero = s.parallel.zero;
        format!("ZeRO-{} already on", s.parallel.zero)
    } else {
        zero1.parallel.zero = Zero::Optimizer;
        format!("shard optimizer states over {} data-parallel GPUs", dp * s.parallel.cp.max(1))
    };
    rows.push(row("ZeRO-1", s, zero1, note));
    let (z2, note) = apply(Step::Zero2, s, gpus);
    rows.push(row("ZeRO-2", s, z2, note));
    let (z3, note) = apply(Step::Zero3, s, gpus);
    rows.push(row("ZeRO-3 / FSDP", s, z3, note));

    if s.training.precision == Precision::Fp32 {
        let (mixed, note) = apply(Step::MixedPrecision, s, gpus);
        rows.push(row("Mixed precision", s, mixed, note));
    } else {
        let mut fp32 = s.clone();
        fp32.training.precision = Precision::Fp32;
        let mut r = row("Mixed precision", &fp32, s.clone(), format!("already {}: compared with the same run in fp32", precision_label(s.training.precision)));
        r.applied = true;
        rows.push(r);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategy_table_for_llama3_8b_on_eight_gpus() {
        let rows = strategy_rows(&Scenario::default(), 8);
        let names: Vec<_> = rows.iter().map(|r| r.name).collect();
        assert_eq!(names, ["Data parallel", "Tensor parallel", "Pipeline parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP", "Mixed precision"]);
        let by = |n: &str| rows.iter().find(|r| r.name == n).unwrap();
        // Plain data parallelism saves no memory (DDP adds its gradient buckets) but adds the all-reduce.
        let dp = by("Data parallel");
        assert!(dp.applied && dp.comm_bytes_added() > 0.0);
        assert!(dp.saved() <= 0, "{}", dp.saved());
        // ZeRO stages save more memory as they shard more, and ZeRO-3 moves more bytes.
        let (z1, z2, z3) = (by("ZeRO-1"), by("ZeRO-2"), by("ZeRO-3 / FSDP"));
        assert!(z1.saved() > 0 && z2.saved() > z1.saved() && z3.saved() > z2.saved());
        assert!(z3.comm_bytes_added() > z2.comm_bytes_added());
        // Tensor and pipeline parallelism save memory and communicate.
        for r in [by("Tensor parallel"), by("Pipeline parallel")] {
            assert!(r.applied && r.saved() > 0 && r.comm_bytes_added() > 0.0, "{r:?}");
        }
        // The default is bf16-mixed: compared with fp32 it saves memory and adds no traffic.
        let mixed = by("Mixed precision");
        assert_eq!(mixed.note, "already bf16 mixed (AMP): compared with the same run in fp32");
        assert!(mixed.saved() > 0);
        assert!(mixed.comm_bytes_added() <= 0.0);
    }

    #[test]
    fn one_gpu_leaves_the_distributed_rows_unapplied() {
        let rows = strategy_rows(&Scenario::default(), 1);
        for r in rows.iter().filter(|r| r.name != "Mixed precision") {
            assert!(!r.applied, "{} applied on one GPU", r.name);
            assert!(!r.note.is_empty());
        }
    }
}
