//! `RentPanel`: "What to rent" on the Strategy tab. For the planner's model, task and run, every
//! catalogue GPU at every count up to a budget is laid out by the layout search and priced
//! (`plan::rent`), a few cells per slice of about [`SLICE_MS`] between zero-delay timers so the
//! page stays responsive; then the rows are ranked by cost (or by time), the cheapest and the
//! fastest marked, and each fitting row has "Open" to take its plan to the Planner.
//!
//! Reads the plan module's rows; computes nothing itself.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::timers::callback::Timeout;
use leptos::prelude::*;

use crate::format;
use crate::plan::rent::{by_time, cells, rank, row, PriceBook, RentRow};
use crate::scenario::Scenario;
use crate::ui::state::Planner;
use crate::ui::workspace::{apply_to_planner, show_planner_at_top, Workspace, MAX_GPUS};

/// Milliseconds of work between two yields to the browser.
const SLICE_MS: f64 = 12.0;

/// One pass of the table being filled. (Columns: the numbers first, the layout last, so a
/// phone shows the cost without scrolling.)
struct Fill {
    base: Scenario,
    cells: Vec<(String, u64)>,
    rows: Vec<RentRow>,
}

fn fill(ws: Workspace, job: Rc<RefCell<Fill>>, generation: u32, started: f64) {
    if ws.rent.generation.get_value() != generation {
        return;
    }
    let slice = js_sys::Date::now();
    let book = PriceBook::default();
    {
        let mut j = job.borrow_mut();
        while j.rows.len() < j.cells.len() && js_sys::Date::now() - slice < SLICE_MS {
            let (device, gpus) = j.cells[j.rows.len()].clone();
            let r = row(&j.base, &device, gpus, &book);
            j.rows.push(r);
        }
        let (done, total) = (j.rows.len(), j.cells.len());
        if done < total {
            ws.rent.progress.set(Some((done, total)));
        } else {
            let mut rows = std::mem::take(&mut j.rows);
            rank(&mut rows);
            ws.rent.rows.set(rows);
            ws.rent.progress.set(None);
            ws.rent.millis.set(Some(js_sys::Date::now() - started));
            return;
        }
    }
    Timeout::new(0, move || fill(ws, job, generation, started)).forget();
}

fn rent_row(i: usize, r: RentRow, planner: Planner, ws: Workspace) -> impl IntoView {
    let name = crate::model::device::device_preset(&r.device).map_or(r.device.clone(), |d| d.name);
    let label = format!("{} × {name}", r.gpus);
    let scenario = r.scenario.clone();
    let open = {
        let label = label.clone();
        move |_| {
            if let Some(s) = scenario.clone() {
                apply_to_planner(ws, planner, &format!("what to rent: {label}"), s);
                show_planner_at_top(ws);
            }
        }
    };
    let badge = match (r.cheapest, r.fastest) {
        (true, true) => "cheapest, fastest",
        (true, false) => "cheapest",
        (false, true) => "fastest",
        _ => "",
    };
    view! {
        <tr class="rent-row" class:unfit=!r.fits data-device=r.device.clone() data-gpus=r.gpus.to_string() data-rank=i.to_string()>
            <td>{name}{(!badge.is_empty()).then(|| view! { <span class="badge">{badge}</span> })}</td>
            <td class="num">{r.gpus}</td>
            <td class="num">{r.hours.map(format::hours).unwrap_or_else(|| "—".into())}</td>
            <td class="num price">{r.price.as_ref().map(|p| format::usd(p.per_gpu_hour)).unwrap_or_else(|| "—".into())}</td>
            <td class="num cost">{r.cost.map(format::usd).unwrap_or_else(|| "—".into())}</td>
            <td>{r.fits.then(|| view! { <button type="button" class="apply" on:click=open aria-label=format!("Open {label} in the planner")>"Open"</button> })}</td>
            <td class="layout">{r.layout.clone().unwrap_or_else(|| "does not fit".into())}</td>
        </tr>
    }
}

