//! The strategy ladder in words: one evaluated step as the flowchart's box says it
//! ([`action_text`]: the per-GPU total and its change, the step's cost, its note), the two
//! ends ([`launch_text`], [`nofit_text`]) and the plan in sentences ([`plan_summary`]: what to
//! launch, what was dropped and why, the step time with its communication and what of it
//! overlaps compute). The flowchart's geometry is `chart::flow`; the numbers come from
//! [`crate::plan::escalation::escalate`]. Read by the Strategy view, the verdict's cheapest
//! fix and the Markdown report.

use crate::format::{self, Units};
use crate::import::presets::model_preset;
use crate::plan::escalation::{Escalation, EscalationStep};
use crate::plan::{global_batch, headroom};
use crate::scenario::ModelSpec;

/// Text lines under a step box's title.
pub const MAX_LINES: usize = 4;

/// The words inside one start or action node.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionText {
    pub title: String,
    /// Up to three short lines under the title.
    pub lines: Vec<String>,
    /// The full note and numbers, for the hover tooltip.
    pub tooltip: String,
}

/// Lines of at most `width` characters, breaking at spaces; at most `max_lines`, the last
/// one ending in "…" when text was cut.
pub fn wrap(text: &str, width: usize, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(l) = lines.last_mut() {
            let keep: String = l.chars().take(width.saturating_sub(1)).collect();
            *l = format!("{}…", keep.trim_end());
        }
    }
    lines
}

/// Signed difference of two byte counts, `−12.3 GiB` / `+1.20 GiB` / `±0`.
pub fn delta(before: u64, after: u64, units: Units) -> String {
    match after.cmp(&before) {
        std::cmp::Ordering::Less => format!("−{}", format::bytes(before - after, units)),
        std::cmp::Ordering::Greater => format!("+{}", format::bytes(after - before, units)),
        std::cmp::Ordering::Equal => "±0".into(),
    }
}

/// Communication per step, short: bytes, the time on the critical path and the time hidden
/// behind the backward pass; `None` without communication.
pub fn communication_text(step: &EscalationStep) -> Option<String> {
    let c = &step.costs;
    if c.communication_bytes <= 0.0 {
        return None;
    }
    let bytes = format::bytes(c.communication_bytes as u64, Units::Gb);
    let exposed = short_seconds(c.communication_seconds);
    Some(match (c.communication_seconds > 0.0, c.overlapped_seconds > 0.0) {
        (true, true) => format!("comm {bytes}, {exposed} + {} overlapped", short_seconds(c.overlapped_seconds)),
        (false, true) => format!("comm {bytes}, {} overlapped", short_seconds(c.overlapped_seconds)),
        _ => format!("comm {bytes}, {exposed}"),
    })
}

/// [`format::seconds`], with "<1 ms" for a time that would round to "0 ms".
fn short_seconds(s: f64) -> String {
    if s > 0.0 && s < 0.0005 {
        "<1 ms".into()
    } else {
        format::seconds(s)
    }
}

/// One line of what a scenario costs: recomputation, communication (GB per step, exposed
/// and overlapped seconds), pipeline bubble; only the parts that are not zero.
pub fn cost_line(step: &EscalationStep) -> String {
    let c = &step.costs;
    let mut parts = Vec::new();
    if c.recompute_fraction > 0.0005 {
        parts.push(format!("recompute +{:.0}%", c.recompute_fraction * 100.0));
    }
    parts.extend(communication_text(step));
    if c.bubble_fraction > 0.0 {
        parts.push(format!("bubble {:.0}%", c.bubble_fraction * 100.0));
    }
    if parts.is_empty() {
        "no recompute, no communication".into()
    } else {
        parts.join(" · ")
    }
}

