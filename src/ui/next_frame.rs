//! `NextFrame`: work that waits for the next animation frame, the latest request winning.
//!
//! Used for what the page draws after the stacked bar (the step timeline, the cheapest fix),
//! so a dragged slider moves the bar first and only the newest plan's follow-up runs.

use leptos::prelude::*;

/// A slot for one pending piece of work.
#[derive(Clone, Copy)]
pub struct NextFrame(StoredValue<u32>);

impl NextFrame {
    pub fn new() -> NextFrame {
        NextFrame(StoredValue::new(0))
    }

    /// Runs `work` on the next animation frame, unless `schedule` or `cancel` is called again
    /// before then.
    pub fn schedule(self, work: impl FnOnce() + 'static) {
        let generation = self.cancel();
        request_animation_frame(move || {
            if self.0.get_value() == generation {
                work();
            }
        });
    }

    /// Drops the pending work, if any; returns the new generation.
    pub fn cancel(self) -> u32 {
        let generation = self.0.get_value().wrapping_add(1);
        self.0.set_value(generation);
        generation
    }
}
