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
//!
//! On load, "the next frame" is the one after the page's first chart: until a chart has been
//! handed to ECharts ([`first_chart_drawn`]), scheduled work waits. Otherwise the frame after
//! the page's DOM is built, which comes while ECharts is still evaluating, would start the
//! after-paint chunks' downloads and instantiations on the one main thread the first chart
//! is waiting for.

use std::cell::RefCell;

use leptos::prelude::*;

/// Work waiting for the page's first chart.
type Waiting = Vec<Box<dyn FnOnce()>>;

thread_local! {
    /// `None` once the first chart has been drawn.
    static BEFORE_FIRST_CHART: RefCell<Option<Waiting>> = RefCell::new(Some(Vec::new()));
}

/// Says that the page's first chart has been handed to ECharts, or that it cannot be
/// (ECharts did not load): work that waited for it is scheduled now.
pub fn first_chart_drawn() {
    for work in BEFORE_FIRST_CHART.with(|waiting| waiting.borrow_mut().take()).into_iter().flatten() {
        work();
    }
}

/// Runs `work` now if the first chart has been drawn, else once it has.
fn after_first_chart(work: impl FnOnce() + 'static) {
    let now = BEFORE_FIRST_CHART.with(|waiting| match waiting.borrow_mut().as_mut() {
        Some(queue) => {
            queue.push(Box::new(work));
            None
        }
        None => Some(work),
    });
    if let Some(work) = now {
        work();
    }
}

/// A slot for one pending piece of work.
#[derive(Clone, Copy)]
pub struct AfterPaint(StoredValue<u32>);

impl AfterPaint {
    pub fn new() -> AfterPaint {
        AfterPaint(StoredValue::new(0))
    }

    /// Runs `work` once the next frame (after the first chart's) has been painted, unless
    /// `schedule` or `cancel` is called again before then.
    pub fn schedule(self, work: impl FnOnce() + 'static) {
        let generation = self.cancel();
        after_first_chart(move || {
            request_animation_frame(move || {
                set_timeout(
                    move || {
                        if self.0.try_get_value() == Some(generation) {
                            work();
                        }
                    },
                    std::time::Duration::ZERO,
                );
            })
        });
    }

    /// Drops the pending work, if any; returns the new generation.
    pub fn cancel(self) -> u32 {
        let generation = self.0.get_value().wrapping_add(1);
        self.0.set_value(generation);
        generation
    }
}
