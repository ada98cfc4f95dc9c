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
//! micro-batches that fit are a prefix, and a few estimates bracket the largest: the search
//! probes only the divisors of a replica's share (the only micro-batches the kept global
//! batch allows), guesses where memory crosses the bytes allowed from the line through the
//! last estimates (its slope learnt on the previous layout of the same tp × pp × cp ×
//! checkpointing), and checks the guess with the next size up. The largest micro-batch
//! without the split (`max_micro_batch`) is shown only for the listed layouts, so only they
//! finish its search. The results are those of bisecting every layout over 1..=1024 (a
//! test keeps that straightforward search and compares), with a fifth to a third fewer
//! estimates where few layouts fit (long sequences), and two to five times fewer where
//! micro-batches are large.
//!
//! [`SearchRun`] evaluates the layouts a few at a time, so a page can yield to the browser
//! between slices and show progress; [`search`] runs it to the end.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::escalation::StepCosts;
use super::resolved::Resolved;
use super::{clamp_margin, context_parallel_pays, faster, global_batch, headroom, totals_fit_with_margin, DEFAULT_MARGIN, MIN_CP_TOKENS};
use crate::estimate;
use crate::model::arch::Architecture;
use crate::model::breakdown::{Breakdown, Totals};
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
    /// Estimates computed (each a candidate layout at one micro-batch; a listed layout's
    /// breakdown, with its named terms, once more).
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
        let plural = |n: u64, one: &str, many: &str| {
            if n == 1 {
                format!("{n} {one}")
            } else {
                format!("{n} {many}")
            }
        };
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
    (0..20).map(|i| 1u64 << i).take_while(move |&d| d <= n.min(cap)).filter(move |d| n.is_multiple_of(*d))
}

/// Every layout for `gpus` GPUs that the model can be split into.
pub fn layouts(base: &Scenario, gpus: u64) -> Vec<Scenario> {
    let Some(arch) = base.model.architecture() else {
        return Vec::new();
    };
    let (heads, kv, layers, transformer) = match arch.as_ref() {
        Architecture::Transformer(t) => (t.attention.heads, t.attention.kv_heads, t.layers, true),
        Architecture::Resnet(_) | Architecture::Diffusion(_) => (1, 1, 1, false),
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

/// What one estimate says about one micro-batch of a layout: whether it fits with the
/// margin, and its bytes against the bytes the margin allows (to guess the next probe). The
/// bytes are the forward/backward phase's, the one that grows with the micro-batch: the
/// optimizer step's does not, so where it is the peak a line through the peaks is flat and
/// guesses nothing (it either fits at every micro-batch or at none; the phase that grows
/// decides the boundary).
#[derive(Clone, Copy, Debug)]
struct Point {
    micro_batch: u64,
    fits: bool,
    total: f64,
    allowed: f64,
}

impl Point {
    /// The point of an estimate's totals (`None`: an unknown model, whose empty breakdown
    /// fits nothing).
    fn new(micro_batch: u64, t: Option<&Totals>, margin: f64) -> Point {
        match t {
            Some(t) => Point {
                micro_batch,
                fits: totals_fit_with_margin(t, margin),
                total: t.phases.forward_backward.total as f64,
                allowed: t.capacity() as f64 * (1.0 - clamp_margin(margin)),
            },
            None => Point { micro_batch, fits: false, total: 0.0, allowed: 0.0 },
        }
    }

    /// Bytes per extra sequence of micro-batch between two points of one layout.
    fn slope_to(&self, other: &Point) -> Option<f64> {
        if self.micro_batch == other.micro_batch {
            return None;
        }
        let s = (other.total - self.total) / (other.micro_batch as f64 - self.micro_batch as f64);
        (s.is_finite() && s > 0.0).then_some(s)
    }

    /// The micro-batch at which memory would reach the bytes allowed, growing `slope` bytes
    /// per sequence from here.
    fn crossing(&self, slope: f64) -> f64 {
        self.micro_batch as f64 + (self.allowed - self.total) / slope
    }
}

/// The micro-batches a search over one layout may probe, ascending.
#[derive(Clone, Copy, Debug)]
enum Sizes<'a> {
    /// These (the divisors of a replica's share of the global batch).
    List(&'a [u64]),
    /// Every one from the first to the last, inclusive.
    Range(u64, u64),
}

impl Sizes<'_> {
    fn len(&self) -> usize {
        match *self {
            Sizes::List(v) => v.len(),
            Sizes::Range(a, b) => {
                if b >= a {
                    (b - a + 1) as usize
                } else {
                    0
                }
            }
        }
    }

    fn get(&self, i: usize) -> u64 {
        match *self {
            Sizes::List(v) => v[i],
            Sizes::Range(a, _) => a + i as u64,
        }
    }

    /// Index of the largest size not above `m`; `None` when all are above (or `m` is NaN).
    fn index_at_most(&self, m: f64) -> Option<usize> {
        match *self {
            Sizes::List(v) => v.partition_point(|&x| x as f64 <= m).checked_sub(1),
            Sizes::Range(a, b) => (m >= a as f64 && b >= a).then(|| (m.min(b as f64).floor() as u64 - a) as usize),
        }
    }
}

/// What a search over one layout's sizes knows: every index up to `fit` fits, every index
/// from `fail` on does not (`fail` is the length when none is known to fail).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bracket {
    fit: Option<usize>,
    fail: usize,
}

