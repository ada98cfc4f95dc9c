//! `RuntimeControls`: what happens beyond the GPU's memory (the platform, and the system RAM
//! that bounds what can spill or be offloaded) and how the GPU is shared (a per-process
//! memory fraction, memory other processes hold, identical jobs), with the
//! `set_per_process_memory_fraction` value to use when it is shared.

use leptos::prelude::*;

use crate::enum_id::{enum_from_id, enum_id};
use crate::fields;
use crate::model::breakdown::HostCeiling;
use crate::scenario::Platform;
use crate::ui::fields::checkbox_field::CheckboxField;
use crate::ui::fields::field_error::FieldError;
use crate::ui::fields::number_slider::NumberSlider;
use crate::ui::fields::select_field::SelectField;
use crate::ui::state::Planner;

const GIB: f64 = (1u64 << 30) as f64;

/// Each platform with the words the menu shows.
const PLATFORMS: [(Platform, &str); 7] = [
    (Platform::Auto, "auto (by GPU)"),
    (Platform::Linux, "Linux CUDA (out of memory)"),
    (Platform::WindowsFallback, "Windows, sysmem fallback on"),
    (Platform::WindowsNoFallback, "Windows, sysmem fallback off"),
    (Platform::Managed, "CUDA managed memory"),
    (Platform::Offload, "deliberate offload"),
    (Platform::C2c, "NVLink-C2C superchip"),
];

/// Platform and sharing controls.
#[component]
pub fn RuntimeControls() -> impl IntoView {
    let planner = Planner::get();
    let platform = planner.slice(|s| enum_id(&s.runtime.platform));
    let jobs = planner.slice(|s| s.runtime.jobs);
    let fraction = planner.slice(|s| s.runtime.memory_fraction);
    let expandable = planner.slice(|s| s.runtime.expandable_segments);
    let others = planner.slice(|s| s.runtime.other_processes_bytes as f64 / GIB);
    let host_gib = planner.slice(|s| s.runtime.host_memory_bytes.map(|b| b as f64 / GIB));
    let usual_gib = planner.slice(|s| crate::model::spill::default_host_memory(&s.device.resolve_or_default().0) / GIB);
    let advice = move || {
        planner.plan.with(|p| {
            let spill = &p.breakdown.spill;
            let resolved = PLATFORMS.iter().find(|(pl, _)| *pl == spill.platform).map_or("", |(_, l)| l);
            let mut text = format!("Assumed: {resolved}.");
            if spill.host_ceiling_bytes > 0 {
                let units = planner.units.get();
                let room = match spill.ceiling {
                    HostCeiling::SharedGpuMemory => "shared GPU memory (half of the RAM)",
                    HostCeiling::PinnedMemory => "pinned host memory",
                    HostCeiling::GraceMemory => "the Grace CPU's memory",
                    HostCeiling::HostMemory | HostCeiling::None => "host memory",
                };
                text.push_str(&format!(" Room in {room}: {}.", crate::format::bytes(spill.host_ceiling_bytes, units)));
            }
            if let Some(f) = spill.recommended_memory_fraction {
                text.push_str(&format!(" Give each job its share with torch.cuda.set_per_process_memory_fraction({f:.2})."));
            }
            text
        })
    };
    let on_fraction = move |ev: leptos::ev::Event| {
        if let Some(f) = crate::format::parse_f64(&event_target_value(&ev)) {
            planner.set(|s| s.runtime.memory_fraction = f);
        }
    };
    let on_others = move |ev: leptos::ev::Event| {
        if let Some(g) = crate::format::parse_f64(&event_target_value(&ev)) {
            if g.is_finite() && g >= 0.0 {
                planner.set(|s| s.runtime.other_processes_bytes = (g * GIB) as u64);
            }
        }
    };
    let on_host = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        if text.trim().is_empty() {
            planner.set(|s| s.runtime.host_memory_bytes = None);
        } else if let Some(g) = crate::format::parse_f64(&text) {
            if g.is_finite() && g >= 0.0 {
                planner.set(|s| s.runtime.host_memory_bytes = Some((g * GIB) as u64));
            }
        }
    };
    let gib_text = |g: f64| if g.fract() == 0.0 { format!("{g:.0}") } else { format!("{g:.1}") };
    view! {
        <SelectField
            label=fields::label("runtime.platform")
            id="platform"
            field="runtime.platform"
            options=PLATFORMS.iter().map(|(p, l)| (enum_id(p), l.to_string())).collect()
            value=platform
            on_change=move |v: String| {
                if let Some(p) = enum_from_id::<Platform>(&v) {
                    planner.set(|s| s.runtime.platform = p);
                }
            }
        />
        <p class="hint" id="platform-advice" aria-live="polite">{advice}</p>
        <div class="control">
            <label for="host-memory">"System RAM (GiB)"</label>
            <input id="host-memory" type="number" min="1" step="1" inputmode="decimal"
                placeholder=move || format!("{} (usual for this GPU)", gib_text(usual_gib.get()))
                prop:value=move || host_gib.get().map(gib_text).unwrap_or_default() on:change=on_host />
            <FieldError field="runtime.host_memory_bytes" />
        </div>
        <CheckboxField label=fields::label("runtime.expandable_segments") id="expandable-segments" field="runtime.expandable_segments"
            value=expandable on_change=move |on| planner.set(|s| s.runtime.expandable_segments = on) />
        <NumberSlider label=fields::label("runtime.jobs") id="jobs" field="runtime.jobs" min=1 max=16 value=jobs
            on_change=move |v| planner.set(|s| s.runtime.jobs = v) />
        <div class="pair">
            <div class="control">
                <label for="memory-fraction">"Per-process memory fraction"</label>
                <input id="memory-fraction" type="number" min="0.01" max="1" step="0.01" prop:value=move || fraction.get().to_string() on:change=on_fraction />
                <FieldError field="runtime.memory_fraction" />
            </div>
            <div class="control">
                <label for="other-processes">"Used by other processes (GiB)"</label>
                <input id="other-processes" type="number" min="0" step="0.5" prop:value=move || format!("{:.1}", others.get()) on:change=on_others />
                <FieldError field="runtime.other_processes_bytes" />
            </div>
        </div>
    }
}
