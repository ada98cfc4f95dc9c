//! The strategy flowchart as plain geometry: start → fits? → step → fits? → … with a "yes"
//! branch from every check to the launch of the plan → "monitor & adjust", and a "no fit"
//! end after the last check.
//!
//! [`flow_layout`] places the nodes and routes the edges for a ladder of a given length, in
//! one of two [`Shape`]s: wide (the answer beside the ladder) or narrow (one column, the
//! answer at the bottom, for phones); [`FlowNode::state`] and [`FlowEdge::state`] say how
//! each is drawn for the animation's current step and the ladder's first fit;
//! [`action_text`] words one evaluated step, [`launch_text`] and [`nofit_text`] the ends,
//! and [`plan_summary`] the plan in sentences (what to launch, what was dropped and why, the
//! step time with its communication and what of it overlaps compute). The page turns this
//! into SVG and HTML (`ui::strategy`). Nothing here computes memory: the numbers come from
//! [`crate::plan::escalation::escalate`].

use crate::format::{self, Units};
use crate::import::presets::model_preset;
use crate::plan::escalation::{Escalation, EscalationStep};
use crate::plan::{global_batch, headroom};
use crate::scenario::ModelSpec;

const CHECK_W: f64 = 116.0;
const CHECK_H: f64 = 46.0;
/// Text lines under a step box's title.
pub const MAX_LINES: usize = 4;
/// Height of a step box: a title and [`MAX_LINES`] lines.
const ACTION_H: f64 = 96.0;
const GAP: f64 = 24.0;
const TOP: f64 = 10.0;
const TERMINAL_H: f64 = 66.0;
/// Height of one text line inside a box (the SVG draws lines this far apart; a box's title
/// sits 23 units below its top, its first line 18 below the title).
pub const LINE_HEIGHT: f64 = 16.0;

/// How the flowchart is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The answer (launch, monitor) beside the ladder: 700 units wide.
    Wide,
    /// One column with the answer under the no-fit end: 360 units wide, for phones.
    Narrow,
}

impl Shape {
    /// Width of the drawing, in SVG user units (pixels at scale 1).
    pub fn width(self) -> f64 {
        match self {
            Shape::Wide => 700.0,
            Shape::Narrow => 360.0,
        }
    }

    /// Centre of the ladder column.
    fn column_x(self) -> f64 {
        match self {
            Shape::Wide => 195.0,
            Shape::Narrow => 172.0,
        }
    }

    /// Width of the step boxes (and, when narrow, of the terminals).
    fn action_w(self) -> f64 {
        match self {
            Shape::Wide => 350.0,
            Shape::Narrow => 334.0,
        }
    }

    /// Where the "yes" branches run down to the launch.
    fn bus_x(self) -> f64 {
        match self {
            Shape::Wide => 420.0,
            Shape::Narrow => 350.0,
        }
    }

    /// Characters per text line inside a step box (12 px text, measured on the widest
    /// system sans fonts).
    pub fn wrap(self) -> usize {
        match self {
            Shape::Wide => 50,
            Shape::Narrow => 46,
        }
    }
}

/// Where the wide shape puts the launch and monitor nodes.
const TERMINAL_X: f64 = 440.0;
const TERMINAL_W: f64 = 256.0;

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// The scenario as entered (escalation step 0).
    Start,
    /// One ladder step (escalation step `n ≥ 1`).
    Action,
    /// The "fits?" diamond after escalation step `n`.
    Check,
    /// "Distributed launch", reached from the first check that says yes.
    Launch,
    /// "Monitor & adjust", after the launch.
    Monitor,
    /// The end when no step makes the run fit.
    NoFit,
}

/// How a node or edge is drawn at one moment of the animation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// On the path, not reached yet.
    Pending,
    /// On the path, already passed.
    Visited,
    /// The step shown right now.
    Current,
    /// Not on the path: after the first fit, or the branch not taken.
    Off,
}

impl State {
    /// CSS class of the state.
    pub fn class(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Visited => "visited",
            State::Current => "current",
            State::Off => "off",
        }
    }
}

