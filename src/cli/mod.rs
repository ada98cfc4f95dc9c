//! The native command line: `headroom estimate [FILE|-] [--format json|markdown]`.
//!
//! Reads a Scenario as JSON (from a file, or stdin for `-` or no argument) and prints the
//! Breakdown. Bad input exits with status 2 and one line naming the bad field; the CLI
//! never panics on input.

mod markdown;

use std::io::Read;

use crate::model::device::devices;
use crate::model::estimate;
use crate::model::presets::model_presets;
use crate::scenario::Scenario;

const USAGE: &str = "usage:
  headroom estimate [FILE|-] [--format json|markdown]   Scenario JSON in, per-GPU Breakdown out
  headroom presets                                      list model and device preset ids
  headroom --help";

/// Run the CLI with these arguments (without the program name); returns the exit status.
pub fn run(args: Vec<String>) -> i32 {
    match dispatch(&args) {
        Ok(out) => {
            println!("{out}");
            0
        }
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}

fn dispatch(args: &[String]) -> Result<String, String> {
    match args.first().map(String::as_str) {
        Some("estimate") => estimate_command(&args[1..]),
        Some("presets") => Ok(list_presets()),
        Some("--help") | Some("-h") | Some("help") => Ok(USAGE.to_string()),
        Some(other) => Err(format!("unknown command \"{other}\"\n{USAGE}")),
        None => Err(USAGE.to_string()),
    }
}

#[derive(PartialEq)]
enum Format {
    Json,
    Markdown,
}

fn estimate_command(args: &[String]) -> Result<String, String> {
    let mut format = Format::Json;
    let mut input: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--format" => {
                format = match args.get(i + 1).map(String::as_str) {
                    Some("json") => Format::Json,
                    Some("markdown") | Some("md") => Format::Markdown,
                    other => return Err(format!("--format: expected json or markdown, got {}", other.unwrap_or("nothing"))),
                };
                i += 1;
            }
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            path if input.is_none() => input = Some(path),
            extra => return Err(format!("unexpected argument \"{extra}\"")),
        }
        i += 1;
    }
    let text = read_input(input)?;
    let decoded = Scenario::from_json(&text).map_err(|e| e.to_string())?;
    if let Some(first) = decoded.scenario.validate().into_iter().next() {
        return Err(first.to_string());
    }
    let mut breakdown = estimate(&decoded.scenario);
    breakdown.warnings.splice(0..0, decoded.warnings);
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(&breakdown).map_err(|e| e.to_string())?,
        Format::Markdown => markdown::breakdown_table(&decoded.scenario, &breakdown),
    })
}

fn read_input(path: Option<&str>) -> Result<String, String> {
    match path {
        None | Some("-") => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| format!("reading stdin: {e}"))?;
            Ok(text)
        }
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}")),
    }
}

fn list_presets() -> String {
    let mut out = String::from("models:\n");
    for p in model_presets() {
        out.push_str(&format!("  {:<16} {} ({})\n", p.id, p.name, p.source));
    }
    out.push_str("devices:\n");
    for d in devices() {
        out.push_str(&format!("  {:<28} {}\n", d.id, d.name));
    }
    out
}
