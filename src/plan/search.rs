//! The automatic planner: enumerate parallel layouts for a GPU budget (dp × tp × pp × cp,
//! ZeRO stage, checkpointing, offload), find for each the largest micro-batch that fits (the
//! predicted counterpart of accelerate's `find_executable_batch_size`), and rank the layouts
//! that fit by estimated step time.
//!
//! - The global batch of the input scenario (micro-batch × accumulation × dp sequences) is
//!   kept exactly: each layout splits it as micro-batch × accumulation on its own dp, the
//!   micro-batch being the largest divisor of its share that fits. A layout whose dp does
//!   not divide the global batch cannot keep it; it is counted, not ranked.
//! - A layout fits when it leaves a safety margin of the capacity free (10 % unless told
//!   otherwise, [`super::DEFAULT_MARGIN`]), so no result fills memory to the brim.
//! - Fastest first; step times within [`super::SAME_TIME`] of the fastest of their group
//!   are the same time, and among them the layout with the most memory left comes first.
//! - Context parallelism is tried only where each GPU keeps at least
//!   [`super::MIN_CP_TOKENS`] tokens of a sequence.
//!
//! Memory grows monotonically with the micro-batch (a property test checks it), so the
//! largest fitting micro-batch is found by doubling then bisection.
//!
//! [`SearchRun`] evaluates the layouts a chunk at a time, so a page can yield to the browser
//! between chunks and show progress; [`search`] runs it to the end.

use serde::{Deserialize, Serialize};

use super::escalation::{costs, StepCosts};
use super::{clamp_margin, context_parallel_pays, faster, fits_with_margin, global_batch, headroom, split_global_batch, DEFAULT_MARGIN, MIN_CP_TOKENS};
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
    /// Largest micro-batch that fits with this layout (without accumulation).
    pub max_micro_batch: u64,
    /// Estimated optimizer-step time, seconds (compute + exposed communication).
    pub step_seconds: f64,
    pub tokens_per_second: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Best first; at most `limit`.
    pub results: Vec<Candidate>,
    /// Layouts tried.
    pub layouts: u64,
    /// Layouts that keep the global batch and fit with the margin.
    pub fitting: u64,
    /// Layouts whose data-parallel degree does not divide the global batch.
    pub batch_mismatch: u64,
    /// Full estimates computed (each a candidate layout at one micro-batch).
    pub evaluations: u64,
    /// Sequences per optimizer step, the same in every result.
    pub global_batch: u64,
    /// Share of the capacity every result leaves free.
    pub margin: f64,
    /// Whether the sequences were long enough for context parallelism to be tried.
    pub context_parallel_tried: bool,
}

