//! LitGPT's LoRA fine-tuning as its own modules run it (LitGPT 0.5.13 on the CPU, pure bf16,
//! `tests/measure/litgpt_lora.py` → `tests/fixtures/measured/litgpt_lora.json`), against what
//! the LitGPT profile predicts: adapters in bf16 that read their input as it is (one bf16 copy
//! per block, shared), and the chunked cross-entropy on bf16 logits (`Loss::ChunkedNoUpcast`,
//! a bf16 log-softmax per chunk, no fp32 upcast).
//!
//! The whole forward within 1 %: the profile runs LitGPT's own modules
//! (`Techniques::litgpt_modules`), whose attention repeats k and v to every head before SDPA,
//! whose `LoRAQKVLinear` saves the zero-padded update of the fused QKV output, and which keeps
//! no rotary cos/sin.

use headroom::model::breakdown::Component;
use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = format!("{}/tests/fixtures/measured/litgpt_lora.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("fixture is JSON")
}

fn plan(f: &Value, case: &Value) -> Breakdown {
    let s = case["seq_len"].as_u64().expect("seq_len");
    let scenario = json!({
        "model": {"hf_config": f["hf_config"]},
        "framework": "litgpt",
        "training": {"micro_batch": case["micro_batch"], "seq_len": s, "attention": "sdpa", "techniques": {"loss_chunks": s / 128}, "lora": {"rank": 8, "targets": ["q", "v"]}},
    });
    estimate(&Scenario::from_json(&scenario.to_string()).unwrap_or_else(|e| panic!("{e}")).scenario)
}

fn term(b: &Breakdown, name: &str) -> f64 {
    b.terms.iter().find(|t| t.name == name && t.component == Component::Activations).unwrap_or_else(|| panic!("no term {name}")).bytes as f64
}

fn detail(case: &Value) -> &Vec<Value> {
    case["saved_detail_last_block_and_outside"].as_array().expect("detail")
}

/// The loss: every chunk's bf16 log-softmax and the int64 targets, within 1 % (LitGPT shifts
/// the last chunk by one token).
#[test]
fn the_chunked_loss_saves_bf16_log_softmax() {
    let f = fixture();
    for case in f["cases"].as_array().expect("cases") {
        let measured: f64 = detail(case)
            .iter()
            .filter(|e| e["module"] == "<top>" && (e["grad_fn"] == "LogSoftmaxBackward0" || e["dtype"] == "int64"))
            .map(|e| e["nbytes"].as_f64().expect("bytes"))
            .sum();
        assert!(detail(case).iter().filter(|e| e["grad_fn"] == "LogSoftmaxBackward0").all(|e| e["dtype"] == "bfloat16"));
        let predicted = term(&plan(&f, case), "log-softmax of the logits (chunked, no upcast)");
        println!("{}: loss measured {measured} B, predicted {predicted} B", case["name"]);
        assert!((predicted - measured).abs() / measured < 0.01, "{}: {predicted} vs {measured}", case["name"]);
    }
}

/// The adapters: bf16, reading the block's normalised input as it is, one bf16 copy shared by q
/// and v, and the 2r-wide output of the fused `lora_A`.
#[test]
fn bf16_adapters_share_their_input() {
    let f = fixture();
    for case in f["cases"].as_array().expect("cases") {
        assert_eq!(case["adapter_dtypes"], json!(["bfloat16"]));
        let (b, s) = (case["micro_batch"].as_f64().expect("b"), case["seq_len"].as_f64().expect("s"));
        let h = f["hf_config"]["hidden_size"].as_f64().expect("h");
        let layers = f["hf_config"]["num_hidden_layers"].as_f64().expect("layers");
        let qkv: Vec<&Value> = detail(case).iter().filter(|e| e["module"] == "transformer.h.1.attn.qkv").collect();
        let input = qkv.iter().find(|e| e["grad_fn"] == "ViewBackward0").expect("the adapters' input");
        assert_eq!((input["dtype"].as_str(), input["nbytes"].as_f64()), (Some("bfloat16"), Some(2.0 * b * s * h)));
        let plan = plan(&f, case);
        assert_eq!(term(&plan, "q/k/v projection inputs") / layers, 2.0 * b * s * h);
        let after_a = qkv.iter().find(|e| e["grad_fn"] == "SplitBackward0").expect("lora_A's output");
        assert_eq!(term(&plan, "LoRA adapter intermediates (attention)") / layers, after_a["nbytes"].as_f64().expect("bytes"));
    }
}

/// The whole forward: Headroom's prediction with LitGPT's modules (`Techniques::litgpt_modules`:
/// k and v repeated to every head, no rotary cos/sin kept, the fused QKV adapter's zero-padded
/// update) against LitGPT's, within 1 % (measured: +0.03 % to +0.05 %); its first block keeps
/// no `norm_1`, as transformers' keeps no first `input_layernorm` under LoRA without
/// checkpointing.
#[test]
fn whole_forward_within_one_percent() {
    let f = fixture();
    for case in f["cases"].as_array().expect("cases") {
        let measured = case["saved_bytes"].as_f64().expect("saved");
        let b = plan(&f, case);
        assert!(b.terms.iter().all(|t| t.name != "rotary cos/sin"), "LitGPT keeps no rotary activations");
        let predicted = b.phases.forward_backward.activations as f64;
        println!("{}: measured {measured} B, predicted {predicted} B ({:+.2} %)", case["name"], 100.0 * (predicted - measured) / measured);
        assert!((predicted - measured).abs() / measured < 0.01, "{}", case["name"]);
    }
}
