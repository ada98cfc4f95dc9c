//! The timeline of one training step (`model::timeline`) against the breakdown and against
//! MemTracker: its peak is the breakdown's total and its phase peaks are `Breakdown::phases`, to
//! the byte, for every fixture case and random scenarios; its forward, backward and optimizer
//! peaks are within 3% of the phases MemTracker measured (`peaks.json`, `techniques.json`);
//! and its shape follows the schedule (saved tensors grow in forward and shrink in backward,
//! pipeline stages hold their micro-batches in flight, transients sit at their moment).

use std::collections::HashSet;

use headroom::model::breakdown::{Lifetime, Phase, PhaseTotals, Span};
use headroom::model::timeline::{timeline, Event, Point, Timeline, MAX_POINTS};
use headroom::scenario::{Attention, Checkpointing, Loss, ModelSpec, Optimizer, Parallel, PpSchedule, Zero};
use headroom::{estimate, Breakdown, Scenario};
use proptest::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/measured/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn scenario(case: &Value) -> Scenario {
    Scenario::from_json(&case["scenario"].to_string()).unwrap_or_else(|e| panic!("{}: {e}", case["name"])).scenario
}

/// The fixture files whose cases are training scenarios (those of the accuracy snapshot, and
/// the techniques).
const FIXTURES: [&str; 5] = ["activations.json", "activations_parts.json", "peaks.json", "optimizer_states.json", "techniques.json"];

/// Why a timeline disagrees with its breakdown, if it does. Backward makes the gradients as it
/// frees the saved tensors; the breakdown's forward/backward phase is backward's start, before
/// the first gradient. So, the gradients made so far set aside, no forward/backward point holds
/// more than that phase and one holds exactly as much; with them, the end of backward may hold
/// more (the timeline's peak is then the higher of it and the breakdown's total).
/// The peak of the step itself: the breakdown's total unless the load before the first step
/// is the peak (the timeline draws the step, not the load).
fn step_total(b: &Breakdown) -> u64 {
    match b.phases.peak_phase {
        Phase::Load => b.phases.forward_backward.total.max(b.phases.optimizer_step.total),
        _ => b.total,
    }
}

fn disagreement(b: &Breakdown, t: &Timeline) -> Option<String> {
    let fb = &b.phases.forward_backward;
    let without_made = |p: &Point| p.bytes.total - p.bytes.gradients.saturating_sub(fb.gradients);
    let phase_points = || t.points.iter().filter(|p| p.event.phase() == Phase::ForwardBackward);
    let held = phase_points().map(without_made).max();
    let highest = phase_points().map(|p| p.bytes.total).max().unwrap_or(0);
    let labels: HashSet<&str> = t.points.iter().map(|p| p.label.as_str()).collect();
    if t.points.is_empty() || t.points.len() > MAX_POINTS {
        Some(format!("{} points", t.points.len()))
    } else if held != Some(fb.total) {
        Some(format!("forward/backward without the gradients made {held:?} vs {fb:?}"))
    } else if phase_points().any(|p| p.bytes.gradients != fb.gradients && p.event != Event::Backward) {
        Some("gradients made outside backward".into())
    } else if t.phase_peak(Phase::OptimizerStep).map(|x| &x.bytes) != Some(&b.phases.optimizer_step) {
        Some(format!("optimizer step {:?} vs {:?}", t.phase_peak(Phase::OptimizerStep), b.phases.optimizer_step))
    } else if t.peak().map(|p| p.bytes.total) != Some(step_total(b).max(highest)) {
        Some(format!("peak {:?} vs total {} and forward/backward {highest}", t.peak().map(|p| p.bytes.total), b.total))
    } else if labels.len() != t.points.len() {
        Some("repeated labels".into())
    } else {
        None
    }
}

#[test]
fn every_fixture_case_peaks_where_the_breakdown_does() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in FIXTURES {
        for case in fixture(file)["cases"].as_array().expect("cases") {
            let b = estimate(&scenario(case));
            if let Some(why) = disagreement(&b, &timeline(&b)) {
                failures.push(format!("{file}/{}: {why}", case["name"]));
            }
            checked += 1;
        }
    }
    assert!(checked >= 100, "only {checked} cases");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Bytes a CPU measurement sees: everything but the GPU-only overhead.
