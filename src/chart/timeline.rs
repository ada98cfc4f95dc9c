//! The step-timeline chart: a [`Timeline`] in, a `charming::Chart` out — memory per component
//! over one training step as stacked areas, against the device's capacity, with the peak and
//! the phases (forward, backward, optimizer step) marked.
//!
//! Only line series (with `areaStyle`, stacked) and mark lines, which the stacked bar and the
//! compare chart already use, so the page's ECharts build needs nothing more. Nothing here
//! computes memory (that is `crate::model::timeline`).

use charming::component::{Axis, Grid, Legend};
use charming::element::{
    AreaStyle, AxisLabel, AxisType, BoundaryGap, Color, Formatter, ItemStyle, Label, LabelPosition, LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant, SplitLine,
    Symbol, Tooltip, Trigger,
};
use charming::series::Line;
use charming::Chart;

use super::{nice_max, CAPACITY_COLOR, COMPONENT_COLORS};
use crate::format::{self, Units};
use crate::model::breakdown::Component;
use crate::model::timeline::{Event, Point, Timeline};

/// Stack id shared by the six component series.
const STACK: &str = "timeline";

/// Colour of the peak marker and of the phase dividers.
const PEAK_COLOR: &str = "#333333";
const DIVIDER_COLOR: &str = "#777777";

/// Memory over one training step: one stacked area per component in [`Component::ALL`]
/// order (the stacked bar's colours), x = the timeline's points labelled by what happens, a
/// dashed horizontal line at `capacity`, a line at the peak labelled with its bytes, and a
/// divider with the phase's name where forward, backward and the optimizer step begin.
///
/// The chart always has the same six series, carrying the dividers (first), the peak (second)
/// and the capacity (last), so ECharts can merge one option into the next. `narrow`: a phone's
/// viewport, where the legend takes three rows above the plot.
pub fn timeline_chart(timeline: &Timeline, capacity: u64, units: Units, narrow: bool) -> Chart {
    let unit = units.label();
    let labels: Vec<String> = timeline.points.iter().map(|p| p.label.clone()).collect();
    let peak = timeline.peak().map_or(0, |p| p.bytes.total);
    let axis_max = nice_max(format::giga(capacity, units).max(format::giga(peak, units)) * 1.06);
    let mut chart = Chart::new()
        .animation_duration_update(250)
        .background_color(Color::Value("transparent".into()))
        .legend(Legend::new().top(0).left("center").item_width(14).item_height(10))
        .tooltip(Tooltip::new().trigger(Trigger::Axis).formatter(Formatter::String(tooltip(unit))))
        // On a phone the legend wraps to three rows: the plot starts below them.
        .grid(Grid::new().left(16).right(24).top(if narrow { 84 } else { 56 }).bottom(16).contain_label(true))
        .x_axis(Axis::new().type_(AxisType::Category).boundary_gap(BoundaryGap::CategoryAxis(false)).data(labels).axis_label(AxisLabel::new().font_size(10)))
        .y_axis(
            Axis::new()
                .type_(AxisType::Value)
                .min(0)
                .max(axis_max)
                .axis_label(AxisLabel::new().formatter(Formatter::String(format!("{{value}} {unit}"))))
                .split_line(SplitLine::new().line_style(LineStyle::new().opacity(0.3))),
        );
    for (i, &c) in Component::ALL.iter().enumerate() {
        let data: Vec<f64> = timeline.points.iter().map(|p| format::giga(p.bytes.component(c), units)).collect();
        let mut line = Line::new()
            .name(c.label())
            .stack(STACK)
            .show_symbol(false)
            .item_style(ItemStyle::new().color(COMPONENT_COLORS[i]))
            .line_style(LineStyle::new().width(0))
            .area_style(AreaStyle::new().color(COMPONENT_COLORS[i]).opacity(0.85))
            .data(data);
        line = match i {
            0 => line.mark_line(dividers(timeline)),
            1 => line.mark_line(peak_line(timeline, units)),
            5 => line.mark_line(capacity_line(capacity, units)),
            _ => line,
        };
        chart = chart.series(line);
    }
    chart
}

/// The axis tooltip: the point's moment, then each component with its unit ("Gradients:
/// 29.91 GiB"), in the series' order (ECharts' string template: `{b0}` the category, `{aN}`
/// and `{cN}` the N-th series' name and value).
fn tooltip(unit: &str) -> String {
    let rows: Vec<String> = (0..Component::ALL.len()).map(|i| format!("{{a{i}}}: {{c{i}}} {unit}")).collect();
    format!("{{b0}}<br/>{}", rows.join("<br/>"))
}

