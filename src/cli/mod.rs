//! The native command line, parsed by clap (derive); `headroom COMMAND --help` describes each
//! command.
//!
//! - `headroom estimate [FILE|-] [--format json|markdown]`: Scenario JSON in, Breakdown out,
//!   with the scenario's `limits` (largest micro-batch, longest sequence or largest image
//!   side, fewest GPUs: `plan::limits`).
//! - `headroom escalate [FILE|-] [--gpus N] [--ladder step,step,…]`: the escalation ladder.
//! - `headroom search [FILE|-] --gpus N [--top K]`: ranked layouts that fit.
//! - `headroom url [FILE|-] [--base URL]`: the planner URL of a scenario.
//! - `headroom decode URL`: the scenario JSON of a planner URL.
//! - `headroom presets`: model and device ids.
//! - `headroom check [FILE|-] --measured FILE [--format json|markdown]`: a measured run beside
//!   the plan (`check.rs`).
//! - `headroom rent [FILE|-] --tokens N --budget-gpus K [--prices FILE] [--sort cost|time]`:
//!   every catalogue GPU × count up to K, laid out, timed and priced, as JSON rows sorted by
//!   cost (or by hours) (`plan::rent`).
//! - `headroom launch [FILE|-] --for TARGET`: the launch configuration of the plan for one
//!   framework (`export::launch`).
//! - `headroom completions SHELL`: a completion script for bash, zsh, fish, elvish or PowerShell.
//!
//! Input is read from a file, or stdin for `-` or no argument. A bad option is clap's error
//! with the usage; bad input exits with status 2 and one line naming the bad field. The CLI
//! never panics on input.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::PathBuf;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

mod check;

use crate::estimate;
use crate::import::presets::model_presets;
use crate::input_limits::{check_size, CONFIG_BYTES, PRICES_BYTES, SCENARIO_BYTES};
use crate::model::device::devices;
use crate::plan::escalation::{escalate, Step};
use crate::plan::search::search;
use crate::safe_text::escape_controls;
use crate::scenario::{Scenario, LIMIT_WORLD};

/// GPU memory planner for deep-learning training: a scenario (model, training, parallel
/// layout, device) in, bytes per GPU out.
#[derive(Parser)]
#[command(name = "headroom", version, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scenario JSON in, per-GPU Breakdown out, with the scenario's limits (`limits`: the
    /// largest micro-batch, the longest sequence or largest image side, the fewest GPUs).
    Estimate {
        #[command(flatten)]
        input: Input,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// The escalation ladder, step by step: each memory-saving move applied in turn.
    Escalate {
        #[command(flatten)]
        input: Input,
        /// GPUs available to the ladder's parallel steps [default: the scenario's world size].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=LIMIT_WORLD))]
        gpus: Option<u64>,
        /// Steps to try, in order, separated by commas [default: the Strategy view's ladder for the budget: mixed-precision,smaller-micro-batch,activation-checkpointing,zero2,zero3,pipeline-parallel; on one GPU the single-GPU ladder].
        #[arg(long, value_name = "STEP,…", value_delimiter = ',', value_parser = StepParser)]
        ladder: Option<Vec<Step>>,
    },
    /// Layouts of the scenario that fit on N GPUs, fastest first.
    Search {
        #[command(flatten)]
        input: Input,
        /// GPUs to lay the job out on.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        gpus: u64,
        /// How many layouts to print.
        #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
        top: u64,
    },
    /// Scenario JSON in, planner link out.
    Url {
        #[command(flatten)]
        input: Input,
        /// The planner's address.
        #[arg(long, value_name = "URL", default_value = DEFAULT_BASE)]
        base: String,
    },
    /// Planner link (or its query string) in, Scenario JSON out.
    Decode {
        /// The link.
        url: String,
    },
    /// Model and device preset ids.
    Presets,
    /// A measured run (memory_summary() text, nvidia-smi CSV or JSON) beside the plan.
    Check(check::CheckArgs),
    /// Every catalogue GPU × count up to a budget, each laid out by the search, with the run's
    /// hours and cost: JSON rows {device, gpus, layout, hours, cost, fits}, cheapest first.
    Rent {
        #[command(flatten)]
        input: Input,
        /// Tokens in one epoch of the dataset (images for vision models; tokens to generate
        /// when serving) [default: the scenario's `run.dataset_tokens`].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=crate::scenario::LIMIT_DATASET_TOKENS))]
        tokens: Option<u64>,
        /// Most GPUs to rent: counts tried are the powers of two up to K, and K.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=1024))]
        budget_gpus: u64,
        /// JSON object of prices per GPU-hour by device id, e.g. {"h100-sxm-80gb": 2.1};
        /// devices not in it keep the catalogue's example price.
        #[arg(long, value_name = "FILE")]
        prices: Option<PathBuf>,
        /// Order of the rows: cheapest first, or fastest first.
        #[arg(long, value_enum, default_value_t)]
        sort: RentOrder,
    },
    /// The launch configuration of the plan for one framework, printed as that framework reads it.
    Launch {
        #[command(flatten)]
        input: Input,
        /// The framework to launch with.
        #[arg(long = "for", value_name = "TARGET", value_enum)]
        target: crate::export::launch::Target,
    },
    /// A shell completion script, printed to stdout (e.g. `headroom completions bash > /etc/bash_completion.d/headroom`).
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
}

