//! `CompareTable`: every component of every Compare column, with totals, capacity, the
//! verdict and the estimated step time.

use leptos::prelude::*;

use crate::chart::component_color;
use crate::format;
use crate::model::breakdown::{Breakdown, Component, Outcome};
use crate::ui::state::Planner;

/// The table under the compare chart.
#[component]
pub fn CompareTable(plans: Memo<Vec<(String, Option<Breakdown>)>>) -> impl IntoView {
    let planner = Planner::get();
    let cells = move |f: fn(&Breakdown, format::Units) -> String| {
        let units = planner.units.get();
        plans.with(|p| p.iter().map(|(_, b)| view! { <td class="num">{b.as_ref().map_or("—".into(), |b| f(b, units))}</td> }).collect_view())
    };
    let component_rows = Component::ALL
        .iter()
        .map(|&c| {
            let units_cells = move || {
                let units = planner.units.get();
                plans.with(|p| p.iter().map(|(_, b)| view! { <td class="num">{b.as_ref().map_or("—".into(), |b| format::bytes(b.component(c), units))}</td> }).collect_view())
            };
            view! {
                <tr class="component" data-component=crate::enum_id::enum_id(&c)>
                    <th scope="row"><span class="swatch" style=format!("background:{}", component_color(c))></span>{c.label()}</th>
                    {units_cells}
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll">
            <table class="breakdown compare-table" id="compare-table">
                <thead>
                    <tr>
                        <th>"Per GPU"</th>
                        {move || plans.with(|p| p.iter().map(|(n, _)| view! { <th class="num" scope="col">{n.clone()}</th> }).collect_view())}
                    </tr>
                </thead>
                <tbody>{component_rows}</tbody>
                <tfoot>
                    <tr class="total"><th scope="row">"Total"</th>{move || cells(|b, u| format::bytes(b.total, u))}</tr>
                    <tr><th scope="row">"Capacity"</th>{move || cells(|b, u| format::bytes(b.capacity, u))}</tr>
                    <tr class="verdict-row"><th scope="row">"Verdict"</th>{move || cells(|b, u| match b.spill.outcome {
                        Outcome::Fits => "fits".into(),
                        Outcome::Spills => format!("spills {}", format::bytes(b.spill_bytes, u)),
                        Outcome::OutOfMemory => format!("out of memory by {}", format::bytes(b.spill_bytes, u)),
                    })}</tr>
                    <tr><th scope="row">"GPUs"</th>{move || cells(|b, _| b.gpus.to_string())}</tr>
                    <tr><th scope="row">"Step time"</th>{move || cells(|b, _| format::seconds(b.step_time.seconds))}</tr>
                </tfoot>
            </table>
        </div>
    }
}