fn live(t: &PhaseTotals) -> f64 {
    (t.total - t.overhead) as f64
}

/// The highest point among those with these events.
fn highest(t: &Timeline, events: &[Event]) -> f64 {
    t.points.iter().filter(|p| events.contains(&p.event)).map(|p| live(&p.bytes)).fold(0.0, f64::max)
}

/// The timeline's forward, backward and optimizer-step peaks against MemTracker's phases
/// (`peak_by_phase`: "forward" ends with the loss, "backward" includes the fused optimizer
/// steps of `backward:optimizer_step`). Known limits, printed and kept out of the 3%:
/// - `-forloop`: torch's CPU per-parameter AdamW builds no foreach intermediate (the model
///   assumes the CUDA default), so the measured optimizer step is lower;
///
/// ResNet's backward peak comes late in backward, when its gradients already exist: the
/// timeline draws them as backward makes them, so it is compared too (−19.6% before they were
/// drawn, +2.6% now).
#[test]
fn phase_peaks_within_three_percent_of_memtracker() {
    let mut failures = Vec::new();
    let mut compared = 0;
    println!("{:<44} {:>8} {:>8} {:>8}", "case", "forward", "backward", "optimizer");
    for file in ["peaks.json", "techniques.json"] {
        for case in fixture(file)["cases"].as_array().expect("cases") {
            let name = case["name"].as_str().unwrap_or("?");
            let t = timeline(&estimate(&scenario(case)));
            let phases = &case["detail"]["peak_by_phase"];
            let extra = case["detail"]["buffer_bytes"].as_f64().unwrap_or(0.0) + case["detail"]["input_bytes"].as_f64().unwrap_or(0.0);
            let measured = |key: &str| phases[key]["total"].as_f64().map(|x| x - extra);
            let error = |predicted: f64, measured: Option<f64>| measured.map(|m| (predicted - m) / m);
            let forward = error(highest(&t, &[Event::Forward, Event::Loss]), measured("forward"));
            let backward = error(highest(&t, &[Event::Backward]), measured("backward").map(|b| b.max(measured("backward:optimizer_step").unwrap_or(0.0))));
            let optimizer = error(highest(&t, &[Event::OptimizerStep]), measured("optimizer"));
            let pct = |e: Option<f64>| e.map_or("—".to_string(), |e| format!("{:+.2}%", e * 100.0));
            println!("{name:<44} {:>8} {:>8} {:>8}", pct(forward), pct(backward), pct(optimizer));
            let forloop = name.ends_with("-forloop");
            for (what, e, known) in [("forward", forward, false), ("backward", backward, false), ("optimizer", optimizer, forloop)] {
                if let Some(e) = e.filter(|_| !known) {
                    compared += 1;
                    if e.abs() > 0.03 {
                        failures.push(format!("{name} {what}: {:+.2}%", e * 100.0));
                    }
                }
            }
        }
    }
    assert!(compared >= 60, "only {compared} comparisons");
    assert!(failures.is_empty(), "{failures:#?}");
}

const MODELS: [&str; 7] = ["llama-3-8b", "gpt2", "mixtral-8x7b", "bert-base", "t5-small", "vit-base-16", "resnet-50"];

