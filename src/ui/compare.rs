//! The Compare view: two to four scenarios side by side (each a column of key controls), one
//! stacked bar per scenario, a table of every component, and under it the seed's strategy
//! table for the planner's model.
//!
//! Columns start as the planner's scenario and a copy of it; their state lives in the
//! [`Workspace`] so it survives tab switches. Each column's plan is the column's own memo
//! ([`super::tabs::CompareSlot::plan`]), so changing one column estimates that column only.

use leptos::prelude::*;

use super::compare_column::CompareColumn;
use super::compare_strategy::CompareStrategyTable;
use super::compare_table::CompareTable;
use super::state::Planner;
use super::chart_box::ChartBox;
use super::tabs::Workspace;
use crate::chart::compare::compare_chart;
use crate::model::breakdown::Breakdown;

/// Most columns.
pub const MAX_COLUMNS: usize = 4;
/// Fewest columns.
pub const MIN_COLUMNS: usize = 2;

/// Column name: A, B, C, D.
pub fn column_name(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

/// Every column's plan, as `(name, breakdown)`, read from the columns' own memos; `None`
/// for an invalid column.
pub fn column_plans(ws: Workspace) -> Vec<(String, Option<Breakdown>)> {
    ws.compare.with(|cols| cols.iter().enumerate().map(|(i, slot)| (column_name(i), slot.plan.get())).collect())
}

/// The Compare tab.
#[component]
pub fn CompareView() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    if ws.compare.with_untracked(Vec::is_empty) {
        let current = planner.scenario.get_untracked();
        let slots = vec![ws.new_slot(current.clone()), ws.new_slot(current)];
        ws.compare.set(slots);
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
        let last = ws.compare.with_untracked(|c| c.last().map(|s| s.scenario.get_untracked())).unwrap_or_else(|| planner.scenario.get_untracked());
        let slot = ws.new_slot(last);
        ws.compare.update(|c| {
            if c.len() < MAX_COLUMNS {
                c.push(slot);
            }
        });
    };
    let columns = move || {
        let slots = ws.compare.get();
        let n = slots.len();
        slots
            .into_iter()
            .enumerate()
            .map(|(i, slot)| {
                let key = slot.key;
                let remove = (n > MIN_COLUMNS).then(|| {
                    Callback::new(move |_| ws.set_columns(ws.compare.get_untracked().into_iter().filter(|s| s.key != key).collect()))
                });
                view! { <CompareColumn index=i column=slot remove /> }
            })
            .collect_view()
    };
    view! {
        <section class="card compare-card" aria-labelledby="compare-heading">
            <div class="card-head">
                <h2 id="compare-heading">"Compare scenarios"</h2>
                <button type="button" id="compare-add" on:click=add disabled=move || ws.compare.with(|c| c.len() >= MAX_COLUMNS)>"+ Add scenario"</button>
            </div>
            <div class="compare-columns">{columns}</div>
            <ChartBox id="compare-chart" class="chart-compare" label option=build />
            <CompareTable plans />
        </section>
        <CompareStrategyTable />
    }
}
