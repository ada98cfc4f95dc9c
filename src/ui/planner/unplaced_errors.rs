//! `UnplacedErrors`: validation messages for fields that have no control of their own
//! (dropout, virtual stages, …: [`crate::fields::Shown::Listed`]), listed above the chart with
//! their field path.

use leptos::prelude::*;

use crate::fields::anchor;
use crate::ui::state::Planner;

/// Lists errors no control shows.
#[component]
pub fn UnplacedErrors() -> impl IntoView {
    let errors = Planner::get().errors;
    move || {
        errors.with(|all| {
            all.iter().filter(|e| anchor(&e.field).is_none()).map(|e| view! { <p class="field-error" role="alert" data-field=e.field.clone()>{e.to_string()}</p> }).collect_view()
        })
    }
}
