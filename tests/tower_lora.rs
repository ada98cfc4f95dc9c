//! LoRA on vision towers' linears against PEFT (`tests/measure/tower_lora.py`,
//! `tests/fixtures/measured/tower_lora.json`): tiny Qwen2.5-VL, Qwen3-VL, Gemma 3 (SigLIP) and
//! LLaVA (CLIP)
//! with adapters on the tower blocks' linears only, fp32 on CPU, one sample with one image:
//! - the adapter parameters PEFT makes in the tower equal what `training.lora.vision_tower`
//!   adds to `trainable_params`;
//! - the bytes saved under the frozen projector equal Headroom's "projector input" term;
//! - the bytes saved under the tower within 3 % of the tower's terms (measured when this was
//!   written: Qwen2.5-VL −0.02 %, Qwen3-VL 0.00 %, Gemma 3 +0.53 %, LLaVA +0.41 %; the rest is
//!   the fp32 logsumexp's 32-row padding of CUDA's memory-efficient kernel, which Headroom
//!   models and CPU's flash kernel does not have). The first block's attention norm keeps
//!   nothing (its input, the frozen patch embedding's output, needs no gradient).

use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/tower_lora.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

/// The Headroom targets for the modules PEFT adapted: every attention and MLP kind (the
/// tower's linears map to them, `arch/tower.rs` `tower_linear`).
const TARGETS: [&str; 7] = ["q", "k", "v", "o", "gate", "up", "down"];

fn breakdown(case: &Value, vision_tower: bool) -> Breakdown {
    let training = json!({"micro_batch": case["micro_batch"], "seq_len": case["text_tokens"], "precision": "fp32", "resolution": case["resolution"],
                          "lora": {"rank": case["rank"], "targets": TARGETS, "vision_tower": vision_tower}});
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]}, "training": training})).expect("scenario");
    estimate(&s)
}

fn term(b: &Breakdown, names: &[&str]) -> f64 {
    b.terms.iter().filter(|t| names.contains(&t.name.as_ref())).map(|t| t.bytes).sum::<u64>() as f64
}

const TOWER: [&str; 4] = ["vision tower blocks", "vision tower patch-embedding input (pixels)", "vision tower pre-norm", "vision tower rotary tables and final norm"];

#[test]
fn tower_adapter_parameters_equal_peft() {
    let f = fixture();
    for (name, case) in f["cases"].as_object().unwrap() {
        let (with, without) = (breakdown(case, true), breakdown(case, false));
        assert_eq!(with.trainable_params - without.trainable_params, case["adapter_params"].as_u64().unwrap(), "{name}");
        assert!(with.parameters > without.parameters && with.optimizer_states > without.optimizer_states, "{name}");
    }
}

#[test]
fn frozen_projector_saves_what_its_input_gradient_needs() {
    let f = fixture();
    for (name, case) in f["cases"].as_object().unwrap() {
        let b = breakdown(case, true);
        assert_eq!(term(&b, &["projector input"]), case["projector_saved_bytes"].as_f64().unwrap(), "{name}");
        // Without LoRA on the tower nothing on the vision side is saved.
        let off = breakdown(case, false);
        assert_eq!(term(&off, &TOWER) + term(&off, &["projector input"]), 0.0, "{name}");
    }
}

#[test]
fn adapted_tower_blocks_against_peft() {
    let f = fixture();
    for (name, case) in f["cases"].as_object().unwrap() {
        let b = breakdown(case, true);
        let (model, measured) = (term(&b, &TOWER), case["tower_saved_bytes"].as_f64().unwrap());
        let error = model / measured - 1.0;
        println!("{name:12} tower measured {measured:>8} model {model:>8.0} {:+.2}%", 100.0 * error);
        assert!(error.abs() <= 0.03, "{name}: tower {model} vs measured {measured}");
    }
}

/// PEFT matches `target_modules` by name: a Llama-style list adapts SigLIP's q/k/v and
/// Qwen2.5-VL's tower MLP too, so a plan that keeps the tower frozen says so.
#[test]
fn a_frozen_tower_under_lora_names_the_modules_peft_would_match() {
    let f = fixture();
    for (name, want) in [("gemma3", "q_proj, k_proj, v_proj"), ("llava", "q_proj, k_proj, v_proj"), ("qwen2_5_vl", "gate_proj, up_proj, down_proj")] {
        let case = &f["cases"][name];
        let warned = |b: &Breakdown| b.warnings.iter().find(|w| w.contains("PEFT's target_modules match module names")).cloned();
        let off = warned(&breakdown(case, false)).unwrap_or_else(|| panic!("{name}: no warning"));
        assert!(off.contains(&format!("the tower's {want} carry")), "{name}: {off}");
        assert!(warned(&breakdown(case, true)).is_none(), "{name}");
    }
    // Qwen3-VL's tower names (qkv, proj, linear_fc1, linear_fc2) match none of them.
    assert!(!breakdown(&f["cases"]["qwen3_vl"], false).warnings.iter().any(|w| w.contains("PEFT's target_modules match module names")));
}
