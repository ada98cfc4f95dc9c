//! The automatic planner: enumerate parallel layouts for a GPU budget (dp × tp × pp × cp,
//! ZeRO stage, checkpointing, offload), find for each the largest micro-batch that fits (the
//! predicted counterpart of accelerate's `find_executable_batch_size`), and rank the layouts
//! that fit by estimated throughput.
//!
//! Memory grows monotonically with the micro-batch (a property test checks it), so the
//! largest fitting micro-batch is found by doubling then bisection. The global batch of the
//! input scenario (micro-batch × accumulation × dp sequences) is kept: each layout runs it
//! as micro-batch × accumulation on its own dp.
//!
//! [`SearchRun`] evaluates the layouts a chunk at a time, so a page can yield to the browser
//! between chunks and show progress; [`search`] runs it to the end.

use serde::{Deserialize, Serialize};

use super::escalation::{costs, StepCosts};
use crate::estimate;
use crate::model::arch::Architecture;
use crate::model::breakdown::Breakdown;
use crate::model::inputs::{Checkpointing, Offload, Zero};
use crate::scenario::Scenario;

/// Largest micro-batch tried.
pub const MAX_MICRO_BATCH: u64 = 1024;

/// Largest tensor-parallel degree tried: one 8-GPU NVLink server (DGX/HGX A100 and H100).
/// Narayanan et al. 2021, §3.3, takeaway #1: "tensor model parallelism should generally be
/// used up to degree g when using g-GPU servers" — its all-reduces sit on the critical path
/// and need the server's NVLink; pipeline parallelism scales across servers.
pub const MAX_TP: u64 = 8;

/// Largest context-parallel degree tried: also one server. Ring attention hides its K/V passes
/// behind the attention only when each rank's block holds at least F/B tokens (Liu et al. 2023,
/// §3, Table 2: ≈ 1K on A100 NVLink, ≈ 24.5K over InfiniBand), so beyond a server it pays off
/// only for very long sequences. A conservative bound: Llama 3 trained at 131K tokens with
/// CP = 16 across servers (Dubey et al. 2024, Table 4).
pub const MAX_CP: u64 = 8;

/// One ranked layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub scenario: Scenario,
    pub breakdown: Breakdown,
    pub costs: StepCosts,
    /// Largest micro-batch that fits with this layout.
    pub max_micro_batch: u64,
    /// Estimated optimizer-step time, seconds (compute + exposed communication).
    pub step_seconds: f64,
    pub tokens_per_second: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Best first; at most `limit`.
    pub results: Vec<Candidate>,
    /// Layouts considered.
    pub layouts: u64,
    /// Full estimates computed (each a candidate layout at one micro-batch).
    pub evaluations: u64,
}

fn divisors_pow2(n: u64, cap: u64) -> impl Iterator<Item = u64> {
    (0..20).map(|i| 1u64 << i).take_while(move |&d| d <= n.min(cap)).filter(move |d| n % d == 0)
}

