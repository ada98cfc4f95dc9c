//! Accuracy must not drift: every fixture case's relative error (model vs measurement) is
//! snapshotted in `tests/fixtures/accuracy_snapshot.json`, and this test fails when any case
//! moves by more than 0.1 percentage points — a change to a term that stays inside the
//! 5 % tolerance of `accuracy.rs` still shows up here.
//!
//! After a deliberate model change, rewrite the snapshot with
//! `HEADROOM_UPDATE_SNAPSHOT=1 cargo test --test accuracy_snapshot` and say why in the commit.

use std::collections::BTreeMap;

use headroom::{estimate, Scenario};
use serde_json::Value;

/// Largest allowed move of one case's error, in percentage points.
const TOLERANCE_PP: f64 = 0.1;

fn fixture(name: &str) -> Option<Value> {
    let path = format!("{}/tests/fixtures/measured/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).ok()?;
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}")))
}

fn scenario(case: &Value) -> Scenario {
    Scenario::from_json(&case["scenario"].to_string()).unwrap_or_else(|e| panic!("{}: {e}", case["name"])).scenario
}

fn error_pct(predicted: f64, measured: f64) -> f64 {
    if measured == 0.0 {
        return if predicted == 0.0 { 0.0 } else { 100.0 };
    }
    (predicted - measured) / measured * 100.0
}

/// Every case's current error, keyed "fixture/case/quantity".
fn current_errors() -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for file in ["activations.json", "activations_parts.json"] {
        let Some(f) = fixture(file) else { continue };
        for case in f["cases"].as_array().into_iter().flatten() {
            let b = estimate(&scenario(case));
            let measured = case["measured"]["saved_bytes"].as_f64().unwrap_or(0.0);
            out.insert(format!("{file}/{}/saved", case["name"].as_str().unwrap_or("?")), error_pct(b.phases.forward_backward.activations as f64, measured));
        }
    }
    if let Some(f) = fixture("peaks.json") {
        for case in f["cases"].as_array().into_iter().flatten() {
            let b = estimate(&scenario(case));
            let d = &case["detail"];
            let extra = d["buffer_bytes"].as_f64().unwrap_or(0.0) + d["input_bytes"].as_f64().unwrap_or(0.0);
            let name = case["name"].as_str().unwrap_or("?");
            for (phase, predicted) in [("backward", &b.phases.forward_backward), ("optimizer", &b.phases.optimizer_step)] {
                let measured = d["peak_by_phase"][phase]["total"].as_f64().unwrap_or(0.0) - extra;
                out.insert(format!("peaks.json/{name}/{phase}"), error_pct((predicted.total - predicted.overhead) as f64, measured));
            }
        }
    }
    if let Some(f) = fixture("optimizer_states.json") {
        for case in f["cases"].as_array().into_iter().flatten() {
            let b = estimate(&scenario(case));
            let o = &b.phases.optimizer_step;
            let name = case["name"].as_str().unwrap_or("?");
            let m = &case["measured"];
            out.insert(format!("optimizer_states.json/{name}/states"), error_pct(o.optimizer_states as f64, m["optimizer_state_bytes"].as_f64().unwrap_or(0.0)));
            out.insert(format!("optimizer_states.json/{name}/gradients"), error_pct(o.gradients as f64, m["grad_bytes"].as_f64().unwrap_or(0.0)));
        }
    }
    out
}

#[test]
fn no_fixture_case_moves_by_more_than_a_tenth_of_a_point() {
    let path = format!("{}/tests/fixtures/accuracy_snapshot.json", env!("CARGO_MANIFEST_DIR"));
    let current = current_errors();
    if std::env::var_os("HEADROOM_UPDATE_SNAPSHOT").is_some() {
        let rounded: BTreeMap<_, _> = current.iter().map(|(k, v)| (k.clone(), (v * 1e4).round() / 1e4)).collect();
        std::fs::write(&path, serde_json::to_string_pretty(&rounded).expect("json") + "\n").expect("write snapshot");
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e} (create it with HEADROOM_UPDATE_SNAPSHOT=1)"));
    let snapshot: BTreeMap<String, f64> = serde_json::from_str(&text).expect("snapshot json");
    let mut moved = Vec::new();
    for (key, now) in &current {
        match snapshot.get(key) {
            Some(then) if (now - then).abs() > TOLERANCE_PP => moved.push(format!("{key}: {then:+.3}% → {now:+.3}%")),
            Some(_) => {}
            None => moved.push(format!("{key}: new case ({now:+.3}%), not in the snapshot")),
        }
    }
    for key in snapshot.keys().filter(|k| !current.contains_key(*k)) {
        moved.push(format!("{key}: in the snapshot but no longer measured"));
    }
    assert!(current.len() >= 100, "only {} cases", current.len());
    assert!(moved.is_empty(), "{} fixture cases moved by more than {TOLERANCE_PP} pp:\n{}", moved.len(), moved.join("\n"));
}
