//! A predicted memory timeline of one training step: the breakdown's terms drawn in time from
//! their lifetimes ([`Lifetime`]), as a sequence of labelled points with bytes per component.
//!
//! The step runs micro-batch by micro-batch: forward through the input, the blocks (in groups
//! of layers, at most [`MAX_POINTS`] points in all) and the loss; backward from the loss, the
//! head and the blocks back to the input; then the optimizer step. With gradient accumulation
//! the micro-batches follow each other; with pipeline parallelism the stage interleaves them
//! as its schedule does (1F1B, Narayanan et al. 2021 §2.2: p − stage forwards before the first
//! backward, then one forward per backward; GPipe, Huang et al. 2019: every forward first), so
//! the saved tensors of up to `StepShape::in_flight` micro-batches are alive at once (the
//! interleaved schedule's extra model chunks are drawn as part of each, as the breakdown
//! counts them). Up to four micro-batches are drawn in full, else micro-batches 1, 2 and the
//! last, and a run of others is one point at its highest.
//!
//! Each point is the highest moment of its stretch of the step:
//! - saved tensors ([`Lifetime::Saved`]) of the input span are made with the first group and
//!   freed after the last group's backward; the blocks' grow and shrink in proportion to the
//!   blocks done; the output span's (final norm, head input, log-softmax) are made at the loss
//!   and freed by the head's backward, unless the breakdown's peak is a per-block moment: it
//!   counts them with it, so they are kept through the last blocks' backward;
//! - each transient ([`Lifetime::Transient`]) is drawn at its moment: the logits at "loss", the
//!   loss gradients at "loss backward", the chunked loss's head gradients at "head backward",
//!   and the per-block ones (recompute, softmax backward, reload, fused update) in every
//!   block group's backward, the largest of them;
//! - whole-step and forward-backward terms are there throughout forward and backward;
//! - gradients made in backward ([`Lifetime::MadeInBackward`]) appear as backward reaches
//!   their parameters (autograd's `AccumulateGrad` node of each parameter runs when backward
//!   reaches it: `torch/csrc/autograd/functions/accumulate_grad.h`): none before the blocks'
//!   backward, all of them after it, in proportion to the blocks done in between, and they
//!   stay for the optimizer step. The head's gradients (made just before the blocks') and the
//!   embeddings' (just after) are drawn with the blocks': an approximation, which puts the
//!   embeddings' gradients beside the last block's transient (within 3% of MemTracker's
//!   backward peak on `peaks.json` and `techniques.json`, +2.7% at most, tiny checkpointed
//!   models whose embeddings are a third of the weights). A block group's backward point is the higher of its
//!   two ends (its saved tensors not yet freed, or its gradients made: both change block by
//!   block), so the last group's is the end of backward when that holds the most.
//! - the optimizer's intermediates are counted at the optimizer step, as in the breakdown.
//!
//! So the timeline's last point is `phases.optimizer_step`, and its forward/backward peak is
//! `Breakdown::phases.forward_backward` (backward's start, before the first gradient, as the
//! small measured models peak: `tests/fixtures/measured/peaks.json`) or, where the gradients
//! outweigh the saved tensors they replace, the end of backward, higher, with every gradient
//! made: each point is the phase's totals less what is not alive at it, plus the uncounted
//! transient of its moment and the gradients made so far.

use super::breakdown::{Breakdown, Component, Lifetime, Moment, Phase, PhaseTotals, Span, StepShape, Term};
use super::ledger::to_bytes;

/// Most points a timeline has.
pub const MAX_POINTS: usize = 64;

/// What a point of the timeline shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// Forward through the input and a group of blocks.
    Forward,
    /// The end of forward: the head and the loss.
    Loss,
    /// Backward: the loss, the head, a group of blocks.
    Backward,
    /// Several micro-batches' forwards and backwards drawn as one point (their highest).
    Collapsed,
    /// `optimizer.step()` (or, with the update fused into backward, the step's end).
    OptimizerStep,
}

