//! Helpers shared by the per-family tests of hybrid and state-space models (`zamba.rs`,
//! `zamba2.rs`, `olmo_hybrid.rs`, `lfm2_moe.rs`, `gemma3n.rs`): their measured fixture, a
//! breakdown term by name, and the check of an inference estimate's state and KV terms against
//! the bytes of transformers' own cache after a prefill. Each test file uses what it needs.
#![allow(dead_code)]

use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

/// `tests/fixtures/measured/<file>`.
pub fn fixture(file: &str) -> Value {
    let path = format!("{}/tests/fixtures/measured/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("JSON")
}

/// The bytes of every term named `name`.
pub fn term(b: &Breakdown, name: &str) -> u64 {
    b.terms.iter().filter(|t| t.name == name).map(|t| t.bytes).sum()
}

/// The fixture's `states` cases (`name@float32` / `name@bfloat16`, with `batch`, `tokens`,
/// `conv_state_bytes`, `recurrent_state_bytes`, `kv_bytes`): the inference estimate's
/// "recurrent and conv state" and "KV cache" terms equal them; `cases` of them, none empty.
pub fn states_equal_cache(f: &Value, cases: usize) {
    let states = f["states"].as_object().expect("states");
    assert_eq!(states.len(), cases);
    for (name, case) in states {
        let precision = if name.ends_with("@bfloat16") { "bf16" } else { "fp32" };
        let s: Scenario = serde_json::from_value(json!({
            "model": {"hf_config": case["config"]},
            "training": {"micro_batch": case["batch"], "seq_len": case["tokens"], "precision": precision, "mode": "inference"},
        }))
        .expect("scenario");
        let b = estimate(&s);
        let state = case["conv_state_bytes"].as_u64().unwrap() + case["recurrent_state_bytes"].as_u64().unwrap();
        assert!(state > 0, "{name}: empty measurement");
        assert_eq!(term(&b, headroom::model::inference::STATE_TERM), state, "{name}: recurrent and conv state");
        assert_eq!(term(&b, "KV cache"), case["kv_bytes"].as_u64().unwrap(), "{name}: KV cache");
    }
}

/// The saved-tensor terms of the fused-kernel mixers.
pub const MIXER_TERMS: [&str; 3] = ["mixer saved tensors (fused CUDA kernels)", "mixer input projection inputs", "mixer output projection input"];

/// One `activations` case (`batch`, `seq_len`, `mixer_saved_bytes`, `model_saved_bytes`): its
/// fp32 training step estimated, and the saved bytes inside the mixers and outside them,
/// Headroom's and transformers' (whose mixers run the torch fallback on the CPU).
pub struct MixerSplit {
    pub breakdown: Breakdown,
    pub mixer: u64,
    pub rest: u64,
    pub measured_mixer: f64,
    pub measured_rest: f64,
}

pub fn mixer_split(case: &Value) -> MixerSplit {
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]},
        "training": {"micro_batch": case["batch"], "seq_len": case["seq_len"], "precision": "fp32", "mode": "train", "optimizer": "adamw"}}))
    .expect("scenario");
    let breakdown = estimate(&s);
    let saved = |inside: bool| {
        breakdown.terms.iter().filter(|t| format!("{:?}", t.lifetime).starts_with("Saved") && MIXER_TERMS.contains(&t.name.as_ref()) == inside).map(|t| t.bytes).sum()
    };
    let (mixer, rest) = (saved(true), saved(false));
    let measured_mixer = case["mixer_saved_bytes"].as_f64().unwrap();
    let measured_rest = case["model_saved_bytes"].as_f64().unwrap() - measured_mixer;
    MixerSplit { breakdown, mixer, rest, measured_mixer, measured_rest }
}

impl MixerSplit {
    /// Headroom outside the mixers against transformers, relative.
    pub fn rest_error(&self) -> f64 {
        (self.rest as f64 - self.measured_rest) / self.measured_rest
    }

    /// The torch fallback's measured mixer bytes over Headroom's fused-kernel model.
    pub fn fallback_ratio(&self) -> f64 {
        self.measured_mixer / self.mixer as f64
    }

    /// The names of the estimate's saved-tensor terms.
    pub fn saved_names(&self) -> impl Iterator<Item = &str> {
        self.breakdown.terms.iter().filter(|t| format!("{:?}", t.lifetime).starts_with("Saved")).map(|t| t.name.as_ref())
    }
}