/// Order of `rent`'s rows.
#[derive(Clone, Copy, Default, ValueEnum)]
enum RentOrder {
    #[default]
    Cost,
    Time,
}

/// Output format of `estimate` and `check`.
#[derive(Clone, Copy, Default, ValueEnum)]
enum Format {
    #[default]
    Json,
    #[value(alias = "md")]
    Markdown,
}

/// The scenario argument shared by the commands that plan one.
#[derive(Args)]
struct Input {
    /// Scenario JSON file; `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
    /// FILE is a Hugging Face config.json rather than a scenario: plan that model with the
    /// default training settings.
    #[arg(long)]
    hf_config: bool,
    /// System RAM of the machine in GiB (sets `runtime.host_memory_bytes`) [default: the scenario's, or the GPU class's usual machine].
    #[arg(long, value_name = "GIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
    host_memory: Option<u64>,
}

impl Input {
    fn is_stdin(&self) -> bool {
        self.input.as_deref().is_none_or(|p| p.as_os_str() == "-")
    }

    /// The scenario, validated; decoding warnings are returned for the output.
    fn scenario(&self) -> Result<(Scenario, Vec<String>), String> {
        let path = self.input.as_deref().filter(|_| !self.is_stdin());
        let (max, what) = if self.hf_config { (CONFIG_BYTES, "a config.json") } else { (SCENARIO_BYTES, "a scenario") };
        let bytes = read_bounded(path, max, what)?;
        let source = path.map_or_else(|| "stdin".to_string(), |p| p.display().to_string());
        let text = String::from_utf8(bytes).map_err(|_| format!("{source}: not UTF-8 text"))?;
        let mut decoded = if self.hf_config {
            let raw: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{source}: not JSON: {e}"))?;
            // A diffusers pipeline (`{"model_index": …, "<component>": …}`) or one config.json.
            let model = if raw.get("model_index").is_some() {
                crate::scenario::ModelSpec::from_pipeline(raw).map_err(|e| e.within("pipeline").to_string())?
            } else {
                crate::scenario::ModelSpec::from_hf_config(raw).map_err(|e| e.within("config.json").to_string())?
            };
            crate::scenario::Decoded { scenario: Scenario { model, ..Scenario::default() }, warnings: Vec::new() }
        } else {
            if looks_like_hf_config(&text) {
                let file = path.map_or_else(|| "-".to_string(), |p| p.display().to_string());
                return Err(format!(
                    "{source} is a Hugging Face or diffusers config.json (it has a model_type, architectures, _class_name or model_index), not a scenario: run `headroom estimate --hf-config {file}` to plan it with the default training settings, or put it in a scenario as {{\"model\": {{\"hf_config\": …}}}}"
                ));
            }
            Scenario::from_json(&text).map_err(|e| e.to_string())?
        };
        if let Some(gib) = self.host_memory {
            decoded.scenario.runtime.host_memory_bytes = Some(gib << 30);
        }
        if let Some(first) = decoded.scenario.validate().into_iter().next() {
            return Err(first.to_string());
        }
        Ok((decoded.scenario, decoded.warnings))
    }
}

