//! LFM2-MoE (`lfm2_moe`) against transformers 5.25 on CPU (`tests/measure/lfm2_moe.py` →
//! `tests/fixtures/measured/lfm2_moe.json`): parameter counts (total and active) on the meta
//! device, the conv and KV cache after a prefill, and the tensors the whole model saves for
//! backward, its short convolutions included (their torch fallback saves what Headroom's
//! fused-kernel model does, `tests/hybrids.rs`).

use headroom::import::hf_config::import_hf_config;
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

mod hybrid_cases;
use hybrid_cases::states_equal_cache;

fn fixture() -> Value {
    hybrid_cases::fixture("lfm2_moe.json")
}

#[test]
fn parameters_equal_transformers_counts() {
    let f = fixture();
    let cases = f["params"].as_object().expect("params");
    assert_eq!(cases.len(), 4);
    for (name, case) in cases {
        let imported = import_hf_config(&case["config"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!imported.warnings.iter().any(|w| w.starts_with("approximate")), "{name}: {:?}", imported.warnings);
        assert_eq!(imported.arch.param_count() as u64, case["param_count"].as_u64().unwrap(), "{name}: total");
        assert_eq!(imported.arch.active_param_count() as u64, case["active_param_count"].as_u64().unwrap(), "{name}: active");
    }
}

#[test]
fn states_equal_transformers_cache() {
    states_equal_cache(&fixture(), 2);
}

/// The whole model's saved tensors (norms, short convolutions, attention, the dense MLP, the
/// router and the routed experts, the head; the loss's scalar aside) within 3 %, with the
/// expert bias and renormalised top-k and without both, at two lengths.
#[test]
fn saved_activations_against_transformers() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 4);
    for (name, case) in cases {
        let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]},
            "training": {"micro_batch": case["batch"], "seq_len": case["seq_len"], "precision": "fp32", "mode": "train", "optimizer": "adamw"}}))
        .expect("scenario");
        let b = estimate(&s);
        let saved: u64 = b.terms.iter().filter(|t| format!("{:?}", t.lifetime).starts_with("Saved")).map(|t| t.bytes).sum();
        let measured = case["model_saved_bytes"].as_f64().unwrap();
        let err = (saved as f64 - measured) / measured;
        println!("{name}: Headroom {saved}, transformers {measured} ({:+.2} %)", 100.0 * err);
        assert!(err.abs() <= 0.03, "{name}: {:+.2} %", 100.0 * err);
    }
}

/// A config without `layer_types` (the class default) is refused by that name: transformers
/// cannot build it either.
#[test]
fn missing_layer_types_names_the_field() {
    let err = import_hf_config(&json!({"model_type": "lfm2_moe", "hidden_size": 64})).unwrap_err();
    assert!(err.field.ends_with("layer_types"), "{err}");
}