impl Event {
    /// The phase of the breakdown this event belongs to.
    pub fn phase(self) -> Phase {
        match self {
            Event::OptimizerStep => Phase::OptimizerStep,
            _ => Phase::ForwardBackward,
        }
    }
}

/// One point of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// What happens, e.g. "forward L1–L4", "loss backward", "mb 2 · backward L32–L29".
    pub label: String,
    pub event: Event,
    /// The micro-batch (from 1) whose forward or backward this is; `None` for a collapsed run
    /// and the optimizer step.
    pub micro_batch: Option<u64>,
    /// Bytes per component at the point's highest moment, and their total.
    pub bytes: PhaseTotals,
}

/// The points of one training step, in order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Timeline {
    pub points: Vec<Point>,
}

impl Timeline {
    /// Index of the highest point (the first of equal ones).
    pub fn peak_index(&self) -> Option<usize> {
        self.points
            .iter()
            .enumerate()
            .fold(None, |best: Option<(usize, u64)>, (i, p)| match best {
                Some((_, b)) if b >= p.bytes.total => best,
                _ => Some((i, p.bytes.total)),
            })
            .map(|(i, _)| i)
    }

    /// The highest point.
    pub fn peak(&self) -> Option<&Point> {
        self.peak_index().map(|i| &self.points[i])
    }

    /// The highest point of one phase.
    pub fn phase_peak(&self, phase: Phase) -> Option<&Point> {
        self.points.iter().filter(|p| p.event.phase() == phase).fold(None, |best: Option<&Point>, p| match best {
            Some(b) if b.bytes.total >= p.bytes.total => best,
            _ => Some(p),
        })
    }
}

/// The timeline of the step the breakdown describes; empty in inference.
pub fn timeline(b: &Breakdown) -> Timeline {
    let Some(shape) = b.step else {
        return Timeline::default();
    };
    let parts = Parts::new(b, &shape);
    let schedule = Schedule::new(shape.micro_batches, shape.in_flight);
    let detailed = schedule.detailed();
    // Besides the block groups: the collapsed runs, the optimizer step, and per forward the
    // loss, per backward the loss, head backward and backward's start (drawn apart when the
    // first group's end is higher).
    let runs = detailed.windows(2).filter(|w| w[1] > w[0] + 1).count();
    let forwards = detailed.iter().filter(|&&k| schedule.op(k).forward).count();
    let backwards = detailed.len() - forwards;
    let fixed = runs + 1 + forwards * usize::from(parts.loss_forward) + backwards * (usize::from(parts.loss_backward) + usize::from(parts.head_backward) + 1);
    let groups = (MAX_POINTS.saturating_sub(fixed) / detailed.len()).max(1) as u64;

    let mut points = Vec::new();
    for (i, &k) in detailed.iter().enumerate() {
        if i > 0 && k > detailed[i - 1] + 1 {
            points.push(parts.collapsed(&schedule, detailed[i - 1] + 1, k - 1));
        }
        parts.op_points(schedule.op(k), groups, &mut points);
    }
    let fused = b.terms.iter().chain(&b.uncounted_transients).any(|t| t.lifetime == Lifetime::Transient(Moment::ParameterUpdate));
    let save = b.terms.iter().any(|t| t.lifetime == Lifetime::CheckpointSave);
    let label = if save {
        "checkpoint save (full state dict, after the optimizer step)"
    } else if fused {
        "end of step (optimizer fused into backward)"
    } else {
        "optimizer step"
    };
    points.push(Point { label: label.into(), event: Event::OptimizerStep, micro_batch: None, bytes: b.phases.optimizer_step.clone() });
    Timeline { points }
}

/// Bytes per component, in [`Component::ALL`] order.
type Bytes = [f64; 6];

/// The spans in `Parts::saved` order.
const SPANS: [Span; 3] = [Span::Input, Span::Blocks, Span::Output];

