//! Throughput of the memory model: time for one full `estimate` (target < 5 µs native), and
//! of the automatic planner in candidate evaluations per second (target ≥ 100,000/s).
//! Run with `cargo bench --bench estimate`; prints medians.

use std::hint::black_box;
use std::time::Instant;

use headroom::plan::search::search;
use headroom::{estimate, Scenario};

fn median_nanos(scenario: &Scenario, per_batch: u32) -> f64 {
    let mut samples = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        for _ in 0..per_batch {
            black_box(estimate(black_box(scenario)));
        }
        samples.push(start.elapsed().as_nanos() as f64 / per_batch as f64);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this binary without it
    // (in a debug build), where timings would mean nothing.
    if !std::env::args().any(|a| a == "--bench") {
        println!("estimate benchmark: run with `cargo bench --bench estimate`");
        return;
    }
    let cases = [
        ("llama-3-8b default (1 GPU)", r#"{}"#),
        (
            "llama-3-70b tp8 pp4 zero1 (2 stages evaluated)",
            r#"{"model":{"preset":"llama-3-70b"},"parallel":{"dp":4,"tp":8,"pp":4,"sp":true,"zero":1},"training":{"grad_accum":8}}"#,
        ),
        ("mixtral-8x7b ep8 fsdp", r#"{"model":{"preset":"mixtral-8x7b"},"parallel":{"dp":8,"ep":8,"zero":3}}"#),
        ("resnet-50 batch 64", r#"{"model":{"preset":"resnet-50"},"training":{"micro_batch":64}}"#),
    ];
    for (name, json) in cases {
        let scenario = match Scenario::from_json(json) {
            Ok(d) => d.scenario,
            Err(e) => {
                eprintln!("{name}: {e}");
                continue;
            }
        };
        estimate(&scenario); // parse presets once
        let ns = median_nanos(&scenario, 20_000);
        println!("{name:<48} {:>8.2} µs per estimate", ns / 1000.0);
    }
    let base = Scenario::default();
    let mut rates = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let start = Instant::now();
        let r = black_box(search(&base, 64, 10));
        let secs = start.elapsed().as_secs_f64();
        rates.push(r.evaluations as f64 / secs);
        last = Some((r.layouts, r.evaluations, secs));
    }
    rates.sort_by(f64::total_cmp);
    if let Some((layouts, evaluations, secs)) = last {
        println!(
            "search llama-3-8b on 64 GPUs: {layouts} layouts, {evaluations} evaluations in {:.1} ms; median {:.0} evaluations/s",
            secs * 1000.0,
            rates[rates.len() / 2]
        );
    }
}
