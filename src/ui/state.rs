//! The page's state: the scenario signal, its validation, the plan memo and the unit
//! choice, provided once as context (`Planner`), plus helpers to map enums to `<option>`
//! values through their serde names.
//!
//! This is the only place a `Breakdown` is produced on the page, and it comes from
//! [`crate::estimate`]. Not a component. The address bar follows the scenario through
//! [`Planner::provide_from_url`].

use leptos::prelude::*;

use crate::error::InputError;
use crate::fields::anchor;
use crate::format::Units;
use crate::model::breakdown::Breakdown;
use crate::scenario::Scenario;

/// The result the views show.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Plan {
    pub breakdown: Breakdown,
    /// True when the current scenario has validation errors and `breakdown` is the last
    /// valid plan (the model is never asked to estimate a scenario it rejects).
    pub stale: bool,
}

/// Shared state of the planner, `Copy` so every component can hold it.
#[derive(Clone, Copy)]
pub struct Planner {
    /// The whole input; controls write slices of it.
    pub scenario: RwSignal<Scenario>,
    /// `scenario.validate()`, field by field.
    pub errors: Memo<Vec<InputError>>,
    /// The scenario, or while it has errors the last valid one (the default at first): the
    /// model is never asked about a scenario that validation rejects.
    pub valid: Memo<Scenario>,
    /// The estimate of the scenario (or of the last valid one).
    pub plan: Memo<Plan>,
    /// GiB or GB in the chart, table and verdict.
    pub units: RwSignal<Units>,
    /// Why the last pasted config.json was rejected: the plan shown is still the previous model's.
    pub rejected_paste: RwSignal<Option<String>>,
    /// The whole run of the plan shown: steps, hours, GPU-hours, energy, cost (`plan::run`).
    pub run: Memo<crate::plan::run::RunEstimate>,
}

impl Planner {
    /// Creates the signals and memos for `initial` and provides them as context.
    pub fn provide(initial: Scenario) -> Planner {
        let scenario = RwSignal::new(initial);
        let errors = Memo::new(move |_| scenario.with(Scenario::validate));
        let valid = Memo::new(move |previous: Option<&Scenario>| if errors.with(Vec::is_empty) { scenario.get() } else { previous.cloned().unwrap_or_default() });
        let plan = Memo::new(move |_| Plan { breakdown: valid.with(crate::estimate), stale: !errors.with(Vec::is_empty) });
        let run = Memo::new(move |_| valid.with(|s| plan.with(|p| crate::plan::run::run_estimate(s, &p.breakdown))));
        let planner = Planner { scenario, errors, valid, plan, units: RwSignal::new(Units::Gib), rejected_paste: RwSignal::new(None), run };
        provide_context(planner);
        planner
    }

    /// The planner for the scenario in the address bar, kept in step with it from now on
    /// (see [`super::url_sync`]); the link's problems go to the provided
    /// [`super::url_sync::UrlNotice`].
    pub fn provide_from_url() -> Planner {
        let (scenario, units, errors) = super::url_sync::decode_location();
        let planner = Planner::provide(scenario);
        planner.units.set(units);
        let notice = super::url_sync::UrlNotice::provide(errors);
        super::url_sync::start(planner, notice);
        planner
    }

    /// The planner provided by [`crate::ui::App`].
    pub fn get() -> Planner {
        expect_context::<Planner>()
    }

    /// Messages of the errors shown under the control for `field`: those the field table
    /// places there ([`crate::fields::anchor`]), so no error is shown twice.
    pub fn messages_for(self, field: &'static str) -> Signal<Vec<String>> {
        let errors = self.errors;
        Signal::derive(move || errors.with(|all| all.iter().filter(|e| anchor(&e.field) == Some(field)).map(|e| e.message.clone()).collect()))
    }

    /// A memoised slice of the scenario.
    pub fn slice<T: Clone + PartialEq + Send + Sync + 'static>(self, get: impl Fn(&Scenario) -> T + Send + Sync + 'static) -> Memo<T> {
        let scenario = self.scenario;
        Memo::new(move |_| scenario.with(&get))
    }

    /// Applies `set` to the scenario.
    pub fn set(self, set: impl FnOnce(&mut Scenario)) {
        self.scenario.update(set);
    }
}