/// The breakdown's terms, grouped for drawing.
struct Parts<'a> {
    shape: &'a StepShape,
    /// The forward/backward phase as the breakdown counts it.
    base: &'a PhaseTotals,
    /// Saved tensors of all micro-batches in flight, by span, that the phase counts.
    saved: [Bytes; 3],
    /// Saved tensors the phase does not count (the output span, when the counted moment is
    /// in the blocks' backward, by which time they are freed): added where they are alive.
    saved_uncounted: [Bytes; 3],
    /// Gradients made in backward (all of them, once backward is done); the forward/backward
    /// phase does not count them.
    made: Bytes,
    /// Transients: moment, component index, bytes, whether the phase counts it.
    transients: Vec<(Moment, usize, f64, bool)>,
    /// The per-block moment drawn in the blocks' backward (the largest).
    block_moment: Option<Moment>,
    /// Whether the output span is kept through the last blocks' backward: the phase counts a
    /// per-block moment together with the output span (several micro-batches in flight).
    keep_output: bool,
    loss_forward: bool,
    loss_backward: bool,
    head_backward: bool,
}

/// What is alive at one point: whole micro-batches held besides this one, the fraction of
/// this one's saved tensors per span, the fraction of the gradients made in backward, and the
/// moment.
struct State {
    held: f64,
    own: [f64; 3],
    made: f64,
    moment: Option<Moment>,
}

impl<'a> Parts<'a> {
    fn new(b: &'a Breakdown, shape: &'a StepShape) -> Self {
        let index = |c: Component| Component::ALL.iter().position(|&x| x == c).unwrap_or(0);
        let (mut saved, mut saved_uncounted, mut made) = ([[0.0; 6]; 3], [[0.0; 6]; 3], [0.0; 6]);
        let mut transients = Vec::new();
        let mut add = |t: &Term, counted: bool| match t.lifetime {
            Lifetime::MadeInBackward => made[index(t.component)] += t.bytes as f64,
            Lifetime::Saved(span) => {
                let into = if counted { &mut saved } else { &mut saved_uncounted };
                into[SPANS.iter().position(|&s| s == span).unwrap_or(0)][index(t.component)] += t.bytes as f64;
            }
            Lifetime::Transient(m) => transients.push((m, index(t.component), t.bytes as f64, counted)),
            _ => {}
        };
        b.terms.iter().for_each(|t| add(t, true));
        b.uncounted_transients.iter().for_each(|t| add(t, false));
        let has = |m: Moment| transients.iter().any(|t| t.0 == m);
        let output_counted = saved[2].iter().sum::<f64>() > 0.0;
        let output = output_counted || saved_uncounted[2].iter().sum::<f64>() > 0.0;
        let counted_block = transients.iter().find(|t| t.3 && t.0.in_blocks()).map(|t| t.0);
        let largest_block = transients.iter().filter(|t| t.0.in_blocks()).max_by(|a, b| a.2.total_cmp(&b.2)).map(|t| t.0);
        Parts {
            shape,
            base: &b.phases.forward_backward,
            saved,
            saved_uncounted,
            made,
            block_moment: counted_block.or(largest_block),
            keep_output: counted_block.is_some() && output_counted,
            loss_forward: output || has(Moment::LossForward),
            loss_backward: output || has(Moment::LossBackward),
            head_backward: has(Moment::HeadBackward),
            transients,
        }
    }

