//! PEFT 0.21.2's LoRA on transformers 5.25's fused MoE experts (`tests/measure/lora_experts.py`
//! → `tests/fixtures/measured/lora_experts.json`): the trainable count of every MoE config of
//! the catalogue under both targeting forms (`training.lora.targets` with every kind is PEFT's
//! `"all-linear"`; a shorter list is PEFT's `target_modules` with the family's names for those
//! kinds), and the tensors a tiny Qwen3-MoE (whose experts PEFT wraps) and a tiny Qwen2-MoE
//! (whose experts it does not reach) save for backward under three targetings.

use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/lora_experts.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("lora_experts.json")).expect("json")
}

/// Headroom's targets for each fixture targeting: every kind (PEFT's "all-linear"), the
/// attention and MLP kinds (PEFT's names list), the attention only.
fn targets(form: &str) -> Value {
    match form {
        "all_linear" => json!(["q", "k", "v", "o", "gate", "up", "down", "add-q", "add-k", "add-v", "add-o", "mixer-in", "mixer-gates", "x-proj", "dt-proj", "mixer-out"]),
        "names" => json!(["q", "k", "v", "o", "gate", "up", "down"]),
        "attention" => json!(["q", "k", "v", "o"]),
        other => panic!("unknown targeting {other}"),
    }
}

fn scenario(model: Value, form: &str, rank: u64, training: Value) -> Scenario {
    let mut t = json!({"mode": "train", "optimizer": "adamw", "lora": {"rank": rank, "targets": targets(form)}});
    for (k, v) in training.as_object().expect("training") {
        t[k] = v.clone();
    }
    serde_json::from_value(json!({"model": model, "training": t})).expect("scenario")
}

/// Every MoE config of the catalogue, both targeting forms: Headroom's trainable count equals
/// what `get_peft_model` makes on the meta device.
#[test]
fn trainable_counts_equal_peft_for_every_catalogue_moe() {
    let f = fixture();
    let cases = f["counts"].as_object().expect("counts");
    assert_eq!(cases.len(), 12);
    for (hub_id, case) in cases {
        let rank = case["rank"].as_u64().unwrap();
        for form in ["all_linear", "names"] {
            let b = estimate(&scenario(json!({"preset": hub_id}), form, rank, json!({"micro_batch": 1, "seq_len": 16})));
            let measured = case[form]["trainable"].as_u64().unwrap();
            assert_eq!(b.param_count as u64, case[form]["param_count"].as_u64().unwrap(), "{hub_id}: param_count");
            assert_eq!(b.trainable_params as u64, measured, "{hub_id} {form}: Headroom {} against PEFT {measured}", b.trainable_params);
        }
    }
}

/// MoE families Headroom reads beyond the catalogue, from their class defaults: OLMoE and
/// GLM-4-MoE (converted), PhiMoE and Llama 4 (`nn.Linear` routers, which only "all-linear"
/// adapts; experts never reached), LFM2-MoE ("all-linear" only).
#[test]
fn trainable_counts_equal_peft_for_other_moe_families() {
    let f = fixture();
    let cases = f["families"].as_object().expect("families");
    assert_eq!(cases.len(), 5);
    for (model_type, case) in cases {
        let rank = case["rank"].as_u64().unwrap();
        for form in ["all_linear", "names"].into_iter().filter(|form| case.get(*form).is_some()) {
            let b = estimate(&scenario(json!({"hf_config": case["config"]}), form, rank, json!({"micro_batch": 1, "seq_len": 16})));
            assert_eq!(b.param_count as u64, case[form]["param_count"].as_u64().unwrap(), "{model_type}: param_count");
            let measured = case[form]["trainable"].as_u64().unwrap();
            assert_eq!(b.trainable_params as u64, measured, "{model_type} {form}: Headroom {} against PEFT {measured}", b.trainable_params);
        }
    }
}

/// Mixtral's own expert names (`w1`, `w3`, `w2`, Headroom's gate, up and down there) reach
/// its experts through PEFT's conversion, rank 2r on `gate_up_proj`: what "all-linear" makes
/// less the router's ParamWrapper. Llama's names (`gate_proj`, ...) reach only its attention.
#[test]
fn mixtral_expert_names_reach_the_experts() {
    let f = fixture();
    for hub_id in ["mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x22B-v0.1"] {
        let case = &f["counts"][hub_id];
        let router = case["all_linear"]["wrapped"]["ParamWrapper:weight"]["params"].as_u64().unwrap();
        let named = case["names"]["trainable"].as_u64().unwrap();
        assert_eq!(case["all_linear"]["trainable"].as_u64().unwrap() - router, named, "{hub_id}");
        let llama_names = case["llama_names"]["wrapped"].as_object().unwrap();
        assert!(llama_names.keys().all(|k| k.starts_with("Linear:") && k.ends_with("_proj")), "{hub_id}: {llama_names:?}");
    }
}

