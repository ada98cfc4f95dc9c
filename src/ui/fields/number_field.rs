//! `NumberField`: a labelled number box for one positive real field, in display units.
//!
//! What the user types stays in the box; a value that is not a positive number is not
//! stored and the box says so.

use leptos::prelude::*;

use crate::ui::fields::field_error::FieldError;

/// A number box; `on_change` gets each positive number typed.
#[component]
pub fn NumberField(
    /// Visible label, with its unit.
    label: &'static str,
    /// Element id.
    id: &'static str,
    /// Scenario field path, for its validation messages.
    field: &'static str,
    /// The `step` attribute (the typical precision).
    step: &'static str,
    /// Current value, in the label's unit.
    #[prop(into)]
    value: Signal<f64>,
    /// Called with each new positive value.
    #[prop(into)]
    on_change: Callback<f64>,
) -> impl IntoView {
    let typo = RwSignal::new(false);
    let on_input = move |ev: leptos::ev::Event| match crate::format::parse_f64(&event_target_value(&ev).trim().replace(['_', ','], "")) {
        Some(x) if x.is_finite() && x > 0.0 => {
            typo.set(false);
            on_change.run(x);
        }
        _ => typo.set(true),
    };
    view! {
        <div class="control">
            <label for=id>{label}</label>
            <input id=id type="number" inputmode="decimal" min="0" step=step prop:value=move || format!("{}", (value.get() * 1000.0).round() / 1000.0) on:change=on_input />
            <Show when=move || typo.get()>
                <p class="field-error" role="alert">"Enter a positive number."</p>
            </Show>
            <FieldError field=field />
        </div>
    }
}
