//! The plan in words and files for documents.
//!
//! - [`breakdown_markdown`]: the breakdown as a Markdown table (`headroom estimate --format
//!   markdown`).
//! - [`Summary`]: what a plan is in one line — model, GPUs, layout, precision and verdict —
//!   for the exports' titles and the embed view's heading.
//! - The page's exports, each readable on its own: [`export_markdown`], [`export_json`] (the
//!   input scenario beside the breakdown) and [`export_chart`] (the chart option of the PNG
//!   and SVG images, with the summary as its title). Each names the page's link to the
//!   scenario and the date it was made.
//!
//! Pure: the page passes in its address and today's date.

use charming::component::Title;
use charming::element::font_settings::FontWeight;
use charming::element::{Color, TextStyle};
use serde_json::{json, Value};

use crate::chart::{memory_chart, verdict};
use crate::format::{bytes, count, thousands, Units};
use crate::labels::{device_name, fine_tuning_label, layout_label, model_name, optimizer_label, precision_label};
use crate::model::breakdown::{Breakdown, Component, Phase};
use crate::plan::changes::changes_text;
use crate::plan::escalation::{escalate, Step};
use crate::plan::explain::{plan_summary, PlanSummary};
use crate::plan::limits::{Extent, Limits, MAX_GPUS};
use crate::scenario::{Mode, Scenario};

/// What a plan is, in words: enough to tell one export or embed from another.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// `Llama 3 8B`
    pub model: String,
    /// `H100 SXM 80GB`
    pub gpu: String,
    /// GPUs in the job (the layout's world size).
    pub gpus: u64,
    /// `dp 8 · tp 1 · pp 1 · ZeRO-3`
    pub layout: String,
    /// `bf16 mixed (AMP)`
    pub precision: String,
    /// `fits`, `spills`, `out of memory`, or `no estimate` (no model to estimate).
    pub outcome: &'static str,
    /// `62.1 of 80.0 GiB`: the per-GPU peak against the capacity.
    pub usage: String,
    /// `micro-batch 4 × 2,048 tokens`: what one GPU processes at once.
    pub batch: String,
}

impl Summary {
    pub fn new(s: &Scenario, b: &Breakdown, units: Units) -> Summary {
        let outcome = if b.capacity == 0 { "no estimate" } else { crate::chart::outcome_word(b.spill.outcome) };
        Summary {
            model: model_name(&s.model),
            gpu: device_name(&s.device),
            gpus: s.parallel.world_size(),
            layout: layout_label(&s.parallel),
            precision: precision_label(s.training.precision).to_string(),
            outcome,
            usage: usage(b.total, b.capacity, units),
            batch: batch_label(s),
        }
    }

    /// `Llama 3 8B · 8 × H100 SXM 80GB`
    pub fn title(&self) -> String {
        format!("{} · {} × {}", self.model, self.gpus, self.gpu)
    }

    /// `fits (62.1 of 80.0 GiB)`
    pub fn verdict(&self) -> String {
        if self.outcome == "no estimate" {
            self.outcome.to_string()
        } else {
            format!("{} ({})", self.outcome, self.usage)
        }
    }

    /// `Llama 3 8B · 8 × H100 SXM 80GB · fits (62.1 of 80.0 GiB)`
    pub fn headline(&self) -> String {
        format!("{} · {}", self.title(), self.verdict())
    }

    /// `dp 8 · tp 1 · pp 1 · ZeRO-3 · bf16 mixed (AMP)`
    pub fn setup(&self) -> String {
        format!("{} · {}", self.layout, self.precision)
    }
}

/// `micro-batch 4 × 2,048 tokens`, `batch 8 × 4,096 tokens` (inference), `micro-batch 32 ×
/// 224 px images` (vision models).
pub fn batch_label(s: &Scenario) -> String {
    let t = &s.training;
    let word = if t.mode == Mode::Inference { "batch" } else { "micro-batch" };
    let image = s.model.architecture().map_or(0, |a| a.default_image_size());
    if image > 0 {
        format!("{word} {} × {} px images", thousands(t.micro_batch), thousands(t.image_size.unwrap_or(image)))
    } else {
        format!("{word} {} × {} tokens", thousands(t.micro_batch), thousands(t.seq_len))
    }
}

