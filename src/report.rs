//! The breakdown as a Markdown table, for documentation: printed by
//! `headroom estimate --format markdown` and exported by the page.

use crate::format::{bytes, count, seconds, Units};
use crate::model::breakdown::{Breakdown, Component};
use crate::scenario::Scenario;

pub fn breakdown_markdown(scenario: &Scenario, b: &Breakdown) -> String {
    let u = Units::Gib;
    let mut out = format!(
        "**{}** · {} parameters · {} GPU(s) · micro-batch {} × {} tokens · {}\n\n| component | per GPU |\n|---|---:|\n",
        scenario.model.label(),
        count(b.param_count),
        b.gpus,
        scenario.training.micro_batch,
        scenario.training.seq_len,
        scenario.training.precision.id(),
    );
    for c in Component::ALL {
        out.push_str(&format!("| {} | {} |\n", c.label(), bytes(b.component(c), u)));
    }
    out.push_str(&format!("| **total** | **{}** |\n| capacity | {} |\n\n", bytes(b.total, u), bytes(b.capacity, u)));
    if b.fits {
        out.push_str(&format!("Fits with {} to spare. ", bytes(b.capacity - b.total, u)));
    } else {
        out.push_str(&format!(
            "Does not fit: {} over capacity (out of memory on Linux; spilled to shared memory it would run about {:.1}× slower). ",
            bytes(b.spill_bytes, u),
            b.step_time.slowdown
        ));
    }
    out.push_str(&format!("Estimated step time {}.\n", seconds(b.step_time.seconds)));
    let (fb, opt) = (&b.phases.forward_backward, &b.phases.optimizer_step);
    if opt.total > 0 {
        out.push_str(&format!(
            "\nPeak per phase: forward + backward {}, optimizer step {} (the table shows the {} phase).\n",
            bytes(fb.total, u),
            bytes(opt.total, u),
            if b.phases.peak_phase == crate::model::breakdown::Phase::OptimizerStep { "optimizer-step" } else { "forward/backward" },
        ));
    }
    for w in &b.warnings {
        out.push_str(&format!("\n> {w}"));
    }
    out
}
