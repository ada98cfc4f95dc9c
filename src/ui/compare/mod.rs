//! The Compare view: two to four scenarios side by side (each a column of key controls), one
//! stacked bar per scenario, a table of every component, and under it the seed's strategy
//! table for the planner's model.
//!
//! Columns come from the link's `cmp=` pairs ([`url::decode_compare`]), or start as two
//! copies of the planner's scenario; their state lives in the [`Workspace`] so it survives
//! tab switches, and the address bar follows them (`ui/address_bar.rs`, which also brings an
//! entry's columns back on back/forward), so a reload or a copied link opens the same columns. Each column's plan is the column's own memo
//! ([`super::workspace::CompareSlot::plan`]), so changing one column estimates that column only.

mod column;
mod strategy;
mod table;

use leptos::prelude::*;

use super::chart_box::ChartBox;
use super::state::Planner;
use super::url_sync::{link_problems, location_query};
use super::workspace::Workspace;
use crate::address::Address;
use crate::chart::compare::compare_chart;
use crate::error::InputError;
use crate::model::breakdown::Breakdown;
use crate::scenario::Scenario;
use crate::url;
use column::{column_name, CompareColumn};
use strategy::CompareStrategyTable;
use table::CompareTable;

/// Most columns (and most a link opens).
pub const MAX_COLUMNS: usize = 4;
/// Fewest columns.
pub const MIN_COLUMNS: usize = 2;

/// Every column's plan, as `(name, breakdown)`, read from the columns' own memos; `None`
/// for an invalid column.
pub fn column_plans(ws: Workspace) -> Vec<(String, Option<Breakdown>)> {
    ws.compare.columns.with(|cols| cols.iter().enumerate().map(|(i, slot)| (column_name(i), slot.plan.get())).collect())
}

/// The columns the address bar names (at least [`MIN_COLUMNS`]: the planner's scenario
/// fills in), and the problems found in them.
fn columns_from_url(planner: Planner) -> (Vec<Scenario>, Vec<InputError>) {
    let (mut scenarios, errors) = url::decode_compare(&Address::parse(&location_query()).compare_query(), MAX_COLUMNS);
    while scenarios.len() < MIN_COLUMNS {
        scenarios.push(planner.scenario.get_untracked());
    }
    (scenarios, errors)
}

/// Back/forward's entry `query` into the columns ([`CompareState::from_link`]): its `cmp=`
/// columns and what they could not say; the columns are replaced only where they differ. An
/// entry from before the columns existed keeps them (the address bar then writes them into it).
///
/// [`CompareState::from_link`]: super::workspace::CompareState
fn columns_from_link(ws: Workspace, query: &str) {
    let address = Address::parse(query);
    if address.compare.is_empty() {
        return;
    }
    let (scenarios, errors) = url::decode_compare(&address.compare_query(), MAX_COLUMNS);
    ws.compare.notice.set(errors);
    let same = ws.compare.columns.with_untracked(|c| c.len() == scenarios.len() && c.iter().zip(&scenarios).all(|(slot, s)| slot.scenario.with_untracked(|x| x == s)));
    if !same {
        ws.set_columns(scenarios.into_iter().map(|s| ws.new_slot(s)).collect());
    }
}

/// The Compare tab.
#[component]
pub fn CompareView() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let notice = ws.compare.notice;
    ws.compare.from_link.set_value(Some(columns_from_link));
    if ws.compare.columns.with_untracked(Vec::is_empty) {
        let (scenarios, errors) = columns_from_url(planner);
        notice.set(errors);
        ws.set_columns(scenarios.into_iter().map(|s| ws.new_slot(s)).collect());
    }
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
