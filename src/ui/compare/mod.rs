//! The Compare view: two to four scenarios side by side (each a column of key controls), one
//! stacked bar per scenario, a table of every component, and under it the seed's strategy
//! table for the planner's model.
//!
//! Columns come from the link's `cmp=` pairs ([`url::decode_compare`]), or start as two
//! copies of the planner's scenario; their state lives in the [`Workspace`] so it survives
//! tab switches, and the address bar follows them ([`url::encode_compare`]), so a reload
//! or a copied link opens the same columns. Each column's plan is the column's own memo
//! ([`super::workspace::CompareSlot::plan`]), so changing one column estimates that column only.

mod column;
mod strategy;
mod table;

use leptos::prelude::*;

use super::chart_box::ChartBox;
use super::state::Planner;
use super::url_sync::{link_problems, location_query, replace_page_pairs};
use super::workspace::Workspace;
use crate::chart::compare::compare_chart;
use crate::error::InputError;
use crate::model::breakdown::Breakdown;
use crate::scenario::Scenario;
use crate::url;
use column::{column_name, CompareColumn};
use strategy::CompareStrategyTable;
use table::CompareTable;

/// Most columns.
pub const MAX_COLUMNS: usize = 4;
/// Fewest columns.
pub const MIN_COLUMNS: usize = 2;

/// Every column's plan, as `(name, breakdown)`, read from the columns' own memos; `None`
/// for an invalid column.
pub fn column_plans(ws: Workspace) -> Vec<(String, Option<Breakdown>)> {
    ws.compare.columns.with(|cols| cols.iter().enumerate().map(|(i, slot)| (column_name(i), slot.plan.get())).collect())
}

/// The `cmp=` pairs of a query, as written there.
fn compare_pairs(query: &str) -> String {
    query.split('&').filter(|p| p.split('=').next() == Some(url::COMPARE_KEY)).collect::<Vec<_>>().join("&")
}

/// The columns the address bar names (at least [`MIN_COLUMNS`]: the planner's scenario
/// fills in), and the problems found in them.
fn columns_from_url(planner: Planner) -> (Vec<Scenario>, Vec<InputError>) {
    let (mut scenarios, errors) = url::decode_compare(&location_query(), MAX_COLUMNS);
    while scenarios.len() < MIN_COLUMNS {
        scenarios.push(planner.scenario.get_untracked());
    }
    (scenarios, errors)
}

/// The Compare tab.
#[component]
pub fn CompareView() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let notice = RwSignal::new(Vec::<InputError>::new());
    if ws.compare.columns.with_untracked(Vec::is_empty) {
        let (scenarios, errors) = columns_from_url(planner);
        notice.set(errors);
        ws.set_columns(scenarios.into_iter().map(|s| ws.new_slot(s)).collect());
    }
    // The address bar follows the columns (replacing the current entry)…
    Effect::new(move |_| {
        let scenarios: Vec<Scenario> = ws.compare.columns.with(|c| c.iter().map(|slot| slot.scenario.get()).collect());
        let pairs = url::encode_compare(&scenarios);
        if compare_pairs(&location_query()) != pairs {
            replace_page_pairs(url::COMPARE_KEY, &pairs);
        }
    });
    // …and back/forward bring the columns of that entry back.
    let popstate = window_event_listener(leptos::ev::popstate, move |_| {
        if compare_pairs(&location_query()).is_empty() {
            // An entry from before the columns existed: keep them, and say so in the address.
            let scenarios: Vec<Scenario> = ws.compare.columns.with_untracked(|c| c.iter().map(|slot| slot.scenario.get_untracked()).collect());
            replace_page_pairs(url::COMPARE_KEY, &url::encode_compare(&scenarios));
            return;
        }
        let (scenarios, errors) = columns_from_url(planner);
        notice.set(errors);
        let same = ws.compare.columns.with_untracked(|c| c.len() == scenarios.len() && c.iter().zip(&scenarios).all(|(slot, s)| slot.scenario.with_untracked(|x| x == s)));
        if !same {
            ws.set_columns(scenarios.into_iter().map(|s| ws.new_slot(s)).collect());
        }
    });
    on_cleanup(move || popstate.remove());
    let plans = Memo::new(move |_| column_plans(ws));
    let build = Callback::new(move |_| {
        let units = planner.units.get();
        plans.with(|p| {
            let valid: Vec<(String, Breakdown)> = p.iter().filter_map(|(n, b)| b.clone().map(|b| (n.clone(), b))).collect();
            compare_chart(&valid, units)
        })
    });
    let label = Signal::derive(move || {
        let units = planner.units.get();
        plans.with(|p| {
            let parts: Vec<String> = p.iter().map(|(n, b)| format!("{n}: {}", b.as_ref().map_or("invalid".into(), |b| crate::format::bytes(b.total, units)))).collect();
            format!("Per-GPU memory by scenario, {}", parts.join(", "))
        })
    });
    let add = move |_| {
        let last = ws.compare.columns.with_untracked(|c| c.last().map(|s| s.scenario.get_untracked())).unwrap_or_else(|| planner.scenario.get_untracked());
        let slot = ws.new_slot(last);
        ws.compare.columns.update(|c| {
            if c.len() < MAX_COLUMNS {
                c.push(slot);
            }
        });
    };
    let columns = move || {
        let slots = ws.compare.columns.get();
        let n = slots.len();
        slots
            .into_iter()
            .enumerate()
            .map(|(i, slot)| {
                let key = slot.key;
                let remove = (n > MIN_COLUMNS).then(|| Callback::new(move |_| ws.set_columns(ws.compare.columns.get_untracked().into_iter().filter(|s| s.key != key).collect())));
                view! { <CompareColumn index=i column=slot remove /> }
            })
            .collect_view()
    };
    view! {
        <section class="card compare-card" aria-labelledby="compare-heading">
            <div class="card-head">
                <h2 id="compare-heading">"Compare scenarios"</h2>
                <button type="button" id="compare-add" on:click=add disabled=move || ws.compare.columns.with(|c| c.len() >= MAX_COLUMNS)>"+ Add scenario"</button>
            </div>
            {link_problems(notice, "compare-notice", "Parts of the compared scenarios could not be read from the link; the rest was opened:", "Dismiss the compare link problems")}
            <div class="compare-columns">{columns}</div>
            <ChartBox id="compare-chart" class="chart-compare" label option=build extra=true />
            <CompareTable plans />
        </section>
        <CompareStrategyTable />
    }
}
