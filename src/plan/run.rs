//! A run, not a step: the scenario's data and epochs (`run` in the scenario) turned into
//! optimizer steps, wall-clock hours, GPU-hours, energy and cost.
//!
//! - Training: a step takes the global batch, micro-batch × accumulation × dp samples
//!   (`plan::global_batch`), each `seq_len` tokens (an image for vision models); the run is
//!   ⌈dataset_tokens × epochs / tokens per step⌉ steps, each the step time the layout search
//!   ranks by (`escalation::step_costs`: FLOPs at [`crate::model::step_time::UTILISATION`]
//!   of the device's dense BF16 peak, the pipeline bubble, and the communication the backward
//!   pass does not hide), plus what a spill adds (`step_time.seconds_with_spill`, its low end).
//! - Inference: `dataset_tokens` is the tokens to generate; the rate is the serving engine's
//!   tokens per second across the sequences it runs at once (`serving/speed.rs`), or without
//!   an engine one token per sequence of the batch per decode step, times the replicas (dp).
//! - GPU-hours are hours × GPUs; energy is GPU-hours × the device's TDP, an upper bound for
//!   the GPUs alone (no host, network or cooling); cost is GPU-hours × the price per
//!   GPU-hour (the user's, or the catalogue's example: `prices.rs`).
//!
//! Not modelled: data loading, evaluation, checkpoint writes, restarts and preemptions (a spot
//! run's lost work), and the warm-up of the first steps.

use serde::{Deserialize, Serialize};

use super::global_batch;
use super::prices::{example_price, Price};
use super::step_costs::costs;
use crate::model::breakdown::Breakdown;
use crate::model::inputs::Mode;
use crate::model::step_time::UTILISATION;
use crate::scenario::Scenario;

/// The whole run of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEstimate {
    /// Training: optimizer steps; inference: decode steps of the whole batch.
    pub steps: u64,
    /// Samples (sequences or images) per optimizer step; inference: sequences decoded at once.
    pub global_batch: u64,
    /// Tokens (images for vision models) per step.
    pub tokens_per_step: f64,
    /// Seconds per step, communication and spill included.
    pub step_seconds: f64,
    /// Wall-clock hours.
    pub hours: f64,
    pub gpus: u64,
    pub gpu_hours: f64,
    /// Each GPU's thermal design power, watts (0 when unknown).
    pub tdp_w: f64,
    /// GPU-hours × TDP, kWh: the most the GPUs draw.
    pub energy_kwh: f64,
    /// The price per GPU-hour used, with its source; `None` when the device has no example
    /// and the user gave none.
    pub price: Option<Price>,
    /// USD; `None` without a price.
    pub cost: Option<f64>,
    /// What the hours assume, in words (utilisation, overlap, what is left out).
    pub assumptions: Vec<String>,
}

/// The run of `s`, whose estimate is `b`, at the scenario's own price (or the example one).
pub fn run_estimate(s: &Scenario, b: &Breakdown) -> RunEstimate {
    let price = scenario_price(s);
    run_at_price(s, b, price)
}

/// The price of one GPU-hour of the scenario's device: the user's, else the catalogue's example.
pub fn scenario_price(s: &Scenario) -> Option<Price> {
    match s.run.price_per_gpu_hour {
        Some(p) => Some(Price { per_gpu_hour: p, source: "your price".into() }),
        None => s.device.preset.as_deref().and_then(|id| example_price(id, s.run.pricing)),
    }
}

/// The run of `s` (estimate `b`) at `price`.
pub fn run_at_price(s: &Scenario, b: &Breakdown, price: Option<Price>) -> RunEstimate {
    let (device, _) = s.device.resolve_or_default();
    let gpus = s.parallel.world_size().max(1);
    let total = s.run.dataset_tokens as f64 * s.run.epochs.max(0.0);
    let (steps, global, tokens_per_step, step_seconds, assumptions) = if s.training.mode == Mode::Inference { inference_steps(s, b, total) } else { training_steps(s, b, total) };
    let hours = steps as f64 * step_seconds / 3600.0;
    let gpu_hours = hours * gpus as f64;
    let cost = price.as_ref().map(|p| gpu_hours * p.per_gpu_hour);
    RunEstimate {
        steps,
        global_batch: global,
        tokens_per_step,
        step_seconds,
        hours,
        gpus,
        gpu_hours,
        tdp_w: device.tdp_w,
        energy_kwh: gpu_hours * device.tdp_w / 1000.0,
        price,
        cost,
        assumptions,
    }
}

