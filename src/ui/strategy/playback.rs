//! `Playback`: play / pause / step back / step forward / reset for the flowchart animation,
//! and the GPU budget the ladder may use (the planner's dp × tp × pp × cp until edited).
//!
//! Play walks from the start to the first fit, one step every [`TICK_MS`]; while it runs an
//! interval timer lives in a local `StoredValue`, and pausing drops it.

use gloo::timers::callback::Interval;
use leptos::prelude::*;

use super::animation::Animation;
use crate::ui::workspace::{Workspace, MAX_GPUS};

/// Time each step is shown while playing.
pub const TICK_MS: u32 = 900;

/// The animation controls.
#[component]
pub fn Playback(anim: Animation) -> impl IntoView {
    let ws = Workspace::get();
    let timer = StoredValue::new_local(None::<Interval>);
    Effect::new(move |_| {
        if anim.playing.get() {
            let interval = Interval::new(TICK_MS, move || {
                let target = anim.stop.get_untracked();
                let next = anim.current.get_untracked() + 1;
                if next <= target {
                    anim.current.set(next);
                }
                if next >= target {
                    anim.playing.set(false);
                }
            });
            timer.set_value(Some(interval));
        } else {
            timer.set_value(None);
        }
    });
    on_cleanup(move || timer.set_value(None));
    let play = move |_| {
        anim.plan_shown.set(false);
        if anim.playing.get_untracked() {
            anim.playing.set(false);
            return;
        }
        if anim.current.get_untracked() >= anim.stop.get_untracked() {
            anim.current.set(0);
        }
        anim.playing.set(anim.stop.get_untracked() > 0);
    };
    let back = move |_| anim.show_step(anim.current.get_untracked().saturating_sub(1));
    let forward = move |_| anim.show_step(anim.current.get_untracked() + 1);
    let reset = move |_| anim.show_step(0);
    let at_start = move || anim.current.get() == 0;
    let at_end = move || anim.current.get() >= anim.last.get();
    view! {
        <div class="playback" role="group" aria-label="Animation controls"
            data-current=move || anim.current.get().to_string()
            data-playing=move || anim.playing.get().to_string()>
            <button type="button" id="flow-reset" on:click=reset disabled=at_start title="Back to the start">"Reset"</button>
            <button type="button" id="flow-back" on:click=back disabled=at_start aria-label="Step back">"◀ Back"</button>
            <button type="button" id="flow-play" class="primary" on:click=play aria-pressed=move || anim.playing.get().to_string()>
                {move || if anim.playing.get() { "Pause" } else { "▶ Play" }}
            </button>
            <button type="button" id="flow-forward" on:click=forward disabled=at_end aria-label="Step forward">"Forward ▶"</button>
            <label class="inline-number" for="ladder-gpus" title="The most GPUs a step may use; starts at the planner's dp × tp × pp × cp">
                "GPU budget"
                <input
                    type="number"
                    id="ladder-gpus"
                    min="1"
                    max=MAX_GPUS.to_string()
                    prop:value=move || ws.strategy.gpus.get().to_string()
                    on:change=move |ev| {
                        if let Some(n) = crate::format::parse_f64(event_target_value(&ev).trim()) {
                            if n.is_finite() {
                                ws.strategy.gpus.set((n.round().max(1.0) as u64).min(MAX_GPUS));
                            }
                        }
                    }
                />
            </label>
        </div>
    }
}