/// The dashed horizontal line at the capacity.
fn capacity_line(capacity: u64, units: Units) -> MarkLine {
    let label = Label::new().formatter(Formatter::String(format!("capacity {}", format::bytes(capacity, units)))).color(CAPACITY_COLOR).position(LabelPosition::InsideEndTop);
    MarkLine::new()
        .silent(true)
        .z(10)
        .symbol(vec![Symbol::None, Symbol::None])
        .line_style(LineStyle::new().color(CAPACITY_COLOR).width(2).type_(LineStyleType::Dashed))
        .data(vec![MarkLineVariant::Simple(MarkLineData::new().name("capacity").y_axis(format::giga(capacity, units)).label(label))])
}

/// Where a phase begins, named: "forward", "backward", "optimizer step", with the micro-batch
/// when there are several. Collapsed runs are named by their axis label.
fn phase_name(p: &Point) -> Option<String> {
    let name = match p.event {
        Event::Forward | Event::Loss => "forward",
        Event::Backward => "backward",
        Event::OptimizerStep => return Some(p.label.clone()),
        Event::Collapsed => return None,
    };
    Some(match p.micro_batch {
        Some(j) if p.label.starts_with("mb ") => format!("mb {j} {name}"),
        _ => name.to_string(),
    })
}

/// A vertical line at a point's category, labelled.
fn at(p: &Point, name: &str, label: Label) -> MarkLineVariant {
    MarkLineVariant::Simple(MarkLineData::new().name(name).x_axis(p.label.clone()).label(label))
}

/// The dotted phase dividers, named where forward, backward or the optimizer step begins.
fn dividers(timeline: &Timeline) -> MarkLine {
    let mut data = Vec::new();
    let mut previous: Option<String> = None;
    for p in &timeline.points {
        let name = phase_name(p);
        if let Some(text) = name.as_ref().filter(|&n| Some(n) != previous.as_ref()) {
            let label = Label::new().formatter(Formatter::String(text.clone())).color(DIVIDER_COLOR).position(LabelPosition::InsideEndTop).font_size(10);
            data.push(at(p, "phase", label));
        }
        previous = name;
    }
    MarkLine::new().silent(true).symbol(vec![Symbol::None, Symbol::None]).line_style(LineStyle::new().color(DIVIDER_COLOR).width(1).type_(LineStyleType::Dotted)).data(data)
}

