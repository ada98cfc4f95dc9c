//! Every decoder-only text family transformers 5.24 builds, from its default configuration
//! (`tests/fixtures/measured/family_sweep.json`, written by `tests/measure/family_sweep.py`):
//! Headroom's parameter count against `sum(p.numel())` of the model transformers builds.
//!
//! Families with a reader must match exactly. Families estimated by the generic decoder must
//! say "approximate" and stay within the error measured when this test was written. Families
//! Headroom cannot model (state-space / linear-attention layers, …) must be refused.
//!
//! `cargo test --test family_sweep -- --nocapture table` prints the whole table.

use headroom::import::hf_config::import_hf_config;
use serde_json::Value;

fn fixture() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/family_sweep.json")).expect("fixture");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// (model_type, transformers' count, Headroom's count or the error, approximate?)
fn rows() -> Vec<(String, u64, Result<(u64, bool), String>)> {
    let f = fixture();
    let families = f["families"].as_object().expect("families");
    families
        .iter()
        .map(|(ty, e)| {
            let expected = e["param_count"].as_u64().expect("param_count");
            let got = import_hf_config(&e["config"]).map(|i| (i.arch.param_count() as u64, i.warnings.iter().any(|w| w.starts_with("approximate")))).map_err(|e| e.to_string());
            (ty.clone(), expected, got)
        })
        .collect()
}

#[test]
fn table() {
    for (ty, expected, got) in rows() {
        match got {
            Ok((n, approx)) => {
                let err = (n as f64 - expected as f64) / expected as f64 * 100.0;
                println!(
                    "{ty:28} {expected:>16} {n:>16} {err:>9.3}% {}",
                    if approx {
                        "approximate"
                    } else if n == expected {
                        "exact"
                    } else {
                        "WRONG"
                    }
                );
            }
            Err(e) => println!("{ty:28} {expected:>16} {:>16} {:>10} rejected: {}", "-", "-", e.chars().take(120).collect::<String>()),
        }
    }
}