    /// The six components in a state: the phase's totals, less the counted saved tensors not
    /// (or no longer) alive and the counted transients of other moments, plus the uncounted
    /// saved tensors alive and the uncounted transients of this moment.
    fn bytes(&self, s: &State) -> PhaseTotals {
        let count = self.shape.in_flight.max(1) as f64;
        let mut t = PhaseTotals::default();
        for (i, &c) in Component::ALL.iter().enumerate() {
            let alive = |span: usize| (s.held + s.own[span]) / count;
            let mut missing: f64 = (0..3).map(|span| self.saved[span][i] * (1.0 - alive(span))).sum();
            let mut extra: f64 = (0..3).map(|span| self.saved_uncounted[span][i] * alive(span)).sum();
            extra += self.made[i] * s.made;
            for &(m, _, bytes, counted) in self.transients.iter().filter(|t| t.1 == i) {
                let here = Some(m) == s.moment;
                if counted && !here {
                    missing += bytes;
                } else if !counted && here {
                    extra += bytes;
                }
            }
            let v = self.base.component(c).saturating_sub(to_bytes(missing)).saturating_add(to_bytes(extra));
            match c {
                Component::Parameters => t.parameters = v,
                Component::Gradients => t.gradients = v,
                Component::OptimizerStates => t.optimizer_states = v,
                Component::Activations => t.activations = v,
                Component::Temporary => t.temporary = v,
                Component::Overhead => t.overhead = v,
            }
            t.total = t.total.saturating_add(v);
        }
        t
    }

    /// "L5" or "L5–L8" for blocks `a..=b` of the stage (from 1); empty without blocks to name.
    fn layers(&self, a: u64, b: u64) -> String {
        let shape = self.shape;
        if shape.model_layers <= 1 {
            return String::new();
        }
        let (a, b) = (shape.first_layer + a, shape.first_layer + b);
        if a == b {
            format!(" L{a}")
        } else {
            format!(" L{a}–L{b}")
        }
    }

    /// The points of one micro-batch's forward or backward, with `groups` groups of blocks.
    fn op_points(&self, op: Op, groups: u64, out: &mut Vec<Point>) {
        let n = self.shape.layers.max(1);
        let groups = groups.clamp(1, n);
        let prefix = if self.shape.micro_batches > 1 { format!("mb {} · ", op.micro_batch) } else { String::new() };
        let held = op.held as f64;
        let mut push = |label: String, event: Event, state: State| {
            out.push(Point { label: format!("{prefix}{label}"), event, micro_batch: Some(op.micro_batch), bytes: self.bytes(&state) });
        };
        // Group g covers blocks bound(g)+1 ..= bound(g+1).
        let bound = |g: u64| g * n / groups;
        let fraction = |blocks: u64| blocks as f64 / n as f64;
        if op.forward {
            for g in 0..groups {
                let (a, b) = (bound(g) + 1, bound(g + 1));
                push(format!("forward{}", self.layers(a, b)), Event::Forward, State { held, own: [1.0, fraction(b), 0.0], made: 0.0, moment: None });
            }
            if self.loss_forward {
                push("loss".into(), Event::Loss, State { held, own: [1.0; 3], made: 0.0, moment: Some(Moment::LossForward) });
            }
        } else {
            if self.loss_backward {
                push("loss backward".into(), Event::Backward, State { held, own: [1.0; 3], made: 0.0, moment: Some(Moment::LossBackward) });
            }
            if self.head_backward {
                push("head backward".into(), Event::Backward, State { held, own: [1.0; 3], made: 0.0, moment: Some(Moment::HeadBackward) });
            }
            for g in (0..groups).rev() {
                let (a, b) = (bound(g) + 1, bound(g + 1));
                let output = if g + 1 == groups && self.keep_output { 1.0 } else { 0.0 };
                // The group's start (its saved tensors alive, the gradients of the blocks above
                // made) or its end (those freed, its own gradients made): the higher.
                let start = State { held, own: [1.0, fraction(b), output], made: 1.0 - fraction(b), moment: self.block_moment };
                let end = State { held, own: [1.0, fraction(a - 1), output], made: 1.0 - fraction(a - 1), moment: self.block_moment };
                let state = if self.bytes(&end).total > self.bytes(&start).total {
                    // Backward's start, before the first gradient, is the breakdown's
                    // forward/backward moment: drawn on its own when the first group's end
                    // replaces it.
                    if g + 1 == groups {
                        push("backward begins".into(), Event::Backward, State { made: 0.0, ..start });
                    }
                    end
                } else {
                    start
                };
                push(format!("backward{}", self.layers(b, a)), Event::Backward, state);
            }
        }
    }

