//! `SelectField`: a labelled `<select>` over a fixed list of options, for enum fields, and
//! [`enum_select`], one bound to an enum field of the scenario.

use leptos::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::enum_id::{enum_from_id, enum_id};
use crate::scenario::Scenario;
use crate::ui::fields::field_error::FieldError;
use crate::ui::state::Planner;

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

/// A select bound to one enum field of the scenario.
///
/// Only the two conversions are generic (the field's value as its serde id, and an id back
/// into the field); the memo, the signal and the view are built once for every enum, in
/// [`id_select`], which keeps the WASM smaller than one copy per enum type.
pub fn enum_select<T>(
    planner: Planner,
    label: &'static str,
    id: &'static str,
    field: &'static str,
    options: Vec<(T, &'static str)>,
    get: fn(&Scenario) -> T,
    set: fn(&mut Scenario, T),
) -> impl IntoView
where
    T: Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static,
{
    let options = options.into_iter().map(|(v, l)| (enum_id(&v), l.to_string())).collect();
    let current: IdOf = Box::new(move |s| enum_id(&get(s)));
    let apply: SetId = Box::new(move |v| enum_from_id::<T>(v).map(|x| Box::new(move |s: &mut Scenario| set(s, x)) as Box<dyn FnOnce(&mut Scenario)>));
    id_select(planner, label, id, field, options, current, apply)
}

/// A field's value as an option id.
type IdOf = Box<dyn Fn(&Scenario) -> String + Send + Sync>;
/// The change an option id makes to the scenario, or none when it names no value.
type SetId = Box<dyn Fn(&str) -> Option<Box<dyn FnOnce(&mut Scenario)>> + Send + Sync>;

/// [`enum_select`] once its value is an id: selected while the scenario's id matches, and a
/// choice that names a value is applied to the scenario.
fn id_select(planner: Planner, label: &'static str, id: &'static str, field: &'static str, options: Vec<(String, String)>, current: IdOf, apply: SetId) -> impl IntoView {
    let current = planner.slice(current);
    view! {
        <SelectField
            label=label
            id=id
            field=field
            options=options
            value=current
            on_change=move |v: String| {
                if let Some(change) = apply(&v) {
                    planner.set(change);
                }
            }
        />
    }
}