/// Probes guided by the line through the last points before falling back to halving.
const GUESSES: u32 = 3;

/// Closes `bracket` over `sizes`, whose fitting members are a prefix (memory grows with the
/// micro-batch): each probe moves one end. The first probe is at `start` (where an earlier
/// layout of the same shape stopped fitting) or, without one, the smallest size, so a
/// layout that fits nowhere costs one estimate. The next is where the line through the
/// last point crosses the bytes allowed — its slope from the last two points, or `slope`
/// (learnt from an earlier layout of the same shape) — clamped into the open bracket, so a
/// right guess costs two probes (the fit and the next size failing); after [`GUESSES`]
/// guesses, or without a slope, it doubles the micro-batch until one fails, then halves
/// the bracket. Returns the closed bracket and the last slope measured (or the one given).
fn close_bracket(
    sizes: Sizes,
    mut bracket: Bracket,
    start: Option<u64>,
    mut last: Option<Point>,
    mut slope: Option<f64>,
    mut probe: impl FnMut(u64) -> Point,
) -> (Bracket, Option<f64>) {
    let mut guesses = 0;
    loop {
        let lo = bracket.fit.map_or(0, |f| f + 1);
        if lo >= bracket.fail {
            return (bracket, slope);
        }
        let hi = bracket.fail - 1;
        let guess = match (last, slope) {
            (Some(p), Some(s)) if guesses < GUESSES => {
                guesses += 1;
                Some(sizes.index_at_most(p.crossing(s)).map_or(lo, |i| i.clamp(lo, hi)))
            }
            _ => None,
        };
        // Without a slope, double while nothing is known to fail, then halve.
        let i = guess.unwrap_or_else(|| match last {
            None => start.and_then(|m| sizes.index_at_most(m as f64)).map_or(lo, |i| i.clamp(lo, hi)),
            Some(p) if bracket.fail == sizes.len() => sizes.index_at_most(p.micro_batch.saturating_mul(2) as f64).map_or(lo, |i| i.clamp(lo, hi)),
            Some(_) => lo + (hi - lo) / 2,
        });
        let p = probe(sizes.get(i));
        if let Some(s) = last.and_then(|q| q.slope_to(&p)) {
            slope = Some(s);
        }
        last = Some(p);
        if p.fits {
            bracket.fit = Some(i);
        } else {
            bracket.fail = i;
        }
    }
}

/// Largest micro-batch in 1..=MAX_MICRO_BATCH that fits with `margin` left free, or 0;
/// counts estimates.
pub fn max_micro_batch(s: &Scenario, margin: f64, evaluations: &mut u64) -> u64 {
    let resolved = Resolved::new(s);
    let mut probe = s.clone();
    let sizes = Sizes::Range(1, MAX_MICRO_BATCH);
    let (bracket, _) = close_bracket(sizes, Bracket { fit: None, fail: sizes.len() }, None, None, None, |b| {
        probe.training.micro_batch = b;
        *evaluations += 1;
        Point::new(b, resolved.totals(&probe).as_ref(), margin)
    });
    bracket.fit.map_or(0, |i| sizes.get(i))
}