/// One box or diamond; `x`, `y` is the top-left corner.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowNode {
    pub id: String,
    pub kind: NodeKind,
    /// Escalation step the node belongs to (0 = start); for the terminal nodes, the last step.
    pub step: usize,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl FlowNode {
    pub fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }

    pub fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }

    /// The four corners of a diamond, as an SVG `points` attribute.
    pub fn diamond_points(&self) -> String {
        let (cx, cy) = (self.cx(), self.cy());
        format!("{cx},{} {},{cy} {cx},{} {},{cy}", self.y, self.x + self.w, self.y + self.h, self.x)
    }

    /// How the node is drawn when the animation shows escalation step `current` of a
    /// ladder whose steps are `0..=last` and which first fits at `first_fit`.
    pub fn state(&self, current: usize, first_fit: Option<usize>, last: usize) -> State {
        match self.kind {
            NodeKind::Start | NodeKind::Action | NodeKind::Check => {
                if first_fit.is_some_and(|f| self.step > f) {
                    State::Off
                } else if self.step == current {
                    State::Current
                } else if self.step < current {
                    State::Visited
                } else {
                    State::Pending
                }
            }
            NodeKind::Launch | NodeKind::Monitor => match first_fit {
                None => State::Off,
                Some(f) if current >= f => State::Visited,
                Some(_) => State::Pending,
            },
            NodeKind::NoFit => match first_fit {
                Some(_) => State::Off,
                None if current >= last => State::Visited,
                None => State::Pending,
            },
        }
    }
}

/// Which way an edge leaves a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// Action (or start) into its check, and launch into monitor.
    Next,
    /// A check's "no" branch, down to the next step (or the no-fit end).
    No,
    /// A check's "yes" branch, to the launch.
    Yes,
}

/// A polyline with an arrow at its end.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowEdge {
    pub id: String,
    pub kind: EdgeKind,
    /// The check (or step) it leaves from.
    pub from_step: usize,
    /// `from`/`to` node ids.
    pub from: String,
    pub to: String,
    pub points: Vec<(f64, f64)>,
    /// "yes" / "no" and where to write it.
    pub label: Option<(&'static str, f64, f64)>,
}

impl FlowEdge {
    /// The polyline as an SVG `points` attribute.
    pub fn points_attr(&self) -> String {
        self.points.iter().map(|(x, y)| format!("{x},{y}")).collect::<Vec<_>>().join(" ")
    }

