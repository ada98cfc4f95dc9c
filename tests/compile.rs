//! `torch.compile` (Inductor, every block and the loss compiled) against eager PyTorch: the
//! tensors saved for backward, measured on tiny Llama, Qwen3 and GPT-2 models on the CPU with
//! torch 2.15 (`tests/measure/compile.py` → `tests/fixtures/measured/compile.json`), and what
//! the model keeps with `training.techniques.compile` (`src/model/activations/compile.rs`).
//! Run with `--nocapture` for the table.

use headroom::model::breakdown::{Component, Lifetime, Span};
use headroom::{estimate, Breakdown, Scenario};
use serde_json::Value;

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/compile.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cases(f: &Value) -> &Vec<Value> {
    f["cases"].as_array().expect("cases array")
}

fn scenario(case: &Value) -> Scenario {
    let decoded = Scenario::from_json(&case["scenario"].to_string()).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    assert!(decoded.warnings.iter().all(|w| !w.contains("compile")), "{}: {:?}", case["name"], decoded.warnings);
    decoded.scenario
}

fn plan(json: &str) -> Breakdown {
    estimate(&Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}")).scenario)
}

fn saved(case: &Value) -> f64 {
    case["measured"]["saved_bytes"].as_f64().expect("saved_bytes")
}

fn predicted(case: &Value) -> f64 {
    estimate(&scenario(case)).phases.forward_backward.activations as f64
}

/// Bytes the model (which describes CUDA) predicts above a CPU measurement for a known reason.
/// GPT-2's op-by-op `gelu_new` under autocast: CUDA autocast runs `pow` in fp32 (ATen
/// `autocast_mode.h`, `AT_FORALL_FP32`), so eager saves the pow input, the tanh output and a mul
/// operand in fp32 (3·4 + 2·2 bytes per feature, `activations.json`'s fake-CUDA gpt2 bf16-mixed
/// cases); CPU autocast has its own lists without `pow` and keeps all five in bf16 (5·2 bytes,
/// checked: `torch.pow(bf16, 3.0)` under `torch.autocast("cpu")` stays bf16). Compiled, both
/// recompute them, so only the eager case differs: 6 B × T × ffn × layers.
fn cpu_autocast_difference(case: &Value) -> f64 {
    if case["name"] == "gpt2-bf16-mixed-standard-eager" {
        6.0 * 512.0 * 3072.0 * 4.0
    } else {
        0.0
    }
}

/// Every case, eager and compiled, in fp32, pure bf16 and bf16 autocast, with the standard and
/// the chunked loss: the saved bytes within 3 %. The eager cases show that the CPU measurement
/// is the one the model's (CUDA) terms describe, so the compiled cases test what compile removes.
#[test]
fn saved_tensors_within_three_percent_eager_and_compiled() {
    let f = fixture();
    assert!(f["torch"].as_str().is_some_and(|v| v.starts_with("2.15")), "{}", f["torch"]);
    let mut failures = Vec::new();
    println!("{:<40} {:>14} {:>14} {:>8}", "case", "measured B", "predicted B", "error");
    for case in cases(&f) {
        let name = case["name"].as_str().unwrap_or("?");
        let (m, p, known) = (saved(case), predicted(case), cpu_autocast_difference(case));
        let err = (p - known - m) / m;
        let note = if known > 0.0 { format!(" (after the CPU-autocast difference, {known:.0} B; {:+.2}% before)", 100.0 * (p - m) / m) } else { String::new() };
        println!("{name:<40} {m:>14.0} {p:>14.0} {:>7.2}%{note}", 100.0 * err);
        if err.abs() > 0.03 {
            failures.push(format!("{name}: {:+.2}%", 100.0 * err));
        }
    }
    assert!(cases(&f).len() >= 18);
    assert!(failures.is_empty(), "over 3 %: {failures:?}");
}

