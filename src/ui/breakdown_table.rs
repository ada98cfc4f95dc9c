//! `BreakdownTable`: the chart's numbers as a table, one row per component and one per
//! term (its formula and source in a disclosure: keyboard, touch and mouse alike), with the
//! GiB/GB switch.

use leptos::prelude::*;

use super::state::{enum_id, Planner};
use crate::chart::component_color;
use crate::format::{self, Units};
use crate::model::breakdown::Component;

/// The table and the unit switch.
#[component]
pub fn BreakdownTable() -> impl IntoView {
    let planner = Planner::get();
    let units = planner.units;
    let unit_button = move |u: Units| {
        view! {
            <button
                type="button"
                class="unit"
                aria-pressed=move || (units.get() == u).to_string()
                on:click=move |_| units.set(u)
            >
                {u.label()}
            </button>
        }
    };
    let rows = move || {
        let u = units.get();
        planner.plan.with(|p| {
            let b = &p.breakdown;
            let share = |bytes: u64| if b.total == 0 { "—".to_string() } else { format!("{:.1} %", bytes as f64 * 100.0 / b.total as f64) };
            Component::ALL
                .iter()
                .map(|&c| {
                    let bytes = b.component(c);
                    let terms = b
                        .terms
                        .iter()
                        .filter(|t| t.component == c && t.bytes > 0 && t.alive_in(b.phases.peak_phase))
                        .map(|t| {
                            view! {
                                <tr class="term">
                                    <td>
                                        <details class="formula">
                                            <summary>{t.name.clone()}</summary>
                                            <p>{t.formula.clone()}</p>
                                        </details>
                                    </td>
                                    <td class="num">{format::bytes(t.bytes, u)}</td>
                                    <td class="num"></td>
                                </tr>
                            }
                        })
                        .collect_view();
                    view! {
                        <tr class="component" data-component=enum_id(&c)>
                            <th scope="row">
                                <span class="swatch" style=format!("background:{}", component_color(c))></span>
                                {c.label()}
                            </th>
                            <td class="num bytes">{format::bytes(bytes, u)}</td>
                            <td class="num">{share(bytes)}</td>
                        </tr>
                        {terms}
                    }
                })
                .collect_view()
        })
    };
    let foot = move || {
        let u = units.get();
        planner.plan.with(|p| {
            let b = &p.breakdown;
            let (label, value) = if b.spill_bytes > 0 { ("Spill", b.spill_bytes) } else { ("Headroom", b.capacity.saturating_sub(b.total)) };
            let last_class = if b.spill_bytes > 0 { "spill" } else { "headroom" };
            view! {
                <tr class="total">
                    <th scope="row">"Total (peak)"</th>
                    <td class="num" id="total">{format::bytes(b.total, u)}</td>
                    <td class="num"></td>
                </tr>
                <tr>
                    <th scope="row">"Capacity"</th>
                    <td class="num" id="capacity">{format::bytes(b.capacity, u)}</td>
                    <td class="num"></td>
                </tr>
                <tr class=last_class>
                    <th scope="row">{label}</th>
                    <td class="num">{format::bytes(value, u)}</td>
                    <td class="num"></td>
                </tr>
            }
        })
    };
    view! {
        <section class="table-card" aria-labelledby="table-title">
            <div class="table-head">
                <h2 id="table-title">"Memory per GPU"</h2>
                <div class="units" role="group" aria-label="Units">
                    {unit_button(Units::Gib)}
                    {unit_button(Units::Gb)}
                </div>
            </div>
            <table class="breakdown">
                <thead>
                    <tr>
                        <th scope="col">"Component / term"</th>
                        <th scope="col" class="num">"Size"</th>
                        <th scope="col" class="num">"Share"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
                <tfoot>{foot}</tfoot>
            </table>
            <p class="hint">"Open a term to see its formula and source."</p>
        </section>
    }
}
