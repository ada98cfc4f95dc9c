//! `UnplacedErrors`: validation messages for fields that have no control of their own
//! (dropout, LoRA, virtual stages, …), listed above the chart with their field path.

use leptos::prelude::*;

use super::state::{belongs_to, Planner, PLACED_FIELDS};

/// Lists errors no control shows.
#[component]
pub fn UnplacedErrors() -> impl IntoView {
    let errors = Planner::get().errors;
    move || {
        errors.with(|all| {
            all.iter()
                .filter(|e| !PLACED_FIELDS.iter().any(|f| belongs_to(&e.field, f)))
                .map(|e| view! { <p class="field-error" role="alert" data-field=e.field.clone()>{e.to_string()}</p> })
                .collect_view()
        })
    }
}
