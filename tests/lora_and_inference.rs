//! Published figures for LoRA, QLoRA and the inference KV cache, through the whole planner:
//! trainable counts and NF4 sizes (Hu et al. 2021; Dettmers et al. 2023) and Llama-3-8B's
//! 128 KiB per cached token (memory-formulas.md §A4, §A7).

use headroom::estimate;
use headroom::scenario::{Lora, LoraBase, Mode, Scenario};

/// memory-formulas.md §A4: Llama-3-8B, all seven projections, r = 16 → 41,943,040
/// trainable parameters (r·(d_in + d_out) per adapted linear).
#[test]
fn llama3_8b_lora_r16_trainable_count() {
    let mut s = Scenario::default();
    s.training.lora = Some(Lora { rank: 16, ..Lora::default() });
    let b = estimate(&s);
    assert_eq!(b.trainable_params, 41_943_040);
    // Frozen bf16 base: 2 B per base parameter plus the fp32 adapters.
    assert_eq!(b.parameters, 2 * 8_030_261_248 + 4 * 41_943_040);
}

/// QLoRA (Dettmers et al. 2023): NF4 with double quantisation costs 0.516 B per
/// quantised weight; embeddings, LM head and norms are not quantised, and PEFT's
/// `prepare_model_for_kbit_training` casts them to fp32 (measured in `lora.json`).
#[test]
fn qlora_shrinks_linear_weights_to_nf4() {
    let mut s = Scenario::default();
    s.training.lora = Some(Lora { rank: 16, base: LoraBase::Nf4, ..Lora::default() });
    let b = estimate(&s);
    let frozen: u64 = b.terms.iter().filter(|t| t.name == "frozen weights").map(|t| t.bytes).sum();
    let edges = 2.0 * 128_256.0 * 4096.0; // embedding + untied LM head
    let norms = 65.0 * 4096.0;
    let linear = 8_030_261_248.0 - edges - norms;
    let expected = linear * (0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0)) + (edges + norms) * 4.0;
    assert!((frozen as f64 - expected).abs() / expected < 1e-6, "{frozen} vs {expected}");
}

/// Llama-3(.1)-8B in bf16 caches 2·32·8·128·2 = 131,072 B = 128 KiB per token
/// (memory-formulas.md §A7).
#[test]
fn llama3_8b_kv_cache_is_128_kib_per_token() {
    let mut s = Scenario::default();
    s.training.mode = Mode::Inference;
    s.training.seq_len = 8192;
    let b = estimate(&s);
    let kv: u64 = b.terms.iter().filter(|t| t.name == "KV cache").map(|t| t.bytes).sum();
    assert_eq!(kv, 131_072 * 8192);
    assert_eq!(b.gradients + b.optimizer_states, 0);
    // bf16 weights: 2 bytes per parameter.
    assert_eq!(b.parameters, 2 * 8_030_261_248);
}

