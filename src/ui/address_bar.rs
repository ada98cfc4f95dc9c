//! The address bar's one writer and one reader. One effect ([`start`]) computes the wanted
//! [`Address`] from the parts' owners — the scenario and units ([`Planner`]), the open tab and
//! the Strategy view's budget and ladder ([`Workspace`]), the Compare columns — and writes it
//! whole; one `popstate` listener reads the entry back and hands each part to its owner.
//!
//! One history entry per burst of scenario edits: the first change of a burst (a slider drag, a
//! number being typed) pushes an entry, later changes in the same burst replace it, and the
//! burst ends [`BURST_MS`] after the last change; so back goes to the scenario before the drag,
//! not to each pixel of it. Every other part replaces the current entry.
//!
//! The scenario and the columns are encoded by the link codec, the `url_codec` chunk
//! ([`url_codec`]): until it has arrived a change to them waits for it (the other parts are
//! written at once, the scenario's pairs kept as the bar shows them). Back/forward restore the
//! scenario, the units and the columns; the tab, the budget and the ladder stay as they are (as
//! before this module), and the entry is rewritten to show them.

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::after_paint::AfterPaint;
use super::state::Planner;
use super::url_codec::{self, UrlCodec};
use super::url_sync::{codec_missing, location_query, UrlNotice};
use super::workspace::{Rung, Tab, Workspace, MAX_COLUMNS};
use crate::address::Address;
use crate::format::Units;
use crate::scenario::Scenario;

/// Quiet time that ends a burst of edits (one history entry per burst).
const BURST_MS: u64 = 400;

/// Writes `?query` into the current history entry, or a new one when `push`.
fn write_history(query: &str, push: bool) {
    let Some(history) = web_sys::window().and_then(|w| w.history().ok()) else {
        return;
    };
    let target = format!("?{query}");
    let result = if push { history.push_state_with_url(&JsValue::NULL, "", Some(&target)) } else { history.replace_state_with_url(&JsValue::NULL, "", Some(&target)) };
    if let Err(e) = result {
        leptos::logging::warn!("address bar not updated: {e:?}");
    }
}

/// What the address bar shows of the parts that need the codec, and the burst in progress.
#[derive(Clone, Copy)]
struct Bar {
    planner: Planner,
    ws: Workspace,
    /// The scenario and units the bar's scenario pairs stand for.
    shown: StoredValue<(Scenario, Units)>,
    /// The columns the bar's `cmp=` pairs stand for, and those pairs.
    columns: StoredValue<Option<(Vec<Scenario>, String)>>,
    burst: StoredValue<Option<TimeoutHandle>>,
}

impl Bar {
    fn end_burst(self) {
        if let Some(handle) = self.burst.get_value() {
            handle.clear();
        }
        self.burst.set_value(None);
    }

    /// The Compare columns' scenarios (none until the Compare view first opens).
    fn column_scenarios(self) -> Vec<Scenario> {
        self.ws.compare.columns.with_untracked(|c| c.iter().map(|slot| slot.scenario.get_untracked()).collect())
    }

    /// Writes the wanted address into the bar. Returns true when a part still waits for the
    /// codec (`codec` is `None` and the scenario or the columns changed): written once it is here.
    fn write(self, codec: Option<UrlCodec>) -> bool {
        let current = Address::parse(&location_query());
        let mut next = current.clone();
        let (scenario, units) = (self.planner.scenario.get_untracked(), self.planner.units.get_untracked());
        let (scenario_changed, units_changed) = self.shown.with_value(|(s, u)| (*s != scenario, *u != units));
        let scenario_written = scenario_changed && codec.is_some();
        let mut waits = scenario_changed && codec.is_none();
        if let (true, Some(codec)) = (scenario_written, codec) {
            next.set_scenario(&(codec.encode)(&scenario));
        }
        let columns = self.column_scenarios();
        if !columns.is_empty() {
            match self.columns.with_value(|c| c.as_ref().filter(|(shown, _)| *shown == columns).map(|(_, pairs)| pairs.clone())) {
                Some(pairs) => next.set_compare(&pairs),
                None => match codec {
                    Some(codec) => {
                        let pairs = (codec.encode_compare)(&columns);
                        next.set_compare(&pairs);
                        self.columns.set_value(Some((columns, pairs)));
                    }
                    None => waits = true,
                },
            }
        }
        let ws = self.ws;
        let tab = ws.tab.get_untracked();
        next.view = (tab != Tab::Planner || ws.view_named.get_untracked()).then(|| tab.id().to_string());
        let gpus = ws.strategy.gpus.get_untracked();
        next.set_budget((gpus != ws.strategy.world.get_untracked()).then_some(gpus));
        let ladder = ws.strategy.ladder.with_untracked(|l| (*l != Rung::defaults(gpus)).then(|| l.iter().map(|r| (r.step, r.enabled)).collect::<Vec<_>>()));
        next.set_ladder(ladder.as_deref());
        if scenario_written || units_changed {
            next.units = units;
            self.shown.set_value((if scenario_written { scenario } else { self.shown.with_value(|s| s.0.clone()) }, units));
        }
        if next != current {
            let push = (scenario_written || units_changed) && self.burst.with_value(Option::is_none);
            write_history(&next.to_query(), push);
        }
        if scenario_written || units_changed {
            self.end_burst();
            match set_timeout_with_handle(move || self.burst.set_value(None), std::time::Duration::from_millis(BURST_MS)) {
                Ok(handle) => self.burst.set_value(Some(handle)),
                Err(_) => self.burst.set_value(None),
            }
        }
        waits
    }

