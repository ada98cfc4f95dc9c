//! `RunPanel`: the whole run on the Planner — the data (tokens per epoch, or tokens to
//! generate when serving; images for vision models), epochs, on-demand or spot and the price
//! per GPU-hour (empty: the catalogue's example, named with its source and date), then the
//! steps, wall-clock hours, GPU-hours, energy at TDP and cost, with what the hours assume.
//!
//! It reads [`Planner::run`] (`plan::run`); it computes nothing itself.

use leptos::prelude::*;

use crate::format;
use crate::scenario::Pricing;
use crate::ui::fields::field_error::FieldError;
use crate::ui::state::Planner;

/// A number typed into one of the run's boxes: `None` when empty, `Err` when not a number.
fn typed(text: &str) -> Result<Option<f64>, ()> {
    let t = text.trim().replace(['_', ','], "");
    if t.is_empty() {
        return Ok(None);
    }
    match format::parse_f64(&t) {
        Some(x) if x.is_finite() => Ok(Some(x)),
        _ => Err(()),
    }
}

#[component]
pub fn RunPanel() -> impl IntoView {
    let planner = Planner::get();
    let run = planner.run;
    let serving = planner.slice(|s| s.training.mode == crate::scenario::Mode::Inference);
    let tokens = planner.slice(|s| s.run.dataset_tokens);
    let epochs = planner.slice(|s| s.run.epochs);
    let price = planner.slice(|s| s.run.price_per_gpu_hour);
    let pricing = planner.slice(|s| s.run.pricing);
    let set_tokens = move |ev: leptos::ev::Event| {
        if let Ok(Some(x)) = typed(&event_target_value(&ev)) {
            planner.scenario.update(|s| s.run.dataset_tokens = x.max(0.0).round() as u64);
        }
    };
    let set_epochs = move |ev: leptos::ev::Event| {
        if let Ok(Some(x)) = typed(&event_target_value(&ev)) {
            planner.scenario.update(|s| s.run.epochs = x);
        }
    };
    let set_price = move |ev: leptos::ev::Event| {
        if let Ok(p) = typed(&event_target_value(&ev)) {
            planner.scenario.update(|s| s.run.price_per_gpu_hour = p);
        }
    };
    let set_pricing = move |ev: leptos::ev::Event| {
        let spot = event_target_value(&ev) == "spot";
        planner.scenario.update(|s| s.run.pricing = if spot { Pricing::Spot } else { Pricing::OnDemand });
    };
    let example = move || {
        planner.valid.with(|s| {
            s.device
                .preset
                .as_deref()
                .and_then(|id| crate::plan::prices::example_price(id, s.run.pricing))
                .map_or("no example price for this GPU".to_string(), |p| format!("example {}", format::usd(p.per_gpu_hour)))
        })
    };
    let images = planner.slice(|s| s.model.architecture().is_some_and(|a| a.default_image_size() > 0));
    let data_label = move || match (serving.get(), images.get()) {
        (true, _) => "Tokens to generate",
        (false, true) => "Dataset images (per epoch)",
        (false, false) => "Dataset tokens (per epoch)",
    };
    let line = |label: &'static str, value: String| view! { <tr><th scope="row">{label}</th><td class="num">{value}</td></tr> };
    let results = move || {
        let r = run.get();
        view! {
            <table class="breakdown run-table" id="run-table">
                <tbody>
                    {line("Steps", format::thousands(r.steps))}
                    {line("Per step", format!("{} for {} tokens", format::seconds(r.step_seconds), format::count(r.tokens_per_step as u64)))}
                    {line("Wall clock", format::hours(r.hours))}
                    {line("GPU-hours", format!("{:.1} on {} GPUs", r.gpu_hours, r.gpus))}
                    {line("Energy (GPUs at TDP)", format!("{} at {:.0} W each", format::energy_kwh(r.energy_kwh), r.tdp_w))}
                    {line("Cost", r.cost.map_or("— (give a price per GPU-hour)".to_string(), format::usd))}
                </tbody>
            </table>
            <p class="hint" id="run-price-source">{r.price.map(|p| format!("Price: {}/GPU-hour, {}.", format::usd(p.per_gpu_hour), p.source)).unwrap_or_default()}</p>
            <ul class="hint run-assumptions">{r.assumptions.into_iter().map(|a| view! { <li>{a}</li> }).collect_view()}</ul>
        }
    };
    view! {
        <section class="card run-panel" id="run-panel" aria-labelledby="run-heading">
            <h2 id="run-heading">"The whole run"</h2>
            <div class="run-controls">
                <div class="control">
                    <label for="run-tokens">{data_label}</label>
                    <input id="run-tokens" type="number" min="1" step="any" prop:value=move || tokens.get().to_string() on:change=set_tokens />
                    <FieldError field="run.dataset_tokens" />
                </div>
                <div class="control">
                    <label for="run-epochs">"Epochs"</label>
                    <input id="run-epochs" type="number" min="0" step="any" prop:value=move || epochs.get().to_string() on:change=set_epochs />
                    <FieldError field="run.epochs" />
                </div>
                <div class="control select">
                    <label for="run-pricing">"Capacity"</label>
                    <select id="run-pricing" on:change=set_pricing>
                        <option value="on-demand" selected=move || pricing.get() == Pricing::OnDemand>"On-demand"</option>
                        <option value="spot" selected=move || pricing.get() == Pricing::Spot>"Spot"</option>
                    </select>
                </div>
                <div class="control">
                    <label for="run-price">"Price per GPU-hour (USD)"</label>
                    <input id="run-price" type="number" min="0" step="any" placeholder=example prop:value=move || price.get().map(|p| p.to_string()).unwrap_or_default() on:change=set_price />
                    <FieldError field="run.price_per_gpu_hour" />
                </div>
            </div>
            {results}
        </section>
    }
}