/// Training scenarios across the schedule's shapes (accumulation, pipeline schedules and
/// stages), precisions, checkpointing, attention, ZeRO and the frameworks' techniques.
fn training_scenario() -> impl Strategy<Value = Scenario> {
    (
        (0..MODELS.len(), 1u64..9, 7u32..14, prop::sample::select(headroom::model::precision::Precision::ALL.to_vec())),
        (prop::sample::select(vec![Checkpointing::None, Checkpointing::Selective, Checkpointing::Full]), prop::sample::select(vec![Attention::Eager, Attention::Sdpa])),
        (1u64..40, 1u64..9, prop::sample::select(vec![PpSchedule::OneFOneB, PpSchedule::Interleaved, PpSchedule::Gpipe]), 1u64..4),
        (prop::sample::select(Zero::ALL.to_vec()), 1u64..5, prop::sample::select(Optimizer::ALL.to_vec())),
        (prop::sample::select(vec![Loss::Standard, Loss::Chunked, Loss::FusedLinear]), any::<bool>(), any::<bool>()),
    )
        .prop_map(|((m, batch, log_seq, precision), (checkpointing, attention), (ga, pp, pp_schedule, virtual_stages), (zero, dp, optimizer), (loss, fused, offload))| {
            let mut s = Scenario { model: ModelSpec::Preset(MODELS[m].into()), ..Scenario::default() };
            let t = &mut s.training;
            (t.micro_batch, t.seq_len, t.precision, t.optimizer, t.checkpointing, t.attention, t.grad_accum) =
                (batch, 1 << log_seq, precision, optimizer, checkpointing, attention, ga);
            t.techniques.loss = loss;
            t.techniques.optimizer_in_backward = fused;
            t.techniques.activation_offload = offload;
            s.parallel = Parallel { dp, pp, pp_schedule, virtual_stages, zero, ..Parallel::default() };
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The timeline and the breakdown agree on every scenario, not only the measured ones.
    #[test]
    fn any_training_step_peaks_where_the_breakdown_does(s in training_scenario()) {
        let b = estimate(&s);
        let t = timeline(&b);
        prop_assert_eq!(disagreement(&b, &t), None);
    }
}

fn named(s: &str) -> Scenario {
    Scenario::from_json(s).expect("scenario").scenario
}

fn point<'a>(t: &'a Timeline, label: &str) -> &'a Point {
    t.points.iter().find(|p| p.label == label).unwrap_or_else(|| panic!("no point {label:?} in {:?}", t.points.iter().map(|p| &p.label).collect::<Vec<_>>()))
}

/// One micro-batch: saved tensors grow block by block in forward, the logits sit at the loss,
/// the loss gradients at the start of backward, saved tensors shrink block by block in
/// backward, and gradients made in backward appear with the optimizer step.
#[test]
fn one_micro_batch_rises_through_forward_and_falls_through_backward() {
    let b = estimate(&named(r#"{"model": {"preset": "llama-3.2-1b"}, "training": {"seq_len": 2048}}"#));
    let t = timeline(&b);
    let labels: Vec<&str> = t.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels.first(), Some(&"forward L1"));
    assert_eq!(labels.last(), Some(&"optimizer step"));
    let at = |l: &str| labels.iter().position(|x| *x == l).unwrap_or_else(|| panic!("{l} in {labels:?}"));
    assert!(at("forward L16") < at("loss") && at("loss") + 1 == at("loss backward") && at("loss backward") < at("backward L16") && at("backward L16") < at("backward L1"));
    let activations = |e: Event| t.points.iter().filter(|p| p.event == e).map(|p| p.bytes.activations).collect::<Vec<_>>();
    let (forward, backward) = (activations(Event::Forward), activations(Event::Backward));
    assert!(forward.windows(2).all(|w| w[0] < w[1]), "{forward:?}");
    assert!(backward.windows(2).all(|w| w[0] >= w[1]), "{backward:?}");
    // The transients: the logits at the loss (the phase does not count them), the gradient
    // buffers at the loss backward (it does), nothing else in forward.
    let term = |terms: &[headroom::model::breakdown::Term], name: &str| terms.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name}")).bytes;
    let logits = term(&b.uncounted_transients, "logits and their fp32 copy (end of forward)");
    let buffers = term(&b.terms, "loss gradient buffers");
    let before = point(&t, "forward L16").bytes.temporary;
    assert_eq!(point(&t, "loss").bytes.temporary, before + logits);
    assert_eq!(point(&t, "loss backward").bytes.temporary, before + buffers);
    assert_eq!(point(&t, "loss backward").bytes, b.phases.forward_backward);
    // No gradient exists in forward; they appear in the blocks' backward and are all there
    // at the step.
    assert!(t.points.iter().take_while(|p| p.label != "backward L16").all(|p| p.bytes.gradients == 0));
    assert!(point(&t, "backward L16").bytes.gradients > 0);
    assert_eq!(point(&t, "optimizer step").bytes.gradients, b.phases.optimizer_step.gradients);
    assert!(b.phases.optimizer_step.gradients > 0);
}

