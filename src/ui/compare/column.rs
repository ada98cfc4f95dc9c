//! `CompareColumn`: one scenario of the Compare view with its key controls (model preset,
//! micro-batch, sequence length, precision, optimizer, activation checkpointing, full or
//! LoRA/QLoRA fine-tuning, dp / tp / pp, ZeRO stage, device), its verdict, a button to copy
//! the planner's scenario in, and one to remove the column. Menus show the same names as
//! the planner's controls ([`crate::labels`]).

use leptos::prelude::*;

use crate::enum_id::{enum_from_id, enum_id};
use crate::format;
use crate::import::presets::{model_names, model_preset};
use crate::labels::{fine_tuning_id, optimizer_label, precision_label, with_fine_tuning, CHECKPOINTING, FINE_TUNING};
use crate::model::breakdown::Outcome;
use crate::model::device::devices;
use crate::model::precision::Precision;
use crate::report::usage;
use crate::scenario::{Checkpointing, DeviceSpec, ModelSpec, Optimizer, Scenario, Zero};
use crate::ui::fields::select_field::select_options;
use crate::ui::state::Planner;
use crate::ui::workspace::CompareSlot;

/// A labelled whole-number box writing `set` (values below 1 become 1).
fn number_box(id: String, label: &'static str, slot: CompareSlot, get: fn(&Scenario) -> u64, set: fn(&mut Scenario, u64)) -> impl IntoView {
    let value = move || slot.scenario.with(get).to_string();
    view! {
        <div class="mini-control">
            <label for=id.clone()>{label}</label>
            <input
                type="number"
                id=id
                min="1"
                prop:value=value
                on:change=move |ev| {
                    if let Some(n) = crate::format::parse_f64(event_target_value(&ev).trim()) {
                        if n.is_finite() {
                            let n = n.round().clamp(1.0, 1e9) as u64;
                            slot.scenario.update(|s| set(s, n));
                        }
                    }
                }
            />
        </div>
    }
}

/// A labelled select over `(value, label)` options.
fn select_box(id: String, label: &'static str, options: Vec<(String, String)>, value: Signal<String>, on_change: impl Fn(String) + 'static) -> impl IntoView {
    view! {
        <div class="mini-control">
            <label for=id.clone()>{label}</label>
            <select id=id on:change=move |ev| on_change(event_target_value(&ev))>
                {select_options(options, value)}
            </select>
        </div>
    }
}

