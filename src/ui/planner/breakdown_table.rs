//! `BreakdownTable`: the chart's numbers as a table, one row per component and one per
//! term (its formula and source in a disclosure: keyboard, touch and mouse alike), with the
//! GiB/GB switch. A training step has two phases (forward/backward and the optimizer step):
//! the table shows the components at the peak, and on request at the other phase.
//!
//! It is below the fold on load (under the chart on a phone, under the first control
//! groups on a laptop), so its code is in the `below_fold` WASM chunk, fetched once the
//! first chart has been painted ([`crate::ui::lazy_view`]); a box of about its size holds its
//! place until then.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::chart::component_color;
use crate::enum_id::enum_id;
use crate::format::{self, Units};
use crate::model::breakdown::{Component, Lifetime, Phase};
use crate::ui::lazy_view::{lazy_view_or, Build, Chunked};
use crate::ui::state::Planner;

/// The table's builder, in the `below_fold` chunk.
#[wasm_split(below_fold, wasm_split_path = ::leptos::wasm_split, fallible)]
fn table_view() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <Table /> }.into_any())
}
static TABLE: Chunked<Build> = Chunked::new();

/// The table, or its placeholder until the `below_fold` chunk has arrived.
#[component]
pub fn BreakdownTable() -> impl IntoView {
    lazy_view_or(&TABLE, table_view, || view! { <section class="table-card pending-part" aria-label="Breakdown" aria-busy="true"></section> }.into_any())
}

/// The table and the unit switch.
#[component]
fn Table() -> impl IntoView {
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
    // The phase shown: `None` is the peak's; otherwise one of `other_phases`.
    let shown = RwSignal::new(None::<Phase>);
    let training = Memo::new(move |_| planner.plan.with(|p| p.breakdown.phases.optimizer_step.total > 0));
    let phase_name = |phase: Phase| match phase {
        Phase::ForwardBackward => "forward and backward",
        Phase::OptimizerStep => "the optimizer step",
        Phase::Load => "loading the model",
    };
    // The phases besides the peak's that the switch offers: the step's other phase, and the
    // load when it has transients of its own.
    let other_phases = move || {
        planner.plan.with(|p| {
            let b = &p.breakdown;
            let has_load = b.terms.iter().any(|t| t.lifetime == Lifetime::Load);
            let mut phases = vec![];
            if training.get() {
                phases.extend([Phase::ForwardBackward, Phase::OptimizerStep].into_iter().filter(|&x| x != b.phases.peak_phase));
                if has_load && b.phases.peak_phase != Phase::Load {
                    phases.push(Phase::Load);
                }
            }
            phases
        })
    };
    let current = move || shown.get().filter(|x| other_phases().contains(x));
    let rows = move || {
        let u = units.get();
        let chosen = current();
        planner.plan.with(|p| {
            let b = &p.breakdown;
            let phase = chosen.unwrap_or(b.phases.peak_phase);
            let totals = b.phases.get(phase);
            let share = |bytes: u64| {
                if totals.total == 0 {
                    "—".to_string()
                } else {
                    format!("{:.1} %", bytes as f64 * 100.0 / totals.total as f64)
                }
            };
            Component::ALL
                .iter()
                .map(|&c| {
                    let bytes = totals.component(c);
                    let terms = b
                        .terms
                        .iter()
                        .filter(|t| t.component == c && t.bytes > 0 && t.alive_in(phase))
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
    let phase_switch = move || {
        let peak = planner.plan.with(|p| p.breakdown.phases.peak_phase);
        let others = other_phases()
            .into_iter()
            .map(|phase| {
                // Ids kept from the two-phase switch: `phase-other` is the step's other phase.
                let id = if phase == Phase::Load { "phase-load" } else { "phase-other" };
                view! {
                    <button type="button" class="unit" id=id aria-pressed=move || (current() == Some(phase)).to_string() on:click=move |_| shown.set(Some(phase))>
                        {format!("During {}", phase_name(phase))}
                    </button>
                }
            })
            .collect_view();
        view! {
            <div class="units phase-switch" role="group" aria-label="Phase shown">
                <button type="button" class="unit" id="phase-peak" aria-pressed=move || current().is_none().to_string() on:click=move |_| shown.set(None)>
                    {format!("At the peak ({})", phase_name(peak))}
                </button>
                {others}
            </div>
        }
    };
    let foot = move || {
        let u = units.get();
        let chosen = current();
        planner.plan.with(|p| {
            let b = &p.breakdown;
            if let Some(phase) = chosen {
                let totals = b.phases.get(phase);
                return view! {
                    <tr class="total">
                        <th scope="row">"Total (this phase)"</th>
                        <td class="num" id="phase-total">{format::bytes(totals.total, u)}</td>
                        <td class="num"></td>
                    </tr>
                }
                .into_any();
            }
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
            .into_any()
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
            <Show when=move || training.get()>{phase_switch}</Show>
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
