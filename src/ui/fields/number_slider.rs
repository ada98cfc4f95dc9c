//! `NumberSlider`: a labelled range slider with a typed number entry for one integer field.
//!
//! Wide ranges use a base-2 logarithmic slider (positions are powers of two); the number
//! box accepts any whole number, which is stored as typed even when it is out of range, so
//! validation can say what is wrong without losing the value. The slider tells assistive
//! technology the value (`aria-valuetext`: micro-batch "4"), not its position on a log scale.

use leptos::prelude::*;

use crate::ui::fields::field_error::FieldError;

/// Slider position for `value`: its base-2 logarithm when `log2`, rounded and clamped.
fn position(value: u64, min: u64, max: u64, log2: bool) -> u64 {
    let v = value.clamp(min, max);
    if log2 {
        (v as f64).log2().round() as u64
    } else {
        v
    }
}

/// A slider plus a number box, writing through `on_change`.
#[component]
pub fn NumberSlider(
    /// Visible label (it may change with the scenario: "Micro-batch size" / "Batch").
    #[prop(into)]
    label: Signal<&'static str>,
    /// Element id of the number box (the slider gets `<id>-range`).
    id: &'static str,
    /// Scenario field path, for its validation messages.
    field: &'static str,
    /// Slider minimum (the number box accepts anything).
    min: u64,
    /// Slider maximum.
    max: u64,
    /// Powers of two on the slider.
    #[prop(optional)]
    log2: bool,
    /// Current value.
    #[prop(into)]
    value: Signal<u64>,
    /// Called with each new value.
    #[prop(into)]
    on_change: Callback<u64>,
) -> impl IntoView {
    let (range_min, range_max) = if log2 { (position(min, min, max, true), position(max, min, max, true)) } else { (min, max) };
    let typo = RwSignal::new(false);
    let range_id = format!("{id}-range");
    let on_range = move |ev: leptos::ev::Event| {
        if let Ok(pos) = event_target_value(&ev).parse::<u64>() {
            let v = if log2 { 1u64.checked_shl(pos.min(62) as u32).unwrap_or(max) } else { pos };
            typo.set(false);
            on_change.run(v);
        }
    };
    let on_number = move |ev: leptos::ev::Event| match event_target_value(&ev).trim().replace(['_', ','], "").parse::<u64>() {
        Ok(v) => {
            typo.set(false);
            on_change.run(v);
        }
        Err(_) => typo.set(true),
    };
    view! {
        <div class="control slider">
            <label for=id>{move || label.get()}</label>
            <div class="slider-row">
                <input
                    type="range"
                    id=range_id
                    aria-label=move || format!("{} slider", label.get())
                    aria-valuetext=move || value.get().to_string()
                    min=range_min
                    max=range_max
                    step="1"
                    prop:value=move || position(value.get(), min, max, log2).to_string()
                    on:input=on_range
                />
                <input
                    type="number"
                    id=id
                    inputmode="numeric"
                    min=min.min(1)
                    step="1"
                    prop:value=move || value.get().to_string()
                    on:input=on_number
                />
            </div>
            <Show when=move || typo.get()>
                <p class="field-error" role="alert">"Enter a whole number."</p>
            </Show>
            <FieldError field=field />
        </div>
    }
}
