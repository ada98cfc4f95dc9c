//! `LaunchPanel`: the configuration that runs the plan on screen, for the framework chosen
//! (`export::launch`): the file or command in a box to copy, or — when that framework cannot
//! run the plan as planned — the reason, naming the setting to change. On the Strategy tab, so
//! its code loads with that view.

use leptos::prelude::*;

use crate::export::launch::{launch, Target};
use crate::model::inputs::Mode;
use crate::profiles::Framework;
use crate::ui::share::share_export::copy_text;
use crate::ui::state::Planner;

/// The target matching the scenario's framework profile, else a default for the task.
fn default_target(framework: Framework, mode: Mode) -> Target {
    match (framework, mode) {
        (_, Mode::Inference) => Target::Vllm,
        (Framework::Torchtune, _) => Target::Torchtune,
        (Framework::Litgpt, _) => Target::Litgpt,
        (Framework::Torchtitan, _) => Target::Torchtitan,
        (Framework::MegatronCore, _) => Target::Megatron,
        (Framework::Deepspeed, _) => Target::Deepspeed,
        _ => Target::Accelerate,
    }
}

#[component]
pub fn LaunchPanel() -> impl IntoView {
    let planner = Planner::get();
    let chosen = RwSignal::new(None::<Target>);
    let target = Memo::new(move |_| chosen.get().unwrap_or_else(|| planner.valid.with(|s| default_target(s.framework, s.training.mode))));
    let output = Memo::new(move |_| planner.valid.with(|s| launch(s, target.get()).map_err(|e| e.to_string())));
    let status = RwSignal::new(String::new());
    let copy = move |_| {
        if let Ok(text) = output.get_untracked() {
            leptos::task::spawn_local(async move {
                match copy_text(&text).await {
                    Ok(()) => status.set("Copied.".into()),
                    Err(e) => status.set(format!("Not copied: {e}. Select the text in the box.")),
                }
            });
        }
    };
    let options =
        move || Target::ALL.iter().map(|&t| view! { <option value=t.id() selected=move || target.get() == t>{format!("{} — {}", t.id(), t.label())}</option> }).collect_view();
    view! {
        <section class="card launch" aria-labelledby="launch-heading">
            <h2 id="launch-heading">"Launch configuration"</h2>
            <p class="hint">"The planner's plan as the chosen framework reads it. Every field comes from the scenario; what the scenario does not decide (learning rate, data, output) is left to you. A framework that cannot run the plan as planned says which setting to change."</p>
            <div class="search-controls">
                <label class="inline-number" for="launch-target">
                    "Framework"
                    <select
                        id="launch-target"
                        on:change=move |ev| {
                            let id = event_target_value(&ev);
                            chosen.set(Target::ALL.iter().copied().find(|t| t.id() == id));
                            status.set(String::new());
                        }
                    >
                        {options}
                    </select>
                </label>
                <button type="button" id="copy-launch" on:click=copy disabled=move || output.with(Result::is_err)>"Copy"</button>
                <span class="hint" aria-live="polite">{move || status.get()}</span>
            </div>
            {move || match output.get() {
                Ok(text) => view! { <pre id="launch-config" class="launch-config" tabindex="0">{text}</pre> }.into_any(),
                Err(reason) => view! { <p id="launch-refused" class="stale" role="status">{reason}</p> }.into_any(),
            }}
        </section>
    }
}