    /// One point for ops `first..=last` of the schedule: the highest of them.
    fn collapsed(&self, schedule: &Schedule, first: u64, last: u64) -> Point {
        let mut candidates = Vec::new();
        let (forwards, backwards) = (schedule.forwards_in(first, last), schedule.backwards_in(first, last));
        // A forward holds the most at the run's last forward, a backward at its first.
        if let Some((_, j)) = forwards {
            self.op_points(schedule.op(schedule.forward_index(j)), 1, &mut candidates);
        }
        if let Some((j, _)) = backwards {
            self.op_points(schedule.op(schedule.backward_index(j)), 1, &mut candidates);
        }
        let bytes = candidates.into_iter().map(|p| p.bytes).fold(PhaseTotals::default(), |a, b| if b.total > a.total { b } else { a });
        let range = |(a, b): (u64, u64)| {
            if a == b {
                format!("mb {a}")
            } else {
                format!("mb {a}–{b}")
            }
        };
        let label = match (forwards, backwards) {
            (Some(f), None) => format!("{} forward", range(f)),
            (None, Some(b)) => format!("{} backward", range(b)),
            (Some(f), Some(b)) => format!("{} forward and backward", range((f.0.min(b.0), f.1.max(b.1)))),
            (None, None) => String::new(),
        };
        Point { label, event: Event::Collapsed, micro_batch: None, bytes }
    }
}

/// One micro-batch's forward or backward on this stage, with the micro-batches held besides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Op {
    forward: bool,
    micro_batch: u64,
    held: u64,
}

/// The order of forwards and backwards on this stage: `c` = micro-batches in flight warm-up
/// forwards, then one backward and one forward in turn, then the last `c` backwards
/// (1F1B; `c` = 1 is plain accumulation, `c` = m is GPipe). Ops are indexed from 0 to 2m − 1
/// and computed in O(1), so any number of micro-batches costs the same.
struct Schedule {
    m: u64,
    c: u64,
}

impl Schedule {
    fn new(micro_batches: u64, in_flight: u64) -> Self {
        let m = micro_batches.max(1);
        Schedule { m, c: in_flight.clamp(1, m) }
    }

    /// End of the steady state (1F1B pairs), as an op index.
    fn steady_end(&self) -> u64 {
        self.c + 2 * (self.m - self.c)
    }

    fn op(&self, k: u64) -> Op {
        let (m, c) = (self.m, self.c);
        if k < c {
            Op { forward: true, micro_batch: k + 1, held: k }
        } else if k < self.steady_end() {
            let i = k - c;
            let j = i / 2 + 1;
            if i.is_multiple_of(2) {
                Op { forward: false, micro_batch: j, held: c - 1 }
            } else {
                Op { forward: true, micro_batch: j + c, held: c - 1 }
            }
        } else {
            let j = m - c + 1 + (k - self.steady_end());
            Op { forward: false, micro_batch: j, held: m - j }
        }
    }

    fn forward_index(&self, j: u64) -> u64 {
        if j <= self.c {
            j - 1
        } else {
            self.c + 2 * (j - self.c - 1) + 1
        }
    }

    fn backward_index(&self, j: u64) -> u64 {
        if j <= self.m - self.c {
            self.c + 2 * (j - 1)
        } else {
            self.steady_end() + (j - (self.m - self.c + 1))
        }
    }

    /// Forwards among ops `0..=k`.
    fn forwards_upto(&self, k: u64) -> u64 {
        if k < self.c {
            k + 1
        } else if k < self.steady_end() {
            self.c + (k - self.c).div_ceil(2)
        } else {
            self.m
        }
    }

    /// Backwards among ops `0..=k`.
    fn backwards_upto(&self, k: u64) -> u64 {
        if k < self.c {
            0
        } else if k < self.steady_end() {
            (k - self.c) / 2 + 1
        } else {
            (self.m - self.c) + (k - self.steady_end() + 1)
        }
    }

