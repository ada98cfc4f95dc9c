//! DistributedDataParallel without ZeRO (`parallel.gradient_as_bucket_view`): the reducer's
//! flat buckets live as long as the model, `zero_grad(set_to_none=True)` frees the `.grad`s
//! before the next forward, and with `gradient_as_bucket_view=True` the `.grad`s are views of
//! the buckets (one allocation). Measured on two CPU processes (gloo) with the allocator's
//! events (`tests/measure/ddp_buckets.py` → `tests/fixtures/measured/ddp_buckets.json`): bytes
//! alive above the parameters before the forward, after backward, and during the optimizer step.

use headroom::model::breakdown::{Component, Lifetime};
use headroom::profiles::Framework;
use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/ddp_buckets.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("fixture is JSON")
}

fn plan(f: &Value, bucket_view: bool) -> Breakdown {
    let scenario = json!({
        "model": {"hf_config": f["model"]},
        "training": {"micro_batch": f["batch"]["micro_batch"], "seq_len": f["batch"]["seq_len"], "precision": "fp32", "optimizer": "sgd"},
        "parallel": {"dp": f["world_size"], "gradient_as_bucket_view": bucket_view},
    });
    estimate(&Scenario::from_json(&scenario.to_string()).unwrap_or_else(|e| panic!("{e}")).scenario)
}

/// Gradient and bucket bytes alive at a moment of the step: `whole` = what is allocated
/// before the forward (whole-step gradients and buckets); after backward, the gradients made
/// in backward too.
fn alive(b: &Breakdown, after_backward: bool) -> u64 {
    b.terms
        .iter()
        .filter(|t| matches!(t.component, Component::Gradients | Component::Temporary))
        .filter(|t| t.lifetime == Lifetime::WholeStep || (after_backward && t.lifetime == Lifetime::MadeInBackward))
        .map(|t| t.bytes)
        .sum()
}

/// Each moment of each setting within 0.01 % (the reducer's few hundred bytes of bookkeeping).
#[test]
fn ddp_moments_match_the_allocator() {
    let f = fixture();
    let cases = f["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2);
    for case in cases {
        let view = case["gradient_as_bucket_view"].as_bool().expect("flag");
        let b = plan(&f, view);
        let params = case["param_bytes"].as_f64().expect("params");
        assert_eq!(b.phases.optimizer_step.parameters as f64, params, "the model's parameters are the measured ones");
        let o = &b.phases.optimizer_step;
        for (moment, predicted) in [("before_forward", alive(&b, false)), ("after_backward", alive(&b, true)), ("optimizer_step_max", o.gradients + o.temporary)] {
            let measured = case[moment].as_f64().expect("moment");
            let err = (predicted as f64 - measured) / measured;
            println!("bucket view {view}: {moment:<20} measured {measured:>12.0} B, predicted {predicted:>12} B ({:+.4} %)", 100.0 * err);
            assert!(err.abs() < 1e-4, "bucket view {view}, {moment}: measured {measured}, predicted {predicted}");
        }
    }
    // The measurement itself: one parameter size before the forward in both settings, two
    // after backward without bucket views, one with.
    let (off, on) = (&cases[0], &cases[1]);
    let p = off["param_bytes"].as_f64().expect("params");
    let ratio = |c: &Value, k: &str| c[k].as_f64().expect("moment") / p;
    assert!((ratio(off, "before_forward") - 1.0).abs() < 1e-3 && (ratio(off, "after_backward") - 2.0).abs() < 1e-3);
    assert!((ratio(on, "before_forward") - 1.0).abs() < 1e-3 && (ratio(on, "after_backward") - 1.0).abs() < 1e-3);
}

/// On Llama-3-8B (bf16-mixed, dp = 8): bucket views save one gradient copy (29.9 GiB) in the
/// optimizer step and in backward; DDP's default has the buckets but no `.grad`s in the forward.
#[test]
fn bucket_view_saves_one_gradient_copy_on_llama_3_8b() {
    let run = |view: bool| {
        let mut s = Scenario::default();
        s.parallel.dp = 8;
        s.parallel.gradient_as_bucket_view = view;
        estimate(&s)
    };
    let (off, on) = (run(false), run(true));
    let grads = 8_030_261_248u64 * 4;
    assert_eq!(off.phases.optimizer_step.gradients + off.phases.optimizer_step.temporary - on.phases.optimizer_step.gradients - on.phases.optimizer_step.temporary, grads);
    let bucket = off.terms.iter().find(|t| t.name == "DDP gradient buckets").expect("buckets");
    assert_eq!((bucket.bytes, bucket.lifetime), (grads, Lifetime::WholeStep));
    assert!(on.terms.iter().all(|t| t.name != "DDP gradient buckets"));
}

/// The link carries it (`gbv=`); the profiles keep DDP's default.
#[test]
fn bucket_view_travels_and_profiles_keep_the_default() {
    let mut s = Scenario::default();
    s.parallel.dp = 4;
    s.parallel.gradient_as_bucket_view = true;
    let q = headroom::url::encode(&s);
    assert!(q.contains("gbv=true"), "{q}");
    assert!(headroom::url::decode(&q).0.parallel.gradient_as_bucket_view);
    for f in Framework::ALL.into_iter().filter(|f| *f != Framework::Custom) {
        let mut p = s.clone();
        p.apply_framework(f);
        assert!(!p.parallel.gradient_as_bucket_view, "{f:?}");
    }
}
