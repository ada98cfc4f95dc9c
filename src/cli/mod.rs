//! The native command line.
//!
//! - `headroom estimate [FILE|-] [--format json|markdown]`: Scenario JSON in, Breakdown out.
//! - `headroom escalate [FILE|-] [--gpus N] [--ladder step,step,…]`: the escalation ladder.
//! - `headroom search [FILE|-] --gpus N [--top K]`: ranked layouts that fit.
//! - `headroom url [FILE|-] [--base URL]`: the planner URL of a scenario.
//! - `headroom decode URL`: the scenario JSON of a planner URL.
//! - `headroom presets`: model and device ids.
//! - `headroom check [FILE|-] --measured FILE [--format json|markdown]`: a measured run beside
//!   the plan (`check.rs`).
//!
//! Input is read from a file, or stdin for `-` or no argument. Bad input exits with status 2
//! and one line naming the bad field; the CLI never panics on input.

use std::io::Read;

mod check;

use crate::model::device::devices;
use crate::plan::escalation::{escalate, Step};
use crate::estimate;
use crate::import::presets::model_presets;
use crate::plan::search::search;
use crate::scenario::Scenario;

const USAGE: &str = "usage:
  headroom estimate [FILE|-] [--format json|markdown]      Scenario JSON in, per-GPU Breakdown out
  headroom escalate [FILE|-] [--gpus N] [--ladder a,b,…]   the escalation ladder, step by step
  headroom search [FILE|-] --gpus N [--top K]              layouts that fit, fastest first
  headroom url [FILE|-] [--base URL]                       Scenario JSON in, planner link out
  headroom decode URL                                      planner link in, Scenario JSON out
  headroom presets                                         model and device preset ids
  headroom check [FILE|-] --measured RUN [--format json|markdown]
                                                           a measured run (memory_summary() text,
                                                           nvidia-smi CSV or JSON) beside the plan
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
    let rest = args.get(1..).unwrap_or_default();
    match args.first().map(String::as_str) {
        Some("estimate") => estimate_command(&Options::parse(rest, &["--format"])?),
        Some("escalate") => escalate_command(&Options::parse(rest, &["--gpus", "--ladder"])?),
        Some("search") => search_command(&Options::parse(rest, &["--gpus", "--top"])?),
        Some("url") => url_command(&Options::parse(rest, &["--base"])?),
        Some("decode") => decode_command(rest),
        Some("presets") => Ok(list_presets()),
        Some("check") => check::check_command(&Options::parse(rest, &["--measured", "--format"])?),
        Some("--help") | Some("-h") | Some("help") => Ok(USAGE.to_string()),
        Some(other) => Err(format!("unknown command \"{other}\"\n{USAGE}")),
        None => Err(USAGE.to_string()),
    }
}

/// The input path and `--name value` options of one command.
struct Options {
    input: Option<String>,
    values: Vec<(String, String)>,
}

impl Options {
    fn parse(args: &[String], allowed: &[&str]) -> Result<Options, String> {
        let mut options = Options { input: None, values: Vec::new() };
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            if arg.starts_with("--") {
                if !allowed.contains(&arg.as_str()) {
                    return Err(format!("unknown option {arg}"));
                }
                let value = args.get(i + 1).ok_or_else(|| format!("{arg} needs a value"))?;
                options.values.push((arg.clone(), value.clone()));
                i += 2;
            } else if options.input.is_none() {
                options.input = Some(arg.clone());
                i += 1;
            } else {
                return Err(format!("unexpected argument \"{arg}\""));
            }
        }
        Ok(options)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.values.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn number(&self, name: &str, default: u64, max: u64) -> Result<u64, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(format!("{name}: expected a whole number from 1 to {max}, got \"{v}\"")),
            },
        }
    }

    /// The scenario, validated; decoding warnings are returned for the output.
    fn scenario(&self) -> Result<(Scenario, Vec<String>), String> {
        let text = match self.input.as_deref() {
            None | Some("-") => {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text).map_err(|e| format!("reading stdin: {e}"))?;
                text
            }
            Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?,
        };
        let decoded = Scenario::from_json(&text).map_err(|e| e.to_string())?;
        if let Some(first) = decoded.scenario.validate().into_iter().next() {
            return Err(first.to_string());
        }
        Ok((decoded.scenario, decoded.warnings))
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

fn estimate_command(o: &Options) -> Result<String, String> {
    let markdown = match o.get("--format") {
        None | Some("json") => false,
        Some("markdown") | Some("md") => true,
        Some(other) => return Err(format!("--format: expected json or markdown, got {other}")),
    };
    let (scenario, warnings) = o.scenario()?;
    let mut breakdown = estimate(&scenario);
    breakdown.warnings.splice(0..0, warnings);
    if markdown {
        Ok(crate::report::breakdown_markdown(&scenario, &breakdown))
    } else {
        json(&breakdown)
    }
}

fn escalate_command(o: &Options) -> Result<String, String> {
    let ladder = match o.get("--ladder") {
        None => Step::DEFAULT_LADDER.to_vec(),
        Some(list) => list
            .split(',')
            .map(|name| {
                serde_json::from_value::<Step>(serde_json::Value::String(name.trim().to_string()))
                    .map_err(|_| format!("--ladder: unknown step \"{}\"", name.trim()))
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let (scenario, _) = o.scenario()?;
    let gpus = o.number("--gpus", scenario.parallel.world_size(), crate::scenario::LIMIT_WORLD)?;
    json(&escalate(&scenario, &ladder, gpus))
}

fn search_command(o: &Options) -> Result<String, String> {
    let gpus = o.number("--gpus", 0, 65_536).and_then(|g| if g == 0 { Err("--gpus N is required".to_string()) } else { Ok(g) })?;
    let top = o.number("--top", 10, 1000)? as usize;
    let (scenario, _) = o.scenario()?;
    json(&search(&scenario, gpus, top))
}

/// Where `./scripts/serve.sh` serves the planner.
const DEFAULT_BASE: &str = "http://127.0.0.1:8080/";

fn url_command(o: &Options) -> Result<String, String> {
    let (scenario, _) = o.scenario()?;
    let base = o.get("--base").unwrap_or(DEFAULT_BASE);
    Ok(format!("{base}?{}", crate::url::encode(&scenario)))
}

fn decode_command(args: &[String]) -> Result<String, String> {
    let [url] = args else { return Err("decode takes exactly one URL".into()) };
    let (scenario, errors) = crate::url::decode(url);
    if let Some(first) = errors.first() {
        return Err(first.to_string());
    }
    Ok(scenario.to_json())
}

fn list_presets() -> String {
    let mut out = String::from("models:\n");
    for p in model_presets() {
        out.push_str(&format!("  {:<44} {} (also: {})\n", p.id, p.name, p.aliases.join(", ")));
    }
    out.push_str("devices:\n");
    for d in devices() {
        out.push_str(&format!("  {:<28} {}\n", d.id, d.name));
    }
    out
}
