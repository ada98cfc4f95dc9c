//! LoRA adapters' dtype on a 16-bit base (`training.lora.fp32_adapters`): PEFT upcasts them to
//! fp32 (`autocast_adapter_dtype=True`), so their weights, gradients and AdamW states take 4 B
//! per element, and each adapted linear reads its own fp32 copy of the input; adapters in the
//! model dtype (torchtune, LitGPT; PEFT with `autocast_adapter_dtype=False`) take 2 B and read
//! the input as it is. Measured with PEFT 0.21.2 on a tiny bf16 Llama on the CPU, one real
//! AdamW step (`tests/measure/lora_dtypes.py` → `tests/fixtures/measured/lora_dtypes.json`).

use headroom::model::breakdown::Component;
use headroom::profiles::Framework;
use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/lora_dtypes.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("fixture is JSON")
}

fn case(f: &Value, fp32: bool) -> &Value {
    f["cases"].as_array().expect("cases").iter().find(|c| c["precision"] == "bf16" && c["autocast_adapter_dtype"] == fp32).expect("bf16 case")
}

fn plan(f: &Value, fp32: bool) -> Breakdown {
    let scenario = json!({
        "model": {"hf_config": f["model"]},
        "training": {
            "micro_batch": f["batch"]["micro_batch"], "seq_len": f["batch"]["seq_len"], "precision": "bf16", "attention": "sdpa",
            "optimizer": "adamw", "optimizer_impl": "fused",
            "lora": {"rank": f["lora"]["rank"], "targets": ["q", "k", "v", "o", "gate", "up", "down"], "fp32_adapters": fp32},
        },
    });
    estimate(&Scenario::from_json(&scenario.to_string()).unwrap_or_else(|e| panic!("{e}")).scenario)
}

fn sum(b: &Breakdown, c: Component) -> u64 {
    b.terms.iter().filter(|t| t.component == c).map(|t| t.bytes).sum()
}

/// Gradients and AdamW states of the adapters to the byte, both ways; and the adapters' dtype
/// as PEFT leaves it.
#[test]
fn adapter_gradients_and_states_match_peft_both_ways() {
    let f = fixture();
    for fp32 in [true, false] {
        let c = case(&f, fp32);
        assert_eq!(c["adapter_dtypes"], json!([if fp32 { "float32" } else { "bfloat16" }]));
        let b = plan(&f, fp32);
        assert_eq!(sum(&b, Component::Gradients), c["adapter_grad_bytes"].as_u64().expect("grads"), "fp32 adapters {fp32}");
        assert_eq!(sum(&b, Component::OptimizerStates), c["adapter_state_bytes"].as_u64().expect("states"), "fp32 adapters {fp32}");
    }
    // fp16 bases behave as bf16 ones (same bytes measured).
    let fp16: Vec<&Value> = f["cases"].as_array().expect("cases").iter().filter(|c| c["precision"] == "fp16").collect();
    assert_eq!(fp16.len(), 2);
    for c in fp16 {
        let bf16 = case(&f, c["autocast_adapter_dtype"].as_bool().expect("flag"));
        assert_eq!(c["adapter_state_bytes"], bf16["adapter_state_bytes"]);
    }
}

/// The weights differ by the adapters' two extra bytes per element.
#[test]
fn adapter_weights_take_four_bytes_under_peft() {
    let f = fixture();
    let (fp32, half) = (plan(&f, true), plan(&f, false));
    let measured = case(&f, true)["adapter_param_bytes"].as_u64().expect("bytes") - case(&f, false)["adapter_param_bytes"].as_u64().expect("bytes");
    assert_eq!(sum(&fp32, Component::Parameters) - sum(&half, Component::Parameters), measured);
}

/// The tensors saved for backward: PEFT's fp32 adapters each save their own fp32 copy of the
/// input; 16-bit adapters share the input. The model's difference between the two is the
/// measured one within 2 %, and each total within 5 % (CPU SDPA).
#[test]
fn saved_tensors_follow_the_adapter_dtype() {
    let f = fixture();
    let saved = |fp32: bool| case(&f, fp32)["saved_bytes"].as_f64().expect("saved");
    let predicted = |fp32: bool| sum(&plan(&f, fp32), Component::Activations) as f64;
    for fp32 in [true, false] {
        let (m, p) = (saved(fp32), predicted(fp32));
        println!("fp32 adapters {fp32}: measured {m} B, predicted {p} B ({:+.2} %)", 100.0 * (p - m) / m);
        assert!((p - m).abs() / m < 0.05, "fp32 adapters {fp32}: measured {m}, predicted {p}");
    }
    let (dm, dp) = (saved(true) - saved(false), predicted(true) - predicted(false));
    println!("difference: measured {dm} B, predicted {dp} B");
    assert!((dp - dm).abs() / dm < 0.02, "difference: measured {dm}, predicted {dp}");
}

/// Profiles: PEFT's frameworks keep fp32 adapters; torchtune and LitGPT the model dtype.
#[test]
fn profiles_set_the_adapter_dtype() {
    for f in Framework::ALL {
        let mut s = Scenario::default();
        s.training.lora = Some(headroom::scenario::Lora::default());
        s.apply_framework(f);
        let expected = !matches!(f, Framework::Torchtune | Framework::Litgpt);
        assert_eq!(s.training.lora.as_ref().map(|l| l.fp32_adapters), Some(expected), "{f:?}");
    }
}