/// Where sizes are in decimal GB and the GPU is named in GB ("A100 80GB"), a sentence saying
/// that the name's figure is binary, so "A100 80GB" beside "85.9 GB" does not read as a
/// contradiction: NVIDIA's "80GB" parts hold 80 GiB (nvidia-smi reports the A100 80GB's
/// 81,920 MiB, `src/model/device.rs`), which is 85.9 GB.
pub fn units_note(s: &Scenario, units: Units) -> Option<String> {
    if units != Units::Gb {
        return None;
    }
    let name = device_name(&s.device);
    let figure = name.split(|c: char| c.is_whitespace() || c == '(' || c == ',').find_map(|w| w.strip_suffix("GB").and_then(|n| n.parse::<u64>().ok()))?;
    Some(format!("Sizes in GB (10⁹ bytes). The “{figure}GB” in “{name}” is binary: {figure} GiB = {}.", bytes(figure << 30, Units::Gb)))
}

/// The Planner's cheapest fix where the run does not fit (the plan of the ladder a view
/// starts from, on the scenario's own GPUs): its summary, with each change it makes.
/// `None` where the run fits or nothing was estimated.
pub fn cheapest_fix(s: &Scenario, b: &Breakdown, units: Units) -> Option<PlanSummary> {
    if b.fits || b.capacity == 0 {
        return None;
    }
    let gpus = s.parallel.world_size().max(1);
    Some(plan_summary(&escalate(s, Step::ladder_for(s, gpus), gpus), units))
}

/// The cheapest fix in one line: `Cheapest fix: ZeRO-2 on 8 GPUs — micro-batch 4 → 1, …;
/// 765 ms per step · …`, or what to change when nothing on these GPUs fits.
pub fn fix_line(fix: &PlanSummary) -> String {
    let headline = fix.headline.strip_prefix("Plan: ").unwrap_or(&fix.headline);
    if fix.fits {
        format!("Cheapest fix: {headline} — {}; {}", fix.changes, fix.lines.first().cloned().unwrap_or_default())
    } else {
        format!("No fix on these GPUs: {headline} — {}", fix.lines.join(" "))
    }
}

/// `62.1 of 80.0 GiB`, or `512 MiB of 80.0 GiB` when the units differ.
pub fn usage(total: u64, capacity: u64, units: Units) -> String {
    let (total, capacity) = (bytes(total, units), bytes(capacity, units));
    match (total.rsplit_once(' '), capacity.rsplit_once(' ')) {
        (Some((number, unit)), Some((_, same))) if unit == same => {
            format!("{number} of {capacity}")
        }
        _ => format!("{total} of {capacity}"),
    }
}

/// The breakdown as a Markdown table, sizes in GiB, under one line naming the model, the
/// GPUs and the training setup.
pub fn breakdown_markdown(scenario: &Scenario, b: &Breakdown) -> String {
    markdown_table(scenario, b, Units::Gib)
}

