//! OLMo-Hybrid against transformers (`tests/measure/olmo_hybrid.py`,
//! `tests/fixtures/measured/olmo_hybrid.json`):
//! - parameter counts of `OlmoHybridForCausalLM` on the meta device for the class default
//!   config and variants: tied head, grouped KV heads with attention biases, explicit
//!   linear-attention heads and widths, a given layer list, 3 layers (the last one attention);
//! - the bytes of transformers' own cache (`DynamicCache`) after a prefill: conv and recurrent
//!   states of the Gated DeltaNet layers, K/V of the attention layers, fp32 and bf16;
//! - the tensors the whole model saves for backward on CPU (fp32), the Gated DeltaNet's torch
//!   fallbacks apart.

use headroom::model::arch::{Architecture, Scope};
use serde_json::{json, Value};

mod hybrid_cases;
use hybrid_cases::{mixer_split, states_equal_cache};

fn fixture() -> Value {
    hybrid_cases::fixture("olmo_hybrid.json")
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
        assert_eq!(t.blocks(Scope::Attention), case["attention_layers"].as_u64().unwrap(), "{name}");
    }
}

#[test]
fn states_equal_transformers_cache() {
    states_equal_cache(&fixture(), 2);
}

/// Everything but the Gated DeltaNet mixers within 3 % of what transformers saves on CPU
/// (fp32, batch 2, s = 64 and 128); the mixers' torch fallbacks against Headroom's
/// fused-kernel model are printed.
#[test]
fn saved_activations_against_transformers() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 2);
    for (name, case) in cases {
        let m = mixer_split(case);
        let (rest, measured_rest, err) = (m.rest, m.measured_rest, m.rest_error());
        let ratio = m.fallback_ratio();
        println!("{name}: outside the mixers Headroom {rest}, transformers {measured_rest} ({:+.3}%); mixers' fallback / fused model {ratio:.2}", 100.0 * err);
        assert!(err.abs() <= 0.03, "{name}: {:+.3}% outside the mixers", 100.0 * err);
    }
}

/// Bad input names the field.
#[test]
fn bad_input_names_the_field() {
    let import = |extra: Value| {
        let mut config = json!({"model_type": "olmo_hybrid", "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "num_hidden_layers": 4});
        config.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        headroom::import::hf_config::import_hf_config(&config).map(|_| ()).map_err(|e| e.field)
    };
    assert_eq!(import(json!({})), Ok(()));
    assert_eq!(import(json!({"layer_types": ["full_attention", "full_attention", "full_attention", "full_attention"]})), Err("layer_types".into()));
    assert_eq!(import(json!({"layer_types": ["linear_attention", "linear_attention", "linear_attention", "linear_attention"]})), Err("layer_types".into()));
    assert_eq!(import(json!({"layer_types": ["linear_attention", "full_attention"]})), Err("layer_types".into()));
    assert_eq!(import(json!({"layer_types": ["linear_attention", "full_attention", "mlp", "linear_attention"]})), Err("layer_types".into()));
}