/// The bytes of a file (or stdin for `None`), refused before reading past `max` bytes: a
/// file by its size, stdin by reading at most one byte more than the limit
/// ([`crate::input_limits`]).
pub(crate) fn read_bounded(path: Option<&std::path::Path>, max: usize, what: &str) -> Result<Vec<u8>, String> {
    let source = path.map_or_else(|| "stdin".to_string(), |p| p.display().to_string());
    let reader: Box<dyn Read> = match path {
        Some(p) => {
            let file = std::fs::File::open(p).map_err(|e| format!("{source}: {e}"))?;
            if let Ok(meta) = file.metadata() {
                if meta.is_file() {
                    check_size(&source, what, usize::try_from(meta.len()).unwrap_or(usize::MAX), max).map_err(|e| e.to_string())?;
                }
            }
            Box::new(file)
        }
        None => Box::new(std::io::stdin()),
    };
    let mut bytes = Vec::new();
    reader.take(max as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("{source}: {e}"))?;
    if bytes.len() > max {
        return Err(format!("{source}: {what} of more than {max} bytes is larger than Headroom reads; nothing was read from it"));
    }
    Ok(bytes)
}

/// Whether a JSON text is a bare Hugging Face `config.json` (a top-level `model_type` or
/// `architectures`), a diffusers component config (`_class_name`) or a pipeline object
/// (`model_index`), with none of a scenario's sections.
fn looks_like_hf_config(text: &str) -> bool {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    let scenario_keys = ["model", "training", "parallel", "device", "runtime", "version", "framework"];
    ["model_type", "architectures", "_class_name", "model_index"].iter().any(|k| map.contains_key(*k)) && !scenario_keys.iter().any(|k| map.contains_key(*k))
}

/// Ladder steps by their JSON names (`zero3`, `activation-checkpointing`, …), each with its label.
impl ValueEnum for Step {
    fn value_variants<'a>() -> &'a [Self] {
        &Step::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let name = serde_json::to_value(self).ok()?.as_str()?.to_string();
        Some(PossibleValue::new(name).help(self.label()))
    }
}

/// Launch targets by their ids (`--for torchtune`), each with what it writes.
impl ValueEnum for crate::export::launch::Target {
    fn value_variants<'a>() -> &'a [Self] {
        &crate::export::launch::Target::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.id()).help(self.label()))
    }
}

/// A ladder step, with spaces around it ignored (`--ladder "zero2, zero3"`).
#[derive(Clone)]
struct StepParser;

impl TypedValueParser for StepParser {
    type Value = Step;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<Step, clap::Error> {
        let trimmed = value.to_str().map_or(value, |s| OsStr::new(s.trim()));
        clap::builder::EnumValueParser::<Step>::new().parse_ref(cmd, arg, trimmed)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Step::ALL.iter().filter_map(ValueEnum::to_possible_value)))
    }
}

/// The command tree; a repeated option keeps its last value, as the hand-written parser did.
fn command() -> clap::Command {
    Cli::command().mut_subcommands(|c| c.args_override_self(true))
}

/// Run the CLI with these arguments (the program name first, as in `std::env::args_os`);
/// returns the exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = command().try_get_matches_from(args).and_then(|mut m| Cli::from_arg_matches_mut(&mut m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors to stderr with 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    match dispatch(cli.command) {
        Ok(out) => match writeln!(std::io::stdout().lock(), "{out}") {
            // A closed pipe (`headroom presets | head`) is the reader's choice, not an error.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("error: writing the output: {e}");
                1
            }
            _ => 0,
        },
        Err(message) => {
            eprintln!("error: {}", escape_controls(&message));
            2
        }
    }
}

