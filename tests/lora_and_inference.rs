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
/// quantised weight; embeddings, LM head and norms stay 16-bit.
#[test]
fn qlora_shrinks_linear_weights_to_nf4() {
    let mut s = Scenario::default();
    s.training.lora = Some(Lora { rank: 16, base: LoraBase::Nf4, ..Lora::default() });
    let b = estimate(&s);
    let frozen: u64 = b.terms.iter().filter(|t| t.name == "frozen weights").map(|t| t.bytes).sum();
    let edges = 2.0 * 128_256.0 * 4096.0; // embedding + untied LM head
    let norms = 65.0 * 4096.0;
    let linear = 8_030_261_248.0 - edges - norms;
    let expected = linear * (0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0)) + (edges + norms) * 2.0;
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