/// One GPU, full fine-tuning (issue 20): the gradients the optimizer step holds are made in
/// backward, so they grow block by block as the saved tensors shrink, never fall back to 0,
/// and are complete at the end of backward; the breakdown's own gradients (at the optimizer
/// step) are the timeline's at the last backward point.
#[test]
fn gradients_grow_through_backward_and_never_vanish() {
    for json in [r#"{}"#, r#"{"training": {"micro_batch": 4, "seq_len": 2048}}"#, r#"{"model": {"preset": "llama-3.2-1b"}, "training": {"seq_len": 2048}}"#] {
        let b = estimate(&named(json));
        let t = timeline(&b);
        let backward: Vec<&Point> = t.points.iter().filter(|p| p.event == Event::Backward && p.label.starts_with("backward L")).collect();
        let grads: Vec<u64> = backward.iter().map(|p| p.bytes.gradients).collect();
        assert!(grads.windows(2).all(|w| w[0] <= w[1]), "{json}: {grads:?}");
        assert!(grads[1..].iter().all(|&g| g > 0), "{json}: gradients vanish in backward: {grads:?}");
        // The last point is the higher end of block 1's backward: all gradients made, or all
        // but block 1's while its saved tensors are still alive.
        let last = backward.last().expect("backward points");
        assert_eq!(last.label, "backward L1");
        let all = b.phases.optimizer_step.gradients;
        let layers = b.step.expect("a training step").layers;
        assert!(last.bytes.gradients == all || last.bytes.gradients.abs_diff(all - all / layers) <= 1, "{json}: {} of {all}", last.bytes.gradients);
        let activations: Vec<u64> = backward.iter().map(|p| p.bytes.activations).collect();
        assert!(activations.windows(2).all(|w| w[0] >= w[1]), "{json}: {activations:?}");
    }
}

