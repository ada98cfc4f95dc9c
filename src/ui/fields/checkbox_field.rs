//! `CheckboxField`: a labelled checkbox for a boolean scenario field, with its validation
//! messages.

use leptos::prelude::*;

use crate::ui::fields::field_error::FieldError;

/// A checkbox; `on_change` gets the new state.
#[component]
pub fn CheckboxField(
    /// Visible label.
    label: &'static str,
    /// Element id.
    id: &'static str,
    /// Scenario field path, for its validation messages.
    field: &'static str,
    /// Whether it is checked.
    #[prop(into)]
    value: Signal<bool>,
    /// Called with the new state.
    #[prop(into)]
    on_change: Callback<bool>,
) -> impl IntoView {
    view! {
        <div class="control checkbox">
            <input type="checkbox" id=id prop:checked=move || value.get() on:change=move |ev| on_change.run(event_target_checked(&ev)) />
            <label for=id>{label}</label>
            <FieldError field=field />
        </div>
    }
}
