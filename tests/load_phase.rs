//! The load phase (`model::load`): FSDP1's unit moved and flattened while it wraps, FSDP2's unit
//! or tensor moved whole before it is sharded, and a 4-bit
//! base quantised at load, against `tests/fixtures/measured/load.json`
//! (`tests/measure/load.py`); the peak is the largest of the three phases.

use headroom::model::breakdown::{Component, Lifetime, Phase};
use headroom::model::dtype::nf4_bytes_per_weight;
use headroom::{estimate, Breakdown, Scenario};
use serde_json::Value;

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/load.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("load.json")
}

fn plan(json: &str) -> Breakdown {
    estimate(&Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}")).scenario)
}

/// Bytes of the load's own terms.
/// The load's allocated transients (not the caching allocator's reserve above them, which the
/// allocator measurements here do not see: `nf4_load_reserve.rs`).
fn load_terms(b: &Breakdown) -> f64 {
    b.terms.iter().filter(|t| t.lifetime == Lifetime::Load && t.component == Component::Temporary).map(|t| t.bytes as f64).sum()
}

/// llama-tiny's root unit (embeddings, final norm, untied head), in elements.
const LLAMA_TINY_ROOT: f64 = (2 * 32000 * 512 + 512) as f64;

/// FSDP1 on 2 ranks, fp32: the load peaks at the root's flatten, with the blocks' shards, the
/// root unsharded twice and its shard: the load phase's weights and transient are the measured
/// peak. `sync_module_states` does not move it (its broadcast buckets are freed before the
/// flatten), which is why it is no switch here.
#[test]
fn fsdp1_load_matches_the_measured_wrap() {
    let f = fixture();
    let cases = f["fsdp1_cases"].as_array().expect("fsdp1_cases");
    let peaks: Vec<f64> = cases.iter().map(|c| c["measured"]["peak_bytes"].as_f64().unwrap()).collect();
    assert_eq!(peaks.len(), 2);
    assert_eq!(peaks[0], peaks[1], "sync_module_states on and off");
    let case = &cases[0];
    assert_eq!(case["root_param_count"].as_f64().unwrap(), LLAMA_TINY_ROOT);
    let b = plan(&case["scenario"].to_string());
    assert_eq!(load_terms(&b), 2.0 * LLAMA_TINY_ROOT * 4.0);
    let load = &b.phases.load;
    let predicted = (load.parameters + load.temporary) as f64;
    let measured = peaks[0];
    println!("FSDP1 load: predicted {predicted}, measured {measured}");
    assert!((predicted - measured).abs() <= 1e-3 * measured, "{predicted} vs {measured}");
    // Only weights, overhead and the load's transient exist at load.
    assert_eq!((load.gradients, load.optimizer_states, load.activations), (0, 0, 0));
    // FSDP2 (the default) moves the unit but never flattens it: half the transient.
    let mut v = case["scenario"].clone();
    v["parallel"]["fsdp_version"] = 2.into();
    let fsdp2 = plan(&v.to_string());
    assert_eq!(load_terms(&fsdp2), LLAMA_TINY_ROOT * 4.0);
    assert!(fsdp2.phases.load.total < b.phases.load.total);
    assert_eq!(b.phases.forward_backward, fsdp2.phases.forward_backward, "the step itself is unchanged");
}

/// FSDP2 on a host model (`fsdp_load: unit`), the move to the GPU emulated by a copy on CPU:
/// the GPU's peak is every shard plus the root unit whole, as the load phase counts it.
#[test]
fn fsdp2_unit_load_matches_the_measured_sharding() {
    let f = fixture();
    let case = f["fsdp2_cases"].as_array().expect("fsdp2_cases").iter().find(|c| c["scenario"]["parallel"]["fsdp_load"] == "unit").expect("unit case");
    assert_eq!(case["root_param_count"].as_f64().unwrap(), LLAMA_TINY_ROOT);
    let b = plan(&case["scenario"].to_string());
    assert_eq!(load_terms(&b), LLAMA_TINY_ROOT * 4.0);
    let measured = case["measured"]["gpu_peak_bytes"].as_f64().unwrap();
    let predicted = (b.phases.load.parameters + b.phases.load.temporary) as f64;
    println!("FSDP2 unit load: predicted {predicted}, measured {measured}");
    assert!((predicted - measured).abs() <= 1e-3 * measured, "{predicted} vs {measured}");
}

/// FSDP2 on a meta model filled from a broadcast full state dict (`fsdp_load: tensor`, torchtune):
/// rank 1 receives one tensor whole at a time; the largest (the embedding or the head) is the
/// transient. A sharded checkpoint (`sharded`, torchtitan) has none.
#[test]
fn fsdp2_tensor_load_matches_the_measured_broadcast() {
    let f = fixture();
    let case = f["fsdp2_cases"].as_array().expect("fsdp2_cases").iter().find(|c| c["scenario"]["parallel"]["fsdp_load"] == "tensor").expect("tensor case");
    let largest = case["largest_tensor"].as_f64().unwrap();
    assert_eq!(largest, 32000.0 * 512.0);
    let b = plan(&case["scenario"].to_string());
    let predicted = load_terms(&b);
    let measured = case["measured"]["extra_bytes"].as_f64().unwrap();
    println!("FSDP2 tensor load: predicted {predicted}, measured {measured}");
    assert_eq!(predicted, largest * 4.0);
    assert!((predicted - measured).abs() <= 0.01 * measured, "{predicted} vs {measured}");
    let mut v = case["scenario"].clone();
    v["parallel"]["fsdp_load"] = "sharded".into();
    assert_eq!(load_terms(&plan(&v.to_string())), 0.0);
}

