//! The strategy flowchart as plain geometry: start → fits? → step → fits? → … with a "yes"
//! branch from every check to the launch of the plan → "monitor & adjust", and a "no fit"
//! end after the last check.
//!
//! [`flow_layout`] places the nodes and routes the edges for a ladder of a given length, in
//! one of two [`Shape`]s: wide (the answer beside the ladder) or narrow (one column, the
//! answer at the bottom, for phones); [`FlowNode::state`] and [`FlowEdge::state`] say how
//! each is drawn for the animation's current step and the ladder's first fit;
//! the words inside the boxes are `plan::explain`'s. The page turns this into SVG
//! (`ui::strategy`). Nothing here computes memory or words a plan.

const CHECK_W: f64 = 116.0;
const CHECK_H: f64 = 46.0;
/// Height of a step box: a title and `plan::explain::MAX_LINES` lines.
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

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [Shape; 2] = [Shape::Wide, Shape::Narrow];

    fn overlaps(a: &FlowNode, b: &FlowNode) -> bool {
        a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
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
}