    /// Writes the wanted address now, and again once the codec has arrived if a part waits for it.
    fn sync(self) {
        if self.write(url_codec::get()) {
            leptos::task::spawn_local(async move {
                match url_codec::load().await {
                    Ok(codec) => {
                        self.write(Some(codec));
                    }
                    Err(_) => leptos::logging::warn!("address bar not updated: the link code did not load"),
                }
            });
        }
    }

    /// Hands back/forward's entry to the parts' owners: the scenario and units to the planner
    /// (its problems to `notice`), the columns to the Compare state (if it has columns; an
    /// entry without `cmp=` pairs keeps them); then shows the rest of the page's state in it.
    fn restore(self, notice: UrlNotice, codec: Option<UrlCodec>) {
        let query = location_query();
        let address = Address::parse(&query);
        let decoded = url_codec::decode_without(&query).or_else(|| codec.map(|c| (c.decode_view)(&query)));
        match decoded {
            Some((scenario, units, errors)) => {
                self.shown.set_value((scenario.clone(), units));
                notice.0.set(errors);
                if self.planner.scenario.with_untracked(|s| *s != scenario) {
                    self.planner.scenario.set(scenario);
                }
                if self.planner.units.get_untracked() != units {
                    self.planner.units.set(units);
                }
            }
            None => notice.0.set(vec![codec_missing()]),
        }
        let has_columns = self.ws.compare.columns.with_untracked(|c| !c.is_empty());
        if let (true, false, Some(codec)) = (has_columns, address.compare.is_empty(), codec) {
            let (scenarios, errors) = (codec.decode_compare)(&address.compare_query(), MAX_COLUMNS);
            self.ws.restore_columns(scenarios, errors);
        }
        self.sync();
    }
}

/// Keeps the address bar in step with the page's state from now on, and hands back/forward's
/// entries to the state. The link codec is fetched once the first chart has been painted.
pub fn start(planner: Planner, ws: Workspace, notice: UrlNotice) {
    let bar = Bar {
        planner,
        ws,
        shown: StoredValue::new((planner.scenario.get_untracked(), planner.units.get_untracked())),
        columns: StoredValue::new(None),
        burst: StoredValue::new(None),
    };
    Effect::new(move |_| {
        planner.scenario.track();
        planner.units.track();
        ws.tab.track();
        ws.view_named.track();
        ws.strategy.gpus.track();
        ws.strategy.world.track();
        ws.strategy.ladder.track();
        ws.compare.columns.with(|c| c.iter().for_each(|slot| slot.scenario.track()));
        bar.sync();
    });
    AfterPaint::new().schedule(url_codec::prefetch);
    let popstate = window_event_listener(leptos::ev::popstate, move |_| {
        bar.end_burst();
        let query = location_query();
        let needs_codec = crate::url::carries_scenario(&query) || (!Address::parse(&query).compare.is_empty() && ws.compare.columns.with_untracked(|c| !c.is_empty()));
        match url_codec::get() {
            Some(codec) => bar.restore(notice, Some(codec)),
            None if !needs_codec => bar.restore(notice, None),
            None => leptos::task::spawn_local(async move {
                let codec = url_codec::load().await.ok();
                bar.restore(notice, codec);
            }),
        }
    });
    on_cleanup(move || popstate.remove());
}
