//! Throughput of the memory model (criterion): time for one full `estimate` (target < 5 µs
//! native) on four scenarios, and the automatic planner: the time of one search (goal: any
//! search up to 4,096 GPUs in ≤ 100 ms in the page, where WASM runs 2–3 times slower) and
//! its estimates per second (criterion's throughput line).
//! Run with `cargo bench --bench estimate`; `cargo test --all-targets` runs each case once.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use headroom::plan::search::search;
use headroom::{estimate, Scenario};

const CASES: [(&str, &str); 4] = [
    ("llama-3-8b default (1 GPU)", r#"{}"#),
    ("llama-3-70b tp8 pp4 zero1 (2 stages evaluated)", r#"{"model":{"preset":"llama-3-70b"},"parallel":{"dp":4,"tp":8,"pp":4,"sp":true,"zero":1},"training":{"grad_accum":8}}"#),
    ("mixtral-8x7b ep8 fsdp", r#"{"model":{"preset":"mixtral-8x7b"},"parallel":{"dp":8,"ep":8,"zero":3}}"#),
    ("resnet-50 batch 64", r#"{"model":{"preset":"resnet-50"},"training":{"micro_batch":64}}"#),
];

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("bench scenario {json}: {e}")).scenario
}

fn estimates(c: &mut Criterion) {
    let mut group = c.benchmark_group("estimate");
    for (name, json) in CASES {
        let s = scenario(json);
        estimate(&s); // parse the presets once, outside the timing
        group.bench_function(name, |b| b.iter(|| estimate(black_box(&s))));
    }
    group.finish();
}

/// The automatic planner on the page's benchmark cases (`scripts/bench-search.mjs`):
/// Llama-3-8B and Llama-3-70B at 4,096 and 131,072 tokens, a global batch of 4,096
/// sequences (dp 8 × accumulation 512, so every dp up to 4,096 keeps it), 8 to 4,096 GPUs;
/// the time of one search, and estimates per second as criterion's throughput.
fn search_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for model in ["llama-3-8b", "llama-3-70b"] {
        for seq in [4096, 131_072] {
            let base = scenario(&format!(r#"{{"model":{{"preset":"{model}"}},"training":{{"seq_len":{seq},"grad_accum":512}},"parallel":{{"dp":8}}}}"#));
            for gpus in [8, 64, 512, 1024, 4096] {
                let r = search(&base, gpus, 10);
                group.throughput(Throughput::Elements(r.evaluations));
                group.bench_function(format!("{model} seq {seq} on {gpus} GPUs ({} layouts, {} estimates)", r.layouts, r.evaluations), |b| {
                    b.iter(|| search(black_box(&base), gpus, 10))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, estimates, search_throughput);
criterion_main!(benches);
