//! The strategy flowchart as plain geometry: start → fits? → step → fits? → … with a "yes"
//! branch from every check to "distributed launch" → "monitor & adjust", and a "no fit"
//! end after the last check.
//!
//! [`flow_layout`] places the nodes and routes the edges for a ladder of a given length;
//! [`FlowNode::state`] and [`FlowEdge::state`] say how each is drawn for the animation's
//! current step and the ladder's first fit; [`action_text`] words one evaluated step. The
//! page turns this into SVG (`ui::strategy::flow_chart`). Nothing here computes memory: the
//! numbers come from [`crate::plan::escalation::escalate`].

use crate::format::{self, Units};
use crate::plan::escalation::EscalationStep;
use crate::import::presets::model_preset;
use crate::scenario::ModelSpec;

/// Width of the drawing, in SVG user units (pixels at scale 1).
pub const WIDTH: f64 = 700.0;
/// Centre of the ladder column.
const COLUMN_X: f64 = 195.0;
const ACTION_W: f64 = 350.0;
const ACTION_H: f64 = 80.0;
const START_H: f64 = 80.0;
const CHECK_W: f64 = 116.0;
const CHECK_H: f64 = 46.0;
const GAP: f64 = 24.0;
const TOP: f64 = 10.0;
/// Where the "yes" branches run down to the launch node.
const BUS_X: f64 = 420.0;
const TERMINAL_X: f64 = 450.0;
const TERMINAL_W: f64 = 246.0;
const TERMINAL_H: f64 = 66.0;

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
/// at least 1).
pub fn flow_layout(steps: usize) -> FlowLayout {
    let steps = steps.max(1);
    let last = steps - 1;
    let mut nodes = Vec::with_capacity(2 * steps + 3);
    let mut edges = Vec::with_capacity(3 * steps + 2);
    let mut y = TOP;
    let column = |w: f64| COLUMN_X - w / 2.0;
    for k in 0..steps {
        let (kind, h) = if k == 0 { (NodeKind::Start, START_H) } else { (NodeKind::Action, ACTION_H) };
        nodes.push(FlowNode { id: step_id(k), kind, step: k, x: column(ACTION_W), y, w: ACTION_W, h });
        let bottom = y + h;
        y = bottom + GAP;
        let check = FlowNode { id: check_id(k), kind: NodeKind::Check, step: k, x: column(CHECK_W), y, w: CHECK_W, h: CHECK_H };
        edges.push(FlowEdge {
            id: format!("edge-step-{k}"),
            kind: EdgeKind::Next,
            from_step: k,
            from: step_id(k),
            to: check_id(k),
            points: vec![(COLUMN_X, bottom), (COLUMN_X, check.y)],
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
            points: vec![(COLUMN_X, check.y + CHECK_H), (COLUMN_X, y)],
            label: Some(("no", COLUMN_X + 8.0, check.y + CHECK_H + 15.0)),
        });
        nodes.push(check);
    }
    let nofit = FlowNode { id: "nofit".into(), kind: NodeKind::NoFit, step: last, x: column(ACTION_W), y, w: ACTION_W, h: TERMINAL_H };
    let last_check_cy = nodes.iter().find(|n| n.id == check_id(last)).map(FlowNode::cy).unwrap_or(y);
    let launch = FlowNode { id: "launch".into(), kind: NodeKind::Launch, step: last, x: TERMINAL_X, y: last_check_cy - TERMINAL_H / 2.0, w: TERMINAL_W, h: TERMINAL_H };
    let monitor = FlowNode { id: "monitor".into(), kind: NodeKind::Monitor, step: last, x: TERMINAL_X, y: launch.y + TERMINAL_H + GAP, w: TERMINAL_W, h: TERMINAL_H };
    for k in 0..steps {
        let cy = nodes.iter().find(|n| n.id == check_id(k)).map(FlowNode::cy).unwrap_or(0.0);
        let right = COLUMN_X + CHECK_W / 2.0;
        let points = if (cy - launch.cy()).abs() < 0.5 {
            vec![(right, cy), (launch.x, cy)]
        } else {
            vec![(right, cy), (BUS_X, cy), (BUS_X, launch.cy()), (launch.x, launch.cy())]
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
    FlowLayout { width: WIDTH, height, nodes, edges }
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

/// One line of what a scenario costs: recomputation, communication (GB per step and
/// exposed seconds), pipeline bubble; only the parts that are not zero.
pub fn cost_line(step: &EscalationStep) -> String {
    let c = &step.costs;
    let mut parts = Vec::new();
    if c.recompute_fraction > 0.0005 {
        parts.push(format!("recompute +{:.0}%", c.recompute_fraction * 100.0));
    }
    if c.communication_bytes > 0.0 {
        parts.push(format!("comm {}/step, {}", format::bytes(c.communication_bytes as u64, Units::Gb), format::seconds(c.communication_seconds)));
    }
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
/// start): per-GPU total and change, cost, and the note when the step did nothing.
pub fn action_text(step: &EscalationStep, previous: Option<&EscalationStep>, units: Units) -> ActionText {
    let total = format::bytes(step.breakdown.total, units);
    let capacity = format::bytes(step.breakdown.capacity, units);
    let costs = cost_line(step);
    let mut lines = Vec::new();
    let title = match previous {
        None => {
            lines.push(format!("{total} per GPU of {capacity}"));
            let model = match &step.scenario.model {
                ModelSpec::Preset(id) => model_preset(id).map_or_else(|| id.clone(), |p| p.name.clone()),
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
        lines.push(costs.clone());
        lines.extend(wrap(&step.note, 56, 1));
    } else {
        lines.extend(wrap(&format!("skipped: {}", step.note), 56, 2));
    }
    let tooltip = format!("{title}\n{}\n{costs}\nstep time {}", step.note, format::seconds(step.costs.step_seconds));
    ActionText { title, lines, tooltip }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::escalation::{escalate, Step};
    use crate::scenario::Scenario;

    fn overlaps(a: &FlowNode, b: &FlowNode) -> bool {
        a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
    }

    #[test]
    fn one_action_and_one_check_per_step_plus_three_ends() {
        for steps in 1..8 {
            let l = flow_layout(steps);
            assert_eq!(l.nodes.len(), 2 * steps + 3);
            assert_eq!(l.nodes.iter().filter(|n| n.kind == NodeKind::Check).count(), steps);
            assert_eq!(l.nodes.iter().filter(|n| n.kind == NodeKind::Action).count(), steps - 1);
            // next + no + yes per step, and launch → monitor.
            assert_eq!(l.edges.len(), 3 * steps + 1);
            assert!(l.node("launch").is_some() && l.node("monitor").is_some() && l.node("nofit").is_some());
        }
    }

    #[test]
    fn nodes_do_not_overlap_and_stay_inside_the_drawing() {
        let l = flow_layout(7);
        for (i, a) in l.nodes.iter().enumerate() {
            assert!(a.x >= 0.0 && a.y >= 0.0 && a.x + a.w <= l.width && a.y + a.h <= l.height, "{} outside", a.id);
            for b in &l.nodes[i + 1..] {
                assert!(!overlaps(a, b), "{} overlaps {}", a.id, b.id);
            }
        }
    }

    #[test]
    fn edges_join_the_nodes_they_name() {
        let l = flow_layout(4);
        for e in &l.edges {
            let from = l.node(&e.from).expect("from exists");
            let to = l.node(&e.to).expect("to exists");
            let (sx, sy) = e.points[0];
            let (ex, ey) = *e.points.last().expect("two points");
            let on_border = |n: &FlowNode, x: f64, y: f64| x >= n.x - 0.5 && x <= n.x + n.w + 0.5 && y >= n.y - 0.5 && y <= n.y + n.h + 0.5;
            assert!(on_border(from, sx, sy), "{} starts off {}", e.id, e.from);
            assert!(on_border(to, ex, ey), "{} ends off {}", e.id, e.to);
            // Orthogonal routing: every segment is horizontal or vertical.
            assert!(e.points.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1), "{} has a diagonal", e.id);
        }
    }

    #[test]
    fn path_states_follow_the_animation_and_stop_at_the_first_fit() {
        let l = flow_layout(6);
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
        let start = action_text(&e.steps[0], None, Units::Gib);
        assert!(start.title.starts_with("Start: "), "{}", start.title);
        assert!(start.lines[0].contains(" per GPU of "), "{:?}", start.lines);
        // Mixed precision is already on in the default scenario: the note says so.
        let mixed = action_text(&e.steps[1], Some(&e.steps[0]), Units::Gib);
        assert!(mixed.lines.iter().any(|l| l.contains("already bf16-mixed")), "{:?}", mixed.lines);
        assert!(mixed.lines[0].contains("unchanged"));
        // Checkpointing shrinks the total and recomputes the blocks' forward: 31% of Llama-3-8B's
        // step at 4096 tokens (its embedding and head run once; escalation.rs derives it).
        let ckpt = action_text(&e.steps[2], Some(&e.steps[1]), Units::Gib);
        assert!(ckpt.lines[0].contains("(−"), "{:?}", ckpt.lines);
        assert!(ckpt.lines[1].contains("recompute +31%"), "{:?}", ckpt.lines);
        for t in [start, mixed, ckpt] {
            assert!(t.lines.len() <= 3);
            assert!(t.lines.iter().all(|l| l.chars().count() <= 60), "{:?}", t.lines);
        }
    }

    #[test]
    fn wrap_breaks_at_spaces_and_marks_the_cut() {
        assert_eq!(wrap("a bb ccc", 4, 3), vec!["a bb", "ccc"]);
        assert_eq!(wrap("one two three four", 7, 2), vec!["one two", "three…"]);
        assert!(wrap("", 10, 2).is_empty());
        assert_eq!(delta(10, 10, Units::Gib), "±0");
    }
}