fn dispatch(command: Command) -> Result<String, String> {
    match command {
        Command::Estimate { input, format } => estimate_command(&input, format),
        Command::Escalate { input, gpus, ladder } => escalate_command(&input, gpus, ladder),
        Command::Search { input, gpus, top } => search_command(&input, gpus, top),
        Command::Url { input, base } => url_command(&input, &base),
        Command::Decode { url } => decode_command(&url),
        Command::Presets => Ok(list_presets()),
        Command::Check(args) => check::check_command(&args),
        Command::Rent { input, tokens, budget_gpus, prices, sort } => rent_command(&input, tokens, budget_gpus, prices.as_deref(), sort),
        Command::Launch { input, target } => launch_command(&input, target),
        Command::Completions { shell } => Ok(completions(shell)),
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

fn estimate_command(input: &Input, format: Format) -> Result<String, String> {
    let (scenario, warnings) = input.scenario()?;
    let mut breakdown = estimate(&scenario);
    breakdown.warnings.splice(0..0, warnings);
    let limits = crate::plan::limits::limits(&scenario);
    match format {
        Format::Markdown => {
            Ok(format!("{}\n\n{}", crate::report::breakdown_markdown(&scenario, &breakdown), crate::report::limits_markdown(&scenario, &limits, crate::format::Units::Gib)))
        }
        Format::Json => {
            let mut value = serde_json::to_value(&breakdown).map_err(|e| e.to_string())?;
            if let Some(object) = value.as_object_mut() {
                object.insert("limits".into(), limits.to_json());
            }
            json(&value)
        }
    }
}

fn escalate_command(input: &Input, gpus: Option<u64>, ladder: Option<Vec<Step>>) -> Result<String, String> {
    let (scenario, _) = input.scenario()?;
    let gpus = gpus.unwrap_or_else(|| scenario.parallel.world_size());
    let ladder = ladder.unwrap_or_else(|| Step::ladder_for(&scenario, gpus).to_vec());
    json(&escalate(&scenario, &ladder, gpus))
}

fn search_command(input: &Input, gpus: u64, top: u64) -> Result<String, String> {
    let (scenario, _) = input.scenario()?;
    json(&search(&scenario, gpus, top as usize))
}

fn rent_command(input: &Input, tokens: Option<u64>, budget: u64, prices: Option<&std::path::Path>, sort: RentOrder) -> Result<String, String> {
    let (mut scenario, _) = input.scenario()?;
    if let Some(n) = tokens {
        scenario.run.dataset_tokens = n;
    }
    let book = match prices {
        Some(p) => {
            let bytes = read_bounded(Some(p), PRICES_BYTES, "a price list")?;
            let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", p.display()))?;
            crate::plan::rent::PriceBook::from_json(&text).map_err(|e| e.to_string())?
        }
        None => Default::default(),
    };
    let mut rows = crate::plan::rent::rent(&scenario, budget, &book);
    if let RentOrder::Time = sort {
        crate::plan::rent::by_time(&mut rows);
    }
    json(&rows)
}

fn launch_command(input: &Input, target: crate::export::launch::Target) -> Result<String, String> {
    let (scenario, _) = input.scenario()?;
    crate::export::launch::launch(&scenario, target).map_err(|e| e.to_string())
}

/// Where `./scripts/serve.sh` serves the planner.
const DEFAULT_BASE: &str = "http://127.0.0.1:8080/";

fn url_command(input: &Input, base: &str) -> Result<String, String> {
    let (scenario, _) = input.scenario()?;
    let query = crate::url::encode(&scenario);
    if let Some(problem) = crate::url::unreadable_link(&query) {
        return Err(problem.to_string());
    }
    Ok(format!("{base}?{query}"))
}

/// The scenario of a link. Parameters the planner does not know (a tracker's `utm_source`, a
/// key from a newer planner) are left out with a warning on stderr, as the page does; a value
/// that cannot be read is an error.
fn decode_command(url: &str) -> Result<String, String> {
    let (scenario, errors) = crate::url::decode(url);
    let (warnings, errors): (Vec<_>, Vec<_>) = errors.into_iter().partition(|e| e.message == crate::url::UNKNOWN_PARAMETER);
    if let Some(first) = errors.first() {
        return Err(first.to_string());
    }
    for w in warnings {
        eprintln!("warning: {w}");
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

fn completions(shell: Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "headroom", &mut script);
    String::from_utf8_lossy(&script).trim_end().to_string()
}
