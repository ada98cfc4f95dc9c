//! `DevicePicker`: the GPU (or MIG slice) every rank runs on, or a custom device with its
//! own capacity, bandwidths and throughput; the node layout and the links the
//! communication times use; with the platform and sharing controls under it.
//!
//! It is below the fold on load (under the chart on a phone, under the first control
//! groups on a laptop), so its code is in the `below_fold` WASM chunk, fetched once the
//! first chart has been painted ([`crate::ui::lazy_view`]); a box of about its size holds its
//! place until then.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::fields;
use crate::model::device::{devices, DEFAULT_GPUS_PER_NODE};
use crate::scenario::{DeviceSpec, Scenario};
use crate::ui::fields::field_error::FieldError;
use crate::ui::fields::number_field::NumberField;
use crate::ui::fields::number_slider::NumberSlider;
use crate::ui::fields::select_field::SelectField;
use crate::ui::lazy_view::{lazy_view_or, Build, Chunked};
use crate::ui::planner::runtime_controls::RuntimeControls;
use crate::ui::state::Planner;

const GB: f64 = 1e9;

/// GPU-to-GPU links inside a node, per direction (NVLink: half the bidirectional figure of
/// NVIDIA's A100, H100 and B200 datasheets; PCIe x16 per generation).
const LINKS: [(&str, &str, f64); 6] = [
    ("", "as the GPU", 0.0),
    ("32", "PCIe 4.0 (32 GB/s)", 32.0),
    ("64", "PCIe 5.0 (64 GB/s)", 64.0),
    ("300", "NVLink 3 (300)", 300.0),
    ("450", "NVLink 4 (450)", 450.0),
    ("900", "NVLink 5 (900)", 900.0),
];

/// Network per GPU between nodes, per direction.
const NETWORKS: [(&str, &str, f64); 4] = [("", "IB NDR 400G", 0.0), ("12.5", "Ethernet 100G", 12.5), ("25", "IB HDR 200G", 25.0), ("100", "IB XDR 800G", 100.0)];

/// The select value for an optional bandwidth in bytes/s (GB/s as written in the table).
fn bandwidth_id(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{}", x / GB))
}

/// A select over `choices` (`(value, label, GB/s)`, GB/s 0 for "the default") bound to one
/// optional bandwidth of the device.
fn bandwidth_select(
    planner: Planner,
    label: &'static str,
    id: &'static str,
    field: &'static str,
    choices: &'static [(&'static str, &'static str, f64)],
    slot: fn(&mut DeviceSpec) -> &mut Option<f64>,
) -> impl IntoView {
    let value = planner.slice(move |s| bandwidth_id(*slot(&mut s.device.clone())));
    view! {
        <SelectField label=label id=id field=field
            options=choices.iter().map(|(v, l, _)| (v.to_string(), l.to_string())).collect() value=value
            on_change=move |v: String| {
                let gbs = choices.iter().find(|(c, _, _)| *c == v).map(|(_, _, g)| *g).filter(|g| *g > 0.0);
                planner.set(|s| *slot(&mut s.device) = gbs.map(|g| g * GB));
            } />
    }
}

/// A custom device starting from the figures of the one chosen now, so it resolves at once.
fn make_custom(s: &mut Scenario) {
    let (d, _) = s.device.resolve_or_default();
    s.device = DeviceSpec {
        preset: None,
        capacity_bytes: Some(d.capacity_bytes),
        hbm_bandwidth: Some(d.hbm_bandwidth),
        host_link_bandwidth: Some(d.host_link_bandwidth),
        bf16_tflops: Some(d.bf16_tflops),
        ..s.device.clone()
    };
}

/// One figure of the custom device, shown in `scale` units.
fn custom_field(planner: Planner, label: &'static str, id: &'static str, field: &'static str, scale: f64, slot: fn(&mut DeviceSpec) -> &mut Option<f64>) -> impl IntoView {
    let value = planner.slice(move |s| slot(&mut s.device.clone()).unwrap_or(0.0) / scale);
    view! {
        <NumberField label=label id=id field=field step="any" value=value
            on_change=move |x: f64| planner.set(|s| *slot(&mut s.device) = Some(x * scale)) />
    }
}