fn markdown_table(scenario: &Scenario, b: &Breakdown, u: Units) -> String {
    let t = &scenario.training;
    let picture = match scenario.model.architecture().as_deref() {
        Some(crate::model::arch::Architecture::Diffusion(d)) => {
            let [w, h] = t.resolution.unwrap_or(d.resolution);
            let frames = t.frames.unwrap_or(d.frames);
            Some(if frames > 1 { format!("{w} × {h} px × {frames} frames") } else { format!("{w} × {h} px") })
        }
        _ => None,
    };
    let task = if let Some(picture) = &picture {
        if t.mode == Mode::Inference {
            format!("generation, {} prompt(s) at {picture} · {}", t.micro_batch, precision_label(t.precision))
        } else {
            format!("micro-batch {} at {picture} · {} · {} · {}", t.micro_batch, precision_label(t.precision), optimizer_label(t.optimizer), fine_tuning_label(t.lora.as_ref()))
        }
    } else if t.mode == Mode::Inference {
        format!("inference, batch {} × {} tokens of context · {}", t.micro_batch, t.seq_len, precision_label(t.precision))
    } else {
        format!(
            "micro-batch {} × {} tokens · {} · {} · {}",
            t.micro_batch,
            t.seq_len,
            precision_label(t.precision),
            optimizer_label(t.optimizer),
            fine_tuning_label(t.lora.as_ref())
        )
    };
    let mut out = format!(
        "**{}** · {} parameters · {} × {} · {} · {task}\n\n| component | per GPU |\n|---|---:|\n",
        model_name(&scenario.model),
        count(b.param_count),
        scenario.parallel.world_size(),
        device_name(&scenario.device),
        layout_label(&scenario.parallel),
    );
    for c in Component::ALL {
        out.push_str(&format!("| {} | {} |\n", c.label(), bytes(b.component(c), u)));
    }
    out.push_str(&format!("| **total** | **{}** |\n| capacity | {} |\n\n", bytes(b.total, u), bytes(b.capacity, u)));
    let time = if b.step_time.decode_seconds_per_token > 0.0 {
        format!(
            "Time to first token ≈ {} (prefill), then {} per token",
            crate::format::seconds(b.step_time.prefill_seconds),
            crate::format::seconds(b.step_time.decode_seconds_per_token)
        )
    } else if picture.is_some() && t.mode == Mode::Inference {
        format!("Estimated time per denoising step {}", crate::format::seconds(b.step_time.seconds))
    } else {
        format!("Estimated step time {}", crate::format::seconds(b.step_time.seconds))
    };
    out.push_str(&format!("{}. {time}.\n", verdict(b, u).text()));
    let (fb, opt, load) = (&b.phases.forward_backward, &b.phases.optimizer_step, &b.phases.load);
    if opt.total > 0 {
        // The load is listed when it has transients of its own.
        let load_text = if b.terms.iter().any(|t| t.lifetime == crate::model::breakdown::Lifetime::Load) { format!(", load {}", bytes(load.total, u)) } else { String::new() };
        out.push_str(&format!(
            "\nPeak per phase: forward + backward {}, optimizer step {}{load_text} (the table shows the {} phase).\n",
            bytes(fb.total, u),
            bytes(opt.total, u),
            match b.phases.peak_phase {
                Phase::OptimizerStep => "optimizer-step",
                Phase::ForwardBackward => "forward/backward",
                Phase::Load => "load",
            },
        ));
    }
    for w in &b.warnings {
        out.push_str(&format!("\n> {}", in_units(w, u)));
    }
    out
}

/// One limit for people: what it is (`Largest micro-batch`) and its answer (`16 · 1.23 GiB
/// left per GPU`), or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitLine {
    pub label: String,
    pub answer: String,
    /// The value a "use this" sets, when there is one.
    pub value: Option<u64>,
}

/// The three limits of `s` in words: the largest micro-batch, the longest sequence (or the
/// largest image side), the fewest GPUs of its type with the plan the ladder would use there
/// and each change that plan makes to `s`.
pub fn limit_lines(s: &Scenario, l: &Limits, units: Units) -> [LimitLine; 3] {
    let left = |bytes_left: u64| format!("{} left per GPU", bytes(bytes_left, units));
    let inference = s.training.mode == Mode::Inference;
    let micro = LimitLine {
        label: if inference { "Largest batch (concurrent sequences)" } else { "Largest micro-batch" }.into(),
        answer: match l.max_micro_batch {
            Some(m) => format!("{} · {}", thousands(m.value), left(m.memory_left)),
            None => format!(
                "none fits: one {} is already over",
                match l.extent {
                    Extent::ImageSide | Extent::Resolution | Extent::Frames => "image",
                    Extent::Tokens => "sequence",
                }
            ),
        },
        value: l.max_micro_batch.map(|m| m.value),
    };
    let (label, unit, none) = match l.extent {
        Extent::Tokens => (if inference { "Longest context" } else { "Longest sequence" }, "tokens", "none fits, even at the shortest"),
        Extent::ImageSide => ("Largest image side", "px", "none fits, even at the smallest"),
        Extent::Resolution => ("Largest width (same aspect ratio)", "px", "none fits, even at the smallest"),
        Extent::Frames => ("Most frames", "frames", "none fits, even one frame"),
    };
    let extent = LimitLine {
        label: label.into(),
        answer: match l.max_extent {
            Some(n) => format!("{} {unit} · {}", thousands(n.value), left(n.memory_left)),
            None => none.into(),
        },
        value: l.max_extent.map(|n| n.value),
    };
    let gpus = LimitLine {
        label: format!("Fewest {}", device_name(&s.device)),
        answer: match &l.min_gpus {
            Some((g, plan)) => {
                if plan.kept.is_empty() && *s == plan.result.scenario {
                    format!("{} · as entered · {}", thousands(g.value), left(g.memory_left))
                } else {
                    let steps = if plan.kept.is_empty() { "laid out".to_string() } else { plan.kept.iter().map(|k| k.label()).collect::<Vec<_>>().join(" + ") };
                    format!("{} · {steps} ({}) · {}", thousands(g.value), changes_text(s, &plan.result.scenario), left(g.memory_left))
                }
            }
            None => format!("none up to {} GPUs fits this run", thousands(MAX_GPUS)),
        },
        value: l.min_gpus.as_ref().map(|(g, _)| g.value),
    };
    [micro, extent, gpus]
}