    /// The first and last micro-batch whose forward is among ops `first..=last`.
    fn forwards_in(&self, first: u64, last: u64) -> Option<(u64, u64)> {
        let before = if first == 0 { 0 } else { self.forwards_upto(first - 1) };
        let upto = self.forwards_upto(last);
        (upto > before).then_some((before + 1, upto))
    }

    /// The first and last micro-batch whose backward is among ops `first..=last`.
    fn backwards_in(&self, first: u64, last: u64) -> Option<(u64, u64)> {
        let before = if first == 0 { 0 } else { self.backwards_upto(first - 1) };
        let upto = self.backwards_upto(last);
        (upto > before).then_some((before + 1, upto))
    }

    /// Op indices drawn in full, in order: every micro-batch's up to four, else those of
    /// micro-batches 1, 2 and the last.
    fn detailed(&self) -> Vec<u64> {
        let shown: Vec<u64> = if self.m <= 4 { (1..=self.m).collect() } else { vec![1, 2, self.m] };
        let mut ks: Vec<u64> = shown.into_iter().flat_map(|j| [self.forward_index(j), self.backward_index(j)]).collect();
        ks.sort_unstable();
        ks.dedup();
        ks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(m: u64, c: u64) -> Vec<(bool, u64, u64)> {
        let s = Schedule::new(m, c);
        (0..2 * s.m).map(|k| s.op(k)).map(|o| (o.forward, o.micro_batch, o.held)).collect()
    }

    /// 1F1B with 4 in flight and 6 micro-batches: four warm-up forwards, backward and forward in
    /// turn holding 3 others, then the last backwards with fewer and fewer held.
    #[test]
    fn one_f_one_b_order() {
        let f = |j, h| (true, j, h);
        let b = |j, h| (false, j, h);
        assert_eq!(ops(6, 4), vec![f(1, 0), f(2, 1), f(3, 2), f(4, 3), b(1, 3), f(5, 3), b(2, 3), f(6, 3), b(3, 3), b(4, 2), b(5, 1), b(6, 0)]);
        // Plain accumulation and GPipe are the two ends.
        assert_eq!(ops(2, 1), vec![f(1, 0), b(1, 0), f(2, 0), b(2, 0)]);
        assert_eq!(ops(3, 3), vec![f(1, 0), f(2, 1), f(3, 2), b(1, 2), b(2, 1), b(3, 0)]);
    }

    /// The O(1) index arithmetic agrees with walking the schedule.
    #[test]
    fn indices_and_counts_agree_with_the_order() {
        for (m, c) in [(1, 1), (2, 1), (5, 2), (6, 4), (7, 7), (9, 3)] {
            let s = Schedule::new(m, c);
            let all: Vec<Op> = (0..2 * m).map(|k| s.op(k)).collect();
            for j in 1..=m {
                assert_eq!(all[s.forward_index(j) as usize], Op { forward: true, micro_batch: j, held: all[s.forward_index(j) as usize].held });
                assert!(!all[s.backward_index(j) as usize].forward && all[s.backward_index(j) as usize].micro_batch == j);
            }
            for k in 0..2 * m {
                let upto = &all[..=k as usize];
                assert_eq!(s.forwards_upto(k), upto.iter().filter(|o| o.forward).count() as u64, "m {m} c {c} k {k}");
                assert_eq!(s.backwards_upto(k), upto.iter().filter(|o| !o.forward).count() as u64, "m {m} c {c} k {k}");
            }
        }
    }

    /// Any number of micro-batches draws a bounded number of points.
    #[test]
    fn a_million_micro_batches_cost_six_ops() {
        let s = Schedule::new(1_000_000, 8);
        assert_eq!(s.detailed().len(), 6);
        // Forward of micro-batch m is op 1,999,991.
        assert_eq!(s.forwards_in(2, 1_999_990), Some((3, 999_999)));
    }
}