/// The text of escalation step `step`, `previous` being the step before it (none for the
/// start), for a box `width` characters wide (`chart::flow::Shape::wrap`): per-GPU total and change, cost, and the note (why, when
/// the step did nothing).
pub fn action_text(step: &EscalationStep, previous: Option<&EscalationStep>, units: Units, width: usize) -> ActionText {
    let total = format::bytes(step.breakdown.total, units);
    let capacity = format::bytes(step.breakdown.capacity, units);
    let costs = cost_line(step);
    let budget = MAX_LINES;
    let mut lines = Vec::new();
    let title = match previous {
        None => {
            lines.push(format!("{total} per GPU of {capacity}"));
            let model = match &step.scenario.model {
                ModelSpec::Preset(id) => model_preset(id).map_or_else(|| id.clone(), |p| p.name.to_string()),
                other => other.label(),
            };
            format!("Start: {model}")
        }
        Some(prev) if step.applied => {
            lines.push(format!("{total} per GPU ({})", delta(prev.breakdown.total, step.breakdown.total, units)));
            step.name.clone()
        }
        Some(_) => {
            lines.push(format!("{total} per GPU (unchanged)"));
            step.name.clone()
        }
    };
    if step.applied || previous.is_none() {
        // The cost may take two lines; the note gets what is left.
        lines.extend(wrap(&costs, width, budget - 2));
        let room = budget - lines.len();
        lines.extend(wrap(&step.note, width, room));
    } else {
        lines.extend(wrap(&format!("skipped: {}", step.note), width, budget - 1));
    }
    let tooltip = format!("{title}\n{}\n{costs}\nstep time {}", step.note, format::seconds(step.costs.step_seconds));
    ActionText { title, lines, tooltip }
}

/// "1 GPU" / "8 GPUs".
fn gpus_text(n: u64) -> String {
    format!("{n} GPU{}", if n == 1 { "" } else { "s" })
}

/// "ZeRO-2", or "no ZeRO".
fn zero_text(stage: u8) -> String {
    if stage == 0 {
        "no ZeRO".into()
    } else {
        format!("ZeRO-{stage}")
    }
}

/// Title and lines of the launch node: the plan's GPUs, layout, step time and memory.
pub fn launch_text(e: &Escalation, units: Units) -> (String, Vec<String>) {
    match &e.plan {
        Some(plan) => {
            let r = &plan.result;
            let p = &r.scenario.parallel;
            let lines = vec![
                format!("dp {} · tp {} · pp {} · cp {} · {}", p.dp, p.tp, p.pp, p.cp, zero_text(p.zero.stage())),
                format!("{}/step · {} of {}", format::seconds(r.costs.step_seconds), format::bytes(r.breakdown.total, units), format::bytes(r.breakdown.capacity, units)),
            ];
            (format!("Launch on {}", gpus_text(p.world_size())), lines)
        }
        None => ("Launch".into(), vec!["not reached: nothing fits".into()]),
    }
}

/// Title and lines of the no-fit end, naming the GPU budget.
pub fn nofit_text(e: &Escalation) -> (String, Vec<String>) {
    ("Still does not fit".into(), vec![format!("raise the GPU budget ({}), pick a bigger", gpus_text(e.gpus)), "device, or add steps to the ladder".into()])
}

/// The plan in sentences, for the summary beside the flowchart.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanSummary {
    /// What to launch, in one line.
    pub headline: String,
    /// Step time and memory, what was dropped, communication, batch.
    pub lines: Vec<String>,
    /// Each setting the plan changes from the scenario as entered ("micro-batch 4 → 1,
    /// accumulation 1 → 4, global batch kept at 32, ZeRO off → 2"); empty without a plan.
    pub changes: String,
    /// Whether there is a plan to apply.
    pub fits: bool,
}

