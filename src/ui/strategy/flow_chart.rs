//! `FlowChart`: the escalation flowchart as SVG, wide beside a laptop's ladder or in one
//! column on a phone ([`Shape`]). Geometry and wording come from [`crate::chart::flow`];
//! this component only maps them to elements and classes, and the classes follow the
//! animation's current step (CSS does the highlighting and the motion). Steps the plan
//! drops are marked "not needed". Clicking a step shows it.
//!
//! The drawing is a named group, not an image, since its step boxes are buttons; each
//! button's name starts with the text it shows (title, lines, badge), then says what it does.

use leptos::prelude::*;

use super::Animation;
use crate::chart::flow::{flow_layout, EdgeKind, FlowEdge, FlowNode, NodeKind, Shape, LINE_HEIGHT};
use crate::format;
use crate::plan::escalation::Escalation;
use crate::plan::explain::{action_text, launch_text, nofit_text};
use crate::ui::state::Planner;

/// The text a box shows, as one line: its title, its lines and its badge.
fn visible_text(title: &str, lines: &[String], badge: Option<&str>) -> String {
    std::iter::once(title).chain(lines.iter().map(String::as_str)).chain(badge).collect::<Vec<_>>().join(" ")
}

/// Text rows inside a box: a bold title, then lines. Each row ends with a space, which SVG
/// does not draw, so the box's text content reads as words ("8B 156 GiB", not "8B156 GiB"),
/// as its name does.
fn text_rows(node: &FlowNode, title: String, lines: Vec<String>) -> impl IntoView {
    let x = node.x + 14.0;
    let y = node.y + 23.0;
    view! {
        <text class="node-title" x=x y=y>{format!("{title} ")}</text>
        {lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| view! { <text class="node-line" x=x y=y + 18.0 + i as f64 * LINE_HEIGHT>{format!("{l} ")}</text> })
            .collect_view()}
    }
}

fn edge_view(edge: FlowEdge, anim: Animation, first_fit: Option<usize>, last: usize) -> impl IntoView {
    let kind = match edge.kind {
        EdgeKind::Next => "next",
        EdgeKind::No => "no",
        EdgeKind::Yes => "yes",
    };
    let label = edge.label.map(|(text, x, y)| view! { <text class="edge-label" x=x y=y>{text}</text> });
    let points = edge.points_attr();
    let id = edge.id.clone();
    let state = Signal::derive(move || edge.state(anim.current.get(), first_fit, last));
    view! {
        <g class=move || format!("edge {kind} {}", state.get().class()) data-edge=id data-state=move || state.get().class()>
            <polyline points=points marker-end=move || if state.get().class() == "visited" { "url(#flow-arrow)" } else { "url(#flow-arrow-off)" } />
            {label}
        </g>
    }
}

