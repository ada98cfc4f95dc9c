//! The Compare view's chart: one stacked bar per scenario ([`compare_chart`]). The strategy
//! table beside it is computed by `plan::strategy_table`.
//!
//! Nothing here is drawn or formatted for a person beyond the chart's labels.

use charming::component::{Axis, Grid, Legend};
use charming::element::{AxisLabel, AxisType, Color, Formatter, ItemStyle, LineStyle, LineStyleType, SplitLine, Symbol, Tooltip, Trigger};
use charming::series::{Bar, Line};
use charming::Chart;

use super::{CAPACITY_COLOR, COMPONENT_COLORS};
use crate::format::{self, Units};
use crate::model::breakdown::{Breakdown, Component};

/// Vertical stacked bars, one per `(name, breakdown)`, six component series in
/// [`Component::ALL`] order, and a dashed "Capacity" line over them.
pub fn compare_chart(columns: &[(String, Breakdown)], units: Units) -> Chart {
    let unit = units.label();
    let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
    let mut chart = Chart::new()
        .animation_duration_update(250)
        .background_color(Color::Value("transparent".into()))
        .legend(Legend::new().top(0).left("center").item_width(14).item_height(10))
        .tooltip(Tooltip::new().trigger(Trigger::Item).formatter(Formatter::String(format!("{{b}} · {{a}}: {{c}} {unit}"))))
        .grid(Grid::new().left(16).right(16).top(64).bottom(16).contain_label(true))
        .x_axis(Axis::new().type_(AxisType::Category).data(names))
        .y_axis(
            Axis::new()
                .type_(AxisType::Value)
                .min(0)
                .axis_label(AxisLabel::new().formatter(Formatter::String(format!("{{value}} {unit}"))))
                .split_line(SplitLine::new().line_style(LineStyle::new().opacity(0.3))),
        );
    for (i, &c) in Component::ALL.iter().enumerate() {
        let data: Vec<f64> = columns.iter().map(|(_, b)| format::giga(b.component(c), units)).collect();
        chart = chart.series(Bar::new().name(c.label()).stack("memory").bar_width("40%").item_style(ItemStyle::new().color(COMPONENT_COLORS[i])).data(data));
    }
    let capacity: Vec<f64> = columns.iter().map(|(_, b)| format::giga(b.capacity, units)).collect();
    chart.series(
        Line::new()
            .name("Capacity")
            .symbol(Symbol::Diamond)
            .symbol_size(9)
            .item_style(ItemStyle::new().color(CAPACITY_COLOR))
            .line_style(LineStyle::new().color(CAPACITY_COLOR).width(2).type_(LineStyleType::Dashed))
            .data(capacity),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate;
    use crate::scenario::{Scenario, Zero};
    use serde_json::Value;

    #[test]
    fn compare_chart_has_one_bar_per_scenario_and_a_capacity_line() {
        let a = estimate(&Scenario::default());
        let mut s = Scenario::default();
        s.parallel.dp = 8;
        s.parallel.zero = Zero::Parameters;
        let b = estimate(&s);
        let json: Value = serde_json::to_value(compare_chart(&[("A".into(), a.clone()), ("B".into(), b.clone())], Units::Gib)).unwrap();
        let series = json["series"].as_array().unwrap();
        assert_eq!(series.len(), 7);
        assert_eq!(json["xAxis"]["data"], serde_json::json!(["A", "B"]));
        for (i, c) in Component::ALL.iter().enumerate() {
            assert_eq!(series[i]["name"], c.label());
            assert_eq!(series[i]["data"].as_array().unwrap().len(), 2);
        }
        assert_eq!(series[6]["name"], "Capacity");
        assert_eq!(series[6]["data"][0].as_f64().unwrap(), format::giga(a.capacity, Units::Gib));
    }
}
