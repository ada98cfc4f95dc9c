//! Time of hostile inputs against a baseline measured in the same run (criterion): decoding
//! the default planner link (the baseline), a 1 MB link of empty parameters, 200,000 unknown
//! parameters, a saved query of 800,000 parameters, and the refusal of a 50 MB config by its
//! size. Issue 26's goal: each under 1 s in the page; natively they are far below.
//! Run with `cargo bench --bench hostile_input`; `cargo test --all-targets` runs each once.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use headroom::input_limits::{check_size, CONFIG_BYTES};
use headroom::url::{decode, encode};
use headroom::Scenario;

fn links(c: &mut Criterion) {
    let mut group = c.benchmark_group("hostile input");
    group.sample_size(10);
    let cases = [
        ("baseline: the default link", encode(&Scenario::default())),
        ("1 MB of `&z`", format!("v=1{}", "&z".repeat(500_000))),
        ("200,000 × `zz=1`", format!("v=1&m=gpt2&b=2{}", "&zz=1".repeat(200_000))),
        ("saved query of 800,000 parameters", format!("v=1{}", "&b=2".repeat(800_000))),
    ];
    for (name, query) in &cases {
        group.bench_function(*name, |b| b.iter(|| decode(black_box(query))));
    }
    let config = "x".repeat(50 << 20);
    group.bench_function("50 MB config refused by its size", |b| b.iter(|| check_size("config.json", "a config", black_box(&config).len(), CONFIG_BYTES)));
    group.finish();
}

criterion_group!(benches, links);
criterion_main!(benches);
