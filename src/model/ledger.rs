//! A running list of named byte terms, each with its lifetime, in f64 so that absurd inputs
//! (seq 10⁷, batch 10⁵) saturate instead of overflowing; converted to whole bytes only at the
//! end.
//!
//! The phases and the peak are derived from the lifetimes ([`Lifetime::phase`]): a term counts
//! in the phases it is alive in, and of the transients ([`Lifetime::Transient`]), which belong
//! to moments that follow each other, only the moment at which the most is alive counts. The
//! output span's saved tensors (final norm, head input, the loss's) are alive at the moments of
//! the loss and the head but, with one micro-batch in flight, no longer at a block's backward:
//! autograd frees a node's saved tensors when its backward runs (`torch/csrc/autograd/engine.cpp`,
//! `call_function`: `fn.will_release_variables()` unless the graph is kept), and the head's and
//! the loss's run before any block's (measured: `tests/fixtures/measured/output_span_freed.json`).
//! The load phase counts what exists before the first step: the weights and the framework
//! overhead kept for the whole step, and the load's own transients ([`Lifetime::Load`]); those
//! count in no other phase and in no sum over the step.

use std::borrow::Cow;

use super::breakdown::{Component, Lifetime, Moment, Phase, Span, Term};

type Entry = (Component, Cow<'static, str>, f64, &'static str, Lifetime);

/// Named terms; names are usually `&'static str`, so recording one allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    terms: Vec<Entry>,
    /// Whether the output span's saved tensors are freed before the blocks' backward (one
    /// micro-batch in flight: [`Ledger::free_output_before_blocks`]).
    output_freed_in_blocks: bool,
}

impl Ledger {
    /// An empty ledger with room for `terms` terms.
    pub fn with_capacity(terms: usize) -> Ledger {
        Ledger { terms: Vec::with_capacity(terms), ..Ledger::default() }
    }

    /// The output span's saved tensors are all this micro-batch's and are freed before the
    /// blocks' backward (no other micro-batch in flight keeps its own). With several in
    /// flight (pipeline warm-up, GPipe) they stay counted at every moment, an upper bound.
    pub fn free_output_before_blocks(&mut self) {
        self.output_freed_in_blocks = true;
    }

    /// Record `bytes` of `component` under `name`, alive for `lifetime`, citing `formula`.
    /// Zero terms are dropped.
    pub fn add(&mut self, component: Component, name: impl Into<Cow<'static, str>>, bytes: f64, formula: &'static str, lifetime: Lifetime) {
        let bytes = if bytes.is_finite() { bytes.max(0.0) } else { f64::MAX };
        if bytes > 0.0 {
            self.terms.push((component, name.into(), bytes, formula, lifetime));
        }
    }

    /// The moment at which the most is alive (the last of equal ones), the one the phases
    /// count: its transients, plus the output span's saved tensors at a moment outside the
    /// blocks' backward when they are freed before it. `None`, the end of forward with no
    /// transient, only when that is the most. The moments are summed in the order they first
    /// appear, on the stack.
    fn counted_moment(&self) -> Option<Moment> {
        let mut moments = [(Moment::LossForward, 0.0); Moment::COUNT];
        let mut seen = 0;
        let mut output = 0.0;
        for t in &self.terms {
            match t.4 {
                Lifetime::Transient(m) => match moments[..seen].iter_mut().find(|(x, _)| *x == m) {
                    Some((_, sum)) => *sum += t.2,
                    None => {
                        moments[seen] = (m, t.2);
                        seen += 1;
                    }
                },
                Lifetime::Saved(Span::Output) if self.output_freed_in_blocks => output += t.2,
                _ => {}
            }
        }
        let alive = |m: Moment, sum: f64| if m.in_blocks() { sum } else { sum + output };
        moments[..seen].iter().fold((None, output), |best: (Option<Moment>, f64), &(m, sum)| if best.1 > alive(m, sum) { best } else { (Some(m), alive(m, sum)) }).0
    }

    /// Whether a checkpoint save's terms outweigh the optimizer step's own (gradients made in
    /// backward, the step's intermediates): the two follow each other after backward, so the
    /// optimizer-step phase counts the larger group.
    fn save_counted(&self) -> bool {
        let sum = |f: fn(Lifetime) -> bool| -> f64 { self.terms.iter().filter(|t| f(t.4)).map(|t| t.2).sum() };
        let save = sum(|l| l == Lifetime::CheckpointSave);
        save > 0.0 && save > sum(|l| matches!(l, Lifetime::MadeInBackward | Lifetime::OptimizerStep))
    }