/// An FSDP2 load the planner does not know is refused, naming the field.
#[test]
fn bad_fsdp_load_names_the_field() {
    let err = Scenario::from_json(r#"{"parallel": {"dp": 2, "zero": "fsdp", "fsdp_load": "lazy"}}"#).expect_err("refused");
    assert!(err.to_string().contains("fsdp_load"), "{err}");
}

/// One MLP weight quantised to NF4 (double quantisation): the measured peak is the modelled
/// transient plus the NF4 weight as the parameters count it, to bitsandbytes' code tables
/// (about 2 KB).
#[test]
fn nf4_quantisation_at_load_matches_the_measured_peak() {
    let f = fixture();
    let case = &f["nf4_cases"][0];
    let measured = case["measured"]["peak_bytes"].as_f64().unwrap();
    let n = case["shape"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).product::<f64>();
    let qlora = r#"{"model": {"hf_config": {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 1792, "vocab_size": 32000, "tie_word_embeddings": false}},
        "training": {"precision": "bf16", "lora": {"rank": 8, "base": "nf4"}}}"#;
    let b = plan(qlora);
    let transient = load_terms(&b);
    assert_eq!(transient, n * (2.0 + 2.0 * 4.0 / 64.0));
    let predicted = transient + n * nf4_bytes_per_weight(true);
    println!("NF4 at load: predicted {predicted}, measured {measured}");
    assert!((measured - predicted).abs() <= 4096.0, "{predicted} vs {measured}");
    // A checkpoint saved already quantised has no such moment.
    let v: Value = serde_json::from_str(qlora).unwrap();
    let mut pre = v.clone();
    pre["training"]["lora"]["quantize_at_load"] = false.into();
    assert_eq!(load_terms(&plan(&pre.to_string())), 0.0);
}

/// The peak is the largest phase, the load included, and says so; the load is its own phase
/// and moves no sum over the step.
#[test]
fn the_load_can_be_the_peak() {
    // Llama-3-8B sharded over 64 ranks with FSDP1: the root unit's 1.05e9 fp32 elements twice
    // (8.4 GB) outweigh the step's 16·Ψ/64 of shards and states.
    let b = plan(
        r#"{"model": {"preset": "llama-3-8b"}, "training": {"micro_batch": 1, "seq_len": 1024, "checkpointing": "full"},
        "parallel": {"dp": 64, "zero": "fsdp", "fsdp_version": 1}}"#,
    );
    let p = &b.phases;
    println!("load {} fb {} opt {}", p.load.total, p.forward_backward.total, p.optimizer_step.total);
    assert_eq!(p.peak_phase, Phase::Load);
    assert_eq!(b.total, p.load.total);
    assert!(p.load.total > p.forward_backward.total.max(p.optimizer_step.total));
    assert!(b.warnings.iter().any(|w| w.contains("loading the model")), "{:?}", b.warnings);
    let edge = 2.0 * 128_256.0 * 4096.0 + 4096.0;
    assert_eq!(load_terms(&b), 2.0 * edge * 4.0);
    // Without the load's transient the step is the peak again, with the same step totals.
    let v = plan(
        r#"{"model": {"preset": "llama-3-8b"}, "training": {"micro_batch": 1, "seq_len": 1024, "checkpointing": "full"},
        "parallel": {"dp": 64, "zero": "fsdp", "fsdp_version": 2}}"#,
    );
    assert_ne!(v.phases.peak_phase, Phase::Load);
    assert_eq!((v.phases.forward_backward.clone(), v.phases.optimizer_step.clone()), (p.forward_backward.clone(), p.optimizer_step.clone()));
}

/// A version FSDP does not have is refused, naming the field.
#[test]
fn bad_fsdp_version_names_the_field() {
    let s = Scenario::from_json(r#"{"parallel": {"dp": 2, "zero": "fsdp", "fsdp_version": 3}}"#).expect("parses").scenario;
    let errors = s.validate();
    assert!(errors.iter().any(|e| e.to_string().contains("parallel.fsdp_version")), "{errors:?}");
}

/// Profiles set the FSDP version their code uses: accelerate's default 1 (transformers, TRL,
/// Unsloth), Lightning Fabric's FSDP1 (LitGPT), FSDP2 for torchtune (a meta model filled one
/// tensor at a time) and torchtitan (sharded checkpoints).
#[test]
fn profiles_choose_their_fsdp() {
    use headroom::model::inputs::FsdpLoad;
    use headroom::profiles::Framework;
    for (framework, version, load) in [
        (Framework::Transformers, 1, FsdpLoad::Unit),
        (Framework::Litgpt, 1, FsdpLoad::Unit),
        (Framework::Torchtune, 2, FsdpLoad::Tensor),
        (Framework::Torchtitan, 2, FsdpLoad::Sharded),
    ] {
        let mut s = Scenario::default();
        s.apply_framework(framework);
        assert_eq!((s.parallel.fsdp_version, s.parallel.fsdp_load), (version, load), "{framework:?}");
    }
}
