//! Throughput of the memory model: time for one full `estimate` (target < 5 µs native).
//! Run with `cargo bench --bench estimate`; prints the median of 15 batches.

use std::hint::black_box;
use std::time::Instant;

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
}