    /// How the edge is drawn at `current` (see [`FlowNode::state`]).
    pub fn state(&self, current: usize, first_fit: Option<usize>, last: usize) -> State {
        let k = self.from_step;
        // The step at which the edge is walked, if it is on the taken path at all.
        let walked_at = match self.kind {
            EdgeKind::Next if self.to == "monitor" => first_fit,
            EdgeKind::Next => (first_fit.is_none_or(|f| k <= f)).then_some(k),
            EdgeKind::Yes => (first_fit == Some(k)).then_some(k),
            EdgeKind::No if self.to == "nofit" => first_fit.is_none().then_some(last),
            EdgeKind::No => (first_fit.is_none_or(|f| k < f)).then_some(k + 1),
        };
        match walked_at {
            None => State::Off,
            Some(w) if w <= current => State::Visited,
            Some(_) => State::Pending,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowLayout {
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<FlowNode>,
    pub edges: Vec<FlowEdge>,
}

impl FlowLayout {
    pub fn node(&self, id: &str) -> Option<&FlowNode> {
        self.nodes.iter().find(|n| n.id == id)
    }
}

/// Node id of escalation step `k` (`step-0` is the start).
pub fn step_id(k: usize) -> String {
    format!("step-{k}")
}

/// Node id of the check after escalation step `k`.
pub fn check_id(k: usize) -> String {
    format!("check-{k}")
}

/// Places the flowchart for an escalation of `steps` entries (the start plus the ladder;
/// at least 1) in `shape`.
pub fn flow_layout(steps: usize, shape: Shape) -> FlowLayout {
    let steps = steps.max(1);
    let last = steps - 1;
    let mut nodes = Vec::with_capacity(2 * steps + 3);
    let mut edges = Vec::with_capacity(3 * steps + 2);
    let mut y = TOP;
    let column_x = shape.column_x();
    let action_w = shape.action_w();
    let column = |w: f64| column_x - w / 2.0;
    for k in 0..steps {
        let (kind, h) = (if k == 0 { NodeKind::Start } else { NodeKind::Action }, ACTION_H);
        nodes.push(FlowNode { id: step_id(k), kind, step: k, x: column(action_w), y, w: action_w, h });
        let bottom = y + h;
        y = bottom + GAP;
        let check = FlowNode { id: check_id(k), kind: NodeKind::Check, step: k, x: column(CHECK_W), y, w: CHECK_W, h: CHECK_H };
        edges.push(FlowEdge {
            id: format!("edge-step-{k}"),
            kind: EdgeKind::Next,
            from_step: k,
            from: step_id(k),
            to: check_id(k),
            points: vec![(column_x, bottom), (column_x, check.y)],
            label: None,
        });
        y += CHECK_H + GAP;
        let next_to = if k == last { "nofit".to_string() } else { step_id(k + 1) };
        edges.push(FlowEdge {
            id: format!("edge-no-{k}"),
            kind: EdgeKind::No,
            from_step: k,
            from: check_id(k),
            to: next_to,
            points: vec![(column_x, check.y + CHECK_H), (column_x, y)],
            label: Some(("no", column_x + 8.0, check.y + CHECK_H + 15.0)),
        });
        nodes.push(check);
    }
    let nofit = FlowNode { id: "nofit".into(), kind: NodeKind::NoFit, step: last, x: column(action_w), y, w: action_w, h: TERMINAL_H };
    let (launch_x, launch_y, terminal_w) = match shape {
        Shape::Wide => {
            let last_check_cy = nodes.iter().find(|n| n.id == check_id(last)).map(FlowNode::cy).unwrap_or(y);
            (TERMINAL_X, last_check_cy - TERMINAL_H / 2.0, TERMINAL_W)
        }
        Shape::Narrow => (column(action_w), nofit.y + nofit.h + GAP, action_w),
    };
    let launch = FlowNode { id: "launch".into(), kind: NodeKind::Launch, step: last, x: launch_x, y: launch_y, w: terminal_w, h: TERMINAL_H };
    let monitor = FlowNode { id: "monitor".into(), kind: NodeKind::Monitor, step: last, x: launch_x, y: launch.y + TERMINAL_H + GAP, w: terminal_w, h: TERMINAL_H };
    // The "yes" branches enter the launch from the side that faces the bus.
    let launch_entry = if shape == Shape::Wide { launch.x } else { launch.x + launch.w };
    for k in 0..steps {
        let cy = nodes.iter().find(|n| n.id == check_id(k)).map(FlowNode::cy).unwrap_or(0.0);
        let right = column_x + CHECK_W / 2.0;
        let points = if (cy - launch.cy()).abs() < 0.5 {
            vec![(right, cy), (launch_entry, cy)]
        } else {
            vec![(right, cy), (shape.bus_x(), cy), (shape.bus_x(), launch.cy()), (launch_entry, launch.cy())]
        };
        edges.push(FlowEdge {
            id: format!("edge-yes-{k}"),
            kind: EdgeKind::Yes,
            from_step: k,
            from: check_id(k),
            to: "launch".into(),
            points,
            label: Some(("yes", right + 6.0, cy - 6.0)),
        });
    }
    edges.push(FlowEdge {
        id: "edge-launch".into(),
        kind: EdgeKind::Next,
        from_step: last,
        from: "launch".into(),
        to: "monitor".into(),
        points: vec![(launch.cx(), launch.y + TERMINAL_H), (monitor.cx(), monitor.y)],
        label: None,
    });
    let height = (nofit.y + nofit.h).max(monitor.y + monitor.h) + TOP;
    nodes.push(nofit);
    nodes.push(launch);
    nodes.push(monitor);
    FlowLayout { width: shape.width(), height, nodes, edges }
}

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
/// start), for a box of `shape`: per-GPU total and change, cost, and the note (why, when
/// the step did nothing).
pub fn action_text(step: &EscalationStep, previous: Option<&EscalationStep>, units: Units, shape: Shape) -> ActionText {
    let total = format::bytes(step.breakdown.total, units);
    let capacity = format::bytes(step.breakdown.capacity, units);
    let costs = cost_line(step);
    let (width, budget) = (shape.wrap(), MAX_LINES);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::escalation::{escalate, Step};
    use crate::scenario::{DeviceSpec, Scenario};

    const SHAPES: [Shape; 2] = [Shape::Wide, Shape::Narrow];

    fn overlaps(a: &FlowNode, b: &FlowNode) -> bool {
        a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
    }

    /// The user study's case: Llama-3-8B, sequence 2048, 8 × A100 80GB (dp 8).
    fn llama3_8b_on_8_a100() -> Scenario {
        let mut s = Scenario::default();
        s.training.seq_len = 2048;
        s.parallel.dp = 8;
        s.device = DeviceSpec::preset("a100-80gb");
        s
    }

    #[test]
    fn one_action_and_one_check_per_step_plus_three_ends() {
        for shape in SHAPES {
            for steps in 1..8 {
                let l = flow_layout(steps, shape);
                assert_eq!(l.nodes.len(), 2 * steps + 3);
                assert_eq!(l.nodes.iter().filter(|n| n.kind == NodeKind::Check).count(), steps);
                assert_eq!(l.nodes.iter().filter(|n| n.kind == NodeKind::Action).count(), steps - 1);
                // next + no + yes per step, and launch → monitor.
                assert_eq!(l.edges.len(), 3 * steps + 1);
                assert!(l.node("launch").is_some() && l.node("monitor").is_some() && l.node("nofit").is_some());
            }
        }
    }

    #[test]
    fn nodes_do_not_overlap_and_stay_inside_the_drawing() {
        for shape in SHAPES {
            let l = flow_layout(7, shape);
            assert_eq!(l.width, shape.width());
            for (i, a) in l.nodes.iter().enumerate() {
                assert!(a.x >= 0.0 && a.y >= 0.0 && a.x + a.w <= l.width && a.y + a.h <= l.height, "{shape:?}: {} outside", a.id);
                for b in &l.nodes[i + 1..] {
                    assert!(!overlaps(a, b), "{shape:?}: {} overlaps {}", a.id, b.id);
                }
            }
        }
    }

    /// On a phone the answer comes last, in the one column, and the "yes" bus runs to the
    /// right of every box; the drawing is 360 units wide, so a 390 px screen shows it whole.
    #[test]
    fn the_narrow_shape_is_one_column_with_the_answer_at_the_bottom() {
        let l = flow_layout(6, Shape::Narrow);
        assert!(l.width <= 360.0);
        let nofit = l.node("nofit").unwrap();
        let launch = l.node("launch").unwrap();
        let monitor = l.node("monitor").unwrap();
        assert!(launch.y > nofit.y + nofit.h && monitor.y > launch.y + launch.h);
        assert_eq!(launch.cx(), l.node("step-0").unwrap().cx());
        let right = l.nodes.iter().map(|n| n.x + n.w).fold(0.0, f64::max);
        for e in l.edges.iter().filter(|e| e.kind == EdgeKind::Yes && e.points.len() > 2) {
            assert!(e.points[1].0 > right, "{} runs through a box", e.id);
        }
        // The wide shape puts the answer beside the ladder instead.
        let wide = flow_layout(6, Shape::Wide);
        assert!(wide.node("launch").unwrap().x > wide.node("step-0").unwrap().x + wide.node("step-0").unwrap().w);
    }

    #[test]
    fn edges_join_the_nodes_they_name() {
        for shape in SHAPES {
            let l = flow_layout(4, shape);
            for e in &l.edges {
                let from = l.node(&e.from).expect("from exists");
                let to = l.node(&e.to).expect("to exists");
                let (sx, sy) = e.points[0];
                let (ex, ey) = *e.points.last().expect("two points");
                let on_border = |n: &FlowNode, x: f64, y: f64| x >= n.x - 0.5 && x <= n.x + n.w + 0.5 && y >= n.y - 0.5 && y <= n.y + n.h + 0.5;
                assert!(on_border(from, sx, sy), "{shape:?}: {} starts off {}", e.id, e.from);
                assert!(on_border(to, ex, ey), "{shape:?}: {} ends off {}", e.id, e.to);
                // Orthogonal routing: every segment is horizontal or vertical.
                assert!(e.points.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1), "{} has a diagonal", e.id);
            }
        }
    }

    #[test]
    fn path_states_follow_the_animation_and_stop_at_the_first_fit() {
        let l = flow_layout(6, Shape::Wide);
        let state = |id: &str, current, first_fit| l.node(id).unwrap().state(current, first_fit, 5);
        let edge = |id: &str, current, first_fit| l.edges.iter().find(|e| e.id == id).unwrap().state(current, first_fit, 5);
        // First fit at step 3, animation at step 2.
        assert_eq!(state("step-0", 2, Some(3)), State::Visited);
        assert_eq!(state("step-2", 2, Some(3)), State::Current);
        assert_eq!(state("check-2", 2, Some(3)), State::Current);
        assert_eq!(state("step-3", 2, Some(3)), State::Pending);
        assert_eq!(state("step-4", 2, Some(3)), State::Off);
        assert_eq!(state("launch", 2, Some(3)), State::Pending);
        assert_eq!(state("launch", 3, Some(3)), State::Visited);
        assert_eq!(state("nofit", 5, Some(3)), State::Off);
        assert_eq!(edge("edge-no-1", 2, Some(3)), State::Visited);
        assert_eq!(edge("edge-no-2", 2, Some(3)), State::Pending);
        assert_eq!(edge("edge-no-3", 5, Some(3)), State::Off);
        assert_eq!(edge("edge-yes-3", 3, Some(3)), State::Visited);
        assert_eq!(edge("edge-yes-2", 3, Some(3)), State::Off);
        assert_eq!(edge("edge-launch", 3, Some(3)), State::Visited);
        // Never fits: the path runs to the no-fit end and the launch is off.
        assert_eq!(state("launch", 5, None), State::Off);
        assert_eq!(state("nofit", 5, None), State::Visited);
        assert_eq!(edge("edge-no-5", 5, None), State::Visited);
        assert_eq!(edge("edge-no-5", 4, None), State::Pending);
    }

    #[test]
    fn action_text_shows_total_delta_costs_and_notes() {
        let e = escalate(&Scenario::default(), &Step::DEFAULT_LADDER, 8);
        for shape in SHAPES {
            let start = action_text(&e.steps[0], None, Units::Gib, shape);
            assert!(start.title.starts_with("Start: "), "{}", start.title);
            assert!(start.lines[0].contains(" per GPU of "), "{:?}", start.lines);
            // Mixed precision is already on in the default scenario: the note says so.
            let mixed = action_text(&e.steps[1], Some(&e.steps[0]), Units::Gib, shape);
            assert!(mixed.lines.iter().any(|l| l.contains("already bf16 mixed (AMP)")), "{:?}", mixed.lines);
            assert!(mixed.lines[0].contains("unchanged"));
            // Checkpointing shrinks the total and recomputes the blocks' forward: 31% of Llama-3-8B's
            // step at 4096 tokens (its embedding and head run once; escalation.rs derives it).
            // The micro-batch is already 1: nothing to trade for accumulation.
            let micro = action_text(&e.steps[2], Some(&e.steps[1]), Units::Gib, shape);
            assert!(micro.lines.iter().any(|l| l.contains("micro-batch already 1")), "{:?}", micro.lines);
            let ckpt = action_text(&e.steps[3], Some(&e.steps[2]), Units::Gib, shape);
            assert!(ckpt.lines[0].contains("(−"), "{:?}", ckpt.lines);
            assert!(ckpt.lines[1].contains("recompute +31%"), "{:?}", ckpt.lines);
            // ZeRO-2 on 8 GPUs: its gradient traffic hides behind backward.
            let zero = action_text(&e.steps[4], Some(&e.steps[3]), Units::Gib, shape);
            assert!(zero.lines.iter().any(|l| l.contains("overlapped")), "{:?}", zero.lines);
            // The pipeline's few stage-boundary bytes take less than a millisecond.
            let pp = action_text(&e.steps[6], Some(&e.steps[5]), Units::Gib, shape);
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
