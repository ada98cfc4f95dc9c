//! `AfterPaint`: work that waits until the next frame has been painted, the latest request
//! winning.
//!
//! Used for what the page draws after the stacked bar (the step timeline, the cheapest fix),
//! so the frame that shows the new bar is painted first — on load, and under a dragged
//! slider — and only the newest plan's follow-up runs. A `requestAnimationFrame` callback
//! alone runs before that frame's paint and would delay it; a task posted from it
//! (`setTimeout` 0) runs after the frame has been rendered (HTML Standard, "update the
//! rendering" is the last step of an event-loop iteration that runs the animation-frame
//! callbacks).

use leptos::prelude::*;

/// A slot for one pending piece of work.
#[derive(Clone, Copy)]
pub struct AfterPaint(StoredValue<u32>);

impl AfterPaint {
    pub fn new() -> AfterPaint {
        AfterPaint(StoredValue::new(0))
    }

    /// Runs `work` once the next frame has been painted, unless `schedule` or `cancel` is
    /// called again before then.
    pub fn schedule(self, work: impl FnOnce() + 'static) {
        let generation = self.cancel();
        request_animation_frame(move || {
            set_timeout(
                move || {
                    if self.0.try_get_value() == Some(generation) {
                        work();
                    }
                },
                std::time::Duration::ZERO,
            );
        });
    }

    /// Drops the pending work, if any; returns the new generation.
    pub fn cancel(self) -> u32 {
        let generation = self.0.get_value().wrapping_add(1);
        self.0.set_value(generation);
        generation
    }
}
