//! `DevicePicker`: the GPU (or MIG slice) every rank runs on, with the platform and sharing
//! controls under it.

use leptos::prelude::*;

use super::field_error::FieldError;
use super::runtime_controls::RuntimeControls;
use super::state::Planner;
use crate::model::device::devices;
use crate::scenario::DeviceSpec;

/// The device preset select.
#[component]
pub fn DevicePicker() -> impl IntoView {
    let planner = Planner::get();
    let selected = planner.slice(|s| s.device.preset.clone().unwrap_or_default());
    view! {
        <fieldset class="group">
            <legend>"Device"</legend>
            <div class="control select">
                <label for="device">"GPU"</label>
                <select
                    id="device"
                    on:change=move |ev| {
                        let id = event_target_value(&ev);
                        planner.set(|s| s.device = DeviceSpec::preset(&id));
                    }
                >
                    <option value="" hidden=true prop:selected=move || selected.with(String::is_empty)>"custom device"</option>
                    {devices()
                        .into_iter()
                        .map(|d| {
                            let id = d.id.clone();
                            view! { <option value=d.id.clone() prop:selected=move || selected.with(|s| *s == id)>{d.name}</option> }
                        })
                        .collect_view()}
                </select>
                <FieldError field="device" />
            </div>
            <RuntimeControls />
        </fieldset>
    }
}
