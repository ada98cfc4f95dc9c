//! `training.mixer_kernels: "torch"`: the hybrid mixers' torch fallback
//! (`activations/mixer_torch.rs`) against transformers on CPU (`tests/measure/mixer_torch.py`
//! → `mixer_torch.json`): the whole model's saved bytes of each family's tiny config, fp32 and
//! pure bf16, batch 2, s = 40 and 100 (chunk padding shows; Gated DeltaNet also 150, three
//! chunks), within 3 %, and the first mixer block's to the byte, for every mixer kind (Mamba,
//! Zamba's multi-head Mamba, Jamba, the Mamba-2 family with and without its gated norm, Gated
//! DeltaNet, LFM2's short conv); the switch's link key, JSON and errors; the plan's notes.

use headroom::model::breakdown::Component;
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

/// The bytes a case's tensors saved for backward hold once the forward has returned: those
/// saved, less those only a branch the forward dropped kept (`{part}_unreachable_bytes`: no
/// node reachable from the loss holds them; Gated DeltaNet's last state update with one
/// chunk), which autograd frees with the branch.
fn held(case: &Value, part: &str) -> f64 {
    let bytes = |field: &str| case[format!("{part}_{field}")].as_f64().unwrap_or_else(|| panic!("{part}_{field}"));
    bytes("saved_bytes") - bytes("unreachable_bytes")
}

/// The case's number of mixer blocks.
fn mixer_blocks(case: &Value) -> u64 {
    match headroom::import::hf_config::import_hf_config(&case["config"]).expect("import").arch {
        headroom::model::arch::Architecture::Transformer(t) => t.hybrid.expect("hybrid").mixer_layers,
        _ => unreachable!(),
    }
}

/// The terms of the mixer blocks on the torch path (`activations/mixer.rs`).
const MIXER_TERMS: [&str; 4] = ["mixer input projection inputs", "mixer output projection input", "mixer x_proj input (torch fallback)", "mixer saved tensors (torch fallback)"];

/// The cases outside 3 %, and why; each is held at its bound so that a change shows, and must
/// stay outside 3 % (or leave this list). Qwen3-Next and Qwen3.5 are −0.5 to −1.1 %: on the
/// CPU, unlike CUDA's SDPA, the attention output's `.contiguous()` before the output gate
/// copies it (a·d per token), and the partial rotary's cos and sin are each as wide as the
/// one counted. Qwen3-Next under bf16 autocast (fp32 master weights) is −1.6 %: its routed
/// experts run in fp32 there (`grouped_mm` has no autocast kernel; `activations/mlp.rs`
/// `fp32_experts`), which took it from −10 to −12 % off this list.
/// - Nemotron-H in pure bf16: every Mamba-family model here misses 128 B per token outside
///   the mixers in pure bf16 (Mamba, Mamba-2, Bamba: −0.3 to −1.1 %), Nemotron-H 512 B per
///   token (4 B constant: the loss); the mixers themselves are exact
///   (`first_mixer_block_is_exact`). Not explained yet.
const OUTSIDE: &[(&str, f64)] = &[("nemotron_h@bf16@s100", 0.035)];

/// Every case is printed with its error against what the forward leaves held (`held`) and
/// held within 3 % (`OUTSIDE` names the exceptions), with the fused model beside it.
#[test]
fn whole_model_saved_bytes_within_3_percent() {
    let f = fixture();
    let cases = f["cases"].as_object().expect("cases");
    assert!(cases.len() >= 90, "{}", cases.len());
    let mut outside = Vec::new();
    for (name, case) in cases {
        let measured = held(case, "model");
        let torch = saved(&estimate(&scenario(case, "torch"))) as f64;
        let fused = saved(&estimate(&scenario(case, "fused"))) as f64;
        let err = (torch - measured) / measured;
        println!("{name:28} measured {measured:>10} torch model {torch:>10} ({:+.2}%) fused model {fused:>10}", 100.0 * err);
        let limit = OUTSIDE.iter().find(|(n, _)| n == name).map_or(0.03, |&(_, l)| l);
        if err.abs() > limit || (limit > 0.03 && err.abs() <= 0.03) {
            outside.push(format!("{name}: {:+.2}% (limit {:.1}%)", 100.0 * err, 100.0 * limit));
        }
    }
    assert!(outside.is_empty(), "{outside:#?}");
}

