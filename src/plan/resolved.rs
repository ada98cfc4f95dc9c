//! A scenario's model and device resolved once, for the many variants of it (layouts,
//! micro-batches) the layout search estimates: [`crate::estimate`] looks the preset and the
//! device up, builds the architecture's tensor list and writes the warnings on every call,
//! while a search of thousands of GPUs makes thousands of estimates of one model on one
//! device and reads only their totals until it lists the best. It also hands the model
//! states of one estimate to the next (`model::reuse`).

use std::cell::RefCell;

use crate::model::arch::{Architecture, Tensors};
use crate::model::breakdown::Totals;
use crate::model::device::Device;
use crate::model::reuse::Reuse;
use crate::model::Inputs;
use crate::scenario::Scenario;

use super::step_costs::{step_costs, StepCosts};

/// The model and device of one scenario, resolved as [`crate::estimate`] resolves them.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The architecture and its tensors; `None` for an unknown model.
    model: Option<(Architecture, Tensors)>,
    device: Device,
    /// The last model states computed, for the architecture above.
    reuse: RefCell<Reuse>,
}

impl Resolved {
    pub fn new(base: &Scenario) -> Resolved {
        let model = base.model.architecture().map(|arch| {
            let tensors = Tensors::new(&arch);
            (arch.into_owned(), tensors)
        });
        Resolved { model, device: base.device.resolve_or_default().0, reuse: RefCell::default() }
    }

    /// The numbers of `crate::estimate(s)` (its totals, verdict and step time; not its terms
    /// or warnings) for `s`, a variant of the base scenario: same model, device and runtime.
    /// `None` for an unknown model, which `crate::estimate` gives an empty breakdown.
    pub fn totals(&self, s: &Scenario) -> Option<Totals> {
        let (arch, tensors) = self.model.as_ref()?;
        let inputs = Inputs { arch, training: &s.training, parallel: &s.parallel, device: &self.device, runtime: &s.runtime };
        Some(crate::model::totals(&inputs, tensors, &mut self.reuse.borrow_mut()))
    }

    /// `escalation::costs(s, &crate::estimate(s))` from the totals of `s`.
    pub fn costs(&self, s: &Scenario, totals: &Totals) -> StepCosts {
        match &self.model {
            Some((arch, tensors)) => step_costs(s, arch, tensors, &self.device, &totals.step_time, totals.trainable_params),
            None => StepCosts::default(),
        }
    }
}