/// The limits as a Markdown list under a heading line.
pub fn limits_markdown(s: &Scenario, l: &Limits, units: Units) -> String {
    let mut out = String::from("**Limits** (everything else as entered; the fewest GPUs keep the model, precision and optimizer):\n\n");
    for line in limit_lines(s, l, units) {
        out.push_str(&format!("- {}: {}\n", line.label, line.answer));
    }
    out
}

/// `text` with every binary size it states ("160.1 GiB", "512 MiB": the model's warnings
/// are written in binary units) restated in `units`, so an export in GB says GB throughout.
pub fn in_units(text: &str, units: Units) -> String {
    if units == Units::Gib {
        return text.to_string();
    }
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let scale = words.get(i + 1).and_then(|unit| {
            let bare = unit.trim_end_matches(|c: char| c.is_ascii_punctuation());
            ["KiB", "MiB", "GiB", "TiB"].iter().position(|u| *u == bare).map(|k| (1u64 << (10 * (k + 1))) as f64)
        });
        match (words[i].parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0), scale) {
            (Some(n), Some(scale)) => {
                let unit = words[i + 1];
                let tail = &unit[unit.trim_end_matches(|c: char| c.is_ascii_punctuation()).len()..];
                out.push(format!("{}{tail}", bytes((n * scale) as u64, units)));
                i += 2;
            }
            _ => {
                out.push(words[i].to_string());
                i += 1;
            }
        }
    }
    out.join(" ")
}

/// The line that says where an export came from: `Scenario: <link> · exported 2026-12-03`
/// (without the link when there is none).
fn provenance(link: &str, date: &str, markdown: bool) -> String {
    match (link.is_empty(), markdown) {
        (true, _) => format!("Exported from Headroom on {date}"),
        (false, true) => format!("[Open this scenario in Headroom](<{link}>) · exported {date}"),
        (false, false) => format!("{} · {date}", crate::safe_text::clip(link, MAX_IMAGE_LINK)),
    }
}

/// Longest link an image shows in full; a longer one (a pasted config travels in it) is cut.
const MAX_IMAGE_LINK: usize = 120;

/// The Markdown export: a heading with the model, GPUs and outcome, the verdict, the
/// cheapest fix with each change it makes (where the run does not fit), the breakdown table
/// (in `units`, under its line with the layout and precision), the limits, a note where GB
/// and the GPU's name differ, and the link to the scenario with the date. One unit system
/// throughout: `units`.
pub fn export_markdown(s: &Scenario, b: &Breakdown, units: Units, link: &str, date: &str) -> String {
    let summary = Summary::new(s, b, units);
    let mut out = format!("## {}: {}\n\n**Verdict:** {}\n\n", summary.title(), summary.outcome, verdict(b, units).text());
    if let Some(fix) = cheapest_fix(s, b, units) {
        let line = fix_line(&fix);
        let (head, rest) = line.split_once(": ").unwrap_or((&line, ""));
        out.push_str(&format!("**{head}:** {rest}\n\n"));
    }
    out.push_str(markdown_table(s, b, units).trim_end());
    out.push_str("\n\n");
    if b.capacity > 0 {
        out.push_str(&limits_markdown(s, &crate::plan::limits::limits(s), units));
        out.push('\n');
    }
    if let Some(note) = units_note(s, units) {
        out.push_str(&format!("{note}\n\n"));
    }
    out.push_str(&provenance(link, date, true));
    out.push('\n');
    out
}