/// Column name: A, B, C, D.
pub fn column_name(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

// long: markup of one column's controls (model, device, precision, layout) and its plan's figures.
/// One column.
#[component]
pub fn CompareColumn(
    /// Position (A = 0).
    index: usize,
    column: CompareSlot,
    /// Removes the column; none when at the minimum count.
    remove: Option<Callback<()>>,
) -> impl IntoView {
    let planner = Planner::get();
    let slot = column;
    let name = column_name(index);
    let pre = format!("cmp-{}", name.to_ascii_lowercase());
    let id = |field: &str| format!("{pre}-{field}");
    let errors = Memo::new(move |_| slot.scenario.with(Scenario::validate));
    let plan = slot.plan;

    let mut models: Vec<(String, String)> = model_names().map(|(id, name)| (id.to_string(), name.to_string())).collect();
    let model_value = Signal::derive(move || {
        slot.scenario.with(|s| match &s.model {
            ModelSpec::Preset(id) => model_preset(id).map_or_else(|| id.clone(), |p| p.id.to_string()),
            _ => "custom".into(),
        })
    });
    if slot.scenario.with_untracked(|s| !matches!(s.model, ModelSpec::Preset(_))) {
        models.push(("custom".into(), slot.scenario.with_untracked(|s| s.model.label())));
    }
    let precisions: Vec<(String, String)> = Precision::ALL.iter().map(|&p| (enum_id(&p), precision_label(p).to_string())).collect();
    let optimizers: Vec<(String, String)> = Optimizer::ALL.iter().map(|&o| (enum_id(&o), optimizer_label(o).to_string())).collect();
    let checkpointing: Vec<(String, String)> = CHECKPOINTING.iter().map(|(c, l)| (enum_id(c), l.to_string())).collect();
    let fine_tuning: Vec<(String, String)> = FINE_TUNING.iter().map(|(id, l)| (id.to_string(), l.to_string())).collect();
    let zeros: Vec<(String, String)> = (0..=3).map(|z| (z.to_string(), format!("ZeRO-{z}"))).collect();
    let device_list: Vec<(String, String)> = devices().into_iter().map(|d| (d.id, d.name)).collect();

    let verdict = move || {
        let units = planner.units.get();
        match plan.get() {
            Some(b) if b.fits => format!("Fits: {} per GPU", usage(b.total, b.capacity, units)),
            Some(b) if b.spill.outcome == Outcome::Spills => {
                format!("Spills {}: {} per GPU", format::bytes(b.spill_bytes, units), usage(b.total, b.capacity, units))
            }
            Some(b) => format!("Out of memory by {}: {} per GPU", format::bytes(b.spill_bytes, units), usage(b.total, b.capacity, units)),
            None => errors.with(|e| e.first().map(|e| format!("Invalid: {}", e.message)).unwrap_or_default()),
        }
    };
    let verdict_class = move || match plan.get() {
        Some(b) if b.fits => "column-verdict fits",
        Some(b) if b.spill.outcome == Outcome::Spills => "column-verdict spills",
        Some(_) => "column-verdict oom",
        None => "column-verdict invalid",
    };
    let use_current = move |_| slot.scenario.set(planner.scenario.get_untracked());
    view! {
        <div class="compare-column" data-column=name.clone()>
            <div class="column-head">
                <h3>{format!("Scenario {name}")}</h3>
                {remove.map(|r| view! { <button type="button" class="icon" aria-label=format!("Remove scenario {name}") on:click=move |_| r.run(())>"×"</button> })}
            </div>
            <p class=verdict_class id=id("verdict")>{verdict}</p>
            <button type="button" class="use-current" id=id("use-current") on:click=use_current>"Use current planner scenario"</button>
            {select_box(id("model"), "Model", models, model_value, move |v| {
                if v != "custom" {
                    slot.scenario.update(|s| s.model = ModelSpec::Preset(v));
                }
            })}
            <div class="mini-pair">
                {number_box(id("micro-batch"), "Micro-batch", slot, |s| s.training.micro_batch, |s, v| s.training.micro_batch = v)}
                {number_box(id("seq-len"), "Sequence", slot, |s| s.training.seq_len, |s, v| s.training.seq_len = v)}
            </div>
            {select_box(id("precision"), "Precision", precisions, Signal::derive(move || slot.scenario.with(|s| enum_id(&s.training.precision))), move |v| {
                if let Some(p) = enum_from_id::<Precision>(&v) {
                    slot.scenario.update(|s| s.training.precision = p);
                }
            })}
            {select_box(id("optimizer"), "Optimizer", optimizers, Signal::derive(move || slot.scenario.with(|s| enum_id(&s.training.optimizer))), move |v| {
                if let Some(o) = enum_from_id::<Optimizer>(&v) {
                    slot.scenario.update(|s| s.training.optimizer = o);
                }
            })}
            {select_box(id("checkpointing"), "Checkpointing", checkpointing, Signal::derive(move || slot.scenario.with(|s| enum_id(&s.training.checkpointing))), move |v| {
                if let Some(c) = enum_from_id::<Checkpointing>(&v) {
                    slot.scenario.update(|s| s.training.checkpointing = c);
                }
            })}
            {select_box(id("fine-tuning"), "Fine-tuning", fine_tuning, Signal::derive(move || slot.scenario.with(|s| fine_tuning_id(s.training.lora.as_ref()).to_string())), move |v| {
                if let Some(lora) = slot.scenario.with_untracked(|s| with_fine_tuning(s.training.lora.as_ref(), &v)) {
                    slot.scenario.update(|s| s.training.lora = lora);
                }
            })}
            <div class="mini-triple">
                {number_box(id("dp"), "dp", slot, |s| s.parallel.dp, |s, v| s.parallel.dp = v)}
                {number_box(id("tp"), "tp", slot, |s| s.parallel.tp, |s, v| s.parallel.tp = v)}
                {number_box(id("pp"), "pp", slot, |s| s.parallel.pp, |s, v| s.parallel.pp = v)}
            </div>
            {select_box(id("zero"), "ZeRO", zeros, Signal::derive(move || slot.scenario.with(|s| s.parallel.zero.to_string())), move |v| {
                if let Some(z) = v.parse::<u64>().ok().and_then(Zero::from_stage) {
                    slot.scenario.update(|s| s.parallel.zero = z);
                }
            })}
            {select_box(id("device"), "Device", device_list, Signal::derive(move || slot.scenario.with(|s| s.device.preset.clone().unwrap_or_default())), move |v| {
                slot.scenario.update(|s| s.device = DeviceSpec::preset(&v));
            })}
        </div>
    }
}
