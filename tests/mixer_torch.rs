//! `training.mixer_kernels: "torch"`: the hybrid mixers' torch fallback
//! (`activations/mixer_torch.rs`) against transformers on CPU (`tests/measure/mixer_torch.py`
//! → `mixer_torch.json`): the whole model's saved bytes of each family's tiny config, fp32 and
//! pure bf16, batch 2, s = 40 and 100 (chunk padding shows), within 3 % where the fallback is
//! modelled; the switch's link key, JSON and errors; the plan's notes.

use headroom::scenario::MixerKernels;
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/mixer_torch.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn scenario(case: &Value, kernels: &str) -> Scenario {
    serde_json::from_value(json!({
        "model": {"hf_config": case["config"]},
        "training": {"micro_batch": case["batch"], "seq_len": case["seq_len"], "precision": case["precision"], "mode": "train", "optimizer": "adamw", "mixer_kernels": kernels},
    }))
    .expect("scenario")
}

fn saved(b: &headroom::Breakdown) -> u64 {
    b.terms.iter().filter(|t| format!("{:?}", t.lifetime).starts_with("Saved")).map(|t| t.bytes).sum()
}

/// Whether the case's fallback is modelled, and its number of mixer blocks.
fn modelled(case: &Value) -> (bool, u64) {
    match headroom::import::hf_config::import_hf_config(&case["config"]).expect("import").arch {
        headroom::model::arch::Architecture::Transformer(t) => {
            let hy = t.hybrid.expect("hybrid");
            (headroom::model::activations::torch_fallback_modelled(&hy.mixer), hy.mixer_layers)
        }
        _ => unreachable!(),
    }
}

/// The terms of the mixer blocks on the torch path (`activations/mixer.rs`).
const MIXER_TERMS: [&str; 4] = ["mixer input projection inputs", "mixer output projection input", "mixer x_proj input (torch fallback)", "mixer saved tensors (torch fallback)"];

/// The one case outside 3 %, and why: in pure bf16 every Mamba-family model here misses
/// 128 B per token outside the mixers (Mamba, Mamba-2, Bamba: −0.3 to −1.1 %), Nemotron-H
/// 512 B per token (4 B constant: the loss); the mixers themselves are exact
/// (`first_mixer_block_is_exact`). Not explained yet; held below 3.5 % so that a change shows.
const OUTSIDE: &[(&str, f64)] = &[("nemotron_h@bf16@s100", 0.035)];

/// Every case is printed with its error; the modelled mixers (Mamba, and the Mamba-2 family
/// with its gated norm: Mamba-2, Nemotron-H, Bamba, Falcon-H1 with `mamba_rms_norm`,
/// Granite-4.0-H, Zamba2; Jamba's Mamba; LFM2's short conv) are held within 3 %.
#[test]
fn whole_model_saved_bytes_within_3_percent() {
    let f = fixture();
    let cases = f["cases"].as_object().expect("cases");
    assert!(cases.len() >= 32, "{}", cases.len());
    let (mut outside, mut checked) = (Vec::new(), 0);
    for (name, case) in cases {
        let measured = case["model_saved_bytes"].as_f64().unwrap();
        let torch = saved(&estimate(&scenario(case, "torch"))) as f64;
        let fused = saved(&estimate(&scenario(case, "fused"))) as f64;
        let err = (torch - measured) / measured;
        let (is_modelled, _) = modelled(case);
        println!(
            "{name:28} measured {measured:>10} torch model {torch:>10} ({:+.2}%) fused model {fused:>10}{}",
            100.0 * err,
            if is_modelled { "" } else { "  (fallback not modelled)" }
        );
        if is_modelled {
            checked += 1;
            let limit = OUTSIDE.iter().find(|(n, _)| n == name).map_or(0.03, |&(_, l)| l);
            if err.abs() > limit || (limit > 0.03 && err.abs() <= 0.03) {
                outside.push(format!("{name}: {:+.2}% (limit {:.1}%)", 100.0 * err, 100.0 * limit));
            }
        } else {
            assert_eq!(torch, fused, "{name}: an unmodelled fallback keeps the fused terms");
        }
    }
    assert!(checked >= 36, "{checked}");
    assert!(outside.is_empty(), "{outside:#?}");
}