/// The JSON export: `{"scenario", "summary", "verdict", "cheapest_fix", "limits",
/// "breakdown", "units", "units_note", "link", "date"}`. `scenario` is the input exactly as
/// the page and the CLI read it (`headroom estimate` takes it back); `limits` is the
/// estimate's contract (`plan::limits`); `cheapest_fix` is `null` where the run fits.
pub fn export_json(s: &Scenario, b: &Breakdown, units: Units, link: &str, date: &str) -> Value {
    let summary = Summary::new(s, b, units);
    let fix = cheapest_fix(s, b, units).map(|f| {
        json!({
            "fits": f.fits,
            "headline": f.headline,
            "changes": f.changes,
            "details": f.lines,
            "text": fix_line(&f),
        })
    });
    let limits = (b.capacity > 0).then(|| crate::plan::limits::limits(s).to_json());
    json!({
        "scenario": s,
        "summary": {
            "title": summary.headline(),
            "model": summary.model,
            "gpu": summary.gpu,
            "gpus": summary.gpus,
            "batch": summary.batch,
            "layout": summary.layout,
            "precision": summary.precision,
            "outcome": summary.outcome,
            "usage_per_gpu": summary.usage,
        },
        "verdict": verdict(b, units).text(),
        "cheapest_fix": fix,
        "limits": limits,
        "breakdown": b,
        "units": units.label(),
        "units_note": units_note(s, units),
        "link": link,
        "date": date,
    })
}

/// Height the title of an exported chart takes above the chart, in CSS pixels.
pub const EXPORT_TITLE_HEIGHT: u32 = 72;

/// The chart option of the PNG and SVG exports: the planner's chart ([`memory_chart`]), not
/// animated, on white, under a title naming the model, the GPUs and the batch × sequence
/// and a subtitle with the setup (layout and precision), the verdict, the GB/GiB note where
/// the units differ from the GPU's name, the link and the date. The legend and the plot move down by
/// [`EXPORT_TITLE_HEIGHT`] to make room.
pub fn export_chart(s: &Scenario, b: &Breakdown, units: Units, link: &str, date: &str) -> Value {
    let summary = Summary::new(s, b, units);
    let ink = || Color::Value("#1f2328".into());
    let note = units_note(s, units).map(|n| format!("\n{n}")).unwrap_or_default();
    let title = Title::new()
        .text(format!("{} · {}", summary.title(), summary.batch))
        .subtext(format!("{} · {}{note}\n{}", summary.setup(), summary.verdict(), provenance(link, date, false)))
        .left(16)
        .top(8)
        .item_gap(6)
        .text_style(TextStyle::new().font_size(17).font_weight(FontWeight::Bold).color(ink()))
        .subtext_style(TextStyle::new().font_size(12).line_height(17).color(Color::Value("#57606a".into())));
    let chart = memory_chart(b, units).title(title).animation(false).background_color(Color::Value("#ffffff".into()));
    let mut option: Value = serde_json::from_str(&crate::chart::option_json(&chart)).unwrap_or(Value::Null);
    for key in ["legend", "grid"] {
        shift_down(&mut option[key], EXPORT_TITLE_HEIGHT as f64);
    }
    option
}