/// What compile removes, case by case: the model's eager − compiled against the measured one.
#[test]
fn the_bytes_compile_removes_match_the_measurement() {
    let f = fixture();
    let all = cases(&f);
    let mut failures = Vec::new();
    let mut pairs = 0;
    println!("{:<32} {:>14} {:>14} {:>14} {:>14} {:>8}", "case", "eager B", "compiled B", "removed B", "model removes", "error");
    for compiled in all.iter().filter(|c| c["mode"] == "compiled") {
        let name = compiled["name"].as_str().unwrap_or("?");
        let eager_name = name.replace("-compiled", "-eager");
        let eager = all.iter().find(|c| c["name"] == eager_name.as_str()).unwrap_or_else(|| panic!("{eager_name}"));
        let removed = saved(eager) - saved(compiled);
        let model_removes = predicted(eager) - cpu_autocast_difference(eager) - predicted(compiled);
        let err = (model_removes - removed) / removed;
        let stem = name.trim_end_matches("-compiled");
        println!("{stem:<32} {:>14.0} {:>14.0} {removed:>14.0} {model_removes:>14.0} {:>7.2}%", saved(eager), saved(compiled), 100.0 * err);
        if err.abs() > 0.03 {
            failures.push(format!("{stem}: model removes {model_removes:.0} B, measured {removed:.0} B ({:+.2}%)", 100.0 * err));
        }
        pairs += 1;
    }
    assert!(pairs >= 9);
    assert!(failures.is_empty(), "{failures:?}");
}

/// The compiled loss keeps the logits in their own dtype, not the fp32 log-softmax: the
/// measured loss bytes of the chunked bf16 case are 2·T·V (+ labels and two fp32 per row),
/// half the eager 4·T·V.
#[test]
fn the_compiled_loss_keeps_the_logits_not_the_fp32_log_softmax() {
    let f = fixture();
    let part = |name: &str| -> f64 {
        let case = cases(&f).iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("{name}"));
        case["measured"]["parts"]["loss"].as_f64().expect("loss part")
    };
    let tv = 2.0 * 256.0 * 32_000.0;
    for loss in ["standard", "chunked"] {
        let eager = part(&format!("llama-bf16-{loss}-eager"));
        let compiled = part(&format!("llama-bf16-{loss}-compiled"));
        assert!(((eager - 4.0 * tv) / eager).abs() < 1e-3, "{loss}: eager {eager}");
        assert!(((compiled - 2.0 * tv) / compiled).abs() < 1e-3, "{loss}: compiled {compiled}");
    }
}

