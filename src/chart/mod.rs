//! Pure chart builders: a [`Breakdown`] (or its step's timeline, `timeline.rs`) in, a
//! `charming::Chart` (an ECharts option) out.
//!
//! Nothing here touches the browser: the page hands these charts to ECharts as JSON text
//! ([`option_json`]) inside an effect, and native tests check their JSON.
//! This module does not compute memory (that is `crate::estimate`), and it does not
//! decide colours per theme beyond the fixed component palette below.

pub mod compare;
pub mod flow;
pub mod timeline;
mod verdict;

pub use verdict::{outcome_word, platform_outcomes, spill_explanation, verdict, verdict_details, Verdict};

use charming::component::{Axis, Grid, Legend};
use charming::datatype::CompositeValue;
use charming::element::{
    AxisLabel, AxisTick, AxisType, Color, Formatter, ItemStyle, Label, LabelPosition, LineStyle, LineStyleType, MarkLine, MarkLineData, MarkLineVariant, SplitLine, Symbol,
    Tooltip, Trigger,
};
use charming::series::Bar;
use charming::Chart;

use crate::format::{self, Units};
use crate::model::breakdown::{Breakdown, Component};

/// A chart's ECharts option as JSON text, written straight from charming's `Serialize`. The
/// page and the exports both go through this one serialiser (a second one, such as
/// `serde_json::to_value`'s, would add a second copy of charming's serialisation code to the
/// WASM), and skipping the intermediate `serde_json::Value` tree makes each update cheaper.
pub fn option_json(chart: &Chart) -> String {
    serde_json::to_string(chart).unwrap_or_else(|_| "{}".into())
}

/// One colour per component, in [`Component::ALL`] order (Okabe–Ito palette, safe for the
/// common colour-vision deficiencies).
pub const COMPONENT_COLORS: [&str; 6] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#8C8C8C"];

/// Colour of the part of the bar that does not fit in device memory.
pub const SPILL_COLOR: &str = "rgba(213, 94, 0, 0.22)";

/// Colour of the capacity line.
pub const CAPACITY_COLOR: &str = "#D55E00";

/// Thickness of the bar, in pixels.
pub const BAR_THICKNESS: u32 = 44;

/// Thickness of the spill band: a faint halo above and below the spilled part of the bar.
/// (ECharts draws mark lines above the bars whatever their `z`, so the band is faint enough
/// to leave the component colours readable.)
pub const SPILL_THICKNESS: u32 = BAR_THICKNESS + 18;

/// Stack id shared by the six component series.
const STACK: &str = "memory";

/// The colour of one component.
pub fn component_color(c: Component) -> &'static str {
    let i = Component::ALL.iter().position(|&x| x == c).unwrap_or(0);
    COMPONENT_COLORS[i]
}

/// The planner's main chart: one horizontal bar per GPU, stacked by component in
/// [`Component::ALL`] order, a vertical capacity line, and a translucent spill band over
/// the bar from the capacity to the total when the plan does not fit.
///
/// The chart always has the same six series and a mark line with at least the capacity,
/// so ECharts can merge one option into the next and animate the bars.
pub fn memory_chart(b: &Breakdown, units: Units) -> Chart {
    let unit = units.label();
    let capacity = format::giga(b.capacity, units);
    let total = format::giga(b.total, units);
    let axis_max = nice_max(capacity.max(total) * 1.06);
    let category = if b.gpus > 1 { format!("per GPU (stage {})", b.stage) } else { "GPU".to_string() };

    let mut chart = Chart::new()
        .animation_duration_update(250)
        .background_color(Color::Value("transparent".into()))
        .legend(Legend::new().top(0).left("center").item_width(14).item_height(10))
        .tooltip(Tooltip::new().trigger(Trigger::Item).formatter(Formatter::String(format!("{{a}}: {{c}} {unit}"))))
        .grid(Grid::new().left(24).right(24).top(56).bottom(36).contain_label(true))
        .x_axis(
            Axis::new()
                .type_(AxisType::Value)
                .min(0)
                .axis_label(AxisLabel::new().formatter(Formatter::String(format!("{{value}} {unit}"))))
                .max(axis_max)
                .split_line(SplitLine::new().line_style(LineStyle::new().opacity(0.3))),
        )
        .y_axis(Axis::new().type_(AxisType::Category).data(vec![category]).axis_label(AxisLabel::new().show(false)).axis_tick(AxisTick::new().show(false)));

    for (i, &c) in Component::ALL.iter().enumerate() {
        let mut bar = Bar::new()
            .name(c.label())
            .stack(STACK)
            .bar_width(BAR_THICKNESS as f64)
            .item_style(ItemStyle::new().color(COMPONENT_COLORS[i]))
            .data(vec![format::giga(b.component(c), units)]);
        if i == 0 {
            bar = bar.mark_line(spill_segment(b, units));
        } else if i == Component::ALL.len() - 1 {
            bar = bar.mark_line(capacity_line(b, units));
        }
        chart = chart.series(bar);
    }
    chart
}

/// The dashed vertical line at the device's capacity.
fn capacity_line(b: &Breakdown, units: Units) -> MarkLine {
    let label = format!("capacity {}", format::bytes(b.capacity, units));
    MarkLine::new().silent(true).z(10).symbol(vec![Symbol::None, Symbol::None]).line_style(LineStyle::new().color(CAPACITY_COLOR).width(2).type_(LineStyleType::Dashed)).data(vec![
        MarkLineVariant::Simple(
            MarkLineData::new().name("capacity").x_axis(format::giga(b.capacity, units)).label(Label::new().formatter(Formatter::String(label)).color(CAPACITY_COLOR)),
        ),
    ])
}

/// The faint band from the capacity to the total, a little thicker than the bar: the bytes
/// that spill out of device memory ("spill"), or that CUDA refuses ("over by"). When the plan fits it is empty (from the total to
/// itself, label hidden) rather than absent, so that merging the option removes the old one.
fn spill_segment(b: &Breakdown, units: Units) -> MarkLine {
    let total = format::giga(b.total, units);
    let (start, shown) = if b.spill_bytes > 0 { (format::giga(b.capacity, units), true) } else { (total, false) };
    let at = |x: f64| MarkLineData::new().coord(vec![CompositeValue::from(x), CompositeValue::from(0)]).symbol(Symbol::None);
    // Where the platform cannot spill, the bytes beyond capacity are what CUDA refuses.
    let word = if b.spill.outcome == crate::model::breakdown::Outcome::OutOfMemory { "over by" } else { "spill" };
    // Above the band, ending where it ends, inside the plot: past the end it ran off the chart
    // whenever the total sat near the axis maximum (always, for a plan far over capacity).
    let label = Label::new()
        .show(shown)
        .formatter(Formatter::String(format!("{word} {}", format::bytes(b.spill_bytes, units))))
        .color(CAPACITY_COLOR)
        .position(LabelPosition::InsideEndTop)
        .distance(f64::from(SPILL_THICKNESS) / 2.0 + 2.0);
    MarkLine::new()
        .silent(true)
        .symbol(vec![Symbol::None, Symbol::None])
        .line_style(LineStyle::new().color(SPILL_COLOR).width(SPILL_THICKNESS).type_(LineStyleType::Solid))
        .data(vec![MarkLineVariant::StartToEnd(at(start).name("spill").label(label), at(total))])
}

/// Rounds an axis maximum up to 1, 2, 2.5 or 5 times a power of ten.
fn nice_max(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * p >= x {
            return m * p;
        }
    }
    10.0 * p
}

#[cfg(test)]
mod tests;
