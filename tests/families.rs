//! Property tests over generated `config.json`s of every supported family: each imports,
//! the planner trains exactly the parameters the architecture counts, the count grows by the
//! same block each time a layer is added, and memory never falls when the model gets deeper
//! or wider.

use headroom::estimate;
use headroom::import::hf_config::{import_hf_config, SUPPORTED_MODEL_TYPES};
use headroom::scenario::{ModelSpec, Scenario};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A config of `family` with the given shape, in that family's own key names.
fn config(family: &str, layers: u64, heads: u64, kv_div: u64, head_dim: u64, ffn: u64, vocab: u64) -> Value {
    let h = heads * head_dim;
    let kv = (heads / kv_div).max(1);
    let usual = json!({
        "model_type": family, "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
        "num_key_value_heads": kv, "head_dim": head_dim, "intermediate_size": ffn, "vocab_size": vocab,
    });
    let mut c = usual.as_object().cloned().unwrap_or_default();
    let mut set = |pairs: Value| c.extend(pairs.as_object().cloned().unwrap_or_default());
    match family {
        "gpt2" => set(json!({"n_embd": h, "n_layer": layers, "n_head": heads, "n_inner": ffn, "n_positions": 64})),
        "bert" | "roberta" => set(json!({"num_key_value_heads": heads, "max_position_embeddings": 64})),
        "vit" => set(json!({"num_key_value_heads": heads, "image_size": 64, "patch_size": 16, "num_labels": 10})),
        "t5" => set(json!({"d_model": h, "d_kv": head_dim, "d_ff": ffn, "num_layers": layers, "num_decoder_layers": layers, "num_heads": heads})),
        "falcon" => set(json!({"new_decoder_architecture": true, "num_kv_heads": kv, "ffn_hidden_size": ffn})),
        "mixtral" | "granitemoe" | "gpt_oss" => set(json!({"num_local_experts": 4, "num_experts_per_tok": 2})),
        "qwen2_moe" => set(json!({"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "shared_expert_intermediate_size": ffn})),
        "qwen3_moe" => set(json!({"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2})),
        "deepseek_v2" | "deepseek_v3" | "deepseek_v32" => set(json!({
            "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "n_shared_experts": 1,
            "first_k_dense_replace": 1, "q_lora_rank": h / 2, "kv_lora_rank": h / 4, "qk_nope_head_dim": head_dim,
            "qk_rope_head_dim": head_dim / 2, "v_head_dim": head_dim, "n_group": 1, "topk_group": 1,
        })),
        "gptj" | "codegen" => set(json!({"n_embd": h, "n_layer": layers, "n_head": heads, "n_inner": ffn, "rotary_dim": head_dim / 2})),
        "gpt_bigcode" => set(json!({"n_embd": h, "n_layer": layers, "n_head": heads, "n_inner": ffn, "n_positions": 64})),
        "opt" => set(json!({"ffn_dim": ffn, "max_position_embeddings": 64})),
        "gpt_neo" => set(json!({"num_layers": layers, "num_heads": heads, "max_position_embeddings": 64, "window_size": 16})),
        "bloom" => set(json!({"n_layer": layers, "n_head": heads})),
        "mpt" => set(json!({"d_model": h, "n_layers": layers, "n_heads": heads})),
        "dbrx" => set(json!({
            "d_model": h, "n_layers": layers, "n_heads": heads, "attn_config": {"kv_n_heads": kv},
            "ffn_config": {"ffn_hidden_size": ffn, "moe_num_experts": 4, "moe_top_k": 2},
        })),
        "llama4_text" => set(json!({"intermediate_size_mlp": ffn, "num_local_experts": 4, "num_experts_per_tok": 1})),
        "olmoe" | "hunyuan_v1_moe" => set(json!({"num_experts": 4, "num_experts_per_tok": 2, "moe_topk": 2})),
        "phimoe" | "minimax_m2" | "granitemoe_swa" => set(json!({"num_local_experts": 4, "num_experts_per_tok": 2})),
        "flex_olmo" | "cohere2_moe" => set(json!({"num_experts": 4, "num_experts_per_tok": 2})),
        "mellum" => set(json!({"num_local_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2})),
        "exaone_moe" | "hy_v3" => set(json!({"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "num_shared_experts": 1})),
        "granitemoeshared" => set(json!({"num_local_experts": 4, "num_experts_per_tok": 2, "shared_intermediate_size": ffn})),
        "glm4_moe" | "sarvam_moe" | "dots1" => set(json!({
            "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
        })),
        "ernie4_5_moe" => set(json!({"moe_num_experts": 4, "moe_k": 2, "moe_intermediate_size": ffn / 2, "moe_layer_end_index": layers - 1})),
        "minicpm3" | "youtu" => set(json!({
            "q_lora_rank": h / 2, "kv_lora_rank": h / 4, "qk_nope_head_dim": head_dim, "qk_rope_head_dim": head_dim / 2, "v_head_dim": head_dim,
        })),
        "glm4_moe_lite" | "glm_moe_dsa" => set(json!({
            "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
            "q_lora_rank": h / 2, "kv_lora_rank": h / 4, "qk_nope_head_dim": head_dim, "qk_rope_head_dim": head_dim / 2, "v_head_dim": head_dim,
        })),
        "sarvam_mla" => set(json!({
            "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "n_shared_experts": 1,
            "first_k_dense_replace": 1, "q_lora_rank": h / 2, "kv_lora_rank": h / 4, "qk_nope_head_dim": head_dim,
            "qk_rope_head_dim": head_dim / 2, "v_head_dim": head_dim, "n_group": 1, "topk_group": 1,
        })),
        // Nemotron-H counts its blocks from the pattern: one Mamba-2 block per layer.
        "nemotron_h" => {
            set(json!({"hybrid_override_pattern": "M".repeat(layers as usize), "mamba_num_heads": 2 * heads, "mamba_head_dim": head_dim, "n_groups": 1, "ssm_state_size": 16}))
        }
        // Zamba2: every layer hybrid (its Mamba-2 block and its own linear, the one shared
        // block invoked each time), so each added layer adds the same block.
        "zamba2" => set(json!({"layers_block_type": vec!["hybrid"; layers as usize], "n_mamba_heads": heads, "mamba_d_state": 16, "adapter_rank": 4})),
        // Zamba: every layer hybrid (its multi-head Mamba block and its own linear, the one
        // shared block invoked each time), so each added layer adds the same block.
        "zamba" => set(json!({"layers_block_type": vec!["hybrid"; layers as usize], "n_mamba_heads": 2, "mamba_d_state": 16})),
        // LFM2-MoE: every layer a short convolution with the MoE block (no dense lead layers),
        // so each added layer adds the same block.
        "lfm2_moe" => {
            set(json!({"layer_types": vec!["conv"; layers as usize], "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": ffn / 2, "num_dense_layers": 0}))
        }
        // Gemma 3n: no shared-KV layers (the default of 15 needs more layers than the property
        // draws) and every layer global, so each added layer adds the same block.
        "gemma3n_text" => set(json!({"num_kv_shared_layers": 0, "layer_types": vec!["full_attention"; layers as usize]})),
        "gemma4_text" => set(json!({
            "layer_types": vec!["full_attention"; layers as usize], "global_head_dim": 2 * head_dim, "vocab_size_per_layer_input": vocab,
            "hidden_size_per_layer_input": 8, "enable_moe_block": true, "num_experts": 4, "top_k_experts": 2, "moe_intermediate_size": ffn / 2,
        })),
        "resnet" => return json!({"model_type": "resnet", "hidden_sizes": [ffn, 2 * ffn], "depths": [layers, layers], "embedding_size": h}),
        _ => {}
    }
    Value::Object(c)
}

/// Hybrids whose default schedule puts attention (or experts) in every n-th block only:
/// Jamba (attention 1 in 8, experts 1 in 2), Qwen3-Next, Qwen3.5 and OLMo-Hybrid (attention 1
/// in 4; OLMo-Hybrid requires both kinds, so no list makes its blocks alike), and mllama's text
/// model, whose default `cross_attention_layers` (3, 8, …, 38) make those blocks
/// cross-attention layers (2 · head_dim + 2 parameters more).
const PERIODIC_HYBRIDS: &[&str] = &["jamba", "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "olmo_hybrid", "mllama_text_model"];

fn shape() -> impl Strategy<Value = (usize, u64, u64, u64, u64, u64, u64)> {
    (0..SUPPORTED_MODEL_TYPES.len(), 2u64..6, 1u32..4, 0u32..3, 3u32..6, 1u64..5, 6u32..12).prop_map(|(f, layers, heads_log, kv_log, dim_log, ffn_mult, vocab_log)| {
        let heads = 1 << heads_log;
        let head_dim = 1 << dim_log;
        (f, layers, heads, 1 << kv_log.min(heads_log), head_dim, ffn_mult * heads * head_dim, 1 << vocab_log)
    })
}

/// Parameter count, fp32 weight bytes the planner puts on the one GPU, and its total.
fn training_total(config: &Value) -> (f64, u64, u64) {
    let model = ModelSpec::from_hf_config(config.clone()).unwrap_or_else(|e| panic!("{config}: {e}"));
    let params = model.architecture().map(|a| a.param_count()).unwrap_or(0.0);
    let mut s = Scenario { model, ..Scenario::default() };
    s.training.seq_len = 64;
    s.training.precision = headroom::model::precision::Precision::Fp32;
    let b = estimate(&s);
    (params, b.phases.optimizer_step.parameters, b.total)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_family_imports_and_trains_what_it_counts((f, layers, heads, kv_div, head_dim, ffn, vocab) in shape()) {
        let family = SUPPORTED_MODEL_TYPES[f];
        let c = config(family, layers, heads, kv_div, head_dim, ffn, vocab);
        let imported = import_hf_config(&c);
        prop_assert!(imported.is_ok(), "{family}: {:?}", imported.err());
        // fp32 training on one GPU holds every parameter once, 4 bytes each: the layout places
        // every part (dense and MoE blocks, cross-attention, edges) exactly once.
        let (params, weight_bytes, _) = training_total(&c);
        prop_assert_eq!(4.0 * params, weight_bytes as f64, "{}: weights on the GPU differ from the parameter count", family);
    }

    /// The count is affine in depth: every added block adds the same parameters (from the
    /// second block on, past DeepSeek's dense first block).
    #[test]
    fn each_added_layer_adds_the_same_block((f, layers, heads, kv_div, head_dim, ffn, vocab) in shape()) {
        let family = SUPPORTED_MODEL_TYPES[f];
        prop_assume!(family != "resnet");
        // Hybrids with a periodic schedule (attention every n-th block) add different blocks.
        prop_assume!(!PERIODIC_HYBRIDS.contains(&family));
        let count = |l| training_total(&config(family, l, heads, kv_div, head_dim, ffn, vocab)).0;
        let (a, b, c) = (count(layers), count(layers + 1), count(layers + 2));
        prop_assert_eq!(b - a, c - b, "{}", family);
        prop_assert!(b > a);
    }

    /// Memory never falls when the model gets deeper or wider (same batch and sequence).
    #[test]
    fn deeper_or_wider_never_needs_less_memory((f, layers, heads, kv_div, head_dim, ffn, vocab) in shape()) {
        let family = SUPPORTED_MODEL_TYPES[f];
        let base = training_total(&config(family, layers, heads, kv_div, head_dim, ffn, vocab)).2;
        let deeper = training_total(&config(family, layers + 1, heads, kv_div, head_dim, ffn, vocab)).2;
        let wider = training_total(&config(family, layers, heads, kv_div, head_dim * 2, ffn * 2, vocab)).2;
        prop_assert!(deeper >= base, "{family}: {base} → deeper {deeper}");
        prop_assert!(wider >= base, "{family}: {base} → wider {wider}");
    }
}
