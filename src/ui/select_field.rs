//! `SelectField`: a labelled `<select>` over a fixed list of options, for enum fields.

use leptos::prelude::*;

use super::field_error::FieldError;

/// A labelled select; `options` are `(value, label)` pairs.
#[component]
pub fn SelectField(
    /// Visible label.
    label: &'static str,
    /// Element id.
    id: &'static str,
    /// Scenario field path, for its validation messages.
    field: &'static str,
    /// `(value, label)` pairs, in menu order.
    options: Vec<(String, String)>,
    /// The selected value.
    #[prop(into)]
    value: Signal<String>,
    /// Called with the chosen value.
    #[prop(into)]
    on_change: Callback<String>,
) -> impl IntoView {
    view! {
        <div class="control select">
            <label for=id>{label}</label>
            <select id=id on:change=move |ev| on_change.run(event_target_value(&ev))>
                {select_options(options, value)}
            </select>
            <FieldError field=field />
        </div>
    }
}

/// The `<option>`s of a select over `(value, label)` pairs, the one matching `value` selected.
pub fn select_options(options: Vec<(String, String)>, value: Signal<String>) -> impl IntoView {
    options
        .into_iter()
        .map(|(v, text)| {
            let key = v.clone();
            view! { <option value=v prop:selected=move || value.with(|s| *s == key)>{text}</option> }
        })
        .collect_view()
}