/// The first mixer block's saved tensors (every tensor saved under the mixer module, its
/// projections included, less those of a dropped branch) against Headroom's mixer terms per
/// block: held within 0.01 % (all 90 cases are byte-exact when written).
#[test]
fn first_mixer_block_is_exact() {
    let f = fixture();
    for (name, case) in f["cases"].as_object().expect("cases") {
        let b = estimate(&scenario(case, "torch"));
        let model = b.terms.iter().filter(|t| MIXER_TERMS.iter().any(|m| *m == t.name)).map(|t| t.bytes).sum::<u64>() as f64 / mixer_blocks(case) as f64;
        let measured = held(case, "first_mixer");
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

/// The plan names the packages that would run the fused kernels.
#[test]
fn the_plan_names_the_packages() {
    let f = fixture();
    let notes = |name: &str, kernels: &str| estimate(&scenario(&f["cases"][name], kernels)).warnings;
    let mamba = notes("mamba@fp32@s40", "torch");
    assert!(mamba.iter().any(|w| w.starts_with("Mixer kernels: torch fallback") && w.contains("mamba-ssm and causal-conv1d")), "{mamba:?}");
    let gdn = notes("qwen3_next@fp32@s40", "torch");
    assert!(gdn.iter().any(|w| w.starts_with("Mixer kernels: torch fallback") && w.contains("flash-linear-attention")), "{gdn:?}");
    // Every mixer's fallback is modelled: no plan keeps the fused terms on the torch path.
    for name in ["qwen3_next@fp32@s40", "olmo_hybrid@bf16@s100", "zamba@fp32@s40", "falcon_h1_ungated@bf16@s40"] {
        let w = notes(name, "torch");
        assert!(!w.iter().any(|w| w.contains("not modelled yet")), "{name}: {w:?}");
    }
    assert!(!notes("mamba@fp32@s40", "fused").iter().any(|w| w.starts_with("Mixer kernels")));
    // The fused path's own note (its activations assume the kernels) only where they run.
    let fused_note = |w: &String| w.contains("assume the fused CUDA kernels");
    assert!(notes("mamba@fp32@s40", "fused").iter().any(fused_note));
    assert!(!mamba.iter().any(fused_note), "{mamba:?}");
}

/// Under PEFT LoRA on the mixers' input projections (`tests/measure/mixer_torch_lora.py` →
/// `mixer_torch_lora.json`, fp32 and pure bf16, every block adapted, the base weights and the
/// mixers' own parameters frozen): the first mixer block's tensors outside the adapters
/// against the fallback's term per block, and the adapters' own against Headroom's adapter
/// terms: held within 0.01 % (all 28 cases are byte-exact when written).
#[test]
fn first_mixer_block_under_lora() {
    let path = format!("{}/tests/fixtures/measured/mixer_torch_lora.json", env!("CARGO_MANIFEST_DIR"));
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    const ADAPTER_TERMS: [&str; 3] = ["LoRA adapter inputs (mixer input projections)", "LoRA adapter inputs (mixer inner projections)", "LoRA adapter intermediates (mixer)"];
    let cases = f["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 28);
    let mut off = Vec::new();
    for (name, case) in cases {
        let s: Scenario = serde_json::from_value(json!({
            "model": {"hf_config": case["config"]},
            "training": {"micro_batch": case["batch"], "seq_len": case["seq_len"], "precision": case["precision"], "optimizer": "adamw", "mixer_kernels": "torch",
                         "lora": {"rank": case["rank"], "targets": case["targets"]}},
        }))
        .expect("scenario");
        let b = estimate(&s);
        let per_block = |names: &[&str]| b.terms.iter().filter(|t| names.contains(&t.name.as_ref())).map(|t| t.bytes).sum::<u64>() as f64 / mixer_blocks(case) as f64;
        let adapters_measured = case["first_mixer_adapter_bytes"].as_f64().unwrap();
        let (mixer, adapters) = (per_block(&["mixer saved tensors (torch fallback)"]), per_block(&ADAPTER_TERMS));
        let measured = held(case, "first_mixer") - adapters_measured;
        let err = (mixer - measured) / measured;
        println!("{name:34} mixer measured {measured:>9} model {mixer:>9.0} ({:+.3}%); adapters measured {adapters_measured:>7} model {adapters:>7.0}", 100.0 * err);
        if err.abs() > 1e-4 || (adapters - adapters_measured).abs() > 1e-4 * adapters_measured {
            off.push(format!("{name}: mixer {:+.3}%, adapters {adapters} against {adapters_measured}", 100.0 * err));
        }
    }
    assert!(off.is_empty(), "{off:#?}");
}

/// On the torch fallback Mamba's `x_proj` and `out_proj` are module calls, so their LoRA
/// adapters run (gradients, optimizer states); only `dt_proj`'s weight is read directly on
/// both paths (measured on the fallback: `mixer_lora.json`'s `no_gradient_on_cpu` is
/// `["dt_proj"]`, `tests/mixer_lora.rs`). The plan's note names what stays idle.
#[test]
fn adapters_the_fallback_runs() {
    let f = fixture();
    let case = &f["cases"]["mamba@fp32@s40"];
    let plan = |kernels: &str| {
        let s: Scenario = serde_json::from_value(json!({
            "model": {"hf_config": case["config"]},
            "training": {"micro_batch": 2, "seq_len": 40, "precision": "fp32", "optimizer": "adamw", "mixer_kernels": kernels,
                         "lora": {"rank": 8, "targets": ["mixer-in", "x-proj", "dt-proj", "mixer-out"]}},
        }))
        .expect("scenario");
        estimate(&s)
    };
    let (fused, torch) = (plan("fused"), plan("torch"));
    let note = |b: &headroom::Breakdown| b.warnings.iter().find(|w| w.starts_with("LoRA on ")).cloned().unwrap_or_default();
    assert!(note(&fused).starts_with("LoRA on mixer.x_proj, mixer.dt_proj, mixer.out_proj:"), "{}", note(&fused));
    assert!(note(&torch).starts_with("LoRA on mixer.dt_proj:") && note(&torch).contains("torch fallback too"), "{}", note(&torch));
    assert_eq!(fused.trainable_params, torch.trainable_params);
    let bytes = |b: &headroom::Breakdown, c: Component| b.terms.iter().filter(|t| t.component == c).map(|t| t.bytes).sum::<u64>();
    // x_proj's and out_proj's adapters (r·(in + out) each, two blocks): fp32 gradients, and
    // AdamW's two fp32 moments.
    let running = 2 * 8 * ((128 + 24) + (128 + 64));
    assert_eq!(bytes(&torch, Component::Gradients) - bytes(&fused, Component::Gradients), 4 * running);
    assert_eq!(bytes(&torch, Component::OptimizerStates) - bytes(&fused, Component::OptimizerStates), 8 * running);
}
