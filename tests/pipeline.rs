//! Pipeline schedules stage by stage: the micro-batches whose activations each stage holds at
//! its peak, derived by playing each schedule's order of forward and backward passes as
//! Megatron-LM runs it (`megatron/core/pipeline_parallel/schedules.py`) and counting the
//! forwards whose backward has not run yet; and the pipeline bubble in the step time.
//!
//! Sources: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
//! Clusters Using Megatron-LM", §2.2.1 (GPipe stashes all m micro-batches; 1F1B at most p;
//! bubble (p − 1)/m) and §2.2.2 (interleaved schedule, bubble (p − 1)/(m·v)); Korthikanti et
//! al. 2022, "Reducing Activation Recomputation in Large Transformer Models", §4.2.3 (the
//! interleaved schedule's first stage holds L·(1 + (p − 1)/(p·v)) layers' activations).

use headroom::import::presets::model_preset;
use headroom::model::activations::in_flight;
use headroom::model::arch::Architecture;
use headroom::model::layout::Layout;
use headroom::scenario::{Parallel, PpSchedule};
use headroom::{estimate, Scenario};

/// Llama-3-8B: 32 blocks, which split into 4 or 8 stages and into 2 or 4 chunks per stage.
fn llama() -> &'static Architecture {
    &model_preset("llama-3-8b").expect("llama-3-8b preset").arch
}

/// Largest number of forwards not yet matched by their backward, playing `ops` in order
/// (`true` = one forward, `false` = one backward).
fn peak_outstanding(ops: &[bool]) -> u64 {
    let (mut live, mut peak) = (0i64, 0i64);
    for &forward in ops {
        live += if forward { 1 } else { -1 };
        assert!(live >= 0, "a backward ran before its forward");
        peak = peak.max(live);
    }
    peak as u64
}

/// The op order of one rank: `warmup` forwards, then one forward and one backward at a time
/// (steady 1F1B) for the rest of the `total`, then the remaining backwards (cooldown). This is
/// the shape of both of Megatron's 1F1B schedules; they differ in `warmup` and `total`.
fn one_f_one_b_order(warmup: u64, total: u64) -> Vec<bool> {
    let warmup = warmup.min(total);
    let mut ops = vec![true; warmup as usize];
    for _ in warmup..total {
        ops.push(true);
        ops.push(false);
    }
    ops.extend(std::iter::repeat_n(false, warmup as usize));
    ops
}

fn in_flight_at(p: u64, stage: u64, m: u64, schedule: PpSchedule, v: u64) -> f64 {
    let parallel = Parallel { pp: p, pp_schedule: schedule, virtual_stages: v, ..Parallel::default() };
    in_flight(&Layout::new(llama(), &parallel, stage), m, schedule, v)
}

/// Non-interleaved 1F1B (`forward_backward_pipelining_without_interleaving`): rank r runs
/// p − r − 1 warm-up forwards (at most m), then 1F1B. Played out, rank r peaks at
/// min(p − r, m) micro-batches: p on the first stage (Narayanan §2.2.1), one on the last.
#[test]
fn one_f_one_b_stage_r_holds_what_its_warmup_leaves_in_flight() {
    let p = 8;
    for m in [3, 8, 32] {
        for r in 0..p {
            let expected = peak_outstanding(&one_f_one_b_order(p - r - 1, m)) as f64;
            let got = in_flight_at(p, r, m, PpSchedule::OneFOneB, 1);
            assert_eq!(got, expected, "p = {p}, m = {m}, stage {r}");
        }
    }
    // The played schedule agrees with the paper's statement for the first stage.
    assert_eq!(peak_outstanding(&one_f_one_b_order(p - 1, 32)), p);
}

/// GPipe (Huang et al. 2019; Narayanan §2.2.1): all m forwards, then all m backwards, on
/// every stage.
#[test]
fn gpipe_every_stage_holds_all_micro_batches() {
    let (p, m) = (4, 6);
    let mut gpipe = vec![true; m as usize];
    gpipe.extend(vec![false; m as usize]);
    for r in 0..p {
        assert_eq!(in_flight_at(p, r, m, PpSchedule::Gpipe, 1), peak_outstanding(&gpipe) as f64, "stage {r}");
    }
}