impl SearchResult {
    /// What was tried and what fit, in one or two sentences: layouts on `gpus` GPUs, how
    /// many fit with the margin at the kept global batch, how many cannot split it, and
    /// whether context parallelism was left out.
    pub fn summary(&self, gpus: u64) -> String {
        let plural = |n: u64, one: &str, many: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {many}") };
        let mut text = format!(
            "Tried {} on {}: {} with {:.0} % of memory free, at the global batch of {}",
            plural(self.layouts, "layout", "layouts"),
            plural(gpus, "GPU", "GPUs"),
            if self.fitting == 1 { "1 fits".to_string() } else { format!("{} fit", self.fitting) },
            self.margin * 100.0,
            plural(self.global_batch, "sequence", "sequences"),
        );
        if self.batch_mismatch > 0 {
            text.push_str(&format!("; {} cannot split {} over their data-parallel GPUs", self.batch_mismatch, self.global_batch));
        }
        text.push('.');
        if !self.context_parallel_tried {
            text.push_str(&format!(" Context parallelism not tried: sequences shorter than 2 × {MIN_CP_TOKENS} tokens."));
        }
        text
    }
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
                if !context_parallel_pays(base.training.seq_len, cp) {
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

/// Largest micro-batch in 1..=MAX_MICRO_BATCH that fits with `margin` left free, or 0;
/// counts estimates.
pub fn max_micro_batch(s: &Scenario, margin: f64, evaluations: &mut u64) -> u64 {
    let mut probe = s.clone();
    let mut fits = |b: u64| {
        probe.training.micro_batch = b;
        *evaluations += 1;
        fits_with_margin(&estimate(&probe), margin)
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

/// One layout running exactly `global_batch` sequences per step: the micro-batch is the
/// largest divisor of the layout's share that fits with `margin`, accumulation the rest.
/// `None` when nothing fits or the layout's dp does not divide the global batch.
pub fn evaluate_layout(layout: &Scenario, global_batch: u64, margin: f64, evaluations: &mut u64) -> Option<Candidate> {
    let mut s = layout.clone();
    s.training.grad_accum = 1;
    let max_mb = max_micro_batch(&s, margin, evaluations);
    let mut cap = max_mb;
    // Accumulation keeps gradients alive through forward and backward, so the split may
    // need a smaller micro-batch than the one probed without it.
    let breakdown = loop {
        if cap == 0 || !split_global_batch(&mut s.training, global_batch, s.parallel.dp, cap) {
            return None;
        }
        let b = estimate(&s);
        *evaluations += 1;
        if fits_with_margin(&b, margin) {
            break b;
        }
        cap = s.training.micro_batch - 1;
    };
    let c = costs(&s, &breakdown);
    Some(Candidate { step_seconds: c.step_seconds, tokens_per_second: c.tokens_per_second, costs: c, max_micro_batch: max_mb, breakdown, scenario: s })
}

/// Fastest first; within a group whose step times are the same (within
/// [`super::SAME_TIME`] of the group's fastest), the most memory left first.
pub fn rank(mut found: Vec<Candidate>) -> Vec<Candidate> {
    found.sort_by(|a, b| a.step_seconds.total_cmp(&b.step_seconds));
    let mut ranked = Vec::with_capacity(found.len());
    let mut start = 0;
    while start < found.len() {
        let lead = found[start].step_seconds;
        let end = found[start..].iter().position(|c| faster(lead, c.step_seconds)).map_or(found.len(), |p| start + p);
        let mut group = found[start..end].to_vec();
        group.sort_by_key(|c| std::cmp::Reverse(headroom(&c.breakdown)));
        ranked.extend(group);
        start = end;
    }
    ranked
}

/// A search in progress.
#[derive(Clone, Debug)]
pub struct SearchRun {
    pending: Vec<Scenario>,
    next: usize,
    global_batch: u64,
    margin: f64,
    limit: usize,
    found: Vec<Candidate>,
    batch_mismatch: u64,
    evaluations: u64,
    context_parallel_tried: bool,
}

impl SearchRun {
    /// Enumerates the layouts of `base` on `gpus` GPUs, each to leave `margin` of the
    /// capacity free; nothing is evaluated yet.
    pub fn new(base: &Scenario, gpus: u64, margin: f64, limit: usize) -> SearchRun {
        SearchRun {
            pending: layouts(base, gpus),
            next: 0,
            global_batch: global_batch(base),
            margin: clamp_margin(margin),
            limit,
            found: Vec::new(),
            batch_mismatch: 0,
            evaluations: 0,
            context_parallel_tried: context_parallel_pays(base.training.seq_len, 2),
        }
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
            let layout = &self.pending[i];
            if self.global_batch % layout.parallel.dp.max(1) != 0 {
                self.batch_mismatch += 1;
            } else if let Some(candidate) = evaluate_layout(layout, self.global_batch, self.margin, &mut self.evaluations) {
                self.found.push(candidate);
            }
        }
        self.next = end;
        self.is_finished()
    }

    /// The best `limit` layouts found so far (see [`rank`]) and the counts.
    pub fn result(&self) -> SearchResult {
        let mut results = rank(self.found.clone());
        results.truncate(self.limit);
        SearchResult {
            results,
            layouts: self.pending.len() as u64,
            fitting: self.found.len() as u64,
            batch_mismatch: self.batch_mismatch,
            evaluations: self.evaluations,
            global_batch: self.global_batch,
            margin: self.margin,
            context_parallel_tried: self.context_parallel_tried,
        }
    }
}

/// Rank the layouts of `base` on `gpus` GPUs with the default margin; keep the best `limit`.
pub fn search(base: &Scenario, gpus: u64, limit: usize) -> SearchResult {
    let mut run = SearchRun::new(base, gpus, DEFAULT_MARGIN, limit);
    run.step(usize::MAX);
    run.result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::escalation::{escalate, Step};
    use crate::plan::SAME_TIME;
    use crate::scenario::{DeviceSpec, ModelSpec};

    /// The user study's case: Llama-3-8B, sequence 2048, one sequence per GPU on 8 × A100 80GB.
    fn llama3_8b_on_8_a100() -> Scenario {
        let mut s = Scenario::default();
        s.training.seq_len = 2048;
        s.parallel.dp = 8;
        s.device = DeviceSpec::preset("a100-80gb");
        s
    }

    fn gib(bytes: u64) -> f64 {
        bytes as f64 / (1u64 << 30) as f64
    }

    #[test]
    fn llama3_8b_on_eight_gpus_finds_fitting_layouts() {
        let r = search(&llama3_8b_on_8_a100(), 8, 10);
        assert_eq!(r.results.len(), 10);
        assert_eq!(r.layouts, layouts(&llama3_8b_on_8_a100(), 8).len() as u64);
        assert!(r.fitting >= 10 && r.fitting <= r.layouts, "{} of {}", r.fitting, r.layouts);
        for c in &r.results {
            assert!(c.breakdown.fits);
            assert_eq!(c.scenario.parallel.world_size(), 8);
            assert!(c.max_micro_batch >= c.scenario.training.micro_batch);
        }
    }

    /// The study's complaint: a global batch of 32 came back as 42, 48 or 52.
    #[test]
    fn the_global_batch_is_kept_exactly() {
        let mut base = llama3_8b_on_8_a100();
        base.parallel.dp = 1;
        base.training.micro_batch = 4;
        base.training.grad_accum = 8;
        let r = search(&base, 8, 1000);
        assert_eq!(r.global_batch, 32);
        assert_eq!(r.batch_mismatch, 0, "every power-of-two dp divides 32");
        assert!(!r.results.is_empty());
        for c in &r.results {
            let t = &c.scenario.training;
            assert_eq!(t.micro_batch * t.grad_accum * c.scenario.parallel.dp, 32, "{:?}", c.scenario.parallel);
        }
        // On 6 GPUs, dp 6 and dp 3 cannot run 32 sequences: counted, never listed.
        let r = search(&base, 6, 1000);
        assert!(r.batch_mismatch > 0);
        assert_eq!(r.fitting as usize, r.results.len());
        for c in &r.results {
            assert!(32 % c.scenario.parallel.dp == 0 && c.scenario.parallel.dp != 3 && c.scenario.parallel.dp != 6);
            let t = &c.scenario.training;
            assert_eq!(t.micro_batch * t.grad_accum * c.scenario.parallel.dp, 32);
        }
        // A global batch of one sequence cannot be split over data parallelism at all.
        let r = search(&Scenario::default(), 8, 1000);
        assert!(r.results.iter().all(|c| c.scenario.parallel.dp == 1));
        assert!(r.batch_mismatch > 0);
    }

    /// 79.0 of 80.0 GiB was listed first; with the 10 % margin nothing goes above 72 GiB.
    #[test]
    fn results_leave_the_margin_free() {
        let base = llama3_8b_on_8_a100();
        let mut brim = SearchRun::new(&base, 8, 0.0, 1000);
        brim.step(usize::MAX);
        let brim = brim.result();
        let fullest = brim.results.iter().map(|c| c.breakdown.total as f64 / c.breakdown.capacity as f64).fold(0.0, f64::max);
        assert!(fullest > 0.95, "without a margin some layout fills {:.1}% of memory", fullest * 100.0);
        let safe = search(&base, 8, 1000);
        assert!((safe.margin - 0.10).abs() < 1e-12);
        assert!(safe.fitting < brim.fitting);
        for c in &safe.results {
            assert!(gib(c.breakdown.total) <= 0.9 * gib(c.breakdown.capacity), "{:.1} of {:.1} GiB", gib(c.breakdown.total), gib(c.breakdown.capacity));
        }
        // A bigger margin never lets more layouts through.
        let mut strict = SearchRun::new(&base, 8, 0.5, 1000);
        strict.step(usize::MAX);
        assert!(strict.result().fitting <= safe.fitting);
    }

    fn candidate(step_seconds: f64, total_gib: u64) -> Candidate {
        let breakdown = Breakdown { capacity: 80 << 30, total: total_gib << 30, fits: true, ..Breakdown::default() };
        Candidate { scenario: Scenario::default(), breakdown, costs: StepCosts::default(), max_micro_batch: 1, step_seconds, tokens_per_second: 1.0 / step_seconds }
    }

    #[test]
    fn equal_step_times_rank_by_memory_left() {
        // 1.000 s and 1.004 s are the same time (within 0.5 %): 30 GiB used beats 60 GiB.
        // 1.2 s is slower whatever its memory.
        let ranked = rank(vec![candidate(1.2, 10), candidate(1.0, 60), candidate(1.004, 30), candidate(1.003, 50)]);
        let order: Vec<(f64, u64)> = ranked.iter().map(|c| (c.step_seconds, c.breakdown.total >> 30)).collect();
        assert_eq!(order, vec![(1.004, 30), (1.003, 50), (1.0, 60), (1.2, 10)]);
        assert!(SAME_TIME < 0.01);
        // On the study's case the same-time leaders are ordered by memory left.
        let r = search(&llama3_8b_on_8_a100(), 8, 1000);
        let best = r.results[0].step_seconds;
        let ties: Vec<&Candidate> = r.results.iter().take_while(|c| !faster(best, c.step_seconds)).collect();
        assert!(ties.len() >= 2, "ZeRO-2 and ZeRO-3 take the same time here");
        assert!(ties.windows(2).all(|w| headroom(&w[0].breakdown) >= headroom(&w[1].breakdown)));
        assert_eq!(r.results[0].scenario.parallel.zero, Zero::Parameters, "ZeRO-3 leaves the most memory");
    }

    #[test]
    fn the_summary_says_what_was_tried_and_what_fit() {
        let mut base = llama3_8b_on_8_a100();
        base.parallel.dp = 1;
        base.training.micro_batch = 4;
        base.training.grad_accum = 8;
        let r = search(&base, 6, 10);
        let text = r.summary(6);
        assert!(text.starts_with(&format!("Tried {} layouts on 6 GPUs: {} fit with 10 % of memory free, at the global batch of 32 sequences; {} cannot split 32 over", r.layouts, r.fitting, r.batch_mismatch)), "{text}");
        assert!(text.ends_with("Context parallelism not tried: sequences shorter than 2 × 8192 tokens."), "{text}");
        let one = SearchResult { results: Vec::new(), layouts: 1, fitting: 1, batch_mismatch: 0, evaluations: 3, global_batch: 1, margin: 0.2, context_parallel_tried: true };
        assert_eq!(one.summary(1), "Tried 1 layout on 1 GPU: 1 fits with 20 % of memory free, at the global batch of 1 sequence.");
    }

    #[test]
    fn context_parallel_only_for_long_sequences() {
        let short = layouts(&llama3_8b_on_8_a100(), 8);
        assert!(short.iter().all(|s| s.parallel.cp == 1));
        let mut long = llama3_8b_on_8_a100();
        long.training.seq_len = 32_768;
        let long = layouts(&long, 8);
        assert!(long.iter().any(|s| s.parallel.cp == 4));
        assert!(long.iter().all(|s| 32_768 / s.parallel.cp >= 8192), "cp 8 leaves 4,096 tokens per GPU");
        let mut run = SearchRun::new(&llama3_8b_on_8_a100(), 8, 0.1, 10);
        run.step(usize::MAX);
        assert!(!run.result().context_parallel_tried);
    }

    /// Where the ladder and the search both apply (same scenario, budget and margin) the
    /// ladder's plan is among the search's layouts and takes the same time as the search's
    /// best: one sequence per GPU, and four (where the plan trades micro-batch for
    /// accumulation, as the search does).
    #[test]
    fn the_best_layout_agrees_with_the_ladder_plan() {
        for micro_batch in [1, 4] {
            let mut base = llama3_8b_on_8_a100();
            base.training.micro_batch = micro_batch;
            let plan = escalate(&base, &Step::DEFAULT_LADDER, 8).plan.expect("fits").result;
            let r = search(&base, 8, 1000);
            let best = &r.results[0];
            assert!(!faster(best.step_seconds, plan.costs.step_seconds) && !faster(plan.costs.step_seconds, best.step_seconds), "{micro_batch}: {} vs {}", best.step_seconds, plan.costs.step_seconds);
            let same = r.results.iter().find(|c| c.scenario == plan.scenario).expect("the plan is one of the search's layouts");
            assert!((same.step_seconds - plan.costs.step_seconds).abs() < 1e-12);
        }
    }

    #[test]
    fn max_micro_batch_is_the_boundary() {
        let mut s = Scenario::default();
        s.parallel.dp = 8;
        s.parallel.zero = Zero::Parameters;
        for margin in [0.0, 0.1, 0.5] {
            let mut n = 0;
            let m = max_micro_batch(&s, margin, &mut n);
            assert!(m >= 1 || margin > 0.0, "ZeRO-3 on 8 GPUs fits without a margin");
            let mut at = s.clone();
            if m == 0 {
                at.training.micro_batch = 1;
                assert!(!fits_with_margin(&estimate(&at), margin), "margin {margin}");
                assert_eq!(n, 1, "one estimate says nothing fits");
                continue;
            }
            at.training.micro_batch = m;
            assert!(fits_with_margin(&estimate(&at), margin));
            if m < MAX_MICRO_BATCH {
                at.training.micro_batch = m + 1;
                assert!(!fits_with_margin(&estimate(&at), margin));
            }
        }
    }

    #[test]
    fn chunked_search_equals_the_model_search() {
        for (model, gpus) in [("llama-3-8b", 8), ("gpt2", 4), ("llama-3-70b", 16)] {
            let mut base = Scenario { model: ModelSpec::Preset(model.into()), ..Scenario::default() };
            base.training.micro_batch = 2;
            base.parallel.dp = 8;
            let expected = search(&base, gpus, 10);
            let mut run = SearchRun::new(&base, gpus, DEFAULT_MARGIN, 10);
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
        let base = Scenario { model: ModelSpec::Preset("no-such-model".into()), ..Scenario::default() };
        let mut run = SearchRun::new(&base, 8, f64::NAN, 10);
        assert!(run.step(50));
        assert!(run.result().results.is_empty());
    }
}