/// Adds `by` to the numeric `top` of a component (or of each, for a list).
fn shift_down(component: &mut Value, by: f64) {
    match component {
        Value::Array(items) => items.iter_mut().for_each(|c| shift_down(c, by)),
        Value::Object(map) => {
            let top = map.get("top").and_then(Value::as_f64).unwrap_or(0.0);
            map.insert("top".into(), json!(top + by));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Lora, Zero};

    const LINK: &str = "https://example.org/headroom/?v=1&m=gpt2&dp=8";

    /// Llama 3 8B on 8 H100s with ZeRO-3 (fits), and the default single H100 (does not).
    fn plans() -> [(Scenario, Breakdown); 2] {
        let mut fits = Scenario::default();
        fits.parallel.dp = 8;
        fits.parallel.zero = Zero::Parameters;
        let oom = Scenario::default();
        [(fits.clone(), crate::estimate(&fits)), (oom.clone(), crate::estimate(&oom))]
    }

    #[test]
    fn summary_names_model_gpus_layout_precision_and_verdict() {
        let [(s, b), (s1, b1)] = plans();
        let summary = Summary::new(&s, &b, Units::Gib);
        assert_eq!(summary.title(), "Llama 3 8B · 8 × H100 SXM 80GB");
        assert_eq!(summary.setup(), "dp 8 · tp 1 · pp 1 · ZeRO-3 · bf16 mixed (AMP)");
        assert!(b.fits);
        assert_eq!(summary.verdict(), format!("fits ({} of {})", bytes(b.total, Units::Gib).trim_end_matches(" GiB"), bytes(b.capacity, Units::Gib)));
        assert!(summary.headline().starts_with("Llama 3 8B · 8 × H100 SXM 80GB · fits ("), "{}", summary.headline());
        let one = Summary::new(&s1, &b1, Units::Gb);
        assert_eq!(one.title(), "Llama 3 8B · 1 × H100 SXM 80GB");
        assert_eq!(one.outcome, "out of memory");
        assert!(one.usage.ends_with(" GB"), "{}", one.usage);
        // No model: nothing to judge, and no panic.
        let none = Summary::new(&Scenario::default(), &Breakdown::default(), Units::Gib);
        assert_eq!(none.verdict(), "no estimate");
    }

    #[test]
    fn usage_names_the_unit_once_when_both_share_it() {
        const GIB: u64 = 1 << 30;
        assert_eq!(usage(62 * GIB, 80 * GIB, Units::Gib), "62.0 of 80.0 GiB");
        assert_eq!(usage(512 << 20, 80 * GIB, Units::Gib), "512 MiB of 80.0 GiB");
        assert_eq!(usage(0, 0, Units::Gb), "0 of 0 B");
    }

    #[test]
    fn markdown_export_carries_the_context_link_and_date() {
        let [(s, b), _] = plans();
        let md = export_markdown(&s, &b, Units::Gib, LINK, "2026-12-03");
        assert!(md.starts_with("## Llama 3 8B · 8 × H100 SXM 80GB: fits\n"), "{md}");
        for needle in ["· dp 8 · tp 1 · pp 1 · ZeRO-3 ·", "· bf16 mixed (AMP) ·", "| **total** |", "Fits with", &format!("(<{LINK}>) · exported 2026-12-03")] {
            assert!(md.contains(needle), "{needle} missing from\n{md}");
        }
        assert!(export_markdown(&s, &b, Units::Gib, "", "2026-12-03").ends_with("Exported from Headroom on 2026-12-03\n"));
    }

    /// The CLI's table names the model, the GPUs and the fine-tuning as people do.
    #[test]
    fn breakdown_markdown_is_readable() {
        let mut s = Scenario::default();
        s.training.lora = Some(Lora::default());
        let md = breakdown_markdown(&s, &crate::estimate(&s));
        assert!(
            md.starts_with(
                "**Llama 3 8B** · 8.03 B parameters · 1 × H100 SXM 80GB · dp 1 · tp 1 · pp 1 · no ZeRO · micro-batch 1 × 4096 tokens · bf16 mixed (AMP) · AdamW · LoRA r16\n"
            ),
            "{md}"
        );
    }

    /// The JSON export holds the input scenario, which reads back as the same scenario.
    #[test]
    fn json_export_round_trips_its_scenario() {
        let [(s, b), _] = plans();
        let v = export_json(&s, &b, Units::Gib, LINK, "2026-12-03");
        assert_eq!(v["link"], LINK);
        assert_eq!(v["date"], "2026-12-03");
        assert_eq!(v["summary"]["model"], "Llama 3 8B");
        assert_eq!(v["summary"]["gpu"], "H100 SXM 80GB");
        assert_eq!(v["summary"]["gpus"], 8);
        assert_eq!(v["summary"]["outcome"], "fits");
        assert_eq!(v["breakdown"]["total"], b.total);
        let back = Scenario::from_json(&v["scenario"].to_string()).expect("the scenario reads back");
        assert_eq!(back.scenario, s);
    }

    #[test]
    fn chart_export_has_a_title_and_makes_room_for_it() {
        let [(s, b), _] = plans();
        let plain = serde_json::to_value(memory_chart(&b, Units::Gib)).expect("json");
        let long = format!("{LINK}&hf={}", "x".repeat(500));
        let option = export_chart(&s, &b, Units::Gib, &long, "2026-12-03");
        let title = &option["title"];
        let title = if title.is_array() { &title[0] } else { title };
        assert_eq!(title["text"], "Llama 3 8B · 8 × H100 SXM 80GB · micro-batch 1 × 4,096 tokens");
        let sub = title["subtext"].as_str().expect("subtext");
        assert!(sub.starts_with("dp 8 · tp 1 · pp 1 · ZeRO-3 · bf16 mixed (AMP) · fits ("), "{sub}");
        assert!(sub.ends_with("… · 2026-12-03") && sub.contains(LINK) && sub.len() < 300, "{sub}");
        assert_eq!(option["animation"], false);
        assert_eq!(option["backgroundColor"], "#ffffff");
        let top = |v: &Value, key: &str| {
            let c = &v[key];
            (if c.is_array() { &c[0] } else { c })["top"].as_f64().unwrap_or(0.0)
        };
        for key in ["legend", "grid"] {
            assert_eq!(top(&option, key), top(&plain, key) + EXPORT_TITLE_HEIGHT as f64, "{key}");
        }
        assert_eq!(option["series"], plain["series"]);
    }

    /// Issue 20's study case: micro-batch 4 × 2048 on 8 × A100 does not fit; the exports
    /// carry the verdict, the cheapest fix with every change it makes (the batch trade
    /// included), the limits and the link, in one unit system; in GB, the GPU's "80GB" is
    /// explained.
    #[test]
    fn exports_carry_the_fix_its_changes_and_the_limits() {
        let mut s = Scenario::default();
        s.training.seq_len = 2048;
        s.training.micro_batch = 4;
        s.parallel.dp = 8;
        s.device = crate::scenario::DeviceSpec::preset("a100-80gb");
        let b = crate::estimate(&s);
        assert!(!b.fits);
        let md = export_markdown(&s, &b, Units::Gib, LINK, "2026-12-03");
        for needle in [
            "**Verdict:** Out of memory",
            "**Cheapest fix:** Smaller micro-batch + ZeRO-2 on 8 GPUs — micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2; ",
            "**Limits**",
            "- Largest micro-batch: none fits",
            "- Fewest A100 80GB SXM: ",
            &format!("(<{LINK}>)"),
        ] {
            assert!(md.contains(needle), "{needle} missing from\n{md}");
        }
        assert!(!md.contains(" GB") && !md.contains("units differ"), "GiB throughout:\n{md}");
        let gb = export_markdown(&s, &b, Units::Gb, LINK, "2026-12-03");
        let (body, note) = gb.split_once("Sizes in GB").expect("the note");
        assert!(!body.contains(" GiB") && !body.contains(" MiB") && !note.contains(" MiB"), "GB throughout:\n{gb}");
        assert_eq!(in_units("peaks at 160.1 GiB, and 512 MiB.", Units::Gb), "peaks at 172 GB, and 537 MB.");
        assert!(gb.contains("Sizes in GB (10⁹ bytes). The “80GB” in “A100 80GB SXM” is binary: 80 GiB = 85.9 GB."), "{gb}");
        let v = export_json(&s, &b, Units::Gb, LINK, "2026-12-03");
        assert_eq!(v["cheapest_fix"]["changes"], "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2");
        assert!(v["verdict"].as_str().is_some_and(|t| t.starts_with("Out of memory")), "{}", v["verdict"]);
        assert!(v["limits"]["max_micro_batch"].is_null() && v["limits"]["min_gpus"].is_u64(), "{}", v["limits"]);
        assert_eq!(v["units"], "GB");
        assert_eq!(v["summary"]["batch"], "micro-batch 4 × 2,048 tokens");
        // Where it fits there is no fix, and the limits are numbers.
        let [(fits, bf), _] = plans();
        let v = export_json(&fits, &bf, Units::Gib, LINK, "2026-12-03");
        assert!(v["cheapest_fix"].is_null() && v["limits"]["max_micro_batch"].is_u64() && v["units_note"].is_null());
        // The image's title carries model, GPUs, batch × sequence; its subtitle precision and verdict.
        let option = export_chart(&s, &b, Units::Gb, LINK, "2026-12-03");
        let title = if option["title"].is_array() { &option["title"][0] } else { &option["title"] };
        assert_eq!(title["text"], "Llama 3 8B · 8 × A100 80GB SXM · micro-batch 4 × 2,048 tokens");
        let sub = title["subtext"].as_str().expect("subtext");
        assert!(sub.contains("bf16 mixed (AMP) · out of memory (") && sub.contains("80 GiB = 85.9 GB"), "{sub}");
    }
}