/// The picker's builder, in the `below_fold` chunk.
#[wasm_split(below_fold, wasm_split_path = ::leptos::wasm_split, fallible)]
fn device_view() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <Picker /> }.into_any())
}
static PICKER: Chunked<Build> = Chunked::new();

/// The device picker, or its placeholder until the `below_fold` chunk has arrived.
#[component]
pub fn DevicePicker() -> impl IntoView {
    lazy_view_or(&PICKER, device_view, || view! { <fieldset class="group pending-part device" aria-busy="true"><legend>"Device"</legend></fieldset> }.into_any())
}

/// The device select, custom figures, node layout and runtime.
#[component]
fn Picker() -> impl IntoView {
    let planner = Planner::get();
    let selected = planner.slice(|s| s.device.preset.clone().unwrap_or_else(|| "custom".into()));
    let custom = planner.slice(|s| s.device.preset.is_none());
    let per_node = planner.slice(|s| s.device.gpus_per_node.unwrap_or(DEFAULT_GPUS_PER_NODE));
    // In GB, a GPU named in GB ("A100 80GB") beside its capacity in decimal GB (85.9 GB).
    let units_note = move || planner.valid.with(|s| crate::report::units_note(s, planner.units.get()));
    let choose = move |id: String| {
        planner.set(|s| {
            if id == "custom" {
                make_custom(s);
            } else {
                // A preset's own figures, keeping the node layout and links chosen.
                s.device = DeviceSpec {
                    interconnect_bandwidth: s.device.interconnect_bandwidth,
                    network_bandwidth: s.device.network_bandwidth,
                    gpus_per_node: s.device.gpus_per_node,
                    ..DeviceSpec::preset(&id)
                };
            }
        })
    };
    view! {
        <fieldset class="group">
            <legend>"Device"</legend>
            <div class="control select">
                <label for="device">"GPU"</label>
                <select id="device" on:change=move |ev| choose(event_target_value(&ev))>
                    {devices()
                        .into_iter()
                        .map(|d| {
                            let id = d.id.clone();
                            view! { <option value=d.id.clone() prop:selected=move || selected.with(|s| *s == id)>{d.name}</option> }
                        })
                        .collect_view()}
                    <option value="custom" prop:selected=move || custom.get()>"Custom device…"</option>
                </select>
                <FieldError field="device" />
                <p class="hint" id="units-note" hidden=move || units_note().is_none()>{move || units_note().unwrap_or_default()}</p>
            </div>
            <Show when=move || custom.get()>
                <div class="pair" id="custom-device">
                    {custom_field(planner, "Memory (GB)", "custom-capacity", "device.capacity_bytes", GB, |d| &mut d.capacity_bytes)}
                    {custom_field(planner, "Memory bandwidth (GB/s)", "custom-hbm", "device.hbm_bandwidth", GB, |d| &mut d.hbm_bandwidth)}
                    {custom_field(planner, "Host link (GB/s each way)", "custom-host", "device.host_link_bandwidth", GB, |d| &mut d.host_link_bandwidth)}
                    {custom_field(planner, fields::label("device.bf16_tflops"), "custom-tflops", "device.bf16_tflops", 1.0, |d| &mut d.bf16_tflops)}
                </div>
            </Show>
            <div class="pair">
                {bandwidth_select(planner, fields::label("device.interconnect_bandwidth"), "interconnect", "device.interconnect_bandwidth", &LINKS, |d| &mut d.interconnect_bandwidth)}
                {bandwidth_select(planner, fields::label("device.network_bandwidth"), "network", "device.network_bandwidth", &NETWORKS, |d| &mut d.network_bandwidth)}
            </div>
            <NumberSlider label=fields::label("device.gpus_per_node") id="gpus-per-node" field="device.gpus_per_node" min=1 max=64 log2=true value=per_node
                on_change=move |v| planner.set(|s| s.device.gpus_per_node = Some(v)) />
            <RuntimeControls />
        </fieldset>
    }
}
