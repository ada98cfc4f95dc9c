//! Throughput of the memory model (criterion): time for one full `estimate` (target < 5 µs
//! native) on four scenarios, and the automatic planner in candidate evaluations per second
//! (target ≥ 100,000/s; criterion's throughput line).
//! Run with `cargo bench --bench estimate`; `cargo test --all-targets` runs each case once.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use headroom::plan::search::search;
use headroom::{estimate, Scenario};

const CASES: [(&str, &str); 4] = [
    ("llama-3-8b default (1 GPU)", r#"{}"#),
    (
        "llama-3-70b tp8 pp4 zero1 (2 stages evaluated)",
        r#"{"model":{"preset":"llama-3-70b"},"parallel":{"dp":4,"tp":8,"pp":4,"sp":true,"zero":1},"training":{"grad_accum":8}}"#,
    ),
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

fn search_throughput(c: &mut Criterion) {
    let base = Scenario::default();
    let evaluations = search(&base, 64, 10).evaluations;
    let mut group = c.benchmark_group("search");
    group.throughput(Throughput::Elements(evaluations));
    group.sample_size(20);
    group.bench_function(format!("llama-3-8b on 64 GPUs ({evaluations} evaluations)"), |b| b.iter(|| search(black_box(&base), 64, 10)));
    group.finish();
}

criterion_group!(benches, estimates, search_throughput);
criterion_main!(benches);
