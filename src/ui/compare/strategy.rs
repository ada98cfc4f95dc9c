//! `CompareStrategyTable`: the seed's strategy table computed for the planner's scenario:
//! for data, tensor and pipeline parallelism, ZeRO-1/2/3 and mixed precision, the per-GPU
//! memory each saves and the communication each adds, read from the page's memo
//! ([`Workspace::strategy_table`], [`crate::plan::strategy_table::strategy_rows`]).

use leptos::prelude::*;

use crate::chart::outcome_word;
use crate::format::{self, Units};
use crate::ui::state::Planner;
use crate::ui::workspace::Workspace;

/// Signed bytes, `−1.20 GiB` / `+3.40 GiB` / `0`.
fn signed_bytes(n: i128, units: Units) -> String {
    let abs = n.unsigned_abs().min(u64::MAX as u128) as u64;
    match n.signum() {
        1 => format::bytes(abs, units),
        -1 => format!("−{} (costs)", format::bytes(abs, units)),
        _ => "0".into(),
    }
}

/// The strategy table with its GPU-count input.
#[component]
pub fn CompareStrategyTable() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    // Estimated once per scenario and GPU count, in the page state; a unit switch only re-renders.
    let table = ws.strategy_table();
    let rows = move || {
        let units = planner.units.get();
        table
            .get()
            .into_iter()
            .map(|r| {
                let saved = signed_bytes(r.saved(), units);
                let comm_added = r.comm_bytes_added();
                let comm = if comm_added.abs() < 1.0 {
                    "—".to_string()
                } else {
                    format!("{}{}", if comm_added < 0.0 { "−" } else { "+" }, format::bytes(comm_added.abs() as u64, Units::Gb))
                };
                let secs = r.comm_seconds_added();
                let seconds = if secs.abs() < 1e-6 { "—".to_string() } else { format!("{}{}", if secs < 0.0 { "−" } else { "+" }, format::seconds(secs.abs())) };
                view! {
                    <tr class=if r.applied { "strategy-row" } else { "strategy-row unapplied" } data-strategy=r.name>
                        <th scope="row">{r.name}</th>
                        <td class="num">{format::bytes(r.before, units)}" → "{format::bytes(r.after, units)}</td>
                        <td class="num mem-saved">{saved}</td>
                        <td class="num">{comm}</td>
                        <td class="num">{seconds}</td>
                        <td>{outcome_word(r.outcome_after)}</td>
                        <td class="note">{r.note}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="card strategy-table-card" aria-labelledby="strategy-table-heading">
            <div class="card-head">
                <h2 id="strategy-table-heading">"What each strategy buys"</h2>
                <label class="inline-number" for="table-gpus">
                    "GPUs"
                    <input
                        type="number"
                        id="table-gpus"
                        min="1"
                        max="4096"
                        prop:value=move || ws.compare.table_gpus.get().to_string()
                        on:change=move |ev| {
                            if let Some(n) = crate::format::parse_f64(event_target_value(&ev).trim()) {
                                if n.is_finite() {
                                    ws.compare.table_gpus.set((n.round().max(1.0) as u64).min(4096));
                                }
                            }
                        }
                    />
                </label>
            </div>
            <p class="hint">"Each strategy applied alone to the planner's scenario: per-GPU memory saved and communication added per optimizer step (bytes one GPU sends; seconds not hidden behind compute). Mixed precision, when already on, is measured against the same run in fp32."</p>
            <div class="table-scroll">
                <table class="breakdown strategy-table" id="strategy-table">
                    <thead>
                        <tr>
                            <th>"Strategy"</th>
                            <th class="num">"Per GPU"</th>
                            <th class="num">"Memory saved"</th>
                            <th class="num">"Comm. added / step"</th>
                            <th class="num">"Comm. time added"</th>
                            <th>"After"</th>
                            <th>"What it does"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}