/// The solid line at the highest point, labelled with its bytes (the moment is the x axis's
/// label there, and the chart's text alternative says it; a longer label runs over the
/// phase dividers' names).
fn peak_line(timeline: &Timeline, units: Units) -> MarkLine {
    let data = timeline.peak().map(|p| {
        let text = format!("peak {}", format::bytes(p.bytes.total, units));
        at(p, "peak", Label::new().formatter(Formatter::String(text)).color(PEAK_COLOR).position(LabelPosition::InsideMiddleBottom))
    });
    MarkLine::new()
        .silent(true)
        .z(10)
        .symbol(vec![Symbol::None, Symbol::None])
        .line_style(LineStyle::new().color(PEAK_COLOR).width(2).type_(LineStyleType::Solid))
        .data(data.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::estimate;
    use crate::model::timeline::timeline;
    use crate::scenario::Scenario;

    fn scenario(json: &str) -> Scenario {
        Scenario::from_json(json).expect("scenario").scenario
    }

    fn chart(s: &Scenario, units: Units) -> (crate::Breakdown, Timeline, Value) {
        let b = estimate(s);
        let t = timeline(&b);
        let v = serde_json::to_value(timeline_chart(&t, b.capacity, units, false)).expect("a chart serialises");
        (b, t, v)
    }

    /// Six stacked area series in component order, the stacked bar's colours, one value per
    /// point, each point's values summing to its total.
    #[test]
    fn six_stacked_areas_in_component_order() {
        let (_, t, v) = chart(&Scenario::default(), Units::Gib);
        let series = v["series"].as_array().expect("series");
        assert_eq!(series.len(), 6);
        for (i, (s, c)) in series.iter().zip(Component::ALL).enumerate() {
            assert_eq!(s["type"], "line");
            assert_eq!(s["name"], c.label());
            assert_eq!(s["stack"], STACK);
            assert_eq!(s["areaStyle"]["color"], COMPONENT_COLORS[i]);
            assert_eq!(s["itemStyle"]["color"], crate::chart::component_color(c));
            let data = s["data"].as_array().expect("data");
            assert_eq!(data.len(), t.points.len());
            for (d, p) in data.iter().zip(&t.points) {
                assert_eq!(d.as_f64(), Some(format::giga(p.bytes.component(c), Units::Gib)));
            }
        }
        let axis = v["xAxis"]["data"].as_array().expect("categories");
        assert_eq!(axis.len(), t.points.len());
        assert_eq!(axis[0], "forward L1");
        assert_eq!(axis.last().and_then(Value::as_str), Some("optimizer step"));
    }

    /// The tooltip names every component with its value and unit, in the series' order.
    #[test]
    fn the_tooltip_carries_units() {
        for units in [Units::Gib, Units::Gb] {
            let (_, _, v) = chart(&Scenario::default(), units);
            let text = v["tooltip"]["formatter"].as_str().expect("a template");
            assert_eq!(v["tooltip"]["trigger"], "axis");
            let rows: Vec<&str> = text.split("<br/>").collect();
            assert_eq!(rows[0], "{b0}");
            assert_eq!(rows.len(), 7);
            for (i, row) in rows[1..].iter().enumerate() {
                assert_eq!(*row, format!("{{a{i}}}: {{c{i}}} {}", units.label()));
            }
        }
    }

    /// The capacity is a horizontal line; the peak is a vertical line at the highest point,
    /// labelled with its bytes and its moment; the axis reaches above both.
    #[test]
    fn capacity_and_peak_are_marked() {
        let (b, t, v) = chart(&Scenario::default(), Units::Gb);
        let capacity = &v["series"][5]["markLine"]["data"][0];
        assert_eq!(capacity["yAxis"].as_f64(), Some(format::giga(b.capacity, Units::Gb)));
        assert!(capacity["label"]["formatter"].as_str().unwrap_or_default().starts_with("capacity "));
        let peak = &v["series"][1]["markLine"]["data"][0];
        assert_eq!(peak["name"], "peak");
        let highest = t.peak().expect("points");
        assert_eq!(highest.bytes.total, b.total);
        assert_eq!(peak["xAxis"], highest.label.as_str());
        let text = peak["label"]["formatter"].as_str().unwrap_or_default();
        assert_eq!(text, format!("peak {}", format::bytes(b.total, Units::Gb)));
        assert_eq!(highest.label, "optimizer step");
        assert!(v["yAxis"]["max"].as_f64() >= Some(format::giga(b.total.max(b.capacity), Units::Gb)));
    }

    /// The x axis is divided by phase: forward, backward and the optimizer step, per
    /// micro-batch drawn in full when there are several (the collapsed run of micro-batches
    /// 3–5 is named by its axis label only).
    #[test]
    fn phases_divide_the_axis() {
        let names = |json: &str| -> Vec<String> {
            let (_, _, v) = chart(&scenario(json), Units::Gib);
            let marks = v["series"][0]["markLine"]["data"].as_array().expect("markers").clone();
            marks.iter().filter(|m| m["name"] == "phase").map(|m| m["label"]["formatter"].as_str().unwrap_or_default().to_string()).collect()
        };
        assert_eq!(names("{}"), ["forward", "backward", "optimizer step"]);
        assert_eq!(
            names(r#"{"model": {"preset": "gpt2"}, "training": {"seq_len": 1024, "grad_accum": 6}}"#),
            ["mb 1 forward", "mb 1 backward", "mb 2 forward", "mb 2 backward", "mb 6 forward", "mb 6 backward", "optimizer step"]
        );
    }

    /// Inference has no training step: six empty series, no dividers or peak, the capacity.
    #[test]
    fn an_empty_timeline_keeps_the_series() {
        let (_, t, v) = chart(&scenario(r#"{"training": {"mode": "inference"}}"#), Units::Gib);
        assert!(t.points.is_empty());
        let series = v["series"].as_array().expect("series");
        assert_eq!(series.len(), 6);
        assert!(series.iter().all(|s| s.get("data").is_none()));
        assert!(series[0]["markLine"].get("data").is_none() && series[1]["markLine"].get("data").is_none());
        assert_eq!(series[5]["markLine"]["data"].as_array().map(Vec::len), Some(1));
    }
}