/// The first mixer block's saved tensors (every tensor saved under the mixer module, its
/// projections included) against Headroom's mixer terms per block, where modelled: held within
/// 0.01 % (all 36 cases are byte-exact when written).
#[test]
fn first_mixer_block_is_exact() {
    let f = fixture();
    for (name, case) in f["cases"].as_object().expect("cases") {
        let (is_modelled, blocks) = modelled(case);
        if !is_modelled {
            continue;
        }
        let b = estimate(&scenario(case, "torch"));
        let model = b.terms.iter().filter(|t| MIXER_TERMS.iter().any(|m| *m == t.name)).map(|t| t.bytes).sum::<u64>() as f64 / blocks as f64;
        let measured = case["first_mixer_saved_bytes"].as_f64().unwrap();
        let err = (model - measured) / measured;
        println!("{name:28} first mixer measured {measured:>10} model {model:>10.0} ({:+.3}%)", 100.0 * err);
        assert!(err.abs() <= 1e-4, "{name}: {:+.3}%", 100.0 * err);
    }
}

/// The default is the fused kernels, and choosing them explicitly changes nothing.
#[test]
fn fused_is_the_default_and_unchanged() {
    let f = fixture();
    let case = &f["cases"]["mamba2@bf16@s100"];
    let mut implicit = scenario(case, "fused");
    assert_eq!(implicit.training.mixer_kernels, MixerKernels::Fused);
    implicit.training = serde_json::from_value(json!({"micro_batch": 2, "seq_len": 100, "precision": "bf16"})).unwrap();
    let mut explicit = implicit.clone();
    explicit.training.mixer_kernels = MixerKernels::Fused;
    assert_eq!(saved(&estimate(&implicit)), saved(&estimate(&explicit)));
    explicit.training.mixer_kernels = MixerKernels::Torch;
    assert!(saved(&estimate(&explicit)) > saved(&estimate(&implicit)));
}

/// The link carries the switch (`mk=`), JSON round-trips it, and a bad value names its field.
#[test]
fn mixer_kernels_round_trips_and_bad_values_name_the_field() {
    let mut s = Scenario::default();
    s.training.mixer_kernels = MixerKernels::Torch;
    let q = headroom::url::encode(&s);
    assert!(q.contains("mk=torch"), "{q}");
    let (back, errors) = headroom::url::decode(&q);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back.training.mixer_kernels, MixerKernels::Torch);
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(Scenario::from_json(&json).unwrap().scenario.training.mixer_kernels, MixerKernels::Torch);
    let err = Scenario::from_json(r#"{"training": {"mixer_kernels": "cuda"}}"#).unwrap_err();
    assert_eq!(err.field, "training.mixer_kernels");
    let (_, errors) = headroom::url::decode("mk=cuda");
    assert!(errors.iter().any(|e| e.field == "url.mk"), "{errors:?}");
}

/// The plan names the packages that would run the fused kernels, and says where the fallback
/// is not modelled.
#[test]
fn the_plan_names_the_packages() {
    let f = fixture();
    let notes = |name: &str, kernels: &str| estimate(&scenario(&f["cases"][name], kernels)).warnings;
    let mamba = notes("mamba@fp32@s40", "torch");
    assert!(mamba.iter().any(|w| w.starts_with("Mixer kernels: torch fallback") && w.contains("mamba-ssm and causal-conv1d")), "{mamba:?}");
    let gdn = notes("qwen3_next@fp32@s40", "torch");
    assert!(gdn.iter().any(|w| w.starts_with("approximate: the torch fallback of the Gated DeltaNet") && w.contains("flash-linear-attention")), "{gdn:?}");
    assert!(!notes("mamba@fp32@s40", "fused").iter().any(|w| w.starts_with("Mixer kernels")));
    // The fused path's own note (its activations assume the kernels) only where they run.
    let fused_note = |w: &String| w.contains("assume the fused CUDA kernels");
    assert!(notes("mamba@fp32@s40", "fused").iter().any(fused_note));
    assert!(!mamba.iter().any(fused_note), "{mamba:?}");
}