/// Tokens (or images) one sample holds, as the dataset counts them: `seq_len` for text, one
/// per image for vision models.
fn sample_units(s: &Scenario) -> f64 {
    match s.model.architecture() {
        Some(a) if a.default_image_size() > 0 => 1.0,
        _ => s.training.seq_len.max(1) as f64,
    }
}

fn training_steps(s: &Scenario, b: &Breakdown, total: f64) -> (u64, u64, f64, f64, Vec<String>) {
    let global = global_batch(s);
    let tokens_per_step = global as f64 * sample_units(s);
    let steps = (total / tokens_per_step).ceil().max(1.0) as u64;
    let c = costs(s, b);
    // The spill's low end adds to the step the search ranks (compute + exposed communication).
    let spill = (b.step_time.seconds_with_spill - b.step_time.seconds).max(0.0);
    let step_seconds = c.step_seconds + spill;
    let mut notes = vec![
        format!("compute at {:.0} % of the GPU's dense BF16 peak (model FLOPs utilisation)", UTILISATION * 100.0),
        format!(
            "{} of communication per step on the critical path; {} hidden behind backward",
            crate::format::seconds(c.communication_seconds),
            crate::format::seconds(c.overlapped_seconds)
        ),
    ];
    if c.bubble_fraction > 0.0 {
        notes.push(format!("pipeline bubble {:.0} % of the step", c.bubble_fraction * 100.0));
    }
    if spill > 0.0 {
        notes.push(format!("{} per step moving spilled memory over the host link", crate::format::seconds(spill)));
    }
    notes.push("no data loading, evaluation, checkpoint writes or restarts".into());
    (steps, global, tokens_per_step, step_seconds, notes)
}

