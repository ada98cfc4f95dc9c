//! Diffusion transformers (Flux, SD3/3.5, Wan 2.1) against diffusers 0.42.1: parameter counts of
//! the real Hub configs built on the meta device (`tests/measure/diffusion_dit.py`,
//! `tests/fixtures/measured/diffusion_dit.json`).

use headroom::import::diffusers::dit::read;
use serde_json::{json, Value};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/measured/diffusion_dit.json")).unwrap()
}

#[test]
fn parameter_counts_equal_what_diffusers_builds() {
    let f = fixture();
    let counts = f["counts"].as_array().unwrap();
    assert!(counts.len() >= 7, "Flux dev/schnell, SD3 medium, SD3.5 medium/large, Wan 1.3B/14B are measured");
    for c in counts {
        let path = c["config"].as_str().unwrap();
        let cfg: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let dit = read(&cfg).unwrap();
        assert_eq!(dit.param_count() as u64, c["params"].as_u64().unwrap(), "{path}");
    }
}

#[test]
fn tiny_configs_count_as_diffusers_builds_them() {
    // the tiny configs of the saved-activation cases: their counts are in the fixture too
    let f = fixture();
    for c in f["tiny_counts"].as_array().unwrap() {
        let dit = read(&c["config"]).unwrap();
        assert_eq!(dit.param_count() as u64, c["params"].as_u64().unwrap(), "{}", c["name"]);
    }
}

#[test]
fn bad_configs_are_refused_naming_the_field() {
    let e = read(&json!({"_class_name": "FluxTransformer2DModel", "num_layers": "19"})).unwrap_err();
    assert_eq!(e.field, "num_layers");
    let e = read(&json!({"_class_name": "SD3Transformer2DModel", "qk_norm": "l2"})).unwrap_err();
    assert_eq!(e.field, "qk_norm");
    let e = read(&json!({"_class_name": "SD3Transformer2DModel", "dual_attention_layers": [0, -1]})).unwrap_err();
    assert_eq!(e.field, "dual_attention_layers");
    let e = read(&json!({"_class_name": "WanTransformer3DModel", "patch_size": [2, 2]})).unwrap_err();
    assert_eq!(e.field, "patch_size");
    let e = read(&json!({"_class_name": "UNet2DConditionModel"})).unwrap_err();
    assert_eq!(e.field, "_class_name");
}
