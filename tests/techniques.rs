//! Framework techniques, through the whole planner: what each removes or adds, and the
//! validation that keeps impossible combinations out.

use headroom::model::breakdown::Phase;
use headroom::{estimate, Scenario};

fn plan(json: &str) -> headroom::Breakdown {
    estimate(&Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}")).scenario)
}

/// Optimizer step fused into backward on Llama-3-8B (bf16-mixed AdamW, one GPU): the
/// optimizer-step peak (weights + gradients + states + foreach intermediates) is gone, no
/// gradient is kept, and the peak becomes the start of backward.
#[test]
fn optimizer_in_backward_removes_the_optimizer_step_peak() {
    let plain = plan(r#"{"model": {"preset": "llama-3-8b"}}"#);
    let fused = plan(r#"{"model": {"preset": "llama-3-8b"}, "training": {"techniques": {"optimizer_in_backward": true}}}"#);
    assert_eq!(plain.phases.peak_phase, Phase::OptimizerStep);
    assert_eq!(fused.phases.peak_phase, Phase::ForwardBackward);
    assert_eq!(fused.gradients, 0);
    assert!(fused.total < plain.total);
    assert!(!fused.terms.iter().any(|t| t.name == "optimizer step intermediates"));
}

#[test]
fn optimizer_in_backward_refuses_gradient_accumulation() {
    let s = Scenario::from_json(r#"{"training": {"grad_accum": 4, "techniques": {"optimizer_in_backward": true}}}"#).expect("decodes").scenario;
    assert!(s.validate().iter().any(|e| e.field == "training.techniques.optimizer_in_backward"));
}
