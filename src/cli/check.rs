//! `headroom check [SCENARIO|-] --measured FILE [--format json|markdown]`: a measured run
//! beside the plan. The scenario is estimated, the measurement (memory_summary() text,
//! nvidia-smi CSV or the JSON of `docs/measure-your-run.py`) parsed, and the comparison printed.
//! A serving engine's startup log (vLLM, SGLang, TGI, llama.cpp) is compared with the
//! engine's report instead (`measured/engine_log.rs`), as JSON.
//! A bad measurement is one line naming the file and its line (exit status 2).

use std::path::PathBuf;

use clap::Args;

use super::input::{json, read_bounded, Format, Input};
use crate::estimate;
use crate::input_limits::MEASURED_BYTES;
use crate::measured::{compare, compare_engine, comparison_markdown, parse_engine_log, parse_measurement_bytes};

/// The arguments of `headroom check`.
#[derive(Args)]
pub(super) struct CheckArgs {
    #[command(flatten)]
    input: Input,
    /// The measured run: memory_summary() text, nvidia-smi CSV or the JSON docs/measure-your-run.py prints; `-` reads stdin.
    #[arg(long, value_name = "RUN")]
    measured: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub(super) fn check_command(args: &CheckArgs) -> Result<String, String> {
    let from_stdin = args.measured.as_os_str() == "-";
    if from_stdin && args.input.is_stdin() {
        return Err("--measured - reads stdin, so the scenario must come from a file".into());
    }
    let bytes = read_bounded((!from_stdin).then_some(args.measured.as_path()), MEASURED_BYTES, "a measurement")?;
    let source = if from_stdin { "stdin".into() } else { args.measured.display().to_string() };
    if let Some(log) = std::str::from_utf8(&bytes).ok().and_then(parse_engine_log) {
        let (scenario, _) = args.input.scenario()?;
        return json(&compare_engine(&log, &estimate(&scenario)));
    }
    let measured = parse_measurement_bytes(&bytes).map_err(|e| format!("{source}: {e}"))?;
    let (scenario, warnings) = args.input.scenario()?;
    let mut breakdown = estimate(&scenario);
    breakdown.warnings.splice(0..0, warnings);
    let comparison = compare(&measured, &breakdown);
    match args.format {
        Format::Markdown => Ok(comparison_markdown(&comparison)),
        Format::Json => json(&comparison),
    }
}
