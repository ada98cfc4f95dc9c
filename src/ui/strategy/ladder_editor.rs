//! `LadderEditor`: the escalation ladder as an ordered list: a checkbox to enable each step,
//! up / down / remove buttons, an "add step" menu with the steps not yet in the ladder, and
//! a reset to the seed ladder. Every edit re-runs the escalation (it is a memo over this list).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::enum_id::{enum_from_id, enum_id};
use crate::plan::escalation::Step;
use crate::ui::workspace::{Rung, Workspace};

/// Focuses the element with `id` after the list has been redrawn.
fn focus_later(id: String) {
    request_animation_frame(move || {
        if let Some(el) = document().get_element_by_id(&id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = el.focus();
        }
    });
}

/// The ladder list and its editing controls.
#[component]
pub fn LadderEditor() -> impl IntoView {
    let ws = Workspace::get();
    let swap = move |i: usize, j: usize, focus: String| {
        ws.strategy.ladder.update(|l| {
            if i < l.len() && j < l.len() {
                l.swap(i, j);
            }
        });
        focus_later(focus);
    };
    let rows = move || {
        let ladder = ws.strategy.ladder.get();
        let n = ladder.len();
        ladder
            .into_iter()
            .enumerate()
            .map(|(i, rung)| {
                let id = enum_id(&rung.step);
                let label = rung.step.label();
                let check_id = format!("rung-{id}");
                let up_id = format!("rung-{id}-up");
                let down_id = format!("rung-{id}-down");
                view! {
                    <li class=if rung.enabled { "rung" } else { "rung disabled" } data-step=id.clone()>
                        <input
                            type="checkbox"
                            id=check_id.clone()
                            prop:checked=rung.enabled
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                ws.strategy.ladder.update(|l| {
                                    if let Some(r) = l.get_mut(i) {
                                        r.enabled = on;
                                    }
                                });
                            }
                        />
                        <label for=check_id>{format!("{}. {label}", i + 1)}</label>
                        <span class="rung-buttons">
                            <button type="button" id=up_id.clone() class="icon" disabled={i == 0} aria-label=format!("Move {label} up")
                                on:click={
                                    let up_id = up_id.clone();
                                    move |_| swap(i, i.saturating_sub(1), up_id.clone())
                                }>"↑"</button>
                            <button type="button" id=down_id.clone() class="icon" disabled={i + 1 >= n} aria-label=format!("Move {label} down")
                                on:click={
                                    let down_id = down_id.clone();
                                    move |_| swap(i, i + 1, down_id.clone())
                                }>"↓"</button>
                            <button type="button" class="icon" aria-label=format!("Remove {label}")
                                on:click=move |_| ws.strategy.ladder.update(|l| {
                                    if i < l.len() {
                                        l.remove(i);
                                    }
                                })>"×"</button>
                        </span>
                    </li>
                }
            })
            .collect_view()
    };
    let available = move || {
        ws.strategy.ladder.with(|l| Step::ALL.iter().filter(|s| !l.iter().any(|r| r.step == **s)).map(|s| view! { <option value=enum_id(s)>{s.label()}</option> }).collect_view())
    };
    let add = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        if let Some(step) = enum_from_id::<Step>(&value) {
            ws.strategy.ladder.update(|l| {
                if !l.iter().any(|r| r.step == step) {
                    l.push(Rung { step, enabled: true });
                }
            });
        }
        if let Some(select) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) {
            select.set_value("");
        }
    };
    let reset = move |_| ws.strategy.ladder.set(Rung::defaults(ws.strategy.gpus.get_untracked()));
    view! {
        <section class="card ladder" aria-labelledby="ladder-heading">
            <h2 id="ladder-heading">"Ladder"</h2>
            <p class="hint">"Steps run in this order; untick one to skip it."</p>
            <ol class="ladder-list" id="ladder">{rows}</ol>
            <div class="ladder-add">
                <label for="add-step">"Add step"</label>
                <select id="add-step" on:change=add>
                    <option value="" selected=true>"choose a step…"</option>
                    {available}
                </select>
                <button type="button" id="ladder-reset" on:click=reset>"Reset ladder"</button>
            </div>
        </section>
    }
}
