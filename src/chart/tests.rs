//! Native checks of the chart option JSON and the verdict text.

use serde_json::Value;

use super::*;
use crate::estimate;
use crate::scenario::Scenario;

fn json(b: &Breakdown, units: Units) -> Value {
    serde_json::to_value(memory_chart(b, units)).expect("a chart serialises")
}

fn spilling() -> Breakdown {
    let b = estimate(&Scenario::default());
    assert!(!b.fits && b.spill_bytes > 0, "the default scenario is expected to spill: {b:?}");
    b
}

fn fitting() -> Breakdown {
    let mut s = Scenario { model: crate::scenario::ModelSpec::Preset("gpt2".into()), ..Scenario::default() };
    s.training.seq_len = 1024;
    let b = estimate(&s);
    assert!(b.fits, "gpt2 on an H100 is expected to fit");
    b
}

#[test]
fn six_stacked_series_in_component_order_one_colour_each() {
    let b = spilling();
    let v = json(&b, Units::Gib);
    let series = v["series"].as_array().expect("series");
    assert_eq!(series.len(), 6);
    let mut colours = Vec::new();
    for (s, c) in series.iter().zip(Component::ALL) {
        assert_eq!(s["type"], "bar");
        assert_eq!(s["name"], c.label());
        assert_eq!(s["stack"], "memory");
        assert_eq!(s["data"][0].as_f64(), Some(format::giga(b.component(c), Units::Gib)));
        colours.push(s["itemStyle"]["color"].as_str().expect("colour").to_string());
    }
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), 6, "one distinct colour per component");
}

#[test]
fn capacity_line_sits_at_the_capacity() {
    let b = spilling();
    let v = json(&b, Units::Gb);
    let line = &v["series"][5]["markLine"]["data"][0];
    assert_eq!(line["xAxis"].as_f64(), Some(format::giga(b.capacity, Units::Gb)));
    assert!(line["label"]["formatter"].as_str().unwrap_or_default().contains("GB"));
    let max = v["xAxis"]["max"].as_f64().expect("axis max");
    assert!(max >= format::giga(b.total.max(b.capacity), Units::Gb));
}

#[test]
fn spill_segment_runs_from_capacity_to_total() {
    let b = spilling();
    let v = json(&b, Units::Gib);
    let segment = v["series"][0]["markLine"]["data"][0].as_array().expect("a start-to-end segment");
    assert_eq!(segment[0]["coord"][0].as_f64(), Some(format::giga(b.capacity, Units::Gib)));
    assert_eq!(segment[1]["coord"][0].as_f64(), Some(format::giga(b.total, Units::Gib)));
    assert_eq!(segment[0]["label"]["show"], true);
    assert!(segment[0]["coord"][0].as_f64() < segment[1]["coord"][0].as_f64());
}

#[test]
fn a_fitting_plan_has_an_empty_spill_segment_with_the_same_shape() {
    let b = fitting();
    let v = json(&b, Units::Gib);
    let segment = v["series"][0]["markLine"]["data"][0].as_array().expect("segment kept for merging");
    assert_eq!(segment[0]["coord"][0], segment[1]["coord"][0]);
    assert_eq!(segment[0]["label"]["show"], false);
}

#[test]
fn verdicts_read_as_sentences() {
    // Llama-3-8B on one H100: Linux CUDA runs out of memory.
    let oom = verdict(&spilling(), Units::Gib);
    assert_eq!(oom.kind(), "oom");
    assert!(oom.text().starts_with("Out of memory: needs "), "{}", oom.text());
    assert!(oom.text().contains("torch.OutOfMemoryError"), "{}", oom.text());
    // The same run on Windows spills into shared memory: optimizer states first, a range.
    let mut s = Scenario::default();
    s.runtime.platform = crate::scenario::Platform::WindowsFallback;
    let spill = verdict(&estimate(&s), Units::Gib);
    assert_eq!(spill.kind(), "spills");
    assert!(spill.text().starts_with("Spills "), "{}", spill.text());
    assert!(spill.text().contains("into shared GPU memory (Windows sysmem fallback)"), "{}", spill.text());
    assert!(spill.text().contains("slower per step (optimizer states"), "{}", spill.text());
    let fits = verdict(&fitting(), Units::Gib);
    assert_eq!(fits.kind(), "fits");
    assert!(fits.text().starts_with("Fits with ") && fits.text().ends_with(" headroom"), "{}", fits.text());
    assert_eq!(verdict(&Breakdown::default(), Units::Gib).kind(), "unknown");
}

