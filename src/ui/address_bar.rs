//! The address bar's one writer and one reader. One effect ([`start`]) computes the wanted
//! [`crate::address::Address`] from the parts' owners — the scenario and units ([`Planner`]), the open tab and
//! the Strategy view's budget and ladder ([`Workspace`]), the Compare columns — and writes it
//! whole; one `popstate` listener reads the entry back and hands each part to its owner.
//!
//! One history entry per burst of scenario edits: the first change of a burst (a slider drag, a
//! number being typed) pushes an entry, later changes in the same burst replace it, and the
//! burst ends [`BURST_MS`] after the last change; so back goes to the scenario before the drag,
//! not to each pixel of it. Every other part replaces the current entry.
//!
//! The query is put together by the link codec's chunk ([`url_codec`]: the scenario's and the
//! columns' codec and [`crate::address`]), so none of it is in the first download: a change made
//! before the chunk has arrived is written when it does (it is fetched after the first chart).
//! The bar shows the link the page was opened with until the first change. Back/forward restore
//! the scenario, the units and the columns; the tab, the budget and the ladder stay as they are
//! (as before this module), and the entry is rewritten to show them.

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::after_paint::AfterPaint;
use super::state::Planner;
use super::url_codec::{self, Parts, UrlCodec};
use super::url_sync::{codec_missing, location_query, UrlNotice};
use super::workspace::{Rung, Tab, Workspace};
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

/// The parts' owners, the scenario the address bar shows, and the burst in progress.
#[derive(Clone, Copy)]
struct Bar {
    planner: Planner,
    ws: Workspace,
    /// The scenario and units the bar's scenario pairs stand for.
    shown: StoredValue<(Scenario, Units)>,
    burst: StoredValue<Option<TimeoutHandle>>,
}

impl Bar {
    fn end_burst(self) {
        if let Some(handle) = self.burst.get_value() {
            handle.clear();
        }
        self.burst.set_value(None);
    }

    /// Writes the wanted address into the bar: a new history entry for the first change of the
    /// scenario (or units) in a burst, the current one otherwise.
    fn write(self, codec: UrlCodec) {
        let ws = self.ws;
        let (scenario, units) = (self.planner.scenario.get_untracked(), self.planner.units.get_untracked());
        let changed = self.shown.with_value(|(s, u)| (*s != scenario, *u != units));
        let columns: Vec<Scenario> = ws.compare.columns.with_untracked(|c| c.iter().map(|slot| slot.scenario.get_untracked()).collect());
        let (tab, gpus) = (ws.tab.get_untracked(), ws.strategy.gpus.get_untracked());
        let parts = Parts {
            scenario: changed.0.then_some(&scenario),
            units,
            view: (tab != Tab::Planner || ws.view_named.get_untracked()).then_some(tab.id()),
            budget: (gpus != ws.strategy.world.get_untracked()).then_some(gpus),
            ladder: ws.strategy.ladder.with_untracked(|l| (*l != Rung::defaults(gpus)).then(|| l.iter().map(|r| (r.step, r.enabled)).collect())),
            columns: (!columns.is_empty()).then_some(columns.as_slice()),
        };
        if let Some(query) = (codec.compose)(&location_query(), &parts) {
            write_history(&query, (changed.0 || changed.1) && self.burst.with_value(Option::is_none));
        }
        if changed.0 || changed.1 {
            self.shown.set_value((scenario, units));
            self.end_burst();
            match set_timeout_with_handle(move || self.burst.set_value(None), std::time::Duration::from_millis(BURST_MS)) {
                Ok(handle) => self.burst.set_value(Some(handle)),
                Err(_) => self.burst.set_value(None),
            }
        }
    }

    /// Writes the wanted address, once the codec (which holds [`crate::address`]) has arrived.
    fn sync(self) {
        match url_codec::get() {
            Some(codec) => self.write(codec),
            None => leptos::task::spawn_local(async move {
                match url_codec::load().await {
                    Ok(codec) => self.write(codec),
                    Err(_) => leptos::logging::warn!("address bar not updated: the link code did not load"),
                }
            }),
        }
    }

    /// Hands back/forward's entry to the parts' owners: the scenario and units to the planner
    /// (its problems to `notice`), the `cmp=` pairs to the Compare view's reader
    /// ([`CompareState::from_link`](super::workspace::CompareState), once the view has opened);
    /// then shows the rest of the page's state in the entry.
    fn restore(self, notice: UrlNotice, codec: Option<UrlCodec>) {
        let query = location_query();
        match url_codec::decode_without(&query).or_else(|| codec.map(|c| (c.decode_view)(&query))) {
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
        if let Some(read_columns) = self.ws.compare.from_link.get_value() {
            read_columns(self.ws, &query);
        }
        self.sync();
    }
}

/// Keeps the address bar in step with the page's state from now on, and hands back/forward's
/// entries to the state. The link codec is fetched once the first chart has been painted.
pub fn start(planner: Planner, ws: Workspace, notice: UrlNotice) {
    let bar = Bar { planner, ws, shown: StoredValue::new((planner.scenario.get_untracked(), planner.units.get_untracked())), burst: StoredValue::new(None) };
    Effect::new(move |first: Option<()>| {
        planner.scenario.track();
        planner.units.track();
        // Read with `get` where the page already does (no new code in the first download).
        let _ = (ws.tab.get(), ws.view_named.get(), ws.strategy.gpus.get(), ws.strategy.world.get());
        ws.strategy.ladder.track();
        ws.compare.columns.with(|c| c.iter().for_each(|slot| slot.scenario.track()));
        // The bar shows the link the page was opened with until the first change. The write is
        // a task queued behind the effects this change has already woken (the chart's): the
        // history call takes milliseconds and must not hold the chart's update back.
        if first.is_some() {
            leptos::task::spawn_local(async move { bar.sync() });
        }
    });
    AfterPaint::new().schedule(url_codec::prefetch);
    let popstate = window_event_listener(leptos::ev::popstate, move |_| {
        bar.end_burst();
        let query = location_query();
        match url_codec::get() {
            Some(codec) => bar.restore(notice, Some(codec)),
            None if !crate::url::carries_scenario(&query) => bar.restore(notice, None),
            None => leptos::task::spawn_local(async move {
                let codec = url_codec::load().await.ok();
                bar.restore(notice, codec);
            }),
        }
    });
    on_cleanup(move || popstate.remove());
}