/// What to launch and why: the plan's steps, GPUs, step time and memory; each dropped step
/// with the time it saves; the communication and what of it overlaps compute; the global
/// batch; and each setting it changes. Without a plan, what to change.
pub fn plan_summary(e: &Escalation, units: Units) -> PlanSummary {
    let Some(plan) = &e.plan else {
        return PlanSummary {
            headline: format!("Nothing in this ladder fits on {}", gpus_text(e.gpus)),
            lines: vec!["Raise the GPU budget, pick a bigger device, or add steps (8-bit optimizer, CPU offload, LoRA).".into()],
            changes: String::new(),
            fits: false,
        };
    };
    let r = &plan.result;
    let p = &r.scenario.parallel;
    let t = &r.scenario.training;
    let steps = if plan.kept.is_empty() { "your scenario as entered".to_string() } else { plan.kept.iter().map(|s| s.label()).collect::<Vec<_>>().join(" + ") };
    let headline = format!("Plan: {steps} on {}", gpus_text(p.world_size()));
    let mut lines = vec![format!(
        "{} per step · {} of {} per GPU ({} free)",
        format::seconds(r.costs.step_seconds),
        format::bytes(r.breakdown.total, units),
        format::bytes(r.breakdown.capacity, units),
        format::bytes(headroom(&r.breakdown), units)
    )];
    if !plan.dropped.is_empty() {
        let at_fit = e.first_fit.and_then(|f| e.steps.get(f));
        let names = plan.dropped.iter().map(|s| s.label()).collect::<Vec<_>>().join(", ");
        let after = plan.kept.last().map_or("the plan", |s| s.label());
        let time = at_fit.map(|f| format!(" ({} → {} per step)", format::seconds(f.costs.step_seconds), format::seconds(r.costs.step_seconds))).unwrap_or_default();
        lines.push(format!("Dropped: {names}, not needed once {after} is on{time}."));
    }
    lines.push(match communication_text(r) {
        None => "No communication between GPUs.".into(),
        Some(_) if r.costs.communication_seconds <= 0.0 => format!(
            "Communication {}/step: {}, all overlapped with the backward pass.",
            format::bytes(r.costs.communication_bytes as u64, Units::Gb),
            short_seconds(r.costs.overlapped_seconds)
        ),
        Some(_) => format!(
            "Communication {}/step: {} on the critical path, {} overlapped with the backward pass.",
            format::bytes(r.costs.communication_bytes as u64, Units::Gb),
            short_seconds(r.costs.communication_seconds),
            short_seconds(r.costs.overlapped_seconds)
        ),
    });
    let mut batch = format!("Global batch {} sequences: micro-batch {} × accumulation {} × dp {}", global_batch(&r.scenario), t.micro_batch, t.grad_accum, p.dp);
    if let Some(at_fit) = e.first_fit.and_then(|f| e.steps.get(f)).filter(|f| f.scenario.training.micro_batch != t.micro_batch) {
        batch.push_str(&format!(" (micro-batch {} → {} to fit without the dropped steps)", at_fit.scenario.training.micro_batch, t.micro_batch));
    }
    batch.push('.');
    lines.push(batch);
    let changes = e.steps.first().map(|start| crate::plan::changes::changes_text(&start.scenario, &r.scenario)).unwrap_or_default();
    PlanSummary { headline, lines, changes, fits: true }
}

/// The verdict's cheapest fix: whether the ladder's plan fits on the scenario's own GPUs,
/// its headline and each change it makes with its first line (or, without a plan, what to
/// change).
#[derive(Clone, Debug, PartialEq)]
pub struct CheapestFix {
    pub fits: bool,
    pub headline: String,
    pub detail: String,
}