/// The whole model's saved tensors with LoRA on a tiny Qwen3-MoE (the experts wrapped by
/// `ParamWrapper` under the names list and "all-linear": the merged expert weights and the
/// grouped matmuls' inputs are kept; fp32 and pure bf16 with fp32 adapters) and a tiny
/// Qwen2-MoE (experts never adapted), within 3 %. What is left: the first block's attention
/// norm, which PEFT's frozen embeddings leave unsaved (1/L of one norm, not modelled,
/// `activations/lora.rs`), and 12 B per token of the router's normalisation.
#[test]
fn saved_tensors_against_peft() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 15);
    let mut worst: (f64, &str) = (0.0, "");
    for (name, case) in cases {
        let case_name = name.split('@').next().unwrap();
        let form = ["all_linear", "names", "attention"].into_iter().find(|f| case_name.ends_with(f)).expect("targeting");
        let s = scenario(
            json!({"hf_config": case["config"]}),
            form,
            case["rank"].as_u64().unwrap(),
            json!({"micro_batch": case["batch"], "seq_len": case["seq_len"], "precision": case["precision"]}),
        );
        let b = estimate(&s);
        assert_eq!(b.trainable_params as u64, case["trainable"].as_u64().unwrap(), "{name}: trainable");
        let saved: u64 = b.terms.iter().filter(|t| format!("{:?}", t.lifetime).starts_with("Saved")).map(|t| t.bytes).sum();
        let measured = case["model_saved_bytes"].as_f64().unwrap();
        let err = (saved as f64 - measured) / measured;
        println!("{name}: Headroom {saved}, PEFT {measured} ({:+.2} %)", 100.0 * err);
        if err.abs() > worst.0.abs() {
            worst = (err, name);
        }
    }
    assert!(worst.0.abs() <= 0.03, "{}: {:+.2} %", worst.1, 100.0 * worst.0);
}

fn merged_bytes(s: &Scenario) -> u64 {
    estimate(s).terms.iter().filter(|t| t.name.starts_with("LoRA merged expert weights")).map(|t| t.bytes).sum()
}

/// The merged expert weights are one copy of each MoE block's wrapped parameters in the base
/// dtype, with PEFT's fp32 factors cast to it: Qwen3-30B-A3B in pure bf16, no checkpointing,
/// 48 blocks × 128 experts; expert parallelism divides them (each rank holds E/ep experts); a family whose
/// experts PEFT does not reach (Jamba) has none, and neither has a targeting without the MLP.
#[test]
fn merged_expert_weights_follow_the_wrapped_parameters() {
    let training = || json!({"micro_batch": 1, "seq_len": 16, "precision": "bf16", "checkpointing": "none"});
    let qwen = json!({"preset": "Qwen/Qwen3-30B-A3B"});
    let one = merged_bytes(&scenario(qwen.clone(), "names", 8, training()));
    // The merged weights, and the fp32 factors cast to bf16 for `baddbmm` (2r on gate_up_proj).
    assert_eq!(one, 48 * 128 * (3 * 2048 * 768 + 2 * 8 * (2048 + 2 * 768) + 8 * (768 + 2048)) * 2);
    let mut ep2 = scenario(qwen.clone(), "names", 8, training());
    ep2.parallel.ep = 2;
    ep2.parallel.dp = 2;
    assert_eq!(merged_bytes(&ep2), one / 2);
    assert_eq!(merged_bytes(&scenario(qwen, "attention", 8, training())), 0);
    assert_eq!(merged_bytes(&scenario(json!({"preset": "ai21labs/AI21-Jamba-1.5-Mini"}), "all_linear", 8, training())), 0);
}

