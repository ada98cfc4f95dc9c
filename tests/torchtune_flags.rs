//! Published figures reproduced: torchtune's "Optimization flags" table for Llama-3.2-3B
//! (README.md, "### Optimization flags", lines 106–146 of meta-pytorch/torchtune at commit
//! 1814feb17a9038e1a8053ce93111bd26774a8db6, PR #2003 "add flags to readme", 2024-11-18; the
//! figures are unchanged at bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1).
//!
//! What the table states (README lines 108–116): recipe `full_finetune_single_device`, Llama 3.2
//! 3B, batch size 2, max sequence length 4096, precision bf16, one A100; each technique is added
//! on top of the previous one, except LoRA and QLoRA, "which do not use `optimizer_in_bwd` or
//! `AdamW8bit`". The QLoRA command (lines 133–144) adds: packed dataset, compile, chunked CE,
//! activation checkpointing and offloading, `optimizer._component_=torch.optim.AdamW`,
//! `gradient_accumulation_steps=1`, on `llama3_2/3B_qlora_single_device`.
//! From the configs and recipes at that commit:
//! - bf16 is torchtune's pure bf16 (`training.set_default_dtype`, then
//!   `validate_expected_param_dtype`): bf16 weights, gradients and AdamW states, no fp32 master
//!   (Headroom's `"bf16"`).
//! - `3B_{lora,qlora}_single_device.yaml` lines 20–25: `lora_attn_modules: [q_proj, v_proj,
//!   output_proj]`, `apply_lora_to_mlp: True`, `lora_rank: 64`, output projection not adapted;
//!   `qlora_llama3_2_3b` makes every linear of the blocks NF4 (`FrozenNF4Linear` for k_proj and
//!   the unadapted ones; torchao `to_nf4`). The adapters are built in bf16 with the model and
//!   stay bf16 (`"fp32_adapters": false`; PEFT would upcast them, `lora_dtypes.rs`).
//! - `CEWithChunkedOutputLoss` defaults to 8 chunks (`modules/loss/ce_chunked_output_loss.py`);
//!   before the "+ Chunked Cross Entropy" row the loss is the plain `torch.nn.CrossEntropyLoss`
//!   on `self.output(h).float()` (`modules/transformer.py` line 937).
//! - "Peak Memory Active" is `memory_stats()["active_bytes.all.peak"] / 1024**3`
//!   (`training/memory.py` lines 267–269), reset after every logged step: the step's peak of
//!   live blocks in PyTorch's caching allocator. That is Headroom's allocated peak
//!   (`measured::compare`): the total less the CUDA context (not an allocator block) and the
//!   fragmentation allowance (free space in reserved segments), with the cuBLAS/cuBLASLt
//!   workspaces kept (ATen takes them from the caching allocator). Active bytes exceed allocated
//!   bytes only by blocks freed while another stream still uses them (`record_stream`).
//!
//! Which rows Headroom can express:
//! - Baseline (25.5 GiB): no. Unpacked Alpaca is padded per batch to its longest sample, so the
//!   peak depends on the longest pair of samples the epoch drew, which the table does not state.
//! - + Packed Dataset (60.0 GiB): yes, every input is stated. Asserted within 5 %.
//! - \+ Compile (51.0 GiB): yes, every block compiled and the loss eager
//!   (`"compile": true, "compile_loss": false`). Asserted within 5 %.
//! - Every row after it runs `torch.compile` (per-block `compile_model`, and for the chunked
//!   loss `compute_cross_entropy` compiled by `compile_loss`). Those rows are computed without
//!   compile and checked as upper bounds (Inductor's partitioner saves fewer tensors than eager
//!   PyTorch, never more), and through the compile switch in `compiled_rows_through_the_compile_switch`.
//!   The "+ AC" row also depends on an AdamW implementation the table does not state: torch's
//!   default on CUDA (foreach) holds a parameter-sized `_foreach_sqrt` list during `step()`, which
//!   Headroom counts (weights 6.0 + gradients 6.0 + states 12.0 + list 6.0 GiB = 29.9 GiB), while
//!   the Baseline's 25.5 GiB, below weights + gradients + states + that list, suggests the run's
//!   AdamW held no such list (fused or for-loop).