fn inference_steps(s: &Scenario, b: &Breakdown, total: f64) -> (u64, u64, f64, f64, Vec<String>) {
    let replicas = s.parallel.dp.max(1);
    let (sequences, step_seconds) = match &b.serving {
        Some(r) if r.starts() && r.concurrency > 0 => (r.concurrency, r.decode_step_seconds),
        _ => (s.training.micro_batch.max(1), b.step_time.decode_seconds_per_token),
    };
    let tokens_per_step = (sequences * replicas) as f64;
    let steps = if step_seconds > 0.0 { (total / tokens_per_step).ceil().max(1.0) as u64 } else { 0 };
    let notes = vec![
        format!("{sequences} sequences decoded at once on each of {replicas} replicas, one token each per step"),
        "decode reads every weight and the KV cache once per step (memory-bound), or its FLOPs if slower".into(),
        "prefill, queueing and idle time are not counted".into(),
    ];
    (steps, sequences * replicas, tokens_per_step, step_seconds.max(0.0), notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{DeviceSpec, ModelSpec};

    fn llama8b_on_8_h100() -> Scenario {
        let mut s = Scenario { model: ModelSpec::Preset("llama-3-8b".into()), ..Scenario::default() };
        s.device = DeviceSpec::preset("h100-sxm-80gb");
        s.parallel.dp = 8;
        s.parallel.zero = crate::scenario::Zero::Parameters;
        s.training.micro_batch = 2;
        s.training.grad_accum = 4;
        s.training.checkpointing = crate::scenario::Checkpointing::Full;
        s.run.dataset_tokens = 10_000_000_000;
        s.run.epochs = 2.0;
        s
    }

    /// By hand: global batch 2 × 4 × 8 = 64 sequences of 4,096 tokens = 262,144 tokens per
    /// step; 2 × 10¹⁰ tokens / 262,144 = 76,293.9… → 76,294 steps. Hours = steps × step
    /// seconds / 3600; GPU-hours × 8; energy × 0.7 kW; cost × $2.95.
    #[test]
    fn training_run_by_hand() {
        let s = llama8b_on_8_h100();
        let b = crate::estimate(&s);
        let r = run_estimate(&s, &b);
        assert_eq!(r.global_batch, 64);
        assert_eq!(r.tokens_per_step, 262_144.0);
        assert_eq!(r.steps, 76_294);
        let c = costs(&s, &b);
        assert_eq!(r.step_seconds, c.step_seconds + (b.step_time.seconds_with_spill - b.step_time.seconds).max(0.0));
        let hours = 76_294.0 * r.step_seconds / 3600.0;
        assert!((r.hours - hours).abs() < 1e-9);
        assert!((r.gpu_hours - 8.0 * hours).abs() < 1e-9);
        assert!((r.energy_kwh - 8.0 * hours * 0.7).abs() < 1e-9);
        let price = r.price.as_ref().unwrap();
        assert_eq!(price.per_gpu_hour, 2.95);
        assert!((r.cost.unwrap() - 8.0 * hours * 2.95).abs() < 1e-6);
        // The step time is the FLOPs at 40 % of 989.4 TFLOPS plus exposed communication:
        // 6 × 8.03e9 params × 262,144 tokens / 8 GPUs (+ a forward of the blocks for full
        // recomputation, + attention) ≈ 1.6e15 FLOPs per GPU → ≈ 4 s.
        assert!(r.step_seconds > 3.0 && r.step_seconds < 6.0, "{}", r.step_seconds);
    }

    #[test]
    fn the_users_price_replaces_the_example_and_spot_without_a_figure_has_no_cost() {
        let mut s = llama8b_on_8_h100();
        let b = crate::estimate(&s);
        s.run.price_per_gpu_hour = Some(1.0);
        let r = run_estimate(&s, &b);
        assert_eq!(r.price.as_ref().unwrap().source, "your price");
        assert!((r.cost.unwrap() - r.gpu_hours).abs() < 1e-9);
        s.run.price_per_gpu_hour = None;
        s.run.pricing = crate::scenario::Pricing::Spot;
        s.device = DeviceSpec::preset("h200-141gb");
        let r = run_estimate(&s, &crate::estimate(&s));
        assert_eq!((r.price, r.cost), (None, None));
    }

    /// A vision dataset counts images: 1.28 M images × 1 epoch at a global batch of 256 →
    /// 5,000 steps.
    #[test]
    fn vision_runs_count_images() {
        let mut s = Scenario { model: ModelSpec::Preset("vit-base-16".into()), ..Scenario::default() };
        s.training.micro_batch = 32;
        s.parallel.dp = 8;
        s.run.dataset_tokens = 1_280_000;
        let r = run_estimate(&s, &crate::estimate(&s));
        assert_eq!((r.global_batch, r.steps), (256, 5000));
    }

    /// Serving: tokens to generate over the engine's concurrency × replicas, one token each per
    /// decode step.
    #[test]
    fn serving_run_by_hand() {
        let mut s = Scenario { model: ModelSpec::Preset("llama-3-8b".into()), ..Scenario::default() };
        s.training.mode = Mode::Inference;
        s.training.micro_batch = 16;
        s.training.serving.engine = crate::scenario::Engine::Vllm;
        s.parallel.dp = 2;
        s.run.dataset_tokens = 1_000_000;
        let b = crate::estimate(&s);
        let report = b.serving.clone().expect("vLLM report");
        let r = run_estimate(&s, &b);
        assert_eq!(r.global_batch, report.concurrency * 2);
        assert_eq!(r.steps, (1e6 / (report.concurrency * 2) as f64).ceil() as u64);
        assert!((r.hours - r.steps as f64 * report.decode_step_seconds / 3600.0).abs() < 1e-12);
        assert_eq!(r.gpus, 2);
    }
}