/// A layout that keeps the global batch and fits, as the search first finds it: its
/// scenario, costs and memory left (what ranking reads), and what the search learnt about
/// micro-batches without accumulation. Only a listed layout becomes a [`Candidate`], with
/// its breakdown and `max_micro_batch`.
#[derive(Clone, Debug)]
struct Fitted {
    scenario: Scenario,
    costs: StepCosts,
    /// Bytes of capacity left free ([`headroom`] of its breakdown).
    headroom: u64,
    /// The largest micro-batch probed that fits without accumulation, and its point.
    fits: Point,
    /// The smallest probed that does not (MAX_MICRO_BATCH + 1 when none).
    fails_from: u64,
    /// Bytes per sequence of micro-batch, as measured on this layout or its shape.
    slope: Option<f64>,
    /// The candidate, once the layout is listed.
    candidate: Option<Candidate>,
}

impl Fitted {
    /// The candidate: the full breakdown (one more estimate, with the named terms and the
    /// warnings) and the largest micro-batch that fits without accumulation.
    fn candidate(&self, resolved: &Resolved, margin: f64, evaluations: &mut u64) -> Candidate {
        if let Some(c) = &self.candidate {
            return c.clone();
        }
        let max_micro_batch = finish_max_micro_batch(self, resolved, margin, evaluations);
        *evaluations += 1;
        let breakdown = estimate(&self.scenario);
        let c = &self.costs;
        Candidate { scenario: self.scenario.clone(), breakdown, costs: c.clone(), max_micro_batch, step_seconds: c.step_seconds, tokens_per_second: c.tokens_per_second }
    }
}