/// The cheapest fix of `s`: the ladder for its own GPUs ([`Step::ladder_for`]) escalated and
/// summarised.
pub fn cheapest_fix(s: &crate::scenario::Scenario, units: Units) -> CheapestFix {
    let gpus = s.parallel.world_size().max(1);
    let summary = plan_summary(&crate::plan::escalation::escalate(s, crate::plan::escalation::Step::ladder_for(s, gpus), gpus), units);
    // A plan names each change it makes (the batch above all), then its time and memory.
    let detail = if summary.fits { format!("{}; {}", summary.changes, summary.lines.first().cloned().unwrap_or_default()) } else { summary.lines.join(" ") };
    let headline = summary.headline.strip_prefix("Plan: ").unwrap_or(&summary.headline).to_string();
    CheapestFix { fits: summary.fits, headline, detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::flow::Shape;
    use crate::plan::escalation::{escalate, Step};
    use crate::scenario::{DeviceSpec, Scenario};

    const SHAPES: [Shape; 2] = [Shape::Wide, Shape::Narrow];

    /// The user study's case: Llama-3-8B, sequence 2048, 8 × A100 80GB (dp 8).
    fn llama3_8b_on_8_a100() -> Scenario {
        let mut s = Scenario::default();
        s.training.seq_len = 2048;
        s.parallel.dp = 8;
        s.device = DeviceSpec::preset("a100-80gb");
        s
    }
    #[test]
    fn action_text_shows_total_delta_costs_and_notes() {
        let e = escalate(&Scenario::default(), &Step::DEFAULT_LADDER, 8);
        for shape in SHAPES {
            let start = action_text(&e.steps[0], None, Units::Gib, shape.wrap());
            assert!(start.title.starts_with("Start: "), "{}", start.title);
            assert!(start.lines[0].contains(" per GPU of "), "{:?}", start.lines);
            // Mixed precision is already on in the default scenario: the note says so.
            let mixed = action_text(&e.steps[1], Some(&e.steps[0]), Units::Gib, shape.wrap());
            assert!(mixed.lines.iter().any(|l| l.contains("already bf16 mixed (AMP)")), "{:?}", mixed.lines);
            assert!(mixed.lines[0].contains("unchanged"));
            // Checkpointing shrinks the total and recomputes the blocks' forward: 31% of Llama-3-8B's
            // step at 4096 tokens (its embedding and head run once; escalation.rs derives it).
            // The micro-batch is already 1: nothing to trade for accumulation.
            let micro = action_text(&e.steps[2], Some(&e.steps[1]), Units::Gib, shape.wrap());
            assert!(micro.lines.iter().any(|l| l.contains("micro-batch already 1")), "{:?}", micro.lines);
            let ckpt = action_text(&e.steps[3], Some(&e.steps[2]), Units::Gib, shape.wrap());
            assert!(ckpt.lines[0].contains("(−"), "{:?}", ckpt.lines);
            assert!(ckpt.lines[1].contains("recompute +31%"), "{:?}", ckpt.lines);
            // ZeRO-2 on 8 GPUs: its gradient traffic hides behind backward.
            let zero = action_text(&e.steps[4], Some(&e.steps[3]), Units::Gib, shape.wrap());
            assert!(zero.lines.iter().any(|l| l.contains("overlapped")), "{:?}", zero.lines);
            // The pipeline's few stage-boundary bytes take less than a millisecond.
            let pp = action_text(&e.steps[6], Some(&e.steps[5]), Units::Gib, shape.wrap());
            assert!(pp.lines.iter().any(|l| l.contains("<1 ms + ")), "{:?}", pp.lines);
            for t in [start, mixed, micro, ckpt, zero, pp] {
                assert!(t.lines.len() <= MAX_LINES, "{shape:?}: {:?}", t.lines);
                assert!(t.lines.iter().all(|l| l.chars().count() <= shape.wrap() + 4), "{shape:?}: {:?}", t.lines);
            }
        }
    }

    /// The study's case on the page: the plan is ZeRO-2 on the 8 GPUs without
    /// checkpointing, 765 ms per step instead of 1.02 s, its gradient traffic overlapped.
    #[test]
    fn the_plan_summary_says_what_to_launch_and_what_was_dropped() {
        let e = escalate(&llama3_8b_on_8_a100(), &Step::DEFAULT_LADDER, 8);
        let p = plan_summary(&e, Units::Gib);
        assert!(p.fits);
        assert_eq!(p.headline, "Plan: ZeRO-2 on 8 GPUs");
        assert!(p.lines[0].starts_with("765 ms per step · 65.2 GiB of 80.0 GiB per GPU"), "{:?}", p.lines);
        assert_eq!(p.lines[1], "Dropped: Activation checkpointing, not needed once ZeRO-2 is on (1.00 s → 765 ms per step).");
        assert!(p.lines[2].starts_with("Communication 28.1 GB/step: 94 ms, all overlapped"), "{:?}", p.lines);
        assert_eq!(p.lines[3], "Global batch 8 sequences: micro-batch 1 × accumulation 1 × dp 8.");
        let (title, lines) = launch_text(&e, Units::Gib);
        assert_eq!(title, "Launch on 8 GPUs");
        assert_eq!(lines[0], "dp 8 · tp 1 · pp 1 · cp 1 · ZeRO-2");
        assert!(lines[1].starts_with("765 ms/step"), "{lines:?}");
    }

    #[test]
    fn the_plan_summary_names_a_smaller_micro_batch() {
        let mut s = llama3_8b_on_8_a100();
        s.training.micro_batch = 4;
        let p = plan_summary(&escalate(&s, &Step::DEFAULT_LADDER, 8), Units::Gib);
        assert_eq!(p.headline, "Plan: Smaller micro-batch + ZeRO-2 on 8 GPUs");
        assert_eq!(p.lines.last().unwrap(), "Global batch 32 sequences: micro-batch 1 × accumulation 4 × dp 8.");
        assert_eq!(p.changes, "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2");
        // Without the micro-batch step in the ladder, the plan still trades the micro-batch
        // (as the search would) and says so.
        let ladder = [Step::ActivationCheckpointing, Step::Zero2];
        let p = plan_summary(&escalate(&s, &ladder, 8), Units::Gib);
        assert_eq!(p.lines.last().unwrap(), "Global batch 32 sequences: micro-batch 1 × accumulation 4 × dp 8 (micro-batch 4 → 1 to fit without the dropped steps).");
        assert_eq!(p.changes, "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2");
    }

    /// One GPU: nothing distributed fits, and the ends name the budget instead of 8 GPUs.
    #[test]
    fn without_a_plan_the_ends_name_the_budget() {
        let e = escalate(&Scenario::default(), &Step::DEFAULT_LADDER, 1);
        assert!(e.plan.is_none());
        let p = plan_summary(&e, Units::Gib);
        assert!(!p.fits);
        assert_eq!(p.headline, "Nothing in this ladder fits on 1 GPU");
        assert_eq!(launch_text(&e, Units::Gib).1, vec!["not reached: nothing fits".to_string()]);
        assert!(nofit_text(&e).1[0].contains("GPU budget (1 GPU)"));
        // A scenario that fits as entered launches as entered, on its one GPU.
        let gpt2 = Scenario { model: crate::scenario::ModelSpec::Preset("gpt2".into()), ..Scenario::default() };
        let e = escalate(&gpt2, &Step::DEFAULT_LADDER, 1);
        assert_eq!(plan_summary(&e, Units::Gib).headline, "Plan: your scenario as entered on 1 GPU");
        assert_eq!(launch_text(&e, Units::Gib).0, "Launch on 1 GPU");
        assert_eq!(plan_summary(&e, Units::Gib).lines[1], "No communication between GPUs.");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_marks_the_cut() {
        assert_eq!(wrap("a bb ccc", 4, 3), vec!["a bb", "ccc"]);
        assert_eq!(wrap("one two three four", 7, 2), vec!["one two", "three…"]);
        assert!(wrap("", 10, 2).is_empty());
        assert!(wrap("anything", 10, 0).is_empty());
        assert_eq!(delta(10, 10, Units::Gib), "±0");
    }
}
