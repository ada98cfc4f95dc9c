//! A running list of named byte terms, in f64 so that absurd inputs (seq 10⁷, batch 10⁵)
//! saturate instead of overflowing; converted to whole bytes only at the end.

use std::borrow::Cow;

use super::breakdown::{Component, Term};

/// Named terms; names are usually `&'static str`, so recording one allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    terms: Vec<(Component, Cow<'static, str>, f64, &'static str)>,
}

impl Ledger {
    /// Record `bytes` of `component` under `name`, citing `formula`. Zero terms are dropped.
    pub fn add(&mut self, component: Component, name: impl Into<Cow<'static, str>>, bytes: f64, formula: &'static str) {
        let bytes = if bytes.is_finite() { bytes.max(0.0) } else { f64::MAX };
        if bytes > 0.0 {
            self.terms.push((component, name.into(), bytes, formula));
        }
    }

    /// Sum of one component.
    pub fn sum(&self, component: Component) -> f64 {
        self.terms.iter().filter(|t| t.0 == component).map(|t| t.2).sum()
    }

    /// Sum of everything.
    pub fn total(&self) -> f64 {
        self.terms.iter().map(|t| t.2).sum()
    }

    pub fn into_terms(self) -> Vec<Term> {
        self.terms
            .into_iter()
            .map(|(component, name, bytes, formula)| Term { component, name, bytes: to_bytes(bytes), formula: Cow::Borrowed(formula) })
            .collect()
    }
}

/// Round to whole bytes, saturating at `u64::MAX` (`as` saturates; NaN becomes 0).
pub fn to_bytes(x: f64) -> u64 {
    x.round() as u64
}