use headroom::measured::predicted;
use headroom::{estimate, Scenario};

const GIB: f64 = (1u64 << 30) as f64;

/// How a row is checked.
enum Check {
    /// Every input stated and expressible: |predicted − published| ≤ tolerance × published.
    Within(f64),
    /// Expressible except `torch.compile`, which only removes saved tensors: the eager
    /// prediction must not be below the published figure.
    EagerUpperBound,
    /// Not expressible: why.
    NotExpressible(&'static str),
}

struct Row {
    name: &'static str,
    /// README line of the row at commit 1814feb17.
    line: u32,
    published_gib: f64,
    /// The scenario's `training` object (model and device are common: `scenario`).
    training: &'static str,
    check: Check,
}

/// The table's rows, cumulative as the README says; each row's error as of this commit in its
/// comment (predicted allocated peak vs published active peak).
const ROWS: [Row; 10] = [
    Row { name: "Baseline", line: 120, published_gib: 25.5, training: "", check: Check::NotExpressible("unpacked Alpaca: sequence lengths per batch not stated") },
    // 57.9 GiB, −3.5 %. Peak at the start of backward: weights 6.0 + AdamW states 12.0 +
    // saved activations 32.1 (28 blocks of 1.0 GiB, the fp32 log-softmax 3.9) + the loss's two
    // fp32 T·V gradient buffers 7.8 GiB. torchtune saves 1.97 GiB that Headroom (which models
    // transformers' modules) does not: `MultiHeadAttention` expands k and v from 8 to all 24
    // heads before SDPA/flex attention (`modules/attention.py` lines 287–290: 2 × 2/3·T·h × 2 B
    // = 64 MiB per block, 1.75 GiB), and the packed batch's `input_pos` gathers a new fp32 RoPE
    // table per call (`self.cache[input_pos]`, `modules/position_embeddings.py`, kept by the
    // rotation's products: 2 × 4 MiB per block, 0.22 GiB). With them: 59.9 GiB (−0.2 %).
    Row {
        name: "+ Packed Dataset",
        line: 121,
        published_gib: 60.0,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "none", "techniques": {"loss": "standard"}}"#,
        check: Check::Within(0.05),
    },
    // The row above with every block compiled and the loss eager: the full recipe drops
    // `compile_loss`'s return value (recipes/full_finetune_single_device.py line 292), so this
    // plain loss is not compiled (`compile_loss: false`); the 9 GiB are the blocks' saved
    // tensors that Inductor recomputes instead — RMSNorm's fp32 input, SiLU and product
    // outputs. Eager, this row read 57.9 GiB (+13.6 %).
    Row {
        name: "+ Compile",
        line: 122,
        published_gib: 51.0,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "none", "techniques": {"loss": "standard", "compile": true, "compile_loss": false}}"#,
        check: Check::Within(0.05),
    },
    // 52.5 GiB, +22.5 %: compile's block savings as above, and the compiled
    // `compute_cross_entropy` keeps each chunk's bf16 logits instead of its fp32 log-softmax
    // (3.9 GiB here), see the next rows.
    Row {
        name: "+ Chunked Cross Entropy",
        line: 123,
        published_gib: 42.9,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "none", "techniques": {"loss": "chunked", "loss_chunks": 8}}"#,
        check: Check::EagerUpperBound,
    },
    // 29.9 GiB, +20.2 %: the optimizer step with foreach AdamW's parameter-sized list (6.0 GiB).
    // Without that list the step is 24.0 GiB (−3.8 %), backward's end a little more.
    Row {
        name: "+ Activation Checkpointing",
        line: 124,
        published_gib: 24.9,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "full", "techniques": {"loss": "chunked", "loss_chunks": 8}}"#,
        check: Check::EagerUpperBound,
    },
    // 25.8 GiB, +11.8 %: peak at the end of forward, where Headroom keeps the eager chunked
    // loss's fp32 log-softmax (3.9 GiB) that the compiled `compute_cross_entropy` does not save;
    // without it the peak moves to the output projection's backward: 23.6 GiB (+2.3 %).
    Row {
        name: "+ Fuse optimizer step into backward",
        line: 125,
        published_gib: 23.1,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "full", "techniques": {"loss": "chunked", "loss_chunks": 8, "optimizer_in_backward": true}}"#,
        check: Check::EagerUpperBound,
    },
    // 24.5 GiB, +12.5 %: as above; without the eager log-softmax 22.3 GiB (+2.4 %).
    Row {
        name: "+ Activation Offloading",
        line: 126,
        published_gib: 21.8,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "full", "techniques": {"loss": "chunked", "loss_chunks": 8, "optimizer_in_backward": true, "activation_offload": true}}"#,
        check: Check::EagerUpperBound,
    },
    // 18.6 GiB, +5.9 % (bitsandbytes 8-bit states visible to the allocator; PagedAdamW8bit's
    // states would be managed memory, outside active bytes, and the figure could not be 17.6);
    // without the eager log-softmax 16.4 GiB (−6.7 %).
    Row {
        name: "+ 8-bit AdamW",
        line: 127,
        published_gib: 17.6,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw-8bit", "checkpointing": "full", "techniques": {"loss": "chunked", "loss_chunks": 8, "optimizer_in_backward": true, "activation_offload": true}}"#,
        check: Check::EagerUpperBound,
    },
    // 13.0 GiB, +53.0 %: the eager log-softmax (3.9 GiB) and one chunk's fp32 upcast (0.5 GiB)
    // at the end of forward, which the compiled loss does not keep: 8.6 GiB (+1.2 %) without
    // them. (The frozen tied head keeps no input and gets no gradient buffers.)
    Row {
        name: "LoRA",
        line: 128,
        published_gib: 8.5,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "full", "techniques": {"loss": "chunked", "loss_chunks": 8, "activation_offload": true}, "lora": {"rank": 64, "targets": ["q", "v", "o", "gate", "up", "down"], "base": "bf16", "fp32_adapters": false}}"#,
        check: Check::EagerUpperBound,
    },
    // 9.1 GiB, +97 %: as LoRA, on 2.1 GiB of NF4 weights. torchtune's QLoRA keeps the
    // embeddings and norms in bf16 (`fp32_unquantised: false`; PEFT would cast them to fp32).
    Row {
        name: "QLoRA",
        line: 129,
        published_gib: 4.6,
        training: r#"{"micro_batch": 2, "seq_len": 4096, "grad_accum": 1, "precision": "bf16", "attention": "sdpa", "optimizer": "adamw", "checkpointing": "full", "techniques": {"loss": "chunked", "loss_chunks": 8, "activation_offload": true}, "lora": {"rank": 64, "targets": ["q", "v", "o", "gate", "up", "down"], "base": "nf4", "fp32_unquantised": false, "fp32_adapters": false}}"#,
        check: Check::EagerUpperBound,
    },
];