fn node_view(node: FlowNode, e: &Escalation, anim: Animation, units: format::Units, shape: Shape) -> impl IntoView {
    let first_fit = e.first_fit;
    let last = e.steps.len().saturating_sub(1);
    let k = node.step;
    let state_node = node.clone();
    let state = Signal::derive(move || state_node.state(anim.current.get(), first_fit, last));
    let id = node.id.clone();
    let select = move |_| anim.show_step(k);
    // Step boxes are buttons for the keyboard too: Tab to reach, Enter or Space to jump there.
    let select_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" || ev.key() == " " {
            ev.prevent_default();
            anim.show_step(k);
        }
    };
    match node.kind {
        NodeKind::Start | NodeKind::Action => {
            let step = e.steps.get(k);
            let text = step.map(|s| action_text(s, k.checked_sub(1).and_then(|p| e.steps.get(p)), units, shape.wrap()));
            let (title, lines, mut tooltip) = text.map(|t| (t.title, t.lines, t.tooltip)).unwrap_or_default();
            let applied = step.is_none_or(|s| s.applied);
            let fits_here = first_fit == Some(k);
            // A step before the first fit that the plan leaves out.
            let dropped = match (step.and_then(|s| s.step), &e.plan) {
                (Some(s), Some(plan)) => first_fit.is_some_and(|f| k < f) && applied && plan.dropped.contains(&s),
                _ => false,
            };
            if dropped {
                tooltip.push_str("\nnot needed in the plan: the later steps fit without it, faster");
            }
            let badge = (fits_here || dropped).then(|| {
                let (class, label, w) = if fits_here { ("badge", "fits here", 74.0) } else { ("badge dropped-badge", "not needed", 84.0) };
                view! {
                    <g class=class>
                        <rect x=node.x + node.w - w - 10.0 y=node.y + 8.0 width=w height="20" rx="10" />
                        <text x=node.x + node.w - 10.0 - w / 2.0 y=node.y + 22.0 text-anchor="middle">{label}</text>
                    </g>
                }
            });
            let kind = if node.kind == NodeKind::Start { "start" } else { "action" };
            let badge_text = if fits_here { Some("fits here") } else { dropped.then_some("not needed") };
            let aria = format!("{}: show step {k}", visible_text(&title, &lines, badge_text));
            view! {
                <g
                    class=move || format!("node {kind} {}{}{}{}", state.get().class(), if applied { "" } else { " skipped" }, if fits_here { " fits-here" } else { "" }, if dropped { " dropped" } else { "" })
                    data-node=id
                    data-state=move || state.get().class()
                    tabindex="0"
                    role="button"
                    aria-label=aria
                    on:click=select
                    on:keydown=select_key
                >
                    <title>{tooltip}</title>
                    <rect x=node.x y=node.y width=node.w height=node.h rx="12" />
                    {text_rows(&node, title, lines)}
                    {badge}
                </g>
            }
            .into_any()
        }
        NodeKind::Check => {
            let fits = e.steps.get(k).is_some_and(|s| s.fits());
            let answer = if fits { "yes" } else { "no" };
            view! {
                <g class=move || format!("node check {} {answer}", state.get().class()) data-node=id data-state=move || state.get().class() on:click=select>
                    <title>{if fits { "Fits: take the yes branch" } else { "Does not fit: next step" }}</title>
                    <polygon points=node.diamond_points() />
                    <text x=node.cx() y=node.cy() + 5.0 text-anchor="middle">"fits?"</text>
                </g>
            }
            .into_any()
        }
        NodeKind::Launch if e.plan.is_some() => {
            // The launch is the plan: choosing it shows the plan in the bar and caption.
            let (title, lines) = launch_text(e, units);
            let aria = format!("{}: show the plan", visible_text(&title, &lines, None));
            let stop = first_fit.unwrap_or(last);
            let show_plan = move || {
                anim.show_step(stop);
                anim.plan_shown.set(true);
            };
            let show_plan_key = move |ev: leptos::ev::KeyboardEvent| {
                if ev.key() == "Enter" || ev.key() == " " {
                    ev.prevent_default();
                    show_plan();
                }
            };
            view! {
                <g
                    class=move || format!("node terminal launch {}{}", state.get().class(), if anim.plan_shown.get() { " shown" } else { "" })
                    data-node=id
                    data-state=move || state.get().class()
                    tabindex="0"
                    role="button"
                    aria-label=aria
                    on:click=move |_| show_plan()
                    on:keydown=show_plan_key
                >
                    <title>"Show the plan in the bar"</title>
                    <rect x=node.x y=node.y width=node.w height=node.h rx=node.h / 2.0 />
                    {text_rows(&node, title, lines)}
                </g>
            }
            .into_any()
        }
        NodeKind::Launch | NodeKind::Monitor | NodeKind::NoFit => {
            let (kind, (title, lines)) = match node.kind {
                NodeKind::Launch => ("launch", launch_text(e, units)),
                NodeKind::Monitor => ("monitor", ("Monitor & adjust".into(), vec!["check the measured peak".into(), "against this plan".into()])),
                _ => ("nofit", nofit_text(e)),
            };
            view! {
                <g class=move || format!("node terminal {kind} {}", state.get().class()) data-node=id data-state=move || state.get().class()>
                    <rect x=node.x y=node.y width=node.w height=node.h rx=node.h / 2.0 />
                    {text_rows(&node, title, lines)}
                </g>
            }
            .into_any()
        }
    }
}

/// The flowchart, redrawn when the escalation or the shape changes; classes follow
/// `anim.current`.
#[component]
pub fn FlowChart(anim: Animation, #[prop(into)] shape: Signal<Shape>) -> impl IntoView {
    let planner = Planner::get();
    move || {
        let units = planner.units.get();
        let shape = shape.get();
        anim.escalation.with(|e| {
            let layout = flow_layout(e.steps.len(), shape);
            let last = e.steps.len().saturating_sub(1);
            let summary = match e.first_fit {
                Some(0) => "Escalation flowchart: the scenario fits as entered".to_string(),
                Some(f) => format!("Escalation flowchart: fits after step {f}, {}", e.steps.get(f).map(|s| s.name.as_str()).unwrap_or("")),
                None => "Escalation flowchart: no step of this ladder makes the run fit".to_string(),
            };
            let edges = layout.edges.iter().cloned().map(|edge| edge_view(edge, anim, e.first_fit, last)).collect_view();
            let nodes = layout.nodes.iter().cloned().map(|node| node_view(node, e, anim, units, shape)).collect_view();
            view! {
                <div class="flow-scroll">
                    <svg
                        id="flowchart"
                        class=if shape == Shape::Narrow { "flow narrow" } else { "flow" }
                        viewBox=format!("0 0 {} {}", layout.width, layout.height)
                        width=layout.width
                        height=layout.height
                        role="group"
                        aria-label=summary
                        data-first-fit=e.first_fit.map(|f| f.to_string()).unwrap_or_else(|| "none".into())
                    >
                        <defs>
                            <marker id="flow-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                                <path class="arrow-on" d="M0,0 L10,5 L0,10 z" />
                            </marker>
                            <marker id="flow-arrow-off" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                                <path class="arrow-off" d="M0,0 L10,5 L0,10 z" />
                            </marker>
                        </defs>
                        {edges}
                        {nodes}
                    </svg>
                </div>
            }
        })
    }
}