/// Interleaved 1F1B (`forward_backward_pipelining_with_interleaving`): each rank holds v model
/// chunks of L/(p·v) layers and runs m·v chunk-forwards, the first (p − r − 1)·2 + (v − 1)·p
/// of them as warm-up (`microbatch_group_size_per_vp_stage` = p, its default), at most all
/// m·v. The peak count of chunk activations × L/(p·v) layers, in units of one non-interleaved
/// stage (L/p layers), is the peak ÷ v. For the first stage, when its warm-up does not already
/// take every chunk-forward, this is (v·p + p − 1)/v = p·(1 + (p − 1)/(p·v)): Korthikanti
/// §4.2.3's factor over 1F1B's p.
#[test]
fn interleaved_stage_r_holds_its_warmup_chunks() {
    for (p, v, m) in [(4, 2, 8), (4, 4, 12), (8, 2, 16), (8, 4, 8), (4, 2, 2)] {
        for r in 0..p {
            let warmup = (p - r - 1) * 2 + (v - 1) * p;
            let chunks = peak_outstanding(&one_f_one_b_order(warmup, m * v)) as f64;
            let expected = chunks / v as f64;
            let got = in_flight_at(p, r, m, PpSchedule::Interleaved, v);
            assert!((got - expected).abs() < 1e-12, "p = {p}, v = {v}, m = {m}, stage {r}: {got} vs {expected} stage-units");
            if r == 0 && warmup < m * v {
                let korthikanti = p as f64 * (1.0 + (p as f64 - 1.0) / (p as f64 * v as f64));
                assert!((expected - korthikanti).abs() < 1e-12, "{expected} vs {korthikanti}");
            }
        }
    }
}

/// No stage can hold more than every micro-batch's activations for its layers: whatever the
/// schedule, in flight ≤ m (what GPipe holds).
#[test]
fn no_schedule_holds_more_than_all_micro_batches() {
    for schedule in [PpSchedule::OneFOneB, PpSchedule::Interleaved, PpSchedule::Gpipe] {
        for (p, m) in [(4u64, 1u64), (4, 2), (4, 3), (8, 5)] {
            for r in 0..p {
                let got = in_flight_at(p, r, m, schedule, 2);
                assert!(got <= m as f64 + 1e-12, "{schedule:?}, p = {p}, m = {m}, stage {r}: {got}");
            }
        }
    }
}

/// The bubble (Narayanan §2.2.1, §2.2.2): with p stages and m micro-batches a step takes
/// (1 + (p − 1)/m) times its ideal time, (1 + (p − 1)/(m·v)) interleaved; GPipe's bubble equals
/// 1F1B's. The ideal per-GPU time is 1/p of one GPU's (each stage does 1/p of the FLOPs).
#[test]
fn pipeline_bubble_follows_narayanan() {
    let seconds = |parallel: &str| {
        let s = Scenario::from_json(&format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 1024, "grad_accum": 8}}, "parallel": {parallel}}}"#))
            .unwrap_or_else(|e| panic!("{e}"))
            .scenario;
        estimate(&s).step_time.seconds
    };
    let one = seconds("{}");
    let (p, m) = (4.0, 8.0);
    for (parallel, v) in [
        (r#"{"pp": 4}"#, 1.0),
        (r#"{"pp": 4, "pp_schedule": "gpipe"}"#, 1.0),
        (r#"{"pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2}"#, 2.0),
        (r#"{"pp": 4, "pp_schedule": "interleaved", "virtual_stages": 4}"#, 4.0),
    ] {
        let expected = one / p * (1.0 + (p - 1.0) / (m * v));
        let got = seconds(parallel);
        assert!((got - expected).abs() < 1e-9 * expected, "{parallel}: {got} s vs {expected} s");
    }
}
