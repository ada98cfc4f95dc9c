//! Published figures reproduced: LitGPT's resource table for LoRA fine-tuning on one GPU
//! (Lightning-AI/litgpt `tutorials/resource-tables.md`, "Finetuning with LoRA on 1 GPU",
//! last updated 10/20/2023, LitGPT commit 8641822, PyTorch 2.1.0, one A100-SXM4-40GB).
//!
//! What the page states: `finetune/lora.py`, `--precision bf16-true` (pure bf16, Headroom's
//! `"bf16"`), the Alpaca dataset "with its default length", whose longest example is 1,304
//! Llama 2 tokens; micro-batch 1 or 2. The trainable counts it prints fix the adapters:
//! 4,194,304 on Llama 2 7B = 32 blocks × r 8 × (4096 + 4096) × 2, i.e. rank 8 on the query
//! and value projections only (the script's `lora_query=True, lora_value=True` defaults), and
//! 6,553,600 on 13B likewise. The rest from the script of that time and LitGPT's model:
//! `lora_dropout=0.05`; the loss is `chunked_cross_entropy` over the model's
//! `lm_head_chunk_size=128` output (⌈1304 / 128⌉ = 11 chunks); SDPA attention; no activation
//! checkpointing; LoRA weights built in bf16 with the model (`fabric.init_module`). Batches are
//! padded to their longest sample, so the run's peak is at the longest one: 1,304 tokens.
//! "Max GPU RAM" is `torch.cuda.max_memory_allocated() / 1e9` as lit-gpt's fine-tuning scripts
//! print it ("Memory used: … GB"): Headroom's allocated peak, in decimal GB.
//!
//! Each row's error is printed; the rows are held to the issue's bar for published runs:
//! median |error| ≤ 5 % and every row within 10 %. As of this commit: −5.0 %, −7.3 %, −4.3 %
//! (median 5.0 %). Before the LitGPT profile kept its adapters in bf16 and ran its loss on bf16
//! chunks (they were counted as PEFT's, each adapted linear saving an fp32 copy of its input,
//! and torchtune's fp32-upcast chunks) the rows read −1.3 %, −1.9 %, −1.2 %: closer, for copies
//! LitGPT does not make (`litgpt_lora.rs` measures LitGPT's own modules: the adapters' shared
//! bf16 input and the bf16 log-softmax to the byte, and the whole forward 5.4–6.0 % above
//! Headroom's transformers-shaped blocks, from LitGPT-only tensors such as the zero-padded QKV
//! update of `LoRAQKVLinear`). The 2023 modules the table ran are not measured here.

use headroom::measured::predicted;
use headroom::{estimate, Scenario};

struct Row {
    model: &'static str,
    micro_batch: u64,
    published_gb: f64,
}

const ROWS: [Row; 3] = [
    Row { model: "llama-2-7b", micro_batch: 1, published_gb: 21.30 },
    Row { model: "llama-2-7b", micro_batch: 2, published_gb: 29.07 },
    Row { model: "llama-2-13b", micro_batch: 1, published_gb: 38.12 },
];

/// The row as the LitGPT profile gives it: only what the table and the script fix is written.
fn scenario(row: &Row) -> Scenario {
    let json = format!(
        r#"{{"model": {{"preset": "{}"}}, "device": {{"preset": "a100-40gb"}}, "framework": "litgpt",
            "training": {{"micro_batch": {}, "seq_len": 1304, "attention": "sdpa", "techniques": {{"loss_chunks": 11}},
                          "lora": {{"rank": 8, "targets": ["q", "v"], "dropout": 0.05}}}}}}"#,
        row.model, row.micro_batch
    );
    let decoded = Scenario::from_json(&json).unwrap_or_else(|e| panic!("{}: {e}", row.model));
    assert!(decoded.warnings.is_empty(), "{:?}", decoded.warnings);
    decoded.scenario
}

fn allocated_peak(s: &Scenario) -> f64 {
    predicted(&estimate(s)).allocated_peak as f64
}

#[test]
fn litgpt_lora_resource_table() {
    let mut errors = Vec::new();
    for row in &ROWS {
        let s = scenario(row);
        // The profile's switches, as the script runs.
        assert_eq!(s.training.precision, headroom::model::precision::Precision::Bf16);
        assert!(!s.training.lora.as_ref().expect("lora").fp32_adapters);
        let predicted = allocated_peak(&s) / 1e9;
        let error = (predicted - row.published_gb) / row.published_gb;
        println!("{} micro-batch {}: published {:.2} GB, predicted {predicted:.2} GB ({:+.1} %)", row.model, row.micro_batch, row.published_gb, 100.0 * error);
        errors.push(error.abs());
    }
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    assert!(median <= 0.05, "median |error| {:.1} %", 100.0 * median);
    assert!(errors.iter().all(|e| *e <= 0.10), "{errors:?}");
}
