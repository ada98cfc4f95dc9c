//! Hybrid and state-space models against transformers (`tests/measure/hybrids.py`):
//! - `hybrid_params.json`: parameter counts of configs that take each reader's branches
//!   (attention layers among Mamba-2 blocks, short convolutions, Nemotron-H's pattern, …),
//!   equal to `sum(p.numel())` of the model transformers builds;
//! - `hybrid_states.json`: the bytes of transformers' own cache after a prefill: the
//!   "recurrent and conv state" term and the "KV cache" term of an inference estimate must
//!   equal them, in fp32 and bf16;
//! - `hybrid_activations.json`: what the token mixer of the first block saves for backward on
//!   CPU, where transformers runs its torch fallbacks. Headroom models the fused CUDA kernels
//!   (`activations/mixer.rs`), which save far less: the ratio per family is printed and held
//!   to the band measured when this was written, so a change to either side shows.

use headroom::model::inputs::Mode;
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/measured/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn scenario(config: &Value, precision: &str, batch: u64, seq: u64, mode: &str) -> Scenario {
    serde_json::from_value(json!({
        "model": {"hf_config": config},
        "training": {"micro_batch": batch, "seq_len": seq, "precision": precision, "mode": mode, "optimizer": "adamw"},
    }))
    .expect("scenario")
}

fn term(b: &headroom::Breakdown, name: &str) -> u64 {
    b.terms.iter().filter(|t| t.name == name).map(|t| t.bytes).sum()
}

#[test]
fn reader_branches_count_exactly() {
    let f = fixture("hybrid_params.json");
    let cases = f["cases"].as_object().expect("cases");
    assert!(cases.len() >= 11);
    for (name, case) in cases {
        let imported = headroom::import::hf_config::import_hf_config(&case["config"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(imported.arch.param_count() as u64, case["param_count"].as_u64().unwrap(), "{name}");
        assert!(!imported.warnings.iter().any(|w| w.starts_with("approximate")), "{name}: {:?}", imported.warnings);
    }
}

#[test]
fn states_equal_transformers_cache_objects() {
    let f = fixture("hybrid_states.json");
    for (name, case) in f["cases"].as_object().expect("cases") {
        let precision = if name.ends_with("@bfloat16") { "bf16" } else { "fp32" };
        let s = scenario(&case["config"], precision, case["batch"].as_u64().unwrap(), case["tokens"].as_u64().unwrap(), "inference");
        assert_eq!(s.training.mode, Mode::Inference);
        let b = estimate(&s);
        let state = case["conv_state_bytes"].as_u64().unwrap() + case["recurrent_state_bytes"].as_u64().unwrap();
        assert_eq!(term(&b, headroom::model::inference::STATE_TERM), state, "{name}: recurrent and conv state");
        assert_eq!(term(&b, "KV cache"), case["kv_bytes"].as_u64().unwrap(), "{name}: KV cache");
    }
}

/// The recurrent state does not grow with the sequence; the KV cache of the attention
/// layers does.
#[test]
fn state_is_constant_in_sequence_length() {
    let f = fixture("hybrid_states.json");
    let config = &f["cases"]["qwen3_next@bfloat16"]["config"];
    let at = |seq| estimate(&scenario(config, "bf16", 1, seq, "inference"));
    let (short, long) = (at(1024), at(4096));
    assert_eq!(term(&short, headroom::model::inference::STATE_TERM), term(&long, headroom::model::inference::STATE_TERM));
    assert_eq!(4 * term(&short, "KV cache"), term(&long, "KV cache"));
}

/// Measured torch-fallback bytes over Headroom's fused-kernel bytes for the first block's
/// mixer, per family, when this was written (fp32, batch 2, s = 64 and 128): the fallbacks
/// materialise the discretised state inputs (Mamba: b·d·s·N), the chunked delta-rule
/// matrices (Gated DeltaNet) or unfused elementwise steps that the kernels keep in registers.
/// Measured: Mamba 8.6–8.9, Mamba-2 and Nemotron-H 5.4, Jamba 5.0, Gated DeltaNet 3.7,
/// LFM2's short conv 1.00 (its fallback runs the same ops but the conv: the fused model is
/// within 0.5% of it). Bands are ±10% around those.
const FALLBACK_OVER_KERNELS: &[(&str, f64, f64)] =
    &[("mamba", 7.8, 9.7), ("mamba2", 4.9, 6.0), ("jamba", 4.5, 5.5), ("qwen3_next", 3.3, 4.1), ("nemotron_h", 4.9, 6.0), ("lfm2", 0.97, 1.03)];

#[test]
fn fused_kernel_activations_against_the_measured_fallback() {
    let f = fixture("hybrid_activations.json");
    let mut outside = Vec::new();
    for (name, case) in f["cases"].as_object().expect("cases") {
        let family = name.split('@').next().unwrap();
        let (batch, seq) = (case["batch"].as_u64().unwrap(), case["seq_len"].as_u64().unwrap());
        let b = estimate(&scenario(&case["config"], "fp32", batch, seq, "train"));
        let layers = case["config"]["num_hidden_layers"].as_u64().or_else(|| case["config"]["layers_block_type"].as_array().map(|a| a.len() as u64)).unwrap();
        let mixer_layers = match headroom::import::hf_config::import_hf_config(&case["config"]).unwrap().arch {
            headroom::model::arch::Architecture::Transformer(t) => t.hybrid.unwrap().mixer_layers,
            _ => unreachable!(),
        };
        // The estimate's terms cover every mixer block; the fixture one block.
        let mixer_terms = ["mixer saved tensors (fused CUDA kernels)", "mixer input projection inputs", "mixer output projection input"];
        let per_block = mixer_terms.iter().map(|n| term(&b, n)).sum::<u64>() as f64 / mixer_layers as f64;
        let measured = case["mixer_saved_bytes"].as_f64().unwrap();
        let ratio = measured / per_block;
        println!("{name:16} layers {layers} measured fallback {measured:>10} fused-kernel model {per_block:>10.0} ratio {ratio:.2}");
        let (_, low, high) = FALLBACK_OVER_KERNELS.iter().find(|(f, _, _)| *f == family).unwrap_or_else(|| panic!("{family}: no band"));
        if !(*low..=*high).contains(&ratio) {
            outside.push(format!("{name}: fallback / fused-kernel model {ratio:.2} outside [{low}, {high}]"));
        }
    }
    assert!(outside.is_empty(), "{outside:#?}");
}

/// Refused families still name what is missing.
#[test]
fn kimi_linear_is_still_refused_with_what_is_missing() {
    let err = headroom::import::hf_config::import_hf_config(&json!({"model_type": "kimi_linear", "hidden_size": 64})).unwrap_err();
    assert!(err.message.contains("cannot model") && err.message.contains("Kimi Delta Attention"), "{err}");
}

/// vLLM's hybrid block pool (`serving/vllm.rs` `hybrid_layout`): a Qwen3.5-shaped model
/// (16 key and 32 value heads of 128 in its Gated DeltaNet, 2 KV heads of 256) in bf16 has
/// a 2,048-byte attention token per layer and a 1,097,728-byte state (3 × 8192 × 2 +
/// 32 × 128 × 128 × 2), so vLLM raises the attention block to 16 × ⌈1,097,728 / 32,768⌉ =
/// 544 tokens and says so at startup — the arithmetic of `_align_hybrid_block_size`, as a
/// published walk-through of it gives for the bf16 state (544 tokens, 1,114,112-byte page).
/// Each request then holds its attention blocks and one block per group of 8 GDN layers.
#[test]
fn vllm_raises_the_attention_block_to_hold_a_state() {
    let config = json!({"model_type": "qwen3_5_text", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
        "intermediate_size": 12288, "vocab_size": 248320, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4});
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": config}, "training": {"mode": "inference", "precision": "bf16", "seq_len": 8192, "micro_batch": 8,
        "serving": {"engine": "vllm", "max_model_len": 8192}}}))
    .expect("scenario");
    let b = estimate(&s);
    let report = b.serving.expect("vLLM report");
    assert_eq!(report.block_size, 544);
    assert!(report.log.iter().any(|l| l.contains("Setting attention block size to 544 tokens")), "{:?}", report.log);
    // 8 attention layers and 24 GDN layers: groups of 8, one attention group and three mamba
    // groups; a block id is one 1,114,112-byte page in each of 8 tensors.
    let blocks_per_request = 8192u64.div_ceil(544) + 3;
    assert_eq!(report.kv_cache_bytes, report.num_blocks * 1_114_112 * 8);
    assert!((report.max_concurrency - report.num_blocks as f64 / blocks_per_request as f64).abs() < 1e-9, "{}", report.max_concurrency);
    assert!(!b.warnings.iter().any(|w| w.contains("is not modelled")), "{:?}", b.warnings);
}