/// When the gradients outweigh the saved tensors they replace (full checkpointing keeps
/// little), the end of backward holds more than backward's start, which the breakdown's
/// forward/backward phase counts: the timeline's last backward point is every gradient made,
/// the blocks' saved tensors freed, the per-block moment, and the phase's other terms; still
/// below the optimizer step with AdamW's intermediates, so the peak stays the breakdown's.
#[test]
fn the_end_of_backward_holds_every_gradient() {
    let b = estimate(&named(r#"{"training": {"seq_len": 2048, "checkpointing": "full"}}"#));
    let t = timeline(&b);
    let end = point(&t, "backward L1");
    let fb = &b.phases.forward_backward;
    assert_eq!(fb.gradients, 0);
    assert_eq!(end.bytes.gradients, b.phases.optimizer_step.gradients);
    assert!(end.bytes.total > fb.total, "{} vs {}", end.bytes.total, fb.total);
    let saved_blocks: u64 = b.terms.iter().filter(|t| t.lifetime == Lifetime::Saved(Span::Blocks)).map(|t| t.bytes).sum();
    assert!(saved_blocks > 0);
    let recompute = b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == "recompute buffer").map_or(0, |t| t.bytes);
    let counted_moment: u64 = b.terms.iter().filter(|t| matches!(t.lifetime, Lifetime::Transient(_))).map(|t| t.bytes).sum();
    let output: u64 = b.terms.iter().filter(|t| t.lifetime == Lifetime::Saved(Span::Output)).map(|t| t.bytes).sum();
    // The phase, less the blocks' and the output's saved tensors and its moment, plus the
    // recompute buffer of block 1 and every gradient; whole bytes, one rounding per term.
    let expected = fb.total - saved_blocks - output - counted_moment + recompute + end.bytes.gradients;
    assert!(end.bytes.total.abs_diff(expected) <= 2, "{} vs {expected}", end.bytes.total);
    assert_eq!(t.peak().map(|p| p.bytes.total), Some(b.total));
    assert_eq!(b.total, b.phases.optimizer_step.total);
}

/// Gradient accumulation: each micro-batch frees its saved tensors before the next starts;
/// the accumulated gradients stay throughout. Micro-batches between the second and the last
/// are one point.
#[test]
fn accumulation_repeats_the_micro_batch() {
    let b = estimate(&named(r#"{"model": {"preset": "gpt2"}, "training": {"seq_len": 1024, "grad_accum": 6}}"#));
    let t = timeline(&b);
    assert_eq!(point(&t, "mb 1 · forward L1").bytes, point(&t, "mb 2 · forward L1").bytes);
    assert_eq!(point(&t, "mb 6 · backward L1").bytes, point(&t, "mb 1 · backward L1").bytes);
    let collapsed = point(&t, "mb 3–5 forward and backward");
    assert_eq!((collapsed.event, collapsed.micro_batch), (Event::Collapsed, None));
    assert_eq!(collapsed.bytes.total, b.phases.forward_backward.total);
    assert!(t.points.iter().all(|p| p.bytes.gradients == b.phases.forward_backward.gradients && p.bytes.gradients > 0));
}

/// Pipeline parallelism: the first stage of a 1F1B pipeline of 4 holds 4 micro-batches at its
/// first backward, each as much as the first one; GPipe holds all of them.
#[test]
fn pipeline_stages_hold_their_micro_batches_in_flight() {
    let b = estimate(&named(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 2048, "grad_accum": 8}, "parallel": {"pp": 4}}"#));
    assert_eq!(b.stage, 0);
    let t = timeline(&b);
    let one = point(&t, "mb 1 · forward L8").bytes.activations;
    // Whole bytes: each point rounds once, so n micro-batches are n × one within n bytes.
    assert!(point(&t, "mb 2 · forward L8").bytes.activations.abs_diff(2 * one) <= 2);
    assert!(point(&t, "mb 3–4 forward").bytes.activations.abs_diff(4 * one) <= 4);
    assert_eq!(point(&t, "mb 1 · backward L8").bytes, b.phases.forward_backward);
    assert_eq!(point(&t, "mb 8 · backward L1").bytes.activations, point(&t, "mb 1 · forward L1").bytes.activations);

    // GPipe runs every forward first: on the last stage (the one the breakdown reports, with
    // the head and the loss), micro-batches 3–7 hold seven micro-batches' saved tensors.
    let gpipe = estimate(&named(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 2048, "grad_accum": 8}, "parallel": {"pp": 4, "pp_schedule": "gpipe"}}"#));
    assert_eq!(gpipe.stage, 3);
    let t = timeline(&gpipe);
    let first = point(&t, "mb 1 · loss").bytes.activations;
    assert!(point(&t, "mb 3–7 forward").bytes.activations.abs_diff(7 * first) <= 7);
    assert_eq!(point(&t, "mb 1 · loss backward").bytes, gpipe.phases.forward_backward);
    assert!(gpipe.phases.forward_backward.activations.abs_diff(8 * first) <= 8);
}

/// A vision transformer has no loss transients: under full checkpointing the recompute buffer,
/// in every block's backward, sets the peak, and the breakdown counts the output's saved
/// tensors with it.
#[test]
fn a_per_block_transient_peaks_in_the_blocks_backward() {
    let b = estimate(&named(r#"{"model": {"preset": "vit-base-16"}, "training": {"micro_batch": 64, "checkpointing": "full"}}"#));
    let t = timeline(&b);
    assert!(b.terms.iter().any(|t| t.name == "recompute buffer"));
    assert_eq!(point(&t, "backward L12").bytes, b.phases.forward_backward);
    let recompute = b.terms.iter().find(|t| t.name == "recompute buffer").map(|t| t.bytes).unwrap_or(0);
    assert_eq!(point(&t, "backward L1").bytes.temporary, point(&t, "forward L1").bytes.temporary + recompute);
}

#[test]
fn inference_has_no_training_step() {
    let b = estimate(&named(r#"{"training": {"mode": "inference"}}"#));
    assert_eq!(b.step, None);
    assert!(timeline(&b).points.is_empty());
    assert!(timeline(&Breakdown::default()).points.is_empty());
}
