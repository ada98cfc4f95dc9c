//! A running list of named byte terms, in f64 so that absurd inputs (seq 10⁷, batch 10⁵)
//! saturate instead of overflowing; converted to whole bytes only at the end.

use std::borrow::Cow;

use super::breakdown::{Component, Phase, Term};

/// Named terms; names are usually `&'static str`, so recording one allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    terms: Vec<(Component, Cow<'static, str>, f64, &'static str, Option<Phase>)>,
}

impl Ledger {
    /// Record `bytes` of `component` under `name`, citing `formula`. Zero terms are dropped.
    pub fn add(&mut self, component: Component, name: impl Into<Cow<'static, str>>, bytes: f64, formula: &'static str) {
        let bytes = if bytes.is_finite() { bytes.max(0.0) } else { f64::MAX };
        if bytes > 0.0 {
            self.terms.push((component, name.into(), bytes, formula, None));
        }
    }

    /// Mark every term of `component` recorded so far without a phase as alive only in `phase`.
    pub fn confine(&mut self, component: Component, phase: Phase) {
        for t in self.terms.iter_mut().filter(|t| t.0 == component && t.4.is_none()) {
            t.4 = Some(phase);
        }
    }

    /// Sum of one component during one phase.
    pub fn sum_in(&self, component: Component, phase: Phase) -> f64 {
        self.terms.iter().filter(|t| t.0 == component && t.4.is_none_or(|p| p == phase)).map(|t| t.2).sum()
    }

    /// Sum of one component.
    pub fn sum(&self, component: Component) -> f64 {
        self.terms.iter().filter(|t| t.0 == component).map(|t| t.2).sum()
    }

    /// The larger of the two phases' sums: the step's peak.
    pub fn peak(&self) -> f64 {
        [Phase::ForwardBackward, Phase::OptimizerStep]
            .into_iter()
            .map(|phase| self.terms.iter().filter(|t| t.4.is_none_or(|p| p == phase)).map(|t| t.2).sum::<f64>())
            .fold(0.0, f64::max)
    }

    /// Sum of everything.
    pub fn total(&self) -> f64 {
        self.terms.iter().map(|t| t.2).sum()
    }

    pub fn into_terms(self) -> Vec<Term> {
        self.terms
            .into_iter()
            .map(|(component, name, bytes, formula, phase)| Term { component, name, bytes: to_bytes(bytes), formula: Cow::Borrowed(formula), phase })
            .collect()
    }
}

/// Round to whole bytes, saturating at `u64::MAX` (`as` saturates; NaN becomes 0).
pub fn to_bytes(x: f64) -> u64 {
    x.round() as u64
}