    /// Whether a term counts, given the counted moment, whether the output span's saved
    /// tensors are freed before the blocks' backward, and whether the save counts.
    fn counts(lifetime: Lifetime, moment: Option<Moment>, output_freed_in_blocks: bool, save: bool) -> bool {
        match lifetime {
            Lifetime::Transient(m) => Some(m) == moment,
            Lifetime::Saved(Span::Output) => !(output_freed_in_blocks && moment.is_some_and(Moment::in_blocks)),
            Lifetime::CheckpointSave => save,
            Lifetime::MadeInBackward | Lifetime::OptimizerStep => !save,
            _ => true,
        }
    }

    /// Sum of the terms alive for `lifetime`, counted or not.
    pub fn sum_lifetime(&self, lifetime: Lifetime) -> f64 {
        self.terms.iter().filter(|t| t.4 == lifetime).map(|t| t.2).sum()
    }

    /// The sums of the terms the phases count (all but the transients of the other moments,
    /// the output span's saved tensors when a block's moment counts and they are freed by
    /// then, and the smaller of the checkpoint save and the optimizer step's own terms), in one
    /// pass: each sum adds its terms in the order they were recorded.
    pub fn tally(&self) -> Tally {
        let (moment, save) = (self.counted_moment(), self.save_counted());
        let mut tally = Tally { save_counted: save, ..Tally::default() };
        for t in self.terms.iter().filter(|t| Self::counts(t.4, moment, self.output_freed_in_blocks, save)) {
            let c = t.0 as usize;
            if t.4 != Lifetime::Load {
                tally.step[c] += t.2;
                tally.total += t.2;
            }
            for phase in [Phase::ForwardBackward, Phase::OptimizerStep, Phase::Load] {
                if t.4.alive_in(t.0, phase) {
                    tally.phase[phase as usize][c] += t.2;
                    tally.peak[phase as usize] += t.2;
                }
            }
        }
        tally
    }

    /// The counted terms, and those the phases do not count ([`Ledger::tally`]).
    pub fn into_terms(self) -> (Vec<Term>, Vec<Term>) {
        let (moment, save, output_freed) = (self.counted_moment(), self.save_counted(), self.output_freed_in_blocks);
        self.terms
            .into_iter()
            .map(|(component, name, bytes, formula, lifetime)| Term { component, name, bytes: to_bytes(bytes), formula: Cow::Borrowed(formula), lifetime })
            .partition(|t| Self::counts(t.lifetime, moment, output_freed, save))
    }
}

/// What the phases count of a ledger ([`Ledger::tally`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Per phase (in `Phase` order), per component (in `Component` order).
    phase: [[f64; 6]; Phase::COUNT],
    /// Per component over the step (both of its phases; not the load).
    step: [f64; 6],
    /// Every counted term, per phase.
    peak: [f64; Phase::COUNT],
    /// Every counted term but the load's.
    total: f64,
    /// Whether the checkpoint save counts instead of the optimizer step's own terms.
    pub save_counted: bool,
}

impl Tally {
    /// Sum of one component during one phase.
    pub fn sum_in(&self, component: Component, phase: Phase) -> f64 {
        self.phase[phase as usize][component as usize]
    }

    /// Sum of one component over the step (both phases).
    pub fn sum(&self, component: Component) -> f64 {
        self.step[component as usize]
    }

    /// The largest of the phases' sums: the run's peak.
    pub fn peak(&self) -> f64 {
        self.peak.into_iter().fold(0.0, f64::max)
    }

    /// Sum of every counted term but the load's.
    pub fn total(&self) -> f64 {
        self.total
    }
}