/// The scenario of a row: its `training` object on Llama-3.2-3B (tied embeddings, as
/// torchtune's `llama3_2_3b`) and an A100 80GB. SDPA stands for the flex attention torchtune
/// runs on packed batches (`modules/attention_utils.py`): both save q, k, v, the output and a
/// logsumexp. Every row: pure bf16, micro-batch 2 × 4096 packed tokens, no accumulation.
fn scenario(row: &Row) -> Scenario {
    let json = format!(r#"{{"model": {{"preset": "meta-llama/Llama-3.2-3B"}}, "device": {{"preset": "a100-80gb"}}, "training": {}}}"#, row.training);
    let decoded = Scenario::from_json(&json).unwrap_or_else(|e| panic!("{}: {e}", row.name));
    assert!(decoded.warnings.is_empty(), "{}: {:?}", row.name, decoded.warnings);
    decoded.scenario
}

/// Headroom's allocated peak for a scenario: the breakdown split as `headroom check` splits it.
fn allocated_peak(s: &Scenario) -> f64 {
    predicted(&estimate(s)).allocated_peak as f64
}

#[test]
fn torchtune_optimization_flags_table() {
    let mut report = String::from("| row | published GiB | predicted GiB | error |\n|---|---:|---:|---:|\n");
    let mut failures = Vec::new();
    for row in &ROWS {
        if let Check::NotExpressible(why) = row.check {
            report.push_str(&format!("| {} (README L{}) | {:.1} | — | not expressible: {why} |\n", row.name, row.line, row.published_gib));
            continue;
        }
        let predicted = allocated_peak(&scenario(row)) / GIB;
        let error = (predicted - row.published_gib) / row.published_gib;
        report.push_str(&format!("| {} (README L{}) | {:.1} | {predicted:.2} | {:+.1} % |\n", row.name, row.line, row.published_gib, 100.0 * error));
        match row.check {
            Check::Within(tolerance) if error.abs() > tolerance => {
                failures.push(format!("{}: {predicted:.2} GiB vs published {} GiB ({:+.1} %, tolerance {:.0} %)", row.name, row.published_gib, 100.0 * error, 100.0 * tolerance))
            }
            Check::EagerUpperBound if predicted < row.published_gib => {
                failures.push(format!("{}: eager prediction {predicted:.2} GiB is below the compiled run's {} GiB", row.name, row.published_gib))
            }
            _ => {}
        }
    }
    eprintln!("{report}");
    assert!(failures.is_empty(), "{}\n{report}", failures.join("\n"));
}

/// The rows torchtune ran with its chunked loss compiled (`compile_loss` on
/// `compute_cross_entropy`) and every block compiled, through Headroom's `compile` switch
/// (`Techniques.compile`: Inductor's saved tensors, measured on the CPU in compile.json). The
/// three full-fine-tuning rows whose only other switches Headroom models to the byte, and
/// LoRA (+3.6 %; +13.3 % while the recompute moment was counted on top of the logits the
/// compiled loss has freed by then, `ledger.rs`), are held within 5 %; the others are listed,
/// not asserted: the checkpointing row (+20 %: Headroom assumes torch's foreach AdamW, whose
/// step-time list the run's below-states baseline shows it did not make), the 8-bit row
/// (bitsandbytes' paged states live in managed memory, outside active bytes) and QLoRA
/// (+6.7 %; +22.6 % while Headroom applied PEFT's fp32 cast of the unquantised weights to
/// every QLoRA run, which torchtune's own QLoRA does not do: `Lora::fp32_unquantised`).
#[test]
fn compiled_rows_through_the_compile_switch() {
    const HELD: [&str; 4] = ["+ Chunked Cross Entropy", "+ Fuse optimizer step into backward", "+ Activation Offloading", "LoRA"];
    let mut report = String::new();
    let mut failures = Vec::new();
    for row in ROWS.iter().filter(|r| matches!(r.check, Check::EagerUpperBound)) {
        let mut s = scenario(row);
        s.training.techniques.compile = true;
        let predicted = allocated_peak(&s) / GIB;
        let error = (predicted - row.published_gib) / row.published_gib;
        report.push_str(&format!("{}: published {:.1} GiB, compiled prediction {predicted:.2} GiB ({:+.1} %)\n", row.name, row.published_gib, 100.0 * error));
        if HELD.contains(&row.name) && error.abs() > 0.05 {
            failures.push(row.name);
        }
    }
    eprintln!("{report}");
    assert!(failures.is_empty(), "{failures:?}\n{report}");
}
