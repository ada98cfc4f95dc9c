//! LoRA on the linears of hybrid models' token mixers against PEFT (`tests/measure/mixer_lora.py`,
//! `tests/fixtures/measured/mixer_lora.json`):
//! - the adapter parameters PEFT makes for the mixer's linears (`LoraConfig(r=8,
//!   target_modules=[...])`), equal to `trainable_params`;
//! - what the adapters of one mixer block save for backward (the model's saved bytes with
//!   adapters on two mixer blocks minus those with adapters on the first), in fp32 and bf16
//!   autocast, within 3 % of the estimate's LoRA mixer terms per mixer block. Only adapters that
//!   run on the CUDA path too are measured (Mamba's and Mamba-2's `in_proj`: their fused
//!   kernels read the other weights directly, `arch/mixer.rs`).

use headroom::import::hf_config::import_hf_config;
use headroom::model::arch::Architecture;
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/mixer_lora.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

/// Headroom's target for a PEFT module name of a mixer.
fn kind(module: &str) -> &'static str {
    match module {
        "in_proj" | "in_proj_qkvz" | "in_proj_qkv" | "in_proj_z" => "mixer-in",
        "in_proj_ba" | "in_proj_b" | "in_proj_a" => "mixer-gates",
        "x_proj" => "x-proj",
        "dt_proj" => "dt-proj",
        "out_proj" => "mixer-out",
        other => panic!("no target for {other}"),
    }
}

fn scenario(case: &Value, targets: Vec<&str>, precision: &str) -> Scenario {
    let (batch, seq) = (case["batch"].as_u64().unwrap_or(2), case["seq_len"].as_u64().unwrap_or(16));
    serde_json::from_value(json!({
        "model": {"hf_config": case["config"]},
        "training": {"micro_batch": batch, "seq_len": seq, "precision": precision, "optimizer": "adamw",
                     "lora": {"rank": case["rank"], "targets": targets}},
    }))
    .expect("scenario")
}

fn targets(case: &Value) -> Vec<&'static str> {
    let mut t: Vec<&str> = case["target_modules"].as_array().unwrap().iter().map(|m| kind(m.as_str().unwrap())).collect();
    t.dedup();
    t
}

fn mixer_layers(config: &Value) -> u64 {
    match import_hf_config(config).expect("config").arch {
        Architecture::Transformer(t) => t.hybrid.expect("hybrid").mixer_layers,
        _ => unreachable!(),
    }
}

const LORA_TERMS: [&str; 3] = ["LoRA adapter inputs (mixer input projections)", "LoRA adapter inputs (mixer inner projections)", "LoRA adapter intermediates (mixer)"];

#[test]
fn adapter_parameters_equal_peft() {
    let f = fixture();
    let cases = f["params"].as_object().unwrap();
    assert!(cases.len() >= 7);
    for (name, case) in cases {
        let b = estimate(&scenario(case, targets(case), "bf16-mixed"));
        assert_eq!(b.trainable_params, case["adapter_params"].as_u64().unwrap(), "{name}");
    }
}

/// PEFT leaves Mamba's `dt_proj` adapters without a gradient (`dt_proj.weight @ time_step`,
/// also on CPU): Headroom gives them weights but no gradients or optimizer states.
#[test]
fn a_bypassed_adapter_has_weights_but_no_gradients() {
    let f = fixture();
    let case = &f["params"]["mamba"];
    assert_eq!(case["no_gradient_on_cpu"], json!(["dt_proj"]));
    let with = estimate(&scenario(case, vec!["mixer-in", "dt-proj"], "fp32"));
    let without = estimate(&scenario(case, vec!["mixer-in"], "fp32"));
    assert!(with.parameters > without.parameters);
    assert_eq!(with.gradients, without.gradients);
    assert_eq!(with.optimizer_states, without.optimizer_states);
    assert_eq!(with.activations, without.activations);
    assert!(with.warnings.iter().any(|w| w.contains("mixer.dt_proj") && w.contains("never run")), "{:?}", with.warnings);
}

#[test]
fn peft_refuses_out_proj_in_mamba_models() {
    let f = fixture();
    for name in ["mamba", "mamba2"] {
        assert!(f["params"][name]["out_proj_refused"].as_str().is_some_and(|m| m.contains("incompatible with Mamba-based models")), "{name}");
    }
    assert!(f["params"]["bamba"]["out_proj_refused"].is_null());
}

/// Jamba in fp32: the torch fallback's scan does not keep the conv output that `x_proj`'s
/// adapter reads, so the adapter keeps it (d per token, fp32); CUDA's `selective_scan_fn`
/// saves it as `u` (`SelectiveScanFn.forward`), which Headroom models.
fn fallback_extra(case: &Value) -> f64 {
    let c = &case["config"];
    if case["family"] == "jamba" && case["precision"] == "fp32" {
        let inner = c["mamba_expand"].as_f64().unwrap() * c["hidden_size"].as_f64().unwrap();
        4.0 * inner * (case["batch"].as_f64().unwrap() * case["seq_len"].as_f64().unwrap())
    } else {
        0.0
    }
}

#[test]
fn saved_adapter_tensors_within_3_percent() {
    let f = fixture();
    let cases = f["activations"].as_object().unwrap();
    assert!(cases.len() >= 28);
    let mut outside = Vec::new();
    for (name, case) in cases {
        let precision = case["precision"].as_str().unwrap();
        let b = estimate(&scenario(case, targets(case), precision));
        let lora: u64 = b.terms.iter().filter(|t| LORA_TERMS.contains(&t.name.as_ref())).map(|t| t.bytes).sum();
        let per_block = lora as f64 / mixer_layers(&case["config"]) as f64 + fallback_extra(case);
        let measured = case["adapter_saved_bytes"].as_f64().unwrap();
        let error = per_block / measured - 1.0;
        println!("{name:28} measured {measured:>8} model {per_block:>8.0} {:+.2}%", 100.0 * error);
        if error.abs() > 0.03 {
            outside.push(format!("{name}: {:+.2}%", 100.0 * error));
        }
    }
    assert!(outside.is_empty(), "{outside:#?}");
}
