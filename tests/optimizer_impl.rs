//! Adam / AdamW's implementation (`training.optimizer_impl`: foreach, for-loop, fused) and the
//! optimizer step's own transient, against the CPU allocator's events over a real
//! `optimizer.step()` (torch 2.15, `tests/measure/optimizer_impl.py` →
//! `tests/fixtures/measured/optimizer_impl.json`): foreach's parameter-sized list, for-loop's two
//! tensors of the largest parameter, fused's nothing. Then what the profiles choose.

use headroom::profiles::Framework;
use headroom::scenario::OptimizerImpl;
use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/optimizer_impl.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("fixture is JSON")
}

fn term(b: &Breakdown, name: &str) -> Option<u64> {
    b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == name).map(|t| t.bytes)
}

fn plan(case: &Value) -> Breakdown {
    let precision = if case["precision"] == "bf16" { "bf16" } else { "fp32" };
    let scenario = json!({
        "model": {"hf_config": case["model"]},
        "training": {"micro_batch": 2, "seq_len": 64, "precision": precision, "optimizer": case["optimizer"], "optimizer_impl": case["implementation"]},
    });
    let decoded = Scenario::from_json(&scenario.to_string()).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    estimate(&decoded.scenario)
}

/// Every case: the model's "optimizer step intermediates" against the step's measured
/// allocator peak: foreach within 0.01 % (the list, plus a few bytes of step counters), fused
/// under 1 KiB (nothing parameter-sized), for-loop within 5 % (the previous parameter's `denom`
/// the loop variable still holds is not counted: +3.1 % on the small-vocabulary model).
#[test]
fn step_intermediates_match_each_implementation() {
    let f = fixture();
    assert!(f["torch"].as_str().is_some_and(|v| v.starts_with("2.15")), "{}", f["torch"]);
    let cases = f["cases"].as_array().expect("cases");
    assert!(cases.len() >= 24);
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let measured = case["step_peak_above_start"].as_f64().expect("peak");
        let b = plan(case);
        let predicted = term(&b, "optimizer step intermediates").unwrap_or(0) as f64;
        let implementation = case["implementation"].as_str().unwrap_or("?");
        let ok = match implementation {
            "foreach" => (predicted - measured).abs() / measured < 1e-4,
            "for-loop" => (predicted - measured).abs() / measured < 0.05,
            "fused" => predicted == 0.0 && measured < 1024.0,
            other => panic!("{name}: unknown implementation {other}"),
        };
        println!("{name:<40} measured {measured:>12.0} B, predicted {predicted:>12.0} B");
        if !ok {
            failures.push(format!("{name}: measured {measured} B, predicted {predicted} B"));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

/// The measured peaks order the implementations as the model does, on the model whose largest
/// tensor is a small part of it: fused < for-loop < foreach.
#[test]
fn fused_allocates_nothing_and_for_loop_less_than_foreach() {
    let f = fixture();
    let peak = |name: &str| -> f64 {
        f["cases"].as_array().expect("cases").iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("{name}"))["step_peak_above_start"].as_f64().expect("peak")
    };
    for precision in ["fp32", "bf16"] {
        let (fused, for_loop, foreach) = (
            peak(&format!("llama-tiny-v1k-{precision}-adamw-fused")),
            peak(&format!("llama-tiny-v1k-{precision}-adamw-for-loop")),
            peak(&format!("llama-tiny-v1k-{precision}-adamw-foreach")),
        );
        assert!(fused < 1024.0 && for_loop < foreach / 5.0, "{precision}: {fused} {for_loop} {foreach}");
    }
}

/// The default planner scenario (Llama-3-8B, bf16-mixed AdamW, plain PyTorch: foreach) carries
/// a parameter-sized fp32 list at its optimizer step; fused drops it, and the step's peak with it.
#[test]
fn fused_removes_the_default_scenarios_foreach_list() {
    let foreach = estimate(&Scenario::default());
    let mut s = Scenario::default();
    s.training.optimizer_impl = OptimizerImpl::Fused;
    let fused = estimate(&s);
    let list = term(&foreach, "optimizer step intermediates").expect("foreach list");
    assert_eq!(list, 8_030_261_248 * 4);
    assert_eq!(term(&fused, "optimizer step intermediates").unwrap_or(0), 0);
    // The overhead's fragmentation share follows the dynamic bytes (overhead.rs); the rest of
    // the step's peak falls by the list exactly.
    let without_overhead = |b: &Breakdown| b.phases.optimizer_step.total - b.phases.optimizer_step.overhead;
    assert_eq!(without_overhead(&foreach) - without_overhead(&fused), list);
    assert!(fused.phases.optimizer_step.total < foreach.phases.optimizer_step.total);
}

/// The profiles take their documented defaults: transformers 5's Trainer, TRL, Unsloth,
/// torchtune, torchtitan, Megatron-Core and DeepSpeed fused; LitGPT's finetune scripts foreach;
/// no profile leaves the user's choice.
#[test]
fn profiles_choose_their_documented_implementation() {
    for (f, expected) in [
        (Framework::Transformers, OptimizerImpl::Fused),
        (Framework::TrlLiger, OptimizerImpl::Fused),
        (Framework::Unsloth, OptimizerImpl::Fused),
        (Framework::Torchtune, OptimizerImpl::Fused),
        (Framework::Litgpt, OptimizerImpl::Foreach),
        (Framework::Torchtitan, OptimizerImpl::Fused),
        (Framework::MegatronCore, OptimizerImpl::Fused),
        (Framework::Deepspeed, OptimizerImpl::Fused),
    ] {
        let mut s = Scenario::default();
        s.training.optimizer_impl = OptimizerImpl::ForLoop;
        s.apply_framework(f);
        assert_eq!(s.training.optimizer_impl, expected, "{f:?}");
    }
    let mut s = Scenario::default();
    s.training.optimizer_impl = OptimizerImpl::ForLoop;
    s.apply_framework(Framework::Custom);
    assert_eq!(s.training.optimizer_impl, OptimizerImpl::ForLoop);
}

/// The link carries the switch (`oi=`), and a bad value names its field.
#[test]
fn optimizer_impl_round_trips_and_bad_values_name_the_field() {
    let mut s = Scenario::default();
    s.training.optimizer_impl = OptimizerImpl::ForLoop;
    let q = headroom::url::encode(&s);
    assert!(q.contains("oi=for-loop"), "{q}");
    let (back, errors) = headroom::url::decode(&q);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back.training.optimizer_impl, OptimizerImpl::ForLoop);
    let err = Scenario::from_json(r#"{"training": {"optimizer_impl": "turbo"}}"#).unwrap_err();
    assert_eq!(err.field, "training.optimizer_impl");
    let (_, errors) = headroom::url::decode("oi=turbo");
    assert!(errors.iter().any(|e| e.field == "url.oi"), "{errors:?}");
}

/// Optimizer step in backward (torchtune's `optimizer_in_bwd`): one optimizer per parameter,
/// so the transient is one tensor's gradient plus its update's intermediates: foreach one
/// state-sized tensor, for-loop two, fused none.
#[test]
fn optimizer_in_backward_follows_the_implementation() {
    let bytes = |imp: OptimizerImpl| {
        let mut s = Scenario::default();
        s.training.precision = headroom::model::precision::Precision::Bf16;
        s.training.techniques.optimizer_in_backward = true;
        s.training.optimizer_impl = imp;
        term(&estimate(&s), "one parameter's gradient and update (optimizer step in backward)").expect("term")
    };
    // Llama-3-8B's largest tensor: the 128256 × 4096 embedding (and head).
    let largest = 128_256u64 * 4096;
    assert_eq!(bytes(OptimizerImpl::Fused), largest * 2);
    assert_eq!(bytes(OptimizerImpl::Foreach), largest * (2 + 2));
    assert_eq!(bytes(OptimizerImpl::ForLoop), largest * (2 + 4));
}
