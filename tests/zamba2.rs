//! Zamba2 against transformers (`tests/measure/zamba2.py`, `tests/fixtures/measured/zamba2.json`):
//! - parameter counts of `Zamba2ForCausalLM` on the meta device (shared blocks counted once
//!   each, adapters and output linears once per invocation) for the class default config
//!   and variants: q/k/v adapters on and off, `num_mem_blocks` 1, 2 and 3 (3 with two
//!   hybrid layers: two blocks built), biases, grouped KV heads, a `hybrid_layer_ids` longer
//!   than the layer list (more adapter slots); an untied head, which unties the blocks too
//!   (one per hybrid layer, each with its block id's adapters);
//! - the bytes of transformers' own cache after a prefill (conv and SSM states of every
//!   layer, K/V once per invocation of a shared block), fp32 and bf16;
//! - the tensors the whole model saves for backward on CPU (fp32), the Mamba-2 mixers'
//!   torch fallback apart.

use headroom::model::arch::{Architecture, Scope};
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

mod hybrid_cases;
use hybrid_cases::{mixer_split, states_equal_cache};

fn fixture() -> Value {
    hybrid_cases::fixture("zamba2.json")
}

#[test]
fn parameters_equal_transformers_counts() {
    let f = fixture();
    let cases = f["params"].as_object().expect("params");
    assert!(cases.len() >= 6);
    for (name, case) in cases {
        let imported = headroom::import::hf_config::import_hf_config(&case["config"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(imported.arch.param_count() as u64, case["param_count"].as_u64().unwrap(), "{name}");
        assert!(!imported.warnings.iter().any(|w| w.starts_with("approximate")), "{name}: {:?}", imported.warnings);
        let Architecture::Transformer(t) = &imported.arch else { panic!("{name}: not a transformer") };
        // Attention (activations, KV cache) once per invocation; its weights once per block.
        assert_eq!(t.blocks(Scope::Attention), case["hybrid_layers"].as_u64().unwrap(), "{name}");
        assert_eq!(t.blocks(Scope::Shared), case["distinct_shared_blocks"].as_u64().unwrap(), "{name}");
    }
}

/// `tie_word_embeddings: false` makes transformers build one block per hybrid layer: the
/// fixture's three untied cases have as many distinct blocks as hybrid layers, and so does
/// Headroom (their counts are checked above), whatever `num_mem_blocks` says.
#[test]
fn untied_heads_untie_the_blocks() {
    let f = fixture();
    let untied: Vec<_> = f["params"].as_object().unwrap().iter().filter(|(_, c)| c["config"]["tie_word_embeddings"] == json!(false)).collect();
    assert_eq!(untied.len(), 3);
    for (name, case) in untied {
        assert_eq!(case["distinct_shared_blocks"], case["hybrid_layers"], "{name}");
        let imported = headroom::import::hf_config::import_hf_config(&case["config"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Architecture::Transformer(t) = &imported.arch else { panic!("{name}: not a transformer") };
        assert_eq!(t.blocks(Scope::Shared), case["hybrid_layers"].as_u64().unwrap(), "{name}");
        assert!(!t.embedding.tied, "{name}");
    }
}

/// The shared blocks' weights do not grow with the hybrid layers that invoke them: a second
/// block adds one block's weights, while each invocation adds only its adapters and linear.
#[test]
fn a_second_shared_block_adds_one_block_of_weights() {
    let f = fixture();
    let count = |name: &str| f["params"][name]["param_count"].as_u64().unwrap();
    let (h, f_ffn) = (2560u64, 4 * 2560u64);
    // q, k, v (2h → 2h), o (2h → h), gate_up (h → 2f), down (f → h), two norms (2h, h).
    let block = 3 * (2 * h) * (2 * h) + 2 * h * h + h * 2 * f_ffn + f_ffn * h + 2 * h + h;
    assert_eq!(count("default@mem_blocks2") - count("default"), block);
}

#[test]
fn states_equal_transformers_cache() {
    states_equal_cache(&fixture(), 2);
}

/// Everything but the Mamba-2 mixers (the shared blocks' concatenation, norms, attention,
/// adapters, MLP and output linear, the block norms, the head and the loss) within 3 % of
/// what transformers saves on CPU (fp32, batch 2, s = 64 and 128); the mixers' torch
/// fallback (`torch_forward`, no mamba_ssm / causal_conv1d) against Headroom's fused-kernel
/// model in the Mamba-2 family's band of `tests/hybrids.rs` (4.9–6.0).
#[test]
fn saved_activations_against_transformers() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 2);
    for (name, case) in cases {
        let m = mixer_split(case);
        assert!(m.saved_names().any(|n| n.starts_with("shared block")), "{name}: no shared-block term");
        let (rest, measured_rest, err) = (m.rest, m.measured_rest, m.rest_error());
        let ratio = m.fallback_ratio();
        println!("{name}: outside the mixers Headroom {rest}, transformers {measured_rest} ({:+.3}%); mixers' fallback / fused model {ratio:.2}", 100.0 * err);
        assert!(err.abs() <= 0.03, "{name}: {:+.3}% outside the mixers", 100.0 * err);
        assert!((4.9..=6.0).contains(&ratio), "{name}: fallback / fused-kernel model {ratio:.2}");
    }
}

/// Bad input names the field.
#[test]
fn bad_input_names_the_field() {
    let import = |extra: Value| {
        let mut config =
            json!({"model_type": "zamba2", "hidden_size": 64, "num_attention_heads": 4, "n_mamba_heads": 4, "num_hidden_layers": 2, "layers_block_type": ["mamba", "hybrid"]});
        config.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        headroom::import::hf_config::import_hf_config(&config).map(|_| ()).map_err(|e| e.field)
    };
    assert_eq!(import(json!({})), Ok(()));
    assert_eq!(import(json!({"num_hidden_layers": 3})), Err("num_hidden_layers".into()));
    assert_eq!(import(json!({"layers_block_type": ["mamba", "attention"]})), Err("layers_block_type".into()));
    assert_eq!(import(json!({"layers_block_type": ["mamba", "mamba"]})), Err("layers_block_type".into()));
    assert_eq!(import(json!({"hybrid_layer_ids": 3})), Err("hybrid_layer_ids".into()));
    assert_eq!(import(json!({"num_attention_heads": 5})), Err("num_attention_heads".into()));
}

/// PEFT adapts every invocation's q/v/gate_up module (transformers ties the shared blocks'
/// parameters, not their modules): the trainable count equals PEFT's.
#[test]
fn lora_on_shared_blocks_counts_each_invocation() {
    let f = fixture();
    let case = &f["lora"]["tiny@r4"];
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]},
        "training": {"micro_batch": 2, "seq_len": 16, "precision": "bf16-mixed", "optimizer": "adamw", "lora": {"rank": case["rank"], "targets": ["q", "v", "gate", "up"]}}}))
    .expect("scenario");
    let b = estimate(&s);
    assert_eq!(b.trainable_params, case["trainable_params"].as_u64().unwrap());
}
