//! `torch.cuda.memory_summary()` printouts.
//!
//! The layout is PyTorch's (`torch/cuda/memory.py`, `memory_summary`, unchanged in 2.15): a
//! 75-column box of `|`-separated rows; the header row `Metric | Cur Usage | Peak Usage |
//! Tot Alloc | Tot Freed`; size rows "Allocated memory", "Active memory", "Requested memory",
//! "GPU reserved memory", "Non-releasable memory", each followed by "from large pool" / "from
//! small pool" rows unless `abbreviated=True`; then count rows. `_format_size` prints
//! `{n:6d} {unit}` with unit `B  `, `KiB`, `MiB`, `GiB`, `TiB` or `PiB`, chosen per column from the
//! "all" row (the next unit once the value reaches 768 of it) and the value rounded **down**:
//! a peak of 20,112,345,088 B prints as `19180 MiB`, which reads back as 20,111,687,680 B.
//!
//! Lines outside the box (log prefixes, other output) are skipped. A second summary in the same
//! text is ignored (with a note). Samples: `tests/fixtures/measured_runs/*.txt`, made by
//! `tests/measure/memory_summary_samples.py` with PyTorch's own formatting code.

use super::measurement::{Format, MeasureError, Measured};
use super::units::{size, unit_name, unit_of, whole_number};

const ALLOCATED: &str = "Allocated memory";
const RESERVED: &str = "GPU reserved memory";
const NON_RELEASABLE: &str = "Non-releasable memory";
/// Rows whose four value cells are sizes.
const SIZE_ROWS: [&str; 5] = [ALLOCATED, "Active memory", "Requested memory", RESERVED, NON_RELEASABLE];
/// Rows whose value cells are counts.
const COUNT_ROWS: [&str; 6] = ["Allocations", "Active allocs", "GPU reserved segments", "Non-releasable allocs", "Oversize allocations", "Oversize GPU segments"];
const COLUMNS: [&str; 4] = ["Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"];

/// Whether the text holds a summary box: a `|` row naming the summary or one of its rows.
pub(super) fn looks_like(text: &str) -> bool {
    let mut rows = text.lines().map(str::trim).filter(|l| !l.is_empty());
    if rows.clone().next().is_some_and(|l| l.starts_with('|')) {
        return true;
    }
    rows.any(|l| l.starts_with('|') && (l.contains("memory summary") || l.contains(ALLOCATED) || l.contains(RESERVED) || l.contains("Peak Usage")))
}

/// The cells of a `|a | b |` row, trimmed.
fn cells(line: &str) -> Vec<&str> {
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim).collect()
}

/// Read the peaks of the first summary in `text`.
pub(super) fn parse(text: &str) -> Result<Measured, MeasureError> {
    let mut m = Measured::new(Format::MemorySummary);
    // Index of the Peak Usage cell (after the row name); the header row may move it.
    let mut peak = 2;
    let mut last = 1;
    let mut summaries = 0;
    let mut units: Vec<(&str, u64)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('|') {
            continue;
        }
        let row = cells(line);
        let name = row[0];
        if name.contains("memory summary") {
            summaries += 1;
            if summaries > 1 {
                m.notes.push(format!("the text holds more than one memory_summary(); the first is read and the one from line {n} on is ignored"));
                break;
            }
            if let Some(device) = name.rsplit("device ID").next().map(str::trim).filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
                m.notes.push(format!("memory_summary() of CUDA device {device}"));
            }
        }
        last = n;
        if name.starts_with("CUDA OOMs:") {
            let ooms = whole_number(name.trim_start_matches("CUDA OOMs:"), "CUDA OOMs").map_err(|e| MeasureError::at(n, e))?;
            let retries =
                row.get(1).and_then(|c| c.strip_prefix("cudaMalloc retries:")).map(|c| whole_number(c, "cudaMalloc retries")).transpose().map_err(|e| MeasureError::at(n, e))?;
            if ooms > 0 || retries.unwrap_or(0) > 0 {
                m.notes.push(format!(
                    "the run reported {ooms} CUDA out-of-memory error(s) and {} cudaMalloc retries (allocations that succeeded only after the cache was freed): it reached the GPU's capacity, so its peaks may be capped by it",
                    retries.unwrap_or(0)
                ));
            }
        } else if name == "Metric" {
            peak = row.iter().position(|c| *c == "Peak Usage").ok_or_else(|| MeasureError::at(n, "the header row has no \"Peak Usage\" column"))?;
        } else if SIZE_ROWS.contains(&name) {
            if row.len() < 5 {
                return Err(MeasureError::at(n, format!("the {name:?} row is cut short ({} of 5 columns): the summary looks truncated", row.len())));
            }
            for (column, cell) in COLUMNS.iter().zip(&row[1..5]) {
                size(cell, None, &format!("{name}, {column}")).map_err(|e| MeasureError::at(n, e))?;
            }
            let cell = row.get(peak).copied().unwrap_or("");
            let value = size(cell, None, &format!("{name}, Peak Usage")).map_err(|e| MeasureError::at(n, e))?;
            let slot = match name {
                ALLOCATED => &mut m.allocated_peak,
                RESERVED => &mut m.reserved_peak,
                NON_RELEASABLE => &mut m.non_releasable_peak,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value);
                units.push((name, unit_of(cell)));
            }
        } else if COUNT_ROWS.contains(&name) && row.len() < 5 {
            return Err(MeasureError::at(n, format!("the {name:?} row is cut short ({} of 5 columns): the summary looks truncated", row.len())));
        }
    }
    let missing = [(ALLOCATED, m.allocated_peak), (RESERVED, m.reserved_peak)].into_iter().find(|(_, v)| v.is_none());
    if let Some((row, _)) = missing {
        return Err(MeasureError::at(last, format!("the summary ends before its {row:?} row: it looks truncated (paste the whole memory_summary() output)")));
    }
    let rounded: Vec<String> = units.iter().filter(|(_, u)| *u > 1).map(|(row, u)| format!("{row} to {}", unit_name(*u))).collect();
    if !rounded.is_empty() {
        m.notes.push(format!("memory_summary() rounds down to the unit it prints ({}): the true peaks are up to one unit higher", rounded.join(", ")));
    }
    Ok(m)
}