/// A pure state-space model under vLLM: no attention, so no KV-cache geometry; the warning
/// says the state pool is not modelled rather than leaving it out silently.
#[test]
fn vllm_without_attention_says_the_state_pool_is_not_modelled() {
    let f = fixture("hybrid_states.json");
    let config = &f["cases"]["mamba2@bfloat16"]["config"];
    let s: Scenario =
        serde_json::from_value(json!({"model": {"hf_config": config}, "training": {"mode": "inference", "precision": "bf16", "serving": {"engine": "vllm"}}})).expect("scenario");
    let b = estimate(&s);
    assert!(b.warnings.iter().any(|w| w.contains("is not modelled")), "{:?}", b.warnings);
}

/// A reader's notes are its own family's: no other hybrid's import says anything of
/// OLMo-Hybrid's projections (a note once pasted into the LFM2 and Bamba readers too), over
/// every config of `hybrid_params.json` and the catalogue's LFM2.
#[test]
fn readers_notes_are_their_own() {
    let f = fixture("hybrid_params.json");
    let mut checked = Vec::new();
    for (name, case) in f["cases"].as_object().expect("cases") {
        let imported = headroom::import::hf_config::import_hf_config(&case["config"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!imported.warnings.iter().any(|w| w.contains("OLMo")), "{name}: {:?}", imported.warnings);
        checked.push(imported.model_type);
    }
    assert!(checked.iter().any(|t| t == "bamba") && checked.iter().any(|t| t == "lfm2"), "{checked:?}");
    let preset = headroom::import::presets::model_preset("LiquidAI/LFM2-1.2B").expect("catalogue");
    assert!(!preset.warnings.iter().any(|w| w.contains("OLMo")), "{:?}", preset.warnings);
}
