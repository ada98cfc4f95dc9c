//! The largest input Headroom reads on each way in, checked before anything is parsed.
//!
//! Every way in (a link, a saved scenario, a pasted or fetched config.json, a pasted or
//! loaded measurement, a scenario file on the command line) is bounded here, so the work and
//! memory any input can cause are bounded too: a longer input is refused at once with a
//! message naming what was too large and the limit, and what the user had is kept.
//!
//! The limits are far above real inputs: the largest Hub `config.json` of the catalogue's
//! families is under 40 KiB (a multimodal config with its vision and text parts); a planner
//! link carrying such a config in base64url is under 64 KiB per model and Compare holds a few
//! columns; a `torch.cuda.memory_summary()` is about 4 KiB and an engine's startup log a few
//! hundred KiB.

use crate::error::InputError;

/// The longest link query read: room for a pasted config in each of Compare's columns.
pub const LINK_CHARS: usize = 512 * 1024;

/// The most parameters of one link read; a link holds about 60 scenario keys at most, and
/// Compare's columns one each.
pub const LINK_PARAMS: usize = 256;

/// The most problems of one input listed one by one; the rest are summed up in one message.
pub const PROBLEMS_LISTED: usize = 8;

/// The largest config.json read (pasted, fetched from the Hub or in a scenario file).
pub const CONFIG_BYTES: usize = 1024 * 1024;

/// The largest scenario JSON read (a file or stdin of the CLI): a config.json plus the rest.
pub const SCENARIO_BYTES: usize = 2 * 1024 * 1024;

/// The largest measurement read (memory_summary() text, nvidia-smi CSV, the measuring
/// script's JSON, or an engine's startup log).
pub const MEASURED_BYTES: usize = 4 * 1024 * 1024;

/// The largest price list read (`headroom rent --prices`: a price per catalogue device).
pub const PRICES_BYTES: usize = 1024 * 1024;

/// The largest saved scenario kept in (or read back from) the browser's storage: a link.
pub const SAVED_CHARS: usize = LINK_CHARS;

/// `Ok` when `len` (bytes or characters, as `unit` says) is at most `max`; otherwise a
/// message naming the field, the size and the limit.
pub fn check_size(field: &str, what: &str, len: usize, max: usize) -> Result<(), InputError> {
    if len <= max {
        Ok(())
    } else {
        Err(InputError::new(field, format!("{what} of {} is larger than the {} Headroom reads; nothing was read from it", size(len), size(max))))
    }
}

/// `1.5 MiB`, `512 KiB`, `300 bytes`.
fn size(n: usize) -> String {
    let n = n as f64;
    if n >= 1024.0 * 1024.0 {
        format!("{} MiB", crate::format::short_real((n / 1024.0 / 1024.0 * 10.0).round() / 10.0))
    } else if n >= 1024.0 {
        format!("{} KiB", crate::format::short_real((n / 1024.0 * 10.0).round() / 10.0))
    } else {
        format!("{n} bytes")
    }
}

/// The problems as shown: the first [`PROBLEMS_LISTED`] − 1 as they are, the rest summed up in
/// one message naming how many there were and the first few fields.
pub fn summarise(mut problems: Vec<InputError>, field: &str) -> Vec<InputError> {
    if problems.len() <= PROBLEMS_LISTED {
        return problems;
    }
    let rest = problems.split_off(PROBLEMS_LISTED - 1);
    let mut names: Vec<&str> = rest.iter().map(|e| e.field.as_str()).take(4).collect();
    names.dedup();
    problems.push(InputError::new(field, format!("{} more problems, not listed one by one (in {}, …)", rest.len(), names.join(", "))));
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_refused_past_the_limit_only() {
        assert!(check_size("config.json", "a config", CONFIG_BYTES, CONFIG_BYTES).is_ok());
        let e = check_size("config.json", "a config", 50 << 20, CONFIG_BYTES).unwrap_err();
        assert_eq!(e.to_string(), "config.json: a config of 50 MiB is larger than the 1 MiB Headroom reads; nothing was read from it");
    }

    #[test]
    fn many_problems_become_one_summary() {
        let many: Vec<InputError> = (0..1000).map(|i| InputError::new(format!("url.k{i}"), "unknown parameter ignored")).collect();
        let shown = summarise(many, "url");
        assert_eq!(shown.len(), PROBLEMS_LISTED);
        assert_eq!(shown.last().unwrap().to_string(), "url: 993 more problems, not listed one by one (in url.k7, url.k8, url.k9, url.k10, …)");
        assert_eq!(summarise(shown.clone(), "url"), shown);
    }
}