/// Round to whole bytes, saturating at `u64::MAX` (`as` saturates; NaN becomes 0).
pub fn to_bytes(x: f64) -> u64 {
    x.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With one micro-batch in flight, the output span's saved tensors are freed before the
    /// blocks' backward: a block moment (recompute) is counted without them, a loss moment
    /// with them, and the end of forward alone when it holds the most.
    #[test]
    fn output_span_is_freed_before_the_blocks_backward() {
        let ledger = |output: f64, recompute: f64, freed: bool| {
            let mut l = Ledger::default();
            if freed {
                l.free_output_before_blocks();
            }
            l.add(Component::Activations, "block inputs", 10.0, "", Lifetime::Saved(Span::Blocks));
            l.add(Component::Activations, "logits kept by the loss", output, "", Lifetime::Saved(Span::Output));
            l.add(Component::Temporary, "loss gradients", 1.0, "", Lifetime::Transient(Moment::LossBackward));
            l.add(Component::Temporary, "recompute", recompute, "", Lifetime::Transient(Moment::Recompute));
            l
        };
        // Recompute (6) outweighs the loss's moment (1 + 4): counted without the output span.
        assert_eq!(ledger(4.0, 6.0, true).tally().peak(), 16.0);
        let (_, uncounted) = ledger(4.0, 6.0, true).into_terms();
        assert_eq!(uncounted.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["logits kept by the loss", "loss gradients"]);
        // Several micro-batches in flight keep their output spans: everything stacks.
        assert_eq!(ledger(4.0, 6.0, false).tally().peak(), 20.0);
        // The loss's moment with the output span (1 + 8) outweighs recompute (6).
        assert_eq!(ledger(8.0, 6.0, true).tally().peak(), 19.0);
        // Only block moments, smaller than the output span: the end of forward counts, alone.
        let mut l = ledger(8.0, 6.0, true);
        l.terms.retain(|t| t.1 != "loss gradients");
        assert_eq!(l.tally().peak(), 18.0);
    }

    /// The rule's premise, measured with torch's autograd (`tests/measure/output_span_freed.py`):
    /// no tensor the head or the loss saved is alive when the last block's backward starts,
    /// with or without checkpointing.
    #[test]
    fn measured_output_span_is_dead_at_the_last_blocks_backward() {
        let fixture: serde_json::Value = serde_json::from_str(include_str!("../../tests/fixtures/measured/output_span_freed.json")).expect("fixture");
        let cases = fixture["cases"].as_array().expect("cases");
        assert_eq!(cases.len(), 2);
        for case in cases {
            let saved = case["saved_by_head_and_loss"].as_array().expect("saved");
            assert!(saved.len() >= 4, "{case}");
            assert!(saved.iter().all(|t| t["alive"] == false), "{case}");
        }
    }

    /// Transients of different moments follow each other: a phase counts the largest moment
    /// (the last of equal ones), whole-step terms count in both phases.
    #[test]
    fn phases_count_the_largest_moment_only() {
        let mut l = Ledger::default();
        l.add(Component::Parameters, "weights", 10.0, "", Lifetime::WholeStep);
        l.add(Component::Temporary, "logits", 3.0, "", Lifetime::Transient(Moment::LossForward));
        l.add(Component::Temporary, "loss gradients", 5.0, "", Lifetime::Transient(Moment::LossBackward));
        l.add(Component::Temporary, "recompute", 5.0, "", Lifetime::Transient(Moment::Recompute));
        l.add(Component::Gradients, "gradients", 7.0, "", Lifetime::MadeInBackward);
        let tally = l.tally();
        assert_eq!(tally.sum_in(Component::Temporary, Phase::ForwardBackward), 5.0);
        assert_eq!(tally.sum_in(Component::Temporary, Phase::OptimizerStep), 0.0);
        assert_eq!(tally.sum_in(Component::Parameters, Phase::OptimizerStep), 10.0);
        assert_eq!(tally.sum(Component::Temporary), 5.0);
        assert_eq!((tally.peak(), tally.total()), (17.0, 22.0));
        let (counted, uncounted) = l.into_terms();
        assert_eq!(counted.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["weights", "recompute", "gradients"]);
        assert_eq!(uncounted.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["logits", "loss gradients"]);
    }

    /// A checkpoint save after the step and the step's own gradients and intermediates follow
    /// each other: the optimizer-step phase counts the larger group, never both.
    #[test]
    fn the_save_and_the_step_are_not_counted_together() {
        let mut l = Ledger::default();
        l.add(Component::Parameters, "weights", 10.0, "", Lifetime::WholeStep);
        l.add(Component::Gradients, "gradients", 7.0, "", Lifetime::MadeInBackward);
        l.add(Component::Temporary, "foreach", 2.0, "", Lifetime::OptimizerStep);
        l.add(Component::Temporary, "full state dict", 8.0, "", Lifetime::CheckpointSave);
        assert_eq!(l.tally().peak(), 19.0);
        assert_eq!(l.tally().sum_in(Component::Temporary, Phase::OptimizerStep), 2.0);
        assert!(!l.tally().save_counted);
        l.add(Component::Temporary, "full state dict (second half)", 4.0, "", Lifetime::CheckpointSave);
        let tally = l.tally();
        assert!(tally.save_counted);
        assert_eq!(tally.peak(), 22.0);
        assert_eq!((tally.sum_in(Component::Gradients, Phase::OptimizerStep), tally.sum_in(Component::Temporary, Phase::OptimizerStep)), (0.0, 12.0));
        let (_, uncounted) = l.into_terms();
        assert_eq!(uncounted.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["gradients", "foreach"]);
    }
}
