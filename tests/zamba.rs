//! Zamba (v1) against transformers (`tests/measure/zamba.py`, `tests/fixtures/measured/zamba.json`):
//! - parameter counts of `ZambaForCausalLM` on the meta device (the one shared block counted
//!   once, each hybrid layer's `linear` once per invocation, the multi-head Mamba mixers'
//!   per-head `x_proj_weight` / `dt_proj_weight`) for the class default config and variants:
//!   untied head (which unties the block: one per hybrid layer), grouped KV heads, mixer
//!   biases, an explicit dt rank and head width, a given layer list;
//! - the bytes of transformers' own cache (`DynamicCache`) after a prefill: conv and SSM
//!   states of every layer, K/V once per invocation of the shared block, fp32 and bf16;
//! - the tensors the whole model saves for backward on CPU (fp32), the mixers' torch
//!   fallbacks apart;
//! - PEFT's trainable count with adapters on the block's and the mixers' linears.

use headroom::model::arch::{Architecture, Scope};
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

mod hybrid_cases;
use hybrid_cases::{mixer_split, states_equal_cache};

fn fixture() -> Value {
    hybrid_cases::fixture("zamba.json")
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
        assert_eq!(t.blocks(Scope::Attention), case["hybrid_layers"].as_u64().unwrap(), "{name}");
        assert_eq!(t.blocks(Scope::Shared), case["distinct_shared_blocks"].as_u64().unwrap(), "{name}");
    }
}

/// One shared block whatever the number of hybrid layers while tied; one per hybrid layer
/// untied (transformers applies `_tied_weights_keys` only with `tie_word_embeddings`): the
/// difference of the two default counts is 12 blocks and the untied LM head.
#[test]
fn untied_heads_untie_the_block() {
    let f = fixture();
    let count = |name: &str| f["params"][name]["param_count"].as_u64().unwrap();
    let (h, ffn, vocab) = (3712u64, 14848u64, 32000u64);
    // q, k, v (2h → 2h), o (2h → h), gate, up (h → f), down (f → h), two norms (2h, h).
    let block = 3 * (2 * h) * (2 * h) + 2 * h * h + 3 * h * ffn + 2 * h + h;
    assert_eq!(f["params"]["default@untied"]["distinct_shared_blocks"], 13);
    assert_eq!(count("default@untied") - count("default"), 12 * block + vocab * h);
}

#[test]
fn states_equal_transformers_cache() {
    states_equal_cache(&fixture(), 2);
}

/// Everything but the Mamba mixers (the shared block's concatenated input, norms, attention
/// and MLP, each hybrid layer's linear, the block norms, the head and the loss) within 3 % of
/// what transformers saves on CPU (fp32, batch 2, s = 64 and 128). The mixers run the torch
/// fallbacks there (`causal_conv1d_fn`'s `F.conv1d`, `mamba_selective_scan`'s sequential
/// loop, which keeps every step's state), Headroom models the CUDA kernels: their ratio is
/// printed and held in the band these two lengths give (it grows with s).
#[test]
fn saved_activations_against_transformers() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 2);
    for (name, case) in cases {
        let m = mixer_split(case);
        assert!(m.saved_names().any(|n| n.starts_with("shared block")), "{name}: no shared-block term");
        assert!(!m.saved_names().any(|n| n.contains("adapter")), "{name}: Zamba's block has no adapters");
        let (rest, measured_rest, err) = (m.rest, m.measured_rest, m.rest_error());
        let ratio = m.fallback_ratio();
        println!("{name}: outside the mixers Headroom {rest}, transformers {measured_rest} ({:+.3}%); mixers' fallback / fused model {ratio:.2}", 100.0 * err);
        assert!(err.abs() <= 0.03, "{name}: {:+.3}% outside the mixers", 100.0 * err);
        assert!((7.4..=8.0).contains(&ratio), "{name}: fallback / fused-kernel model {ratio:.2}");
    }
}

/// PEFT adapts every invocation's module of the shared block (transformers ties its
/// parameters, not its modules) and every mixer's `in_proj`; the per-head Δ/B/C projections
/// are parameters, not linears, and cannot be adapted.
#[test]
fn lora_counts_each_invocation() {
    let f = fixture();
    let case = &f["lora"]["tiny@r4"];
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]},
        "training": {"micro_batch": 2, "seq_len": 16, "precision": "bf16-mixed", "optimizer": "adamw", "lora": {"rank": case["rank"], "targets": ["q", "v", "gate", "up", "mixer-in"]}}}))
    .expect("scenario");
    let b = estimate(&s);
    assert_eq!(b.trainable_params, case["trainable_params"].as_u64().unwrap());
}

/// Bad input names the field.
#[test]
fn bad_input_names_the_field() {
    let import = |extra: Value| {
        let mut config = json!({"model_type": "zamba", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4, "n_mamba_heads": 2, "intermediate_size": 128,
            "num_hidden_layers": 2, "layers_block_type": ["mamba", "hybrid"]});
        config.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        headroom::import::hf_config::import_hf_config(&config).map(|_| ()).map_err(|e| e.field)
    };
    assert_eq!(import(json!({})), Ok(()));
    assert_eq!(import(json!({"num_hidden_layers": 3})), Err("num_hidden_layers".into()));
    assert_eq!(import(json!({"layers_block_type": null})), Err("num_hidden_layers".into()));
    assert_eq!(import(json!({"layers_block_type": ["mamba", "attention"]})), Err("layers_block_type".into()));
    assert_eq!(import(json!({"layers_block_type": ["mamba", "mamba"]})), Err("layers_block_type".into()));
    assert_eq!(import(json!({"num_attention_heads": 5})), Err("num_attention_heads".into()));
    assert_eq!(import(json!({"n_mamba_heads": 3})), Err("n_mamba_heads".into()));
    assert_eq!(import(json!({"attention_hidden_size": 64})), Err("attention_hidden_size".into()));
    assert_eq!(import(json!({"layers_block_type": null, "num_hidden_layers": 8, "attn_layer_period": 0})), Err("attn_layer_period".into()));
}
