//! `SpillDetails`: under the verdict, the same run on each platform a GeForce or workstation
//! card may run under (Linux, Windows with the sysmem fallback on and off), and, when the run
//! spills, why it costs what it costs (the ceiling, hot and cold bytes, the bytes each kernel
//! moves over the link, what hides and what stalls). Text from `chart::verdict`; nothing is
//! computed here.

use leptos::prelude::*;

use crate::chart::{platform_outcomes, spill_explanation};
use crate::ui::state::Planner;

/// The side-by-side platforms and the spill's price.
#[component]
pub fn SpillDetails() -> impl IntoView {
    let planner = Planner::get();
    let platforms = Memo::new(move |_| {
        let units = planner.units.get();
        planner.plan.with(|p| platform_outcomes(&p.breakdown, units))
    });
    let why = Memo::new(move |_| {
        let units = planner.units.get();
        planner.plan.with(|p| spill_explanation(&p.breakdown, units))
    });
    view! {
        <Show when=move || platforms.with(|p| !p.is_empty())>
            <div class="platform-outcomes" id="platform-outcomes">
                <p class="platform-title">"On this card, by operating system:"</p>
                <ul>
                    {move || platforms.get().into_iter().map(|(kind, name, text)| view! { <li class=kind><strong>{name}</strong>": "{text}</li> }).collect_view()}
                </ul>
            </div>
        </Show>
        <Show when=move || why.with(|w| !w.is_empty())>
            <details class="spill-why" id="spill-why">
                <summary>"Why the spill costs this"</summary>
                <ul>{move || why.get().into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}</ul>
            </details>
        </Show>
    }
}
