//! The framework profile applies everywhere (issue 28, item 7): a scenario JSON naming
//! `"framework": "torchtune"` gets the switches (and so the numbers) choosing torchtune on the
//! page gives (`Scenario::apply_framework`), through the library and through the CLI; a field
//! written in the JSON still wins over the profile; and a scenario written by `to_json` reads
//! back unchanged.

mod common;
use common::run;
use headroom::profiles::Framework;
use headroom::scenario::{Checkpointing, Lora, LoraBase, Loss};
use headroom::{estimate, Scenario};
use serde_json::Value;

fn name(f: Framework) -> String {
    serde_json::to_value(f).expect("serialises").as_str().expect("a string").to_string()
}

fn decode(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("{json}: {e}")).scenario
}

/// What the page does: the default scenario, then the profile chosen.
fn on_the_page(f: Framework) -> Scenario {
    let mut s = Scenario::default();
    s.apply_framework(f);
    s
}

#[test]
fn a_named_framework_in_json_is_the_profile_chosen_on_the_page() {
    for f in Framework::ALL {
        let s = decode(&format!(r#"{{"framework": "{}"}}"#, name(f)));
        assert_eq!(s, on_the_page(f), "{f:?}");
    }
    // And the profile changes something: torchtune's recipe is pure bf16 with a chunked loss.
    let tt = decode(r#"{"framework": "torchtune"}"#);
    assert_eq!(tt.training.precision, headroom::model::precision::Precision::Bf16);
    assert_eq!(tt.training.techniques.loss, Loss::Chunked);
    assert_ne!(tt, Scenario::default());
}

#[test]
fn explicit_fields_win_over_the_profile() {
    let s = decode(r#"{"framework": "torchtune", "training": {"precision": "bf16-mixed", "checkpointing": "none", "techniques": {"optimizer_in_backward": false}}}"#);
    assert_eq!(s.framework, Framework::Torchtune);
    // Written: kept.
    assert_eq!(s.training.precision, headroom::model::precision::Precision::Bf16Mixed);
    assert_eq!(s.training.checkpointing, Checkpointing::None);
    assert!(!s.training.techniques.optimizer_in_backward);
    // Not written: the profile's.
    assert_eq!(s.training.techniques.loss, Loss::Chunked);
    // QLoRA's unquantised weights: torchtune keeps them in bf16 unless the JSON says otherwise.
    let q = decode(r#"{"framework": "torchtune", "training": {"lora": {"base": "nf4"}}}"#);
    assert!(!q.training.lora.as_ref().expect("lora").fp32_unquantised);
    let q = decode(r#"{"framework": "torchtune", "training": {"lora": {"base": "nf4", "fp32_unquantised": true}}}"#);
    assert!(q.training.lora.as_ref().expect("lora").fp32_unquantised);
}

#[test]
fn every_profile_round_trips_through_to_json_even_with_switches_changed_afterwards() {
    for f in Framework::ALL {
        let mut s = on_the_page(f);
        s.training.lora = Some(Lora { base: LoraBase::Nf4, ..Lora::default() });
        s.apply_framework(f);
        // The user changes switches the profile set, back to the serde defaults.
        s.training.precision = headroom::model::precision::Precision::Bf16Mixed;
        s.training.techniques.loss = Loss::Standard;
        if let Some(l) = &mut s.training.lora {
            l.fp32_unquantised = true;
        }
        let back = decode(&s.to_json());
        assert_eq!(back, s, "{f:?}");
    }
}

/// The CLI's `estimate` prints the numbers the page shows for the profile, and they differ
/// from the unprofiled scenario's.
#[test]
fn the_cli_applies_the_profile() {
    for f in [Framework::Torchtune, Framework::Litgpt, Framework::Unsloth, Framework::Torchtitan] {
        let json = format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "parallel": {{"dp": 8}}, "framework": "{}"}}"#, name(f));
        let (code, out, err) = run(&["estimate", "-"], &json);
        assert_eq!(code, 0, "{f:?}: {err}");
        let v: Value = serde_json::from_str(&out).expect("JSON on stdout");
        let mut page = on_the_page(f);
        page.model = headroom::scenario::ModelSpec::Preset("llama-3-8b".into());
        page.parallel.dp = 8;
        assert_eq!(v["total"].as_u64(), Some(estimate(&page).total), "{f:?}");
        let custom = Scenario { model: page.model.clone(), parallel: headroom::scenario::Parallel { dp: 8, ..Default::default() }, ..Scenario::default() };
        assert_ne!(v["total"].as_u64(), Some(estimate(&custom).total), "{f:?}: the profile changed nothing");
    }
}

/// Megatron-Core under `--bf16` accumulates and reduces gradients in an fp32 buffer
/// (`training.fp32_gradients`, set by its profile): 4 B per gradient beside 2 B weights, on
/// Llama-3-8B with the distributed optimizer over 8 GPUs; the link carries the switch (`g32=`).
#[test]
fn megatron_core_keeps_fp32_gradients() {
    let s = decode(r#"{"model": {"preset": "llama-3-8b"}, "parallel": {"dp": 8}, "framework": "megatron-core"}"#);
    assert!(s.training.fp32_gradients);
    let b = estimate(&s);
    let params = 8_030_261_248u64;
    assert_eq!(b.phases.optimizer_step.gradients, 4 * params);
    assert_eq!(b.phases.optimizer_step.parameters, 2 * params);
    let mut half = s.clone();
    half.training.fp32_gradients = false;
    assert_eq!(estimate(&half).phases.optimizer_step.gradients, 2 * params);
    let q = headroom::url::encode(&s);
    assert!(q.contains("g32=true"), "{q}");
    assert!(headroom::url::decode(&q).0.training.fp32_gradients);
    for f in Framework::ALL.into_iter().filter(|f| *f != Framework::MegatronCore) {
        assert!(!on_the_page(f).training.fp32_gradients, "{f:?}");
    }
}