/// Off by default, and off is the eager model exactly (the accuracy snapshot covers every
/// measured case as well).
#[test]
fn compile_off_is_the_eager_model() {
    let base = r#"{"model": {"preset": "llama-3-8b"}, "training": {"precision": "bf16", "seq_len": 2048"#;
    let implicit = plan(&format!("{base}}}}}"));
    let explicit = plan(&format!(r#"{base}, "techniques": {{"compile": false}}}}}}"#));
    assert_eq!(implicit, explicit);
    assert!(!Scenario::default().training.techniques.compile);
}

/// On Llama-3-8B (pure bf16, b = 1, s = 4096) compile changes the norms, the MLP and the loss,
/// and nothing else: attention's q, k, v, output and logsumexp stay.
#[test]
fn compile_changes_only_norms_mlp_and_loss() {
    let base = r#"{"model": {"preset": "llama-3-8b"}, "training": {"precision": "bf16""#;
    let eager = plan(&format!("{base}}}}}"));
    let compiled = plan(&format!(r#"{base}, "techniques": {{"compile": true}}}}}}"#));
    let acts = |b: &Breakdown| -> Vec<(String, u64)> { b.terms.iter().filter(|t| t.component == Component::Activations).map(|t| (t.name.to_string(), t.bytes)).collect() };
    let (e, c) = (acts(&eager), acts(&compiled));
    let changed: Vec<&str> = e.iter().filter(|t| !c.contains(t)).map(|t| t.0.as_str()).collect();
    assert_eq!(changed, ["attention norm", "MLP norm", "MLP intermediates", "fp32 log-softmax of the logits"]);
    assert!(c.iter().any(|t| t.0 == "logits kept by the compiled loss"));
    assert!(compiled.phases.forward_backward.total < eager.phases.forward_backward.total);
}

/// torchtune's README "Optimization flags" table (Llama-3.2-3B, pure bf16, batch 2 × 4096
/// packed tokens): "+ Compile" lowers the peak from 60.0 to 51.0 GiB, 9.0 GiB. That recipe
/// compiles every decoder layer; its plain `CrossEntropyLoss` stays eager (the full recipe drops
/// `compile_loss`'s return value, see `torchtune_flags.rs`), so the 9.0 GiB are the blocks' saved
/// tensors: RMSNorm's fp32 input copy and normalised tensor (4·T·h each, two norms) and SwiGLU's
/// SiLU output (2·T·ffn) per block, 28 blocks: 8.75 GiB, −2.8 %.
#[test]
fn torchtune_compile_row_saves_what_the_blocks_lose() {
    let base = r#"{"model": {"preset": "meta-llama/Llama-3.2-3B"}, "device": {"preset": "a100-80gb"}, "training": {"micro_batch": 2, "seq_len": 4096, "precision": "bf16", "attention": "sdpa""#;
    let eager = plan(&format!("{base}}}}}"));
    let compiled = plan(&format!(r#"{base}, "techniques": {{"compile": true}}}}}}"#));
    let blocks =
        |b: &Breakdown| -> f64 { b.terms.iter().filter(|t| t.component == Component::Activations && t.lifetime == Lifetime::Saved(Span::Blocks)).map(|t| t.bytes as f64).sum() };
    let gib = (1u64 << 30) as f64;
    let saving = (blocks(&eager) - blocks(&compiled)) / gib;
    let (t, h, ffn, layers) = (8192.0, 3072.0, 8192.0, 28.0);
    assert!((saving - layers * (2.0 * 4.0 * t * h + 2.0 * t * ffn) / gib).abs() < 1e-6, "{saving}");
    assert!((saving - 9.0).abs() / 9.0 < 0.05, "model saves {saving:.2} GiB, torchtune's table 9.0 GiB");
}

/// The compiled chunked loss keeps every chunk's bf16 logits (2·T·V), not the fp32
/// log-softmax (4·T·V), and its backward needs one chunk's logit gradient in bf16.
#[test]
fn compiled_chunked_loss_on_llama_3_2_3b() {
    let base = r#"{"model": {"preset": "meta-llama/Llama-3.2-3B"}, "training": {"micro_batch": 2, "seq_len": 4096, "precision": "bf16", "techniques": {"loss": "chunked""#;
    let eager = plan(&format!("{base}}}}}}}"));
    let compiled = plan(&format!(r#"{base}, "compile": true}}}}}}"#));
    let term = |b: &Breakdown, name: &str| b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == name).map(|t| t.bytes);
    let (t, v) = (8192u64, 128_256u64);
    assert_eq!(term(&eager, "fp32 log-softmax of the logits"), Some(4 * t * v + 8 * t));
    assert_eq!(term(&compiled, "logits kept by the compiled loss"), Some(2 * t * v + 8 * t + 8 * t));
    assert_eq!(term(&compiled, "fp32 log-softmax of the logits"), None);
    assert_eq!(term(&compiled, "loss gradient buffers (one chunk)"), Some(2 * t * v / 8));
}

/// The link carries the switch (`cmpl=`).
#[test]
fn compile_round_trips_through_the_link() {
    let s = Scenario::from_json(r#"{"training": {"techniques": {"compile": true}}}"#).expect("decodes").scenario;
    let q = headroom::url::encode(&s);
    assert!(q.contains("cmpl=true"), "{q}");
    let (back, errors) = headroom::url::decode(&q);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(back.training.techniques.compile);
}

/// The compiled loss's backward writes the logits' gradient in their dtype in one kernel (x·T·V)
/// instead of eager's two fp32 T·V buffers: the measured allocator peak over `loss.backward()`
/// (Llama, standard loss) is the model's "loss gradient buffers" term plus at most 5 % (the
/// output projection's backward that follows), and eager bf16's is the two fp32 buffers. (Eager
/// fp32's peak is later in backward, above the loss; eager peaks are `peaks.json`'s business.)
#[test]
fn the_compiled_loss_backward_holds_one_logit_gradient() {
    let f = fixture();
    for precision in ["fp32", "bf16"] {
        for mode in ["eager", "compiled"] {
            let name = format!("llama-{precision}-standard-{mode}");
            let case = cases(&f).iter().find(|c| c["name"] == name.as_str()).unwrap_or_else(|| panic!("{name}"));
            let peak = case["measured"]["backward_allocator_peak_above_start"].as_f64().expect("backward peak");
            let b = estimate(&scenario(case));
            let buffers = b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == "loss gradient buffers").expect("loss gradient buffers").bytes as f64;
            println!("{name:<36} measured backward peak {peak:>12.0} B, model's loss gradient buffers {buffers:>12.0} B");
            if mode == "compiled" || precision == "bf16" {
                assert!(buffers <= peak && peak <= 1.05 * buffers, "{name}: {buffers} vs {peak}");
            }
        }
    }
}

/// Only the blocks compiled, the loss eager (`techniques.compile_loss: false`): the compiled
/// blocks' saved tensors with the eager loss's, against the measured parts of each pair (the
/// compiled case less its compiled loss, plus the eager case's loss), within 3 %.
#[test]
fn blocks_compiled_loss_eager_is_both_measured_halves() {
    let f = fixture();
    let all = cases(&f);
    let mut pairs = 0;
    for compiled in all.iter().filter(|c| c["mode"] == "compiled") {
        let name = compiled["name"].as_str().unwrap_or("?");
        let eager = all.iter().find(|c| c["name"] == name.replace("-compiled", "-eager").as_str()).expect("eager pair");
        let loss = |c: &Value| c["measured"]["parts"]["loss"].as_f64().expect("loss part");
        let measured = saved(compiled) - loss(compiled) + loss(eager);
        let mut s = scenario(compiled);
        s.training.techniques.compile_loss = false;
        let predicted = estimate(&s).phases.forward_backward.activations as f64;
        let err = (predicted - measured) / measured;
        println!("{name:<40} blocks compiled, loss eager: measured {measured:.0} B, predicted {predicted:.0} B ({:+.2} %)", 100.0 * err);
        assert!(err.abs() < 0.03, "{name}: {:+.2} %", 100.0 * err);
        pairs += 1;
    }
    assert!(pairs >= 9);
    // Unless a scenario says otherwise, compile takes the loss into its region.
    assert!(headroom::scenario::Techniques::default().compile_loss);
}

/// Compile by region (`tests/measure/compile_regions.py` → `compile_regions.json`): the
/// measured backward peak of each region against the loss-gradient buffers the model keeps for
/// it. Eager and blocks-only (the loss outside the compiled region, torchtune's) hold eager's two
/// fp32 s·b·v buffers; blocks and loss compiled, one logits gradient in the logits' dtype (within
/// 10 %: bf16 measures 1.08×). The whole model compiled is `compile_whole.json`'s (below).
#[test]
fn compile_regions_backward_peaks() {
    let path = format!("{}/tests/fixtures/measured/compile_regions.json", env!("CARGO_MANIFEST_DIR"));
    let f: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("compile_regions.json");
    let (t, v) = (f["batch"].as_f64().unwrap() * f["seq_len"].as_f64().unwrap(), f["config"]["vocab_size"].as_f64().unwrap());
    let all = f["cases"].as_array().expect("cases");
    assert_eq!(all.len(), 6);
    for precision in ["bf16", "fp32"] {
        let x = if precision == "bf16" { 2.0 } else { 4.0 };
        let peak = |region: &str| {
            let c = all.iter().find(|c| c["name"] == format!("llama-{precision}-{region}").as_str()).unwrap_or_else(|| panic!("{precision} {region}"));
            c["measured"]["backward_allocator_peak_above_start"].as_f64().expect("peak")
        };
        let buffers = |compile: bool, compile_loss: bool| {
            let s = format!(
                r#"{{"model": {{"hf_config": {}}}, "training": {{"micro_batch": 2, "seq_len": 256, "precision": "{precision}", "attention": "sdpa",
                "techniques": {{"loss": "standard", "compile": {compile}, "compile_loss": {compile_loss}}}}}}}"#,
                f["config"]
            );
            loss_gradient_buffers(&plan(&s))
        };
        let two_fp32 = 2.0 * 4.0 * t * v;
        for (region, modelled) in [("eager", buffers(false, true)), ("blocks", buffers(true, false))] {
            assert_eq!(modelled, two_fp32, "{precision} {region}");
            assert!((peak(region) - modelled).abs() <= 1e-3 * modelled, "{precision} {region}: {} vs {modelled}", peak(region));
        }
        let one = buffers(true, true);
        assert_eq!(one, x * t * v);
        assert!(one <= peak("blocks+loss") && peak("blocks+loss") <= 1.10 * one, "{precision} blocks+loss: {} vs {one}", peak("blocks+loss"));
    }
}

fn loss_gradient_buffers(b: &Breakdown) -> f64 {
    b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == "loss gradient buffers").expect("loss gradient buffers").bytes as f64
}

/// The whole model compiled (`techniques.compile_model`; `tests/measure/compile_whole.py` →
/// `compile_whole.json`, tiny Llamas with hidden 384, vocab 4096–12288 and 640 or 896 tokens, so
/// that s·b·v, v·h and s·b·h buffers differ): backward's net peak is two buffers of the logits'
/// size and dtype, the zero gradient autograd makes for the returned logits and the logits'
/// gradient, and the model's "loss gradient buffers" are those two (within 0.1 %: the rest is a
/// few bytes per token). The control, a compiled function returning the loss alone, never holds
/// more than one such buffer, so the second is the returned logits'.
#[test]
fn whole_model_compile_holds_the_logits_gradient_and_a_zero_gradient_for_the_returned_logits() {
    let path = format!("{}/tests/fixtures/measured/compile_whole.json", env!("CARGO_MANIFEST_DIR"));
    let f: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("compile_whole.json");
    assert!(f["torch"].as_str().is_some_and(|v| v.starts_with("2.15")), "{}", f["torch"]);
    let all = f["cases"].as_array().expect("cases");
    let (mut whole, mut controls) = (0, 0);
    for case in all {
        let name = case["name"].as_str().unwrap_or("?");
        let precision = case["precision"].as_str().expect("precision");
        let x = if precision == "bf16" { 2.0 } else { 4.0 };
        let (v, b, s) = (case["vocab_size"].as_u64().unwrap(), case["batch"].as_u64().unwrap(), case["seq_len"].as_u64().unwrap());
        let logits = x * (b * s * v) as f64;
        let m = &case["measured"];
        let peak = m["backward_peak_above_start"].as_f64().expect("peak");
        // The logits-sized buffers backward allocated and still holds at its peak.
        let logits_sized = m["allocated_in_backward_alive_at_peak"][(logits as u64).to_string()].as_u64().unwrap_or(0);
        let mut config = f["config"].clone();
        config["vocab_size"] = v.into();
        let scenario = |compile_model: bool| {
            format!(
                r#"{{"model": {{"hf_config": {config}}}, "training": {{"micro_batch": {b}, "seq_len": {s}, "precision": "{precision}", "attention": "sdpa",
                "techniques": {{"loss": "standard", "compile": true, "compile_loss": false, "compile_model": {compile_model}}}}}}}"#
            )
        };
        match case["region"].as_str() {
            Some("whole") => {
                let modelled = loss_gradient_buffers(&plan(&scenario(true)));
                println!("{name:<36} measured backward peak {peak:>11.0} B, model {modelled:>11.0} B ({:+.3} %)", 100.0 * (modelled - peak) / peak);
                assert_eq!(modelled, 2.0 * logits, "{name}");
                assert_eq!(logits_sized, 2, "{name}: {m}");
                assert!(modelled <= peak && peak <= 1.001 * modelled, "{name}: {modelled} vs {peak}");
                // Without `compile_model` (`compile_loss` off) the loss is eager: two fp32 buffers.
                assert_eq!(loss_gradient_buffers(&plan(&scenario(false))), 2.0 * 4.0 * (b * s * v) as f64, "{name}");
                whole += 1;
            }
            Some("loss-output") => {
                println!("{name:<36} measured backward peak {peak:>11.0} B = {:.3} × one logits-sized buffer", peak / logits);
                assert!(logits_sized <= 1 && peak < logits, "{name}: {m}");
                controls += 1;
            }
            other => panic!("{name}: region {other:?}"),
        }
    }
    assert_eq!((whole, controls), (12, 4));
}
