//! Diffusion pipelines' text encoders against transformers: parameter counts of the real
//! configs built on the meta device, and the live bytes of one no-grad encode of tiny
//! configs (`tests/measure/diffusion_text_encoders.py`,
//! `tests/fixtures/measured/diffusion_text_encoders.json`).

use headroom::import::diffusers::text_encoder::read;
use serde_json::Value;

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/measured/diffusion_text_encoders.json")).unwrap()
}

#[test]
fn parameter_counts_equal_what_transformers_builds() {
    let f = fixture();
    let counts = f["counts"].as_array().unwrap();
    assert!(counts.len() >= 9, "every catalogue text encoder is measured");
    for c in counts {
        let path = c["config"].as_str().unwrap();
        let cfg: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let encoder = read(&cfg, None).unwrap();
        assert_eq!(encoder.param_count() as u64, c["params"].as_u64().unwrap(), "{path}");
    }
}

#[test]
fn encode_peaks_are_within_ten_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let mut misses = Vec::new();
    for p in f["peaks"].as_array().unwrap() {
        let encoder = read(&p["config"], p["tokens"].as_u64()).unwrap();
        let bytes = if p["dtype"] == "float32" { 4.0 } else { 2.0 };
        let modelled = encoder.forward_peak(p["batch"].as_u64().unwrap(), bytes, p["hidden_states"].as_bool().unwrap_or(false));
        let measured = p["peak_bytes"].as_f64().unwrap();
        let miss = modelled / measured - 1.0;
        if miss.abs() > 0.10 {
            misses.push(format!("{} {} batch {}: modelled {modelled}, measured {measured} ({:+.1} %)", p["name"], p["dtype"], p["batch"], miss * 100.0));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}
