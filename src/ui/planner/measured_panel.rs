//! `MeasuredPanel`: a measured run beside the plan. Paste `torch.cuda.memory_summary()`,
//! `nvidia-smi` CSV or the JSON the snippet prints; the panel shows measured against
//! predicted (allocated, allocator cache, CUDA context) with a sentence per difference, and
//! offers the ~20-line Python snippet that makes the JSON. A bad paste shows its line and
//! keeps everything else.
//!
//! The panel starts closed: what it holds (the parsers, the comparison, the snippet) is the
//! `measured` WASM chunk, fetched when it is first opened ([`crate::ui::lazy_view`]).

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::format;
use crate::input_limits::MEASURED_BYTES;
use crate::measured::{compare, parse_measurement, Comparison, PYTHON_SNIPPET};
use crate::ui::fields::bounded_text::textarea_text;
use crate::ui::lazy_view::{lazy_view, Build, Chunked};
use crate::ui::state::Planner;

/// The panel's body builder, in the `measured` chunk.
#[wasm_split(measured, wasm_split_path = ::leptos::wasm_split, fallible)]
fn measured_body() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <MeasuredBody /> }.into_any())
}
static BODY: Chunked<Build> = Chunked::new();

/// The closed panel; its body from the first time it opens on.
#[component]
pub fn MeasuredPanel() -> impl IntoView {
    // The first `toggle` is the first opening; the body then stays.
    let opened = RwSignal::new(false);
    view! {
        <details class="table-card measured" id="measured-panel" on:toggle=move |_| if !opened.get_untracked() { opened.set(true) }>
            <summary>"Check a measured run"</summary>
            {move || opened.get().then(|| lazy_view(&BODY, measured_body))}
        </details>
    }
}

/// The paste box, the comparison table and the snippet.
#[component]
fn MeasuredBody() -> impl IntoView {
    let planner = Planner::get();
    // The pasted text, or the message refusing a paste past the limit.
    let text = RwSignal::new(Ok::<String, String>(String::new()));
    let result = Memo::new(move |_| {
        text.with(|t| match t {
            Err(message) => Some(Err(message.clone())),
            Ok(t) if t.trim().is_empty() => None,
            Ok(t) => Some(parse_measurement(t).map(|m| planner.plan.with(|p| compare(&m, &p.breakdown))).map_err(|e| e.to_string())),
        })
    });
    let rows = move |c: &Comparison| {
        let units = planner.units.get();
        c.differences
            .iter()
            .map(|d| {
                let sign = if d.difference >= 0 { "+" } else { "−" };
                view! {
                    <tr>
                        <th scope="row">{d.category.label()}</th>
                        <td class="num">{format::bytes(d.measured, units)}</td>
                        <td class="num">{format::bytes(d.predicted, units)}</td>
                        <td class="num">{format!("{sign}{}", format::bytes(d.difference.unsigned_abs(), units))}</td>
                        <td>{d.sentence.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <p class="hint">
            "Paste the output of torch.cuda.memory_summary(), of nvidia-smi --query-gpu=memory.used,memory.total --format=csv, or the JSON the snippet below prints."
        </p>
        <label for="measured-input" class="visually-hidden">"Measured run"</label>
        <textarea id="measured-input" rows="6" spellcheck="false" aria-describedby="measured-error" on:input=move |ev| text.set(textarea_text(&ev, "measured run", "a measurement", MEASURED_BYTES))></textarea>
        {move || match result.get() {
            None => ().into_any(),
            Some(Err(message)) => view! { <p id="measured-error" class="field-error" role="alert">{message}</p> }.into_any(),
            Some(Ok(c)) => view! {
                <div class="table-scroll"><table class="measured-table" id="measured-table">
                    <thead>
                        <tr><th scope="col">"Quantity"</th><th scope="col" class="num">"Measured"</th><th scope="col" class="num">"Predicted"</th><th scope="col" class="num">"Difference"</th><th scope="col">"What it means"</th></tr>
                    </thead>
                    <tbody>{rows(&c)}</tbody>
                </table></div>
                <ul class="warnings">{c.notes.iter().chain(&c.measured.notes).map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
            }
            .into_any(),
        }}
        <details class="snippet">
            <summary>"Python snippet that prints the JSON"</summary>
            <pre><code id="measured-snippet">{PYTHON_SNIPPET}</code></pre>
        </details>
    }
}
