//! `Animation`: the escalation step the Strategy view shows, whether it is playing, where it
//! stops, and whether the plan is shown instead; shared by the flowchart, the playback
//! controls, the caption and the plan summary.

use leptos::prelude::*;

use crate::model::breakdown::Breakdown;
use crate::plan::escalation::Escalation;

/// Escalation step shown by the animation, and where the animation stops.
#[derive(Clone, Copy)]
pub struct Animation {
    pub escalation: Memo<Escalation>,
    /// Index into `escalation.steps`.
    pub current: RwSignal<usize>,
    pub playing: RwSignal<bool>,
    /// The first fit, or the last step when nothing fits.
    pub stop: Memo<usize>,
    pub last: Memo<usize>,
    /// True while the bar and caption show the plan (the launch node was chosen) rather
    /// than step `current`.
    pub plan_shown: RwSignal<bool>,
}

impl Animation {
    /// Stops playing and shows escalation step `k` (not the plan).
    pub fn show_step(self, k: usize) {
        self.playing.set(false);
        self.plan_shown.set(false);
        self.current.set(k.min(self.last.get_untracked()));
    }

    /// What the bar shows: the plan while it is chosen, else step `current`; its name
    /// and breakdown.
    pub fn shown(self) -> Option<(String, Breakdown)> {
        let k = self.current.get();
        let plan = self.plan_shown.get();
        self.escalation.with(|e| match (&e.plan, plan) {
            (Some(p), true) => Some(("the plan".to_string(), p.result.breakdown.clone())),
            _ => e.steps.get(k).map(|s| (s.name.clone(), s.breakdown.clone())),
        })
    }
}