/// A GeForce card on `auto`: Linux and the fallback off stop, the fallback spills; the
/// explanation names the ceiling, the cold bytes, the link and why nothing hides the update.
/// Past the ceiling the banner names it.
#[test]
fn a_consumer_card_shows_every_platform_and_why_the_spill_costs_what_it_does() {
    let plan = |json: &str| estimate(&Scenario::from_json(json).expect("decodes").scenario);
    let b = plan(r#"{"model": {"preset": "llama-3.2-1b"}, "training": {"micro_batch": 4, "seq_len": 1024}, "device": {"preset": "rtx-4090-24gb"}}"#);
    let rows = platform_outcomes(&b, Units::Gib);
    let kinds: Vec<_> = rows.iter().map(|(k, name, _)| (*k, *name)).collect();
    assert_eq!(kinds, [("oom", "Linux"), ("spills", "Windows, sysmem fallback on"), ("oom", "Windows, sysmem fallback off")], "{rows:?}");
    assert_eq!(rows[0].2, "out of memory, 7.68 GiB over the GPU (torch.OutOfMemoryError)");
    assert!(rows[1].2.starts_with("spills 7.68 GiB into shared GPU memory — ") && rows[1].2.ends_with("× slower per step"), "{}", rows[1].2);
    let why = spill_explanation(&b, Units::Gib);
    assert!(why[0].starts_with("Room for it: 32.0 GiB of shared GPU memory"), "{}", why[0]);
    assert!(why[1].contains("cold (optimizer states, read once per step): 7.68 GiB"), "{}", why[1]);
    assert!(why.iter().any(|l| l.starts_with("Optimizer states 7.68 GiB") && l.contains("32 GB/s") && l.contains("memory-bound: nothing hides it")), "{why:?}");
    assert!(why.last().unwrap().contains("VidMm"), "{why:?}");
    let data_centre = plan(r#"{"model": {"preset": "llama-3.2-1b"}, "device": {"preset": "h100-sxm-80gb"}}"#);
    assert!(platform_outcomes(&data_centre, Units::Gib).is_empty());
    let past = verdict(&plan(r#"{"model": {"preset": "llama-3-8b"}, "device": {"preset": "rtx-4090-24gb"}}"#), Units::Gib);
    assert_eq!(past.kind(), "oom");
    assert!(past.text().contains("past the ceiling of shared GPU memory"), "{}", past.text());
}

#[test]
fn nice_axis_maxima() {
    assert_eq!(nice_max(0.0), 1.0);
    assert_eq!(nice_max(83.0), 100.0);
    assert_eq!(nice_max(101.0), 120.0);
    assert!(nice_max(f64::NAN) > 0.0);
}

/// The page's ECharts holds only the modules listed in `scripts/build-echarts.mjs`, in two
/// stages; ECharts silently drops an option part whose component is not registered (a
/// `title`, a `dataZoom`, a `markArea` would just not appear). Every chart the page builds
/// must stay within: core options, grid + x/y axes, a plain legend, the tooltip, bar series
/// with mark lines (the first stage); line series (the timeline, compare: `ChartBox`'s
/// `extra`) and the title (the exports, which wait for the second stage) come later. A new
/// one is added to the build script first, then here.
#[test]
fn chart_options_need_only_the_bundled_echarts_modules() {
    const CORE: &[&str] = &[
        "animation", "animationDuration", "animationDurationUpdate", "animationEasing", "animationEasingUpdate", "animationThreshold", "backgroundColor", "color", "textStyle",
        "darkMode", "useUTC", "series",
    ];
    const FIRST_COMPONENTS: &[&str] = &["grid", "xAxis", "yAxis", "legend", "tooltip"];
    const FIRST_SERIES: &[&str] = &["bar"];
    const MORE_COMPONENTS: &[&str] = &["title"];
    const MORE_SERIES: &[&str] = &["line"];
    const UNBUNDLED_SERIES_PARTS: &[&str] = &["markPoint", "markArea", "universalTransition"];

    let fits = fitting();
    let spills = spilling();
    // (name, option, whether the chart waits for the second stage)
    let charts = [
        ("memory_chart (spills)", serde_json::to_value(memory_chart(&spills, Units::Gib)).unwrap(), false),
        ("memory_chart (fits)", serde_json::to_value(memory_chart(&fits, Units::Gb)).unwrap(), false),
        ("compare_chart", serde_json::to_value(compare::compare_chart(&[("A".into(), spills.clone()), ("B".into(), fits.clone())], Units::Gib)).unwrap(), true),
        ("timeline_chart", serde_json::to_value(super::timeline::timeline_chart(&crate::model::timeline::timeline(&spills), spills.capacity, Units::Gib, false)).unwrap(), true),
        ("export_chart", crate::report::export_chart(&crate::scenario::Scenario::default(), &spills, Units::Gib, "https://example.org/", "2026-12-03"), true),
    ];
    for (name, v, more) in charts {
        let components = |key: &str| FIRST_COMPONENTS.contains(&key) || (more && MORE_COMPONENTS.contains(&key));
        let series = |kind: &str| FIRST_SERIES.contains(&kind) || (more && MORE_SERIES.contains(&kind));
        for key in v.as_object().expect("an option object").keys() {
            assert!(CORE.contains(&key.as_str()) || components(key), "{name}: `{key}` needs an ECharts module its stage of scripts/build-echarts.mjs does not bundle");
        }
        if let Some(legend) = v.get("legend") {
            assert!(legend.get("type").is_none_or(|t| t == "plain"), "{name}: only the plain legend is bundled");
        }
        for s in v["series"].as_array().expect("series") {
            let kind = s["type"].as_str().expect("a series type");
            assert!(series(kind), "{name}: series type `{kind}` is not bundled in its stage");
            for part in UNBUNDLED_SERIES_PARTS {
                assert!(s.get(*part).is_none(), "{name}: `{part}` is not bundled");
            }
            assert!(s.get("coordinateSystem").is_none_or(|c| c == "cartesian2d"), "{name}: only the grid coordinate system is bundled");
        }
    }
}