/// The "What to rent" section.
#[component]
pub fn RentPanel() -> impl IntoView {
    let planner = Planner::get();
    let ws = Workspace::get();
    let invalid = move || !planner.errors.with(Vec::is_empty);
    let running = move || ws.rent.progress.with(Option::is_some);
    let find = move |_| {
        if invalid() {
            return;
        }
        let generation = ws.rent.generation.get_value().wrapping_add(1);
        ws.rent.generation.set_value(generation);
        let budget = ws.rent.budget.get_untracked();
        let cells = cells(budget);
        ws.rent.progress.set(Some((0, cells.len())));
        ws.rent.millis.set(None);
        let job = Rc::new(RefCell::new(Fill { base: planner.scenario.get_untracked(), cells, rows: Vec::new() }));
        let started = js_sys::Date::now();
        Timeout::new(0, move || fill(ws, job, generation, started)).forget();
    };
    on_cleanup(move || {
        ws.rent.generation.update_value(|g| *g = g.wrapping_add(1));
        ws.rent.progress.set(None);
    });
    let fitting = move || ws.rent.rows.with(|rows| rows.iter().filter(|r| r.fits).count());
    let shown = move || {
        let mut rows = ws.rent.rows.get();
        if ws.rent.by_time.get() {
            by_time(&mut rows);
        }
        // Every fitting row, then the first few that do not fit (the rest say the same).
        let unfit = rows.iter().filter(|r| !r.fits).take(5).cloned().collect::<Vec<_>>();
        rows.into_iter().filter(|r| r.fits).chain(unfit).enumerate().map(|(i, r)| rent_row(i, r, planner, ws)).collect_view()
    };
    let summary = move || {
        ws.rent.millis.get().map(|ms| {
            let total = ws.rent.rows.with(Vec::len);
            let order = if ws.rent.by_time.get() { "Fastest first" } else { "Cheapest first" };
            format!("{} of {total} GPU × count pairs fit ({ms:.0} ms). {order}; prices are examples unless you set yours on the Planner.", fitting())
        })
    };
    view! {
        <section class="card rent" aria-labelledby="rent-heading">
            <h2 id="rent-heading">"What to rent"</h2>
            <p class="hint">"Every GPU of the catalogue at 1, 2, 4, … GPUs up to the budget, laid out by the automatic planner (serving: tensor parallelism and replicas), with the run's hours and cost from the Planner's data, epochs and price. The global batch stays the planner's."</p>
            <div class="search-controls">
                <label class="inline-number" for="rent-budget">
                    "Up to GPUs"
                    <input
                        type="number"
                        id="rent-budget"
                        min="1"
                        max=MAX_GPUS.to_string()
                        prop:value=move || ws.rent.budget.get().to_string()
                        on:change=move |ev| {
                            if let Some(n) = crate::format::parse_f64(event_target_value(&ev).trim()) {
                                if n.is_finite() {
                                    ws.rent.budget.set((n.round().max(1.0) as u64).min(MAX_GPUS));
                                }
                            }
                        }
                    />
                </label>
                <button type="button" id="find-rent" class="primary" on:click=find disabled=move || running() || invalid()>
                    {move || if running() { "Pricing…" } else { "Find what to rent" }}
                </button>
                <label class="inline-number" for="rent-order">
                    "Rank by"
                    <select id="rent-order" on:change=move |ev| ws.rent.by_time.set(event_target_value(&ev) == "time")>
                        <option value="cost" selected=move || !ws.rent.by_time.get()>"Cost"</option>
                        <option value="time" selected=move || ws.rent.by_time.get()>"Time"</option>
                    </select>
                </label>
                <Show when=running>
                    <progress
                        id="rent-progress"
                        max=move || ws.rent.progress.get().map_or(1, |p| p.1).to_string()
                        value=move || ws.rent.progress.get().map_or(0, |p| p.0).to_string()
                    ></progress>
                </Show>
            </div>
            <p id="rent-summary" class="search-summary" aria-live="polite">{summary}</p>
            <Show when=move || ws.rent.rows.with(|r| !r.is_empty())>
                <div class="table-scroll">
                    <table class="breakdown rent-results" id="rent-results">
                        <thead>
                            <tr>
                                <th>"GPU"</th>
                                <th class="num">"GPUs"</th>
                                <th class="num">"Hours"</th>
                                <th class="num price">"$/GPU-hour"</th>
                                <th class="num">"Cost"</th>
                                <th><span class="visually-hidden">"Open"</span></th>
                                <th>"Layout"</th>
                            </tr>
                        </thead>
                        <tbody>{shown}</tbody>
                    </table>
                </div>
            </Show>
        </section>
    }
}
