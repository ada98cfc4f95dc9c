//! `StepCaption`: which step the animation shows (or the plan), its per-GPU total and
//! verdict.

use leptos::prelude::*;

use super::animation::Animation;
use crate::format;
use crate::ui::state::Planner;

/// One line above the bar.
#[component]
pub fn StepCaption(anim: Animation) -> impl IntoView {
    let planner = Planner::get();
    let text = move || {
        let k = anim.current.get();
        let units = planner.units.get();
        let plan = anim.plan_shown.get();
        anim.escalation.with(|e| match (e.plan.as_ref().filter(|_| plan), e.steps.get(k)) {
            (Some(p), _) => {
                let gpus = p.result.scenario.parallel.world_size();
                format!(
                    "The plan on {gpus} GPU{}: {} per GPU, {} per step, fits",
                    if gpus == 1 { "" } else { "s" },
                    format::bytes(p.result.breakdown.total, units),
                    format::seconds(p.result.costs.step_seconds)
                )
            }
            (None, Some(s)) => {
                let verdict = if s.fits() { "fits".to_string() } else { format!("{} over", format::bytes(s.breakdown.spill_bytes, units)) };
                format!("Step {k} of {}: {} — {} per GPU, {verdict}", e.steps.len().saturating_sub(1), s.name, format::bytes(s.breakdown.total, units))
            }
            (None, None) => String::new(),
        })
    };
    let fits = move || anim.plan_shown.get() || anim.escalation.with(|e| e.steps.get(anim.current.get()).is_some_and(|s| s.fits()));
    view! {
        <p id="step-caption" class=move || if fits() { "step-caption fits" } else { "step-caption spills" } aria-live="polite">
            {text}
        </p>
    }
}
