//! A `Comparison` as Markdown: one table (measured, predicted, difference per quantity), the
//! sentences, and the notes. Used by `headroom check --format markdown`.

use super::compare::Comparison;
use super::measurement::Format;
use crate::format::{bytes, Units};

fn signed(d: i64) -> String {
    let sign = if d > 0 {
        "+"
    } else if d < 0 {
        "−"
    } else {
        ""
    };
    format!("{sign}{}", bytes(d.unsigned_abs(), Units::Gib))
}

/// The comparison as a Markdown section.
pub fn comparison_markdown(c: &Comparison) -> String {
    let m = &c.measured;
    let source = match m.format {
        Format::MemorySummary => "torch.cuda.memory_summary()",
        Format::NvidiaSmi => "nvidia-smi",
        Format::Json => "measurement JSON",
    };
    let mut out = format!("## Measured run beside the plan\n\nMeasured with {source}; bytes per GPU.\n\n| quantity | measured | predicted | difference |\n|---|---:|---:|---:|\n");
    let opt = |v: Option<u64>| v.map_or("—".to_string(), |v| bytes(v, Units::Gib));
    for (name, measured, predicted) in
        [("allocated peak", m.allocated_peak, c.predicted.allocated_peak), ("reserved peak", m.reserved_peak, c.predicted.reserved_peak), ("used", m.used, c.predicted.used)]
    {
        let diff = measured.map_or("—".to_string(), |v| signed((v as i128 - predicted as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64));
        out.push_str(&format!("| {name} | {} | {} | {diff} |\n", opt(measured), bytes(predicted, Units::Gib)));
    }
    if !c.differences.is_empty() {
        out.push_str("\n| category | measured | predicted | difference |\n|---|---:|---:|---:|\n");
        for d in &c.differences {
            out.push_str(&format!("| {} | {} | {} | {} |\n", d.category.label(), bytes(d.measured, Units::Gib), bytes(d.predicted, Units::Gib), signed(d.difference)));
        }
        out.push('\n');
        for d in &c.differences {
            out.push_str(&format!("- {}\n", d.sentence));
        }
    }
    let notes: Vec<&String> = m.notes.iter().chain(&c.notes).collect();
    if !notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    out
}