fn lora_fixture() -> serde_json::Value {
    let path = format!("{}/tests/fixtures/measured/lora.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("lora.json")
}

/// The tiny Llama of `lora.json` under QLoRA (NF4, double quantisation, r 16), as a scenario;
/// `fp32_unquantised`: PEFT's cast of the other weights (true) or torchtune's none (false).
fn tiny_qlora(checkpointing: &str, fp32_unquantised: bool) -> headroom::Breakdown {
    let f = lora_fixture();
    let config = &f["cases"][0]["scenario"]["model"]["hf_config"];
    let text = serde_json::json!({
        "model": {"hf_config": config},
        "training": {"precision": "bf16", "micro_batch": 2, "seq_len": 256, "checkpointing": checkpointing,
                     "lora": {"rank": 16, "base": "nf4", "double_quant": true, "dropout": 0.05,
                              "fp32_unquantised": fp32_unquantised}},
    })
    .to_string();
    estimate(&Scenario::from_json(&text).expect("scenario").scenario)
}

/// PEFT's `prepare_model_for_kbit_training` on a real bitsandbytes 4-bit tiny Llama on the CPU
/// (`lora.json`, `qlora_cpu`): embeddings, head and norms go from bf16 to fp32, the 4-bit
/// weights stay. The model's frozen weights equal the measured parameters to 0.03 % (the
/// difference: bitsandbytes' per-linear code tables, 30,576 B, not modelled); the 16-bit model
/// goes through the same cast, and only the k-bit model gets input-embedding gradients (for
/// reentrant checkpointing, which the checkpointing terms already assume: every block keeps its
/// input).
#[test]
fn qlora_preparation_upcasts_the_unquantised_weights_to_fp32() {
    let f = lora_fixture();
    let q = &f["qlora_cpu"];
    let bytes = |part: &str, key: &str| q[part][key].as_f64().unwrap_or_else(|| panic!("{part} {key}"));
    for key in ["embed_tokens", "lm_head", "norm"] {
        assert_eq!(bytes("nf4_after_prepare", &format!("{key} float32")), 2.0 * bytes("nf4_before", &format!("{key} bfloat16")), "{key}");
    }
    assert_eq!(bytes("nf4_after_prepare", "linear4bit uint8"), bytes("nf4_before", "linear4bit uint8"));
    assert_eq!(q["nf4_input_embeddings_require_grad"], true);
    assert_eq!(q["bf16_input_embeddings_require_grad"], false);
    let measured = ["embed_tokens float32", "lm_head float32", "norm float32", "linear4bit uint8"].iter().map(|k| bytes("nf4_after_prepare", k)).sum::<f64>()
        + q["nf4_quant_state_bytes"].as_f64().expect("quant state");
    let b = tiny_qlora("none", true);
    let frozen = b.terms.iter().find(|t| t.name == "frozen weights").expect("frozen").bytes as f64;
    assert!((frozen - measured).abs() / measured < 3e-4, "{frozen} vs {measured}");
    // The fp32 embeddings make the residual stream fp32: each checkpointed block keeps 4·T·h.
    let ckpt = tiny_qlora("full", true);
    let inputs = ckpt.terms.iter().find(|t| t.name == "block inputs (full checkpointing)").expect("block inputs").bytes;
    assert_eq!(inputs, 4 * 4 * 512 * 512);
}

/// torchtune's QLoRA builds the model in bf16 and casts nothing to fp32: the unquantised
/// weights keep their bf16 bytes as measured before PEFT's preparation (`lora.json`,
/// `qlora_cpu.nf4_before`), beside the same 4-bit linears, and the residual stream stays bf16.
#[test]
fn qlora_without_preparation_keeps_the_unquantised_weights_in_bf16() {
    let f = lora_fixture();
    let before = &f["qlora_cpu"]["nf4_before"];
    let bytes = |key: &str| before[key].as_f64().unwrap_or_else(|| panic!("{key}"));
    let measured = ["embed_tokens bfloat16", "lm_head bfloat16", "norm bfloat16", "linear4bit uint8"].iter().map(|k| bytes(k)).sum::<f64>()
        + f["qlora_cpu"]["nf4_quant_state_bytes"].as_f64().expect("quant state");
    let frozen = |b: &headroom::Breakdown| b.terms.iter().find(|t| t.name == "frozen weights").expect("frozen").bytes as f64;
    let b = tiny_qlora("none", false);
    // Exact but for bitsandbytes' per-linear code tables (30,576 B), not modelled, as above.
    assert_eq!(measured - frozen(&b), 30_576.0);
    assert!(frozen(&b) < frozen(&tiny_qlora("none", true)));
    let ckpt = tiny_qlora("full", false);
    let inputs = ckpt.terms.iter().find(|t| t.name == "block inputs (full checkpointing)").expect("block inputs").bytes;
    assert_eq!(inputs, 2 * 4 * 512 * 512);
}

/// bitsandbytes dequantises one 4-bit weight per matmul (`MatMul4Bit`): the model's transient is
/// the largest linear's weight (gate/up/down, 1792 × 512) in the 16-bit compute dtype plus the
/// fp32 absmax the double quantisation rebuilds (one per 64 weights): two copies in the CUDA
/// forward fallback past 1536 tokens, one otherwise (derived from bitsandbytes 0.50.2's source,
/// CUDA only). The CPU run of bitsandbytes' default kernel (`lora.json`, `qlora_cpu.linear4bit`)
/// measures the pieces: the dequantised weight and one absmax copy.
#[test]
fn qlora_dequantises_one_linear_weight_at_a_time() {
    let f = lora_fixture();
    let lin = &f["qlora_cpu"]["linear4bit"];
    let (n, k) = (lin["out_features"].as_f64().unwrap(), lin["in_features"].as_f64().unwrap());
    let largest = |dir: &str, i: usize| lin[dir]["largest"][i][3].as_f64().expect("size");
    // CPU: dequantize_4bit's output and the rebuilt absmax.
    assert_eq!(largest("forward", 0), n * k * 2.0);
    assert_eq!(largest("forward", 2), n * k / 64.0 * 4.0);
    assert_eq!(lin["backward"]["largest"][0][0], "bitsandbytes.dequantize_4bit.default");
    assert_eq!(largest("backward", 0), n * k * 2.0);
    // 512 tokens (≤ 1536): one absmax copy; the CPU forward transient is exactly that.
    let b = tiny_qlora("none", true);
    let term = b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == "NF4 weight dequantised (one linear)").expect("dequant term");
    assert_eq!(term.bytes as f64, n * k * (2.0 + 4.0 / 64.0));
    assert_eq!(term.bytes as f64, lin["forward"]["transient_bytes"].as_f64().unwrap());
    assert_eq!(term.lifetime, headroom::model::breakdown::Lifetime::Transient(headroom::model::breakdown::Moment::Dequantize));
    // Llama-3-8B, 4096 tokens: the MLP weight (14336 × 4096) with two absmax copies, on top of
    // the recomputed block under full checkpointing.
    let mut s = Scenario::default();
    s.training.lora = Some(Lora { base: LoraBase::Nf4, ..Lora::default() });
    s.training.checkpointing = headroom::scenario::Checkpointing::Full;
    let b = estimate(&s);
    let term = b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name == "NF4 weight dequantised (one linear)").expect("dequant term");
    assert_eq!(term.bytes as f64, 14336.0 * 4096.0 * (2.0 + 8.0 / 64.0));
    assert_eq!(term.lifetime, headroom::model::breakdown::Lifetime::Transient(headroom::model::breakdown::Moment::Recompute));
}