/// The plan says what PEFT does with the experts: frozen where it does not reach them (Jamba,
/// gpt-oss), wrapped where it converts the names (Qwen3-MoE), the shared experts' and dense
/// layers' adapters dropped (DeepSeek-V2-Lite), and ParamWrapper's refusal of dropout.
#[test]
fn plan_notes_say_what_peft_does_with_the_experts() {
    let note = |hub_id: &str, form: &str, training: Value, needle: &str| {
        let b = estimate(&scenario(json!({"preset": hub_id}), form, 8, training));
        assert!(b.warnings.iter().any(|w| w.contains(needle)), "{hub_id} {form}: no note with {needle:?} in {:?}", b.warnings);
    };
    let plain = || json!({"micro_batch": 1, "seq_len": 16});
    note("ai21labs/AI21-Jamba-1.5-Mini", "names", plain(), "LoRA leaves the routed experts frozen");
    note("openai/gpt-oss-20b", "all_linear", plain(), "LoRA leaves the routed experts frozen");
    note("Qwen/Qwen3-30B-A3B", "names", plain(), "wraps each with ParamWrapper (rank 16 per expert on gate_up_proj, 8 on down_proj)");
    note("mistralai/Mixtral-8x7B-v0.1", "names", plain(), "converts the names w1, w3, w2 to");
    note("deepseek-ai/DeepSeek-V2-Lite", "names", plain(), "shared experts' and dense layers' MLP linears get no adapters");
    note("Qwen/Qwen3-30B-A3B", "all_linear", json!({"micro_batch": 1, "seq_len": 16, "lora": {"rank": 8, "dropout": 0.05}}), "refuses lora_dropout");
    let b = estimate(&scenario(json!({"preset": "Qwen/Qwen3-30B-A3B"}), "attention", 8, plain()));
    assert!(!b.warnings.iter().any(|w| w.contains("routed experts")), "{:?}", b.warnings);
}

/// QLoRA on fused experts: transformers 5.25's bitsandbytes quantizer makes only `Linear4bit`
/// parameters 4-bit, so the tiny Qwen3-MoE's fused experts stay bf16 and PEFT's
/// `prepare_model_for_kbit_training` casts them to fp32 (`lora_experts.json`, `qlora`, loaded
/// with bitsandbytes on the CPU). Headroom's frozen weights equal the measured parameters and
/// quantisation state but for bitsandbytes' code tables (16 + 256 fp32 values and one fp32
/// offset per double-quantised `Linear4bit`, not modelled, as in `tests/lora_and_inference.rs`)
/// and under 4 B per linear of rounding. Before, Headroom counted the experts as NF4 (0.516 B a
/// weight with double quantisation, instead of 4).
#[test]
fn qlora_leaves_fused_experts_unquantised_in_fp32() {
    let f = fixture();
    let q = &f["qlora"];
    let experts = q["nf4_after_prepare"]["experts"].as_object().expect("experts");
    assert_eq!(experts.keys().collect::<Vec<_>>(), ["experts float32"]);
    assert_eq!(experts["experts float32"].as_u64().unwrap(), 4 * 8 * (64 * 64 + 64 * 32) * 4);
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": q["config"]},
        "training": {"precision": "bf16", "micro_batch": 1, "seq_len": 16, "lora": {"rank": 8, "base": "nf4", "double_quant": true, "targets": targets("attention")}}}))
    .expect("scenario");
    let b = estimate(&s);
    assert!(b.warnings.iter().any(|w| w.starts_with("QLoRA leaves the routed experts unquantised")), "{:?}", b.warnings);
    let frozen = b.terms.iter().find(|t| t.name == "frozen weights").expect("frozen").bytes;
    let measured = q["param_bytes_after_prepare"].as_u64().unwrap() + q["nf4_quant_state_bytes"].as_u64().unwrap();
    let linear4bit = 4 * 4;
    let unmodelled = measured - frozen - linear4bit * (16 + 256 + 1) * 4;
    // What is left is the nested absmax's rounding up to whole groups of 256 in matrices this
    // small (Headroom counts 4 B per 256 blocks of 64 weights on average): under 4 B a linear.
    assert!(unmodelled < 4 * linear4bit, "Headroom {frozen}, measured {measured}: {unmodelled} B left");
}

/// Families Headroom reads get transformers 5's storage and PEFT's conversion by their own
/// `model_type` (a vision-language wrapper's, which PEFT reads: Qwen3-VL-MoE is not
/// converted though its text model is Qwen3-MoE's); a `model_type` transformers does not know
/// (remote code, read as an approximate decoder) keeps per-expert linears.
#[test]
fn expert_storage_follows_the_model_type() {
    use headroom::import::hf_config::import_hf_config;
    use headroom::model::arch::{MoePeft, PeftConversion};
    let peft = |config: Value| import_hf_config(&config).expect("import").arch.transformer().and_then(|t| t.moe.clone()).expect("moe").peft;
    let text = json!({"model_type": "qwen3_moe", "hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 256});
    assert_eq!(peft(text.clone()), MoePeft { fused: true, conversion: Some(PeftConversion::Qwen2Moe), router_linear: false });
    let mut vl_text = text.clone();
    vl_text["model_type"] = json!("qwen3_vl_moe_text");
    let wrapper = json!({"model_type": "qwen3_vl_moe", "text_config": vl_text});
    assert_eq!(peft(wrapper).conversion, None);
    let unknown = json!({"model_type": "remote_moe", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "vocab_size": 256, "num_local_experts": 8, "num_experts_per_tok": 2});
    assert_eq!(peft(unknown), MoePeft::default());
}
