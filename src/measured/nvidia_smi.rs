//! `nvidia-smi --query-gpu=memory.used,memory.total --format=csv` output, with or without
//! `noheader` and `nounits`:
//!
//! ```text
//! memory.used [MiB], memory.total [MiB]
//! 10240 MiB, 81559 MiB
//! ```
//!
//! With a header, columns are found by name (`memory.used`, `memory.total`; others such as
//! `index` or `name` are skipped) and the header's `[MiB]` is the unit of bare numbers. Without
//! one, the columns are `memory.used[, memory.total]` and bare numbers are MiB (nvidia-smi's
//! unit). One row per GPU: the first is read, and a note says so when there are more.

use super::measurement::{Format, MeasureError, Measured};
use super::units::{quote, size};

const MIB: u64 = 1 << 20;

/// Whether the first non-blank line is an nvidia-smi header or a row of numbers.
pub(super) fn looks_like(first: &str) -> bool {
    first.contains("memory.") || first.starts_with(|c: char| c.is_ascii_digit())
}

/// The header's columns: (index of memory.used, index of memory.total, unit of bare numbers).
struct Columns {
    used: Option<usize>,
    total: Option<usize>,
    count: usize,
    unit: u64,
}

fn header(line: &str, n: usize) -> Result<Columns, MeasureError> {
    let names: Vec<&str> = line.split(',').map(str::trim).collect();
    let mut c = Columns { used: None, total: None, count: names.len(), unit: MIB };
    for (i, name) in names.iter().enumerate() {
        let (key, unit) = match name.split_once('[') {
            Some((key, rest)) => (key.trim(), Some(rest.trim_end_matches(']').trim())),
            None => (name.trim(), None),
        };
        match key {
            "memory.used" => c.used = Some(i),
            "memory.total" => c.total = Some(i),
            _ => continue,
        }
        if let Some(unit) = unit {
            c.unit = super::units::unit_bytes(unit).ok_or_else(|| MeasureError::at(n, format!("{key}: unknown unit [{unit}] in the header (expected MiB)")))?;
        }
    }
    if c.used.is_none() && c.total.is_none() {
        return Err(MeasureError::at(n, "the nvidia-smi header names neither memory.used nor memory.total (query them with --query-gpu=memory.used,memory.total)"));
    }
    Ok(c)
}

/// Read the first GPU's row.
pub(super) fn parse(text: &str) -> Result<Measured, MeasureError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty()).peekable();
    let (first_n, first) = *lines.peek().expect("looks_like saw a line");
    let columns = if first.contains("memory.") {
        lines.next();
        header(first, first_n)?
    } else {
        let count = first.split(',').count();
        if count > 2 {
            return Err(MeasureError::at(
                first_n,
                format!("{count} columns without a header: cannot tell which is which (query memory.used,memory.total, or keep the header with --format=csv)"),
            ));
        }
        Columns { used: Some(0), total: (count == 2).then_some(1), count, unit: MIB }
    };
    let mut m = Measured::new(Format::NvidiaSmi);
    let mut rows = 0;
    let mut with_units = None;
    for (n, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != columns.count {
            return Err(MeasureError::at(n, format!("{} of {} columns: the output looks truncated or mixed with other text", cells.len(), columns.count)));
        }
        let mut read = |index: Option<usize>, what: &str| -> Result<Option<u64>, MeasureError> {
            let Some(i) = index else { return Ok(None) };
            let cell = cells[i];
            if cell.contains("N/A") {
                return Err(MeasureError::at(n, format!("{what} is not available on this GPU ({})", quote(cell))));
            }
            let has_unit = cell.contains(|c: char| c.is_ascii_alphabetic());
            if *with_units.get_or_insert(has_unit) != has_unit {
                return Err(MeasureError::at(
                    n,
                    format!("{what}: {} {} a unit where the first row {}", quote(cell), if has_unit { "has" } else { "lacks" }, if has_unit { "had none" } else { "had one" }),
                ));
            }
            size(cell, Some(columns.unit), what).map(Some).map_err(|e| MeasureError::at(n, e))
        };
        let used = read(columns.used, "memory.used")?;
        let total = read(columns.total, "memory.total")?;
        if let (Some(u), Some(t)) = (used, total) {
            if u > t {
                return Err(MeasureError::at(
                    n,
                    "memory.used is larger than memory.total: are the columns in another order? (without a header they are read as memory.used, memory.total)",
                ));
            }
        }
        rows += 1;
        if rows == 1 {
            m.used = used;
            m.total = total;
            m.notes.push(format!("nvidia-smi memory.used counts every process on the GPU, read at one moment (line {n})"));
        }
    }
    match rows {
        0 => Err(MeasureError::at(first_n, "an nvidia-smi header with no GPU rows below it: the output looks truncated")),
        1 => Ok(m),
        _ => {
            m.notes.push(format!("nvidia-smi listed {rows} GPUs; the first row is read (pick one with nvidia-smi -i INDEX)"));
            Ok(m)
        }
    }
}
