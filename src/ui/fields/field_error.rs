//! `FieldError`: the validation messages for one scenario field, shown under its control.
//!
//! Reads `scenario.validate()` through the planner's error memo; it does not validate.

use leptos::prelude::*;

use crate::ui::state::Planner;

/// Lists the messages of errors whose field is `field` (or lies below it).
#[component]
pub fn FieldError(
    /// Dotted scenario path, e.g. `parallel.tp`.
    field: &'static str,
) -> impl IntoView {
    let messages = Planner::get().messages_for(field);
    move || messages.get().into_iter().map(|m| view! { <p class="field-error" role="alert" data-field=field>{m}</p> }).collect_view()
}