/// Every layout for `gpus` GPUs that the model can be split into.
pub fn layouts(base: &Scenario, gpus: u64) -> Vec<Scenario> {
    let Some(arch) = base.model.architecture() else { return Vec::new() };
    let (heads, kv, layers, transformer) = match arch.as_ref() {
        Architecture::Transformer(t) => (t.attention.heads, t.attention.kv_heads, t.layers, true),
        Architecture::Resnet(_) => (1, 1, 1, false),
    };
    let mut out = Vec::new();
    let gpus = gpus.max(1);
    for tp in divisors_pow2(gpus, if transformer { MAX_TP } else { 1 }) {
        if heads % tp != 0 || (kv % tp != 0 && tp % kv != 0) {
            continue;
        }
        for pp in divisors_pow2(gpus / tp, if transformer { layers } else { 1 }) {
            for cp in divisors_pow2(gpus / (tp * pp), if transformer { MAX_CP } else { 1 }) {
                if cp > 1 && base.training.seq_len % (2 * cp) != 0 {
                    continue;
                }
                let dp = gpus / (tp * pp * cp);
                let zeros: &[Zero] = if dp * cp > 1 { &Zero::ALL } else { &[Zero::Off] };
                for &zero in zeros {
                    for checkpointing in [Checkpointing::None, Checkpointing::Selective, Checkpointing::Full] {
                        for offload in [Offload::None, Offload::Optimizer] {
                            if offload == Offload::Optimizer && zero == Zero::Off {
                                continue;
                            }
                            let mut s = base.clone();
                            s.parallel.dp = dp;
                            s.parallel.tp = tp;
                            s.parallel.sp = tp > 1;
                            s.parallel.pp = pp;
                            s.parallel.cp = cp;
                            s.parallel.zero = zero;
                            s.parallel.offload = offload;
                            s.training.checkpointing = checkpointing;
                            out.push(s);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Largest micro-batch in 1..=MAX_MICRO_BATCH that fits, or 0; counts estimates.
pub fn max_micro_batch(s: &Scenario, evaluations: &mut u64) -> u64 {
    let mut probe = s.clone();
    let mut fits = |b: u64| {
        probe.training.micro_batch = b;
        *evaluations += 1;
        estimate(&probe).fits
    };
    if !fits(1) {
        return 0;
    }
    let mut lo = 1;
    let mut hi = 2;
    while hi <= MAX_MICRO_BATCH && fits(hi) {
        lo = hi;
        hi *= 2;
    }
    let mut hi = hi.min(MAX_MICRO_BATCH + 1);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One layout at its best micro-batch: the largest that fits, capped at the layout's share
/// of the global batch, with accumulation making up the rest. `None` when nothing fits.
pub fn evaluate_layout(layout: &Scenario, global_batch: u64, evaluations: &mut u64) -> Option<Candidate> {
    let mut s = layout.clone();
    let max_mb = max_micro_batch(&s, evaluations);
    if max_mb == 0 {
        return None;
    }
    let per_replica = global_batch.div_ceil(s.parallel.dp.max(1)).max(1);
    let micro = max_mb.min(per_replica);
    s.training.micro_batch = micro;
    s.training.grad_accum = per_replica.div_ceil(micro);
    let breakdown = estimate(&s);
    *evaluations += 1;
    let c = costs(&s, &breakdown);
    Some(Candidate { step_seconds: c.step_seconds, tokens_per_second: c.tokens_per_second, costs: c, max_micro_batch: max_mb, breakdown, scenario: s })
}

/// A search in progress.
#[derive(Clone, Debug)]
pub struct SearchRun {
    pending: Vec<Scenario>,
    next: usize,
    global_batch: u64,
    limit: usize,
    found: Vec<Candidate>,
    evaluations: u64,
}

impl SearchRun {
    /// Enumerates the layouts of `base` on `gpus` GPUs; nothing is evaluated yet.
    pub fn new(base: &Scenario, gpus: u64, limit: usize) -> SearchRun {
        let global_batch = base.training.micro_batch.max(1).saturating_mul(base.training.grad_accum.max(1)).saturating_mul(base.parallel.dp.max(1));
        SearchRun { pending: layouts(base, gpus), next: 0, global_batch, limit, found: Vec::new(), evaluations: 0 }
    }

    /// Layouts in the search.
    pub fn total(&self) -> usize {
        self.pending.len()
    }

    /// Layouts evaluated so far.
    pub fn done(&self) -> usize {
        self.next
    }

    pub fn is_finished(&self) -> bool {
        self.next >= self.pending.len()
    }

    /// Full estimates computed so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Evaluates up to `chunk` more layouts; returns true when none are left.
    pub fn step(&mut self, chunk: usize) -> bool {
        let end = self.next.saturating_add(chunk.max(1)).min(self.pending.len());
        for i in self.next..end {
            if let Some(candidate) = evaluate_layout(&self.pending[i], self.global_batch, &mut self.evaluations) {
                self.found.push(candidate);
            }
        }
        self.next = end;
        self.is_finished()
    }

    /// The best `limit` layouts found so far, fastest first.
    pub fn result(&self) -> SearchResult {
        let mut results = self.found.clone();
        results.sort_by(|a, b| b.tokens_per_second.total_cmp(&a.tokens_per_second));
        results.truncate(self.limit);
        SearchResult { results, layouts: self.pending.len() as u64, evaluations: self.evaluations }
    }
}

/// Rank the layouts of `base` on `gpus` GPUs; keep the best `limit`.
pub fn search(base: &Scenario, gpus: u64, limit: usize) -> SearchResult {
    let mut run = SearchRun::new(base, gpus, limit);
    run.step(usize::MAX);
    run.result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama3_8b_on_eight_gpus_finds_fitting_layouts() {
        let r = search(&Scenario::default(), 8, 10);
        assert!(!r.results.is_empty());
        assert!(r.results.len() <= 10);
        for c in &r.results {
            assert!(c.breakdown.fits);
            assert_eq!(c.scenario.parallel.world_size(), 8);
            assert!(c.max_micro_batch >= c.scenario.training.micro_batch);
        }
        assert!(r.results.windows(2).all(|w| w[0].tokens_per_second >= w[1].tokens_per_second));
    }

    #[test]
    fn max_micro_batch_is_the_boundary() {
        let mut s = Scenario::default();
        s.parallel.dp = 8;
        s.parallel.zero = Zero::Parameters;
        let mut n = 0;
        let m = max_micro_batch(&s, &mut n);
        assert!(m >= 1);
        let mut at = s.clone();
        at.training.micro_batch = m;
        assert!(estimate(&at).fits);
        if m < MAX_MICRO_BATCH {
            at.training.micro_batch = m + 1;
            assert!(!estimate(&at).fits);
        }
    }

    #[test]
    fn chunked_search_equals_the_model_search() {
        for (model, gpus) in [("llama-3-8b", 8), ("gpt2", 4), ("llama-3-70b", 16)] {
            let base = Scenario { model: crate::scenario::ModelSpec::Preset(model.into()), ..Scenario::default() };
            let expected = search(&base, gpus, 10);
            let mut run = SearchRun::new(&base, gpus, 10);
            assert_eq!(run.total() as u64, expected.layouts);
            let mut chunks = 0;
            while !run.step(7) {
                chunks += 1;
                assert!(run.done() <= run.total());
            }
            assert!(chunks > 0 || run.total() <= 7);
            assert_eq!(run.result(), expected, "{model} on {gpus}");
        }
    }

    #[test]
    fn an_unknown_model_has_no_layouts_and_finishes_at_once() {
        let base = Scenario { model: crate::scenario::ModelSpec::Preset("no-such-model".into()), ..Scenario::default() };
        let mut run = SearchRun::new(&base, 8, 10);
        assert!(run.step(50));
        assert!(run.result().results.is_empty());
    }
}