/// The micro-batches a replica's share `per_replica` can be split into (its divisors, at
/// most [`MAX_MICRO_BATCH`]), ascending; each pair found below the square root (a
/// division per candidate costs more than a layout's bookkeeping).
fn micro_batch_sizes(per_replica: u64) -> Vec<u64> {
    let (mut small, mut large) = (Vec::new(), Vec::new());
    let mut d = 1;
    while d <= MAX_MICRO_BATCH && d.saturating_mul(d) <= per_replica {
        if per_replica.is_multiple_of(d) {
            small.push(d);
            let pair = per_replica / d;
            if pair != d && pair <= MAX_MICRO_BATCH {
                large.push(pair);
            }
        }
        d += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

/// The search's core for one layout; same answer as micro-batch bisection followed by
/// [`super::split_global_batch`] (see [`evaluate_layout`]) with fewer estimates:
/// 1. Without accumulation, the largest divisor of the replica's share that fits: memory
///    grows with the micro-batch, so those that fit are a prefix of the divisors, bracketed
///    by [`close_bracket`] (usually two or three estimates; one when nothing fits).
/// 2. Down from there, the first divisor that also fits with the accumulation the split
///    needs (none when the divisor is the whole share: that is the estimate of step 1).
///
/// `hint` is what the previous layout of the same shape learnt; this layout's comes back
/// with the result.
fn fit_layout(layout: &Scenario, resolved: &Resolved, global_batch: u64, margin: f64, hint: Hint, evaluations: &mut u64) -> (Option<Fitted>, Hint) {
    let dp = layout.parallel.dp.max(1);
    if global_batch == 0 || !global_batch.is_multiple_of(dp) {
        return (None, hint);
    }
    let per_replica = global_batch / dp;
    let sizes = micro_batch_sizes(per_replica);
    let mut s = layout.clone();
    s.training.grad_accum = 1;
    let mut points: Vec<Point> = Vec::new();
    let mut whole: Option<Totals> = None;
    let list = Sizes::List(&sizes);
    let (bracket, slope) = close_bracket(list, Bracket { fit: None, fail: sizes.len() }, hint.fits, None, hint.slope, |b| {
        s.training.micro_batch = b;
        *evaluations += 1;
        let totals = resolved.totals(&s);
        let p = Point::new(b, totals.as_ref(), margin);
        if p.fits && b == per_replica {
            whole = totals;
        }
        points.push(p);
        p
    });
    let learnt = Hint { slope, fits: bracket.fit.map(|i| sizes[i]) };
    let Some(top) = bracket.fit else {
        return (None, learnt);
    };
    let fits = *points.iter().find(|p| p.micro_batch == sizes[top]).expect("a fit comes from a probe");
    let fails_from = sizes.get(bracket.fail).copied().unwrap_or(MAX_MICRO_BATCH + 1);
    for &micro in sizes[..=top].iter().rev() {
        s.training.micro_batch = micro;
        s.training.grad_accum = per_replica / micro;
        let totals = match whole.take() {
            Some(t) if micro == per_replica => t,
            _ => {
                *evaluations += 1;
                match resolved.totals(&s) {
                    Some(t) if totals_fit_with_margin(&t, margin) => t,
                    _ => continue,
                }
            }
        };
        let costs = resolved.costs(&s, &totals);
        let headroom = totals.capacity().saturating_sub(totals.total());
        return (Some(Fitted { scenario: s, costs, headroom, fits, fails_from, slope, candidate: None }), learnt);
    }
    (None, learnt)
}

/// The largest micro-batch without accumulation that fits, from what [`fit_layout`] learnt:
/// bracketed between its largest fit and its smallest failure.
fn finish_max_micro_batch(f: &Fitted, resolved: &Resolved, margin: f64, evaluations: &mut u64) -> u64 {
    let known = f.fits.micro_batch;
    if known.saturating_add(1) >= f.fails_from {
        return known;
    }
    let sizes = Sizes::Range(known + 1, f.fails_from - 1);
    let mut probe = f.scenario.clone();
    probe.training.grad_accum = 1;
    let (bracket, _) = close_bracket(sizes, Bracket { fit: None, fail: sizes.len() }, None, Some(f.fits), f.slope, |b| {
        probe.training.micro_batch = b;
        *evaluations += 1;
        Point::new(b, resolved.totals(&probe).as_ref(), margin)
    });
    bracket.fit.map_or(known, |i| sizes.get(i))
}

/// One layout running exactly `global_batch` sequences per step: the micro-batch is the
/// largest divisor of the layout's share that fits with `margin`, with its accumulation and
/// without (so at most `max_micro_batch`, the largest that fits without accumulation),
/// accumulation the rest. `None` when nothing fits or the layout's dp does not divide the
/// global batch.
pub fn evaluate_layout(layout: &Scenario, global_batch: u64, margin: f64, evaluations: &mut u64) -> Option<Candidate> {
    let resolved = Resolved::new(layout);
    let f = fit_layout(layout, &resolved, global_batch, margin, Hint::default(), evaluations).0?;
    Some(f.candidate(&resolved, margin, evaluations))
}

/// The order [`rank`] puts candidates in, by index, from each one's step time and memory left.
fn rank_order(keys: &[(f64, u64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].0.total_cmp(&keys[b].0));
    let mut ranked = Vec::with_capacity(order.len());
    let mut start = 0;
    while start < order.len() {
        let lead = keys[order[start]].0;
        let end = order[start..].iter().position(|&i| faster(lead, keys[i].0)).map_or(order.len(), |p| start + p);
        let mut group = order[start..end].to_vec();
        group.sort_by_key(|&i| std::cmp::Reverse(keys[i].1));
        ranked.extend(group);
        start = end;
    }
    ranked
}

/// Fastest first; within a group whose step times are the same (within
/// [`super::SAME_TIME`] of the group's fastest), the most memory left first.
pub fn rank(found: Vec<Candidate>) -> Vec<Candidate> {
    let keys: Vec<(f64, u64)> = found.iter().map(|c| (c.step_seconds, headroom(&c.breakdown))).collect();
    let mut slots: Vec<Option<Candidate>> = found.into_iter().map(Some).collect();
    rank_order(&keys).into_iter().filter_map(|i| slots[i].take()).collect()
}

/// What one layout's search teaches the next of the same shape: bytes per sequence of
/// micro-batch, and the largest micro-batch that fit without accumulation (`None`: none did).
#[derive(Clone, Copy, Debug, Default)]
struct Hint {
    slope: Option<f64>,
    fits: Option<u64>,
}

/// Layouts whose memory grows alike with the micro-batch (tensor, pipeline and context
/// parallelism and checkpointing set the activations per sequence); a slope learnt on one
/// guides the search on the next.
type Shape = (u64, u64, u64, Checkpointing);

fn shape(s: &Scenario) -> Shape {
    (s.parallel.tp, s.parallel.pp, s.parallel.cp, s.training.checkpointing)
}

/// A search in progress.
#[derive(Clone, Debug)]
pub struct SearchRun {
    pending: Vec<Scenario>,
    /// The base's model and device, which every layout shares.
    resolved: Resolved,
    next: usize,
    global_batch: u64,
    margin: f64,
    limit: usize,
    found: Vec<Fitted>,
    /// What the last layout of each shape taught.
    hints: HashMap<Shape, Hint>,
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
            resolved: Resolved::new(base),
            next: 0,
            global_batch: global_batch(base),
            margin: clamp_margin(margin),
            limit,
            found: Vec::new(),
            hints: HashMap::new(),
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
            if !self.global_batch.is_multiple_of(layout.parallel.dp.max(1)) {
                self.batch_mismatch += 1;
                continue;
            }
            let key = shape(layout);
            let (fitted, hint) = fit_layout(layout, &self.resolved, self.global_batch, self.margin, self.hints.get(&key).copied().unwrap_or_default(), &mut self.evaluations);
            self.hints.insert(key, hint);
            self.found.extend(fitted);
        }
        self.next = end;
        if self.is_finished() {
            self.complete_listed();
        }
        self.is_finished()
    }

    /// Evaluates layouts one at a time while `more()` says so (asked after each), at least
    /// one; returns true when none are left. For a page that yields every few milliseconds.
    pub fn step_while(&mut self, mut more: impl FnMut() -> bool) -> bool {
        loop {
            if self.step(1) {
                return true;
            }
            if !more() {
                return false;
            }
        }
    }

    /// Indices into `found` of the best `limit`, best first.
    fn listed(&self) -> Vec<usize> {
        let keys: Vec<(f64, u64)> = self.found.iter().map(|f| (f.costs.step_seconds, f.headroom)).collect();
        let mut order = rank_order(&keys);
        order.truncate(self.limit);
        order
    }

    /// Makes each listed layout a candidate (once the search is over).
    fn complete_listed(&mut self) {
        for i in self.listed() {
            if self.found[i].candidate.is_none() {
                let c = self.found[i].candidate(&self.resolved, self.margin, &mut self.evaluations);
                self.found[i].candidate = Some(c);
            }
        }
    }

    /// The best `limit` layouts found so far (see [`rank`]) and the counts.
    pub fn result(&self) -> SearchResult {
        let mut evaluations = self.evaluations;
        let results = self.listed().into_iter().map(|i| self.found[i].candidate(&self.resolved, self.margin, &mut evaluations)).collect();
        SearchResult {
            results,
            layouts: self.pending.len() as u64,
            fitting: self.found.len() as u64,
            batch_mismatch: self.batch_mismatch,
            evaluations,
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
    use crate::plan::{fits_with_margin, SAME_TIME};
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
        const { assert!(SAME_TIME < 0.01) };
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
        assert!(
            text.starts_with(&format!(
                "Tried {} layouts on 6 GPUs: {} fit with 10 % of memory free, at the global batch of 32 sequences; {} cannot split 32 over",
                r.layouts, r.fitting, r.batch_mismatch
            )),
            "{text}"
        );
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
            assert!(
                !faster(best.step_seconds, plan.costs.step_seconds) && !faster(plan.costs.step_seconds, best.step_seconds),
                "{micro_batch}: {} vs {}",
                best.step_seconds,
                plan.costs.step_seconds
            );
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
            // Slices of any length (the page's are by time) give the same too.
            let mut run = SearchRun::new(&base, gpus, DEFAULT_MARGIN, 10);
            let (mut calls, mut asked) = (0, 0);
            while !run.step_while(|| {
                asked += 1;
                asked % 5 != 0
            }) {
                calls += 1;
                assert_eq!(run.done(), calls * 5);
            }
            assert_eq!(run.result(), expected, "{model} on {gpus} in slices");
        }
    }

    /// The search as first written, kept here to prove the fast one gives the same answer:
    /// every layout's largest micro-batch by doubling then bisection over 1..=1024, then
    /// the global batch split at the largest divisor below it, stepping down while the split
    /// (with its accumulation) does not fit; every fitting layout ranked.
    mod reference {
        use super::super::*;
        use crate::plan::escalation::costs;
        use crate::plan::{fits_with_margin, split_global_batch};

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

        pub fn evaluate_layout(layout: &Scenario, global_batch: u64, margin: f64, evaluations: &mut u64) -> Option<Candidate> {
            let mut s = layout.clone();
            s.training.grad_accum = 1;
            let max_mb = max_micro_batch(&s, margin, evaluations);
            let mut cap = max_mb;
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

        pub fn search(base: &Scenario, gpus: u64, margin: f64, limit: usize) -> SearchResult {
            let margin = clamp_margin(margin);
            let global_batch = global_batch(base);
            let pending = layouts(base, gpus);
            let (mut found, mut batch_mismatch, mut evaluations) = (Vec::new(), 0, 0);
            for layout in &pending {
                if !global_batch.is_multiple_of(layout.parallel.dp.max(1)) {
                    batch_mismatch += 1;
                } else if let Some(c) = evaluate_layout(layout, global_batch, margin, &mut evaluations) {
                    found.push(c);
                }
            }
            let fitting = found.len() as u64;
            let mut results = rank(found);
            results.truncate(limit);
            SearchResult {
                results,
                layouts: pending.len() as u64,
                fitting,
                batch_mismatch,
                evaluations,
                global_batch,
                margin,
                context_parallel_tried: context_parallel_pays(base.training.seq_len, 2),
            }
        }
    }

    fn scenario(model: &str, device: &str, seq_len: u64, micro_batch: u64, grad_accum: u64, dp: u64) -> Scenario {
        let mut s = Scenario { model: ModelSpec::Preset(model.into()), ..Scenario::default() };
        s.device = DeviceSpec::preset(device);
        s.training.seq_len = seq_len;
        s.training.micro_batch = micro_batch;
        s.training.grad_accum = grad_accum;
        s.parallel.dp = dp;
        s
    }

    /// Same ranked layouts (every one that fits, each with its scenario, breakdown, costs
    /// and largest micro-batch), same counts, as the straightforward search; only the
    /// number of estimates differs, and it is never more, but for the listed layouts'
    /// breakdowns made once more with their named terms (the search reads totals only).
    fn assert_same_as_reference(base: &Scenario, gpus: u64, margin: f64, limit: usize) -> (u64, u64) {
        let expected = reference::search(base, gpus, margin, limit);
        let mut run = SearchRun::new(base, gpus, margin, limit);
        run.step(usize::MAX);
        let got = run.result();
        let what = format!("{} seq {} batch {} on {gpus} GPUs, margin {margin}, {:?}", base.model.label(), base.training.seq_len, expected.global_batch, base.device.preset);
        assert_eq!(got.results.len(), expected.results.len(), "{what}");
        for (rank, (g, e)) in got.results.iter().zip(&expected.results).enumerate() {
            assert_eq!(g, e, "{what}: result {rank}");
        }
        assert_eq!(SearchResult { evaluations: 0, ..got.clone() }, SearchResult { evaluations: 0, ..expected.clone() }, "{what}");
        assert!(got.evaluations <= expected.evaluations + got.results.len() as u64, "{what}: {} estimates, {} before", got.evaluations, expected.evaluations);
        (got.evaluations, expected.evaluations)
    }

    #[test]
    fn the_fast_search_ranks_exactly_as_the_reference() {
        let (mut fast, mut slow) = (0, 0);
        let mut add = |(f, s): (u64, u64)| {
            fast += f;
            slow += s;
        };
        // Every fitting layout, ranked, with its largest micro-batch.
        for (model, device, seq, mb, ga, dp) in [
            ("llama-3-8b", "a100-80gb", 2048, 1, 1, 8),
            ("llama-3-8b", "a100-80gb", 2048, 4, 8, 1),
            ("llama-3-8b", "h100-sxm-80gb", 4096, 1, 512, 8),
            ("llama-3-8b", "h100-sxm-80gb", 131_072, 1, 64, 8),
            ("llama-3-70b", "h100-sxm-80gb", 4096, 2, 16, 8),
            ("llama-3-70b", "a100-80gb", 32_768, 1, 6, 8),
            ("gpt2", "rtx-4090-24gb", 1024, 3, 5, 4),
            ("gpt2", "h100-sxm-80gb", 1024, 1, 1, 1),
            ("mixtral-8x7b", "h100-sxm-80gb", 4096, 1, 32, 8),
            ("resnet-50", "a100-80gb", 4096, 64, 1, 4),
        ] {
            let base = scenario(model, device, seq, mb, ga, dp);
            for gpus in [1, 6, 8, 64] {
                add(assert_same_as_reference(&base, gpus, DEFAULT_MARGIN, usize::MAX));
            }
        }
        // Other margins, and the listed ten only (their largest micro-batch found last).
        let base = scenario("llama-3-8b", "a100-80gb", 4096, 2, 48, 4);
        for margin in [0.0, 0.3, 0.9] {
            add(assert_same_as_reference(&base, 24, margin, usize::MAX));
        }
        for gpus in [8, 96] {
            add(assert_same_as_reference(&base, gpus, DEFAULT_MARGIN, 10));
        }
        // Thousands of GPUs, long sequences (context parallelism), the global batch of 4,096.
        for (model, seq) in [("llama-3-8b", 131_072), ("llama-3-70b", 4096)] {
            let base = scenario(model, "h100-sxm-80gb", seq, 1, 512, 8);
            for gpus in [512, 4096] {
                add(assert_same_as_reference(&base, gpus, DEFAULT_MARGIN, 10));
            }
        }
        assert!(fast * 3 < slow * 2, "{fast} estimates, {slow} before");
    }

    #[test]
    fn micro_batch_sizes_are_the_divisors_up_to_the_largest_micro_batch() {
        let brute = |n: u64| (1..=n.min(MAX_MICRO_BATCH)).filter(|d| n.is_multiple_of(*d)).collect::<Vec<u64>>();
        for n in (0..5000).chain([65_536, 1 << 20, (1 << 20) + 1, 1_048_575, 3 * 1024 * 1024, 1_000_000_007, u64::MAX]) {
            assert_eq!(micro_batch_sizes(n), brute(n), "{n}");
        }
    }

    #[test]
    fn evaluate_layout_and_max_micro_batch_match_the_reference() {
        for (model, device, seq, mb, ga, dp) in
            [("llama-3-8b", "a100-80gb", 2048, 4, 8, 1), ("llama-3-70b", "h100-sxm-80gb", 8192, 1, 24, 8), ("gpt2", "rtx-4090-24gb", 512, 1, 1, 1)]
        {
            let base = scenario(model, device, seq, mb, ga, dp);
            for layout in layouts(&base, 16) {
                for (global, margin) in [(global_batch(&base), 0.1), (96, 0.0), (7, 0.5)] {
                    let (mut n, mut m) = (0, 0);
                    assert_eq!(evaluate_layout(&layout, global, margin, &mut n), reference::evaluate_layout(&layout, global, margin, &mut m), "{layout:?} {global} {margin}");
                }
                for margin in [0.0, 0.1] {
                    let (mut n, mut m) = (0, 0);
                    assert_eq!(max_micro_batch(&layout, margin, &mut n), reference::max_micro_batch(&layout, margin, &mut m));
                    assert!(n <= m + 2, "{n} estimates, {m} before");
                }
            }
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
