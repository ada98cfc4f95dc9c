//! The measurement JSON `docs/measure-your-run.py` prints, in bytes:
//!
//! ```json
//! {"max_memory_allocated": 20112345088, "max_memory_reserved": 23028826112,
//!  "used": 24410390528, "total": 85045346304}
//! ```
//!
//! `max_memory_allocated` and `max_memory_reserved` are `torch.cuda.max_memory_allocated()` /
//! `max_memory_reserved()`; `used` and `total` come from `torch.cuda.mem_get_info()` (total − free,
//! total) or NVML. Every key is optional (null = absent) but one must be there; other keys are
//! ignored with a note. Errors carry serde_json's line.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::measurement::{Format, MeasureError, Measured};
use super::units::{quote, MAX_BYTES};

/// The keys this format defines.
pub(super) const KEYS: [&str; 4] = ["max_memory_allocated", "max_memory_reserved", "used", "total"];

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    max_memory_allocated: Option<u64>,
    #[serde(default)]
    max_memory_reserved: Option<u64>,
    #[serde(default)]
    used: Option<u64>,
    #[serde(default)]
    total: Option<u64>,
}

fn error(e: serde_json::Error) -> MeasureError {
    let message = e.to_string();
    // serde_json appends " at line L column C"; the line goes into the error instead.
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    let hint = match e.classify() {
        serde_json::error::Category::Eof => " (the JSON ends early: truncated?)",
        _ if message.contains("expected u64") => " (expected a whole, non-negative number of bytes)",
        _ => "",
    };
    MeasureError::at(e.line().max(1), format!("{message}{hint}"))
}

pub(super) fn parse(text: &str) -> Result<Measured, MeasureError> {
    let raw: Raw = serde_json::from_str(text).map_err(error)?;
    let keys: BTreeMap<String, IgnoredAny> = serde_json::from_str(text).map_err(error)?;
    let mut m = Measured::new(Format::Json);
    m.allocated_peak = raw.max_memory_allocated;
    m.reserved_peak = raw.max_memory_reserved;
    m.used = raw.used;
    m.total = raw.total;
    for (key, value) in KEYS.iter().zip([m.allocated_peak, m.reserved_peak, m.used, m.total]) {
        if value.is_some_and(|v| v > MAX_BYTES) {
            let line = text.find(&format!("\"{key}\"")).map_or(1, |i| text[..i].matches('\n').count() + 1);
            return Err(MeasureError::at(line, format!("{key} is more memory than any GPU has (over 1 PiB)")));
        }
    }
    if [m.allocated_peak, m.reserved_peak, m.used, m.total].iter().all(Option::is_none) {
        return Err(MeasureError::at(1, format!("the JSON has none of {}", KEYS.join(", "))));
    }
    let unknown: Vec<String> = keys.keys().filter(|k| !KEYS.contains(&k.as_str())).map(|k| quote(k)).collect();
    if !unknown.is_empty() {
        m.notes.push(format!("ignored keys: {}", unknown.join(", ")));
    }
    if let (Some(u), Some(t)) = (m.used, m.total) {
        if u > t {
            let line = text.find("\"used\"").map_or(1, |i| text[..i].matches('\n').count() + 1);
            return Err(MeasureError::at(line, format!("used ({u}) is larger than total ({t})")));
        }
    }
    Ok(m)
}
