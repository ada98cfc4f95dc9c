//! `headroom check [SCENARIO|-] --measured FILE [--format json|markdown]`: a measured run
//! beside the plan. The scenario is estimated, the measurement (memory_summary() text,
//! nvidia-smi CSV or the JSON of `docs/measure-your-run.py`) parsed, and the comparison printed.
//! A bad measurement is one line naming the file and its line (exit status 2).

use std::io::Read;

use super::{json, Options};
use crate::estimate;
use crate::measured::{compare, comparison_markdown, parse_measurement_bytes};

pub(super) fn check_command(o: &Options) -> Result<String, String> {
    let markdown = match o.get("--format") {
        None | Some("json") => false,
        Some("markdown") | Some("md") => true,
        Some(other) => return Err(format!("--format: expected json or markdown, got {other}")),
    };
    let path = o.get("--measured").ok_or("--measured FILE is required (memory_summary() text, nvidia-smi CSV or the JSON docs/measure-your-run.py prints)")?;
    if path == "-" && matches!(o.input.as_deref(), None | Some("-")) {
        return Err("--measured - reads stdin, so the scenario must come from a file".into());
    }
    let bytes = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map_err(|e| format!("reading stdin: {e}"))?;
        bytes
    } else {
        std::fs::read(path).map_err(|e| format!("{path}: {e}"))?
    };
    let measured = parse_measurement_bytes(&bytes).map_err(|e| format!("{}: {e}", if path == "-" { "stdin" } else { path }))?;
    let (scenario, warnings) = o.scenario()?;
    let mut breakdown = estimate(&scenario);
    breakdown.warnings.splice(0..0, warnings);
    let comparison = compare(&measured, &breakdown);
    if markdown {
        Ok(comparison_markdown(&comparison))
    } else {
        json(&comparison)
    }
}
