//! Hugging Face text-generation-inference's memory plan, from its source
//! (`server/text_generation_server/models/flash_causal_lm.py` `FlashCausalLM.warmup`):
//! - warm-up runs one prefill of `--max-batch-prefill-tokens` tokens (default 4096), whose
//!   activations stay in PyTorch's cache, with its KV blocks allocated;
//! - then `free_memory = get_free_memory(device, MEMORY_FRACTION)`, the free memory less
//!   `(1 − --cuda-memory-fraction)` × the total (`utils/import_utils.py`), and
//!   `num_blocks = (free_memory × TGI_WIGGLE_ROOM) // block bytes + the warm-up's blocks`,
//!   `TGI_WIGGLE_ROOM` = 0.90 (`models/globals.py`);
//! - the router prints "Setting max batch total tokens to N" (blocks × `BLOCK_SIZE`, 1 with the
//!   default flashinfer attention).

use super::activation::forward_peak;
use super::kv::KvGeometry;
use super::shared::{add_process_overhead, add_weights, EngineInputs, ServingReport};
use crate::model::breakdown::{Component, Lifetime};
use crate::model::inputs::Engine;
use crate::model::ledger::Ledger;
use crate::model::overhead::CUDA_CONTEXT;

/// `TGI_WIGGLE_ROOM`'s default (`models/globals.py`).
const WIGGLE_ROOM: f64 = 0.90;

/// `--max-batch-prefill-tokens`' default (`launcher/src/main.rs`).
const DEFAULT_PREFILL_TOKENS: u64 = 4096;

/// TGI's plan for one GPU.
pub fn plan(inputs: &EngineInputs, ledger: &mut Ledger) -> ServingReport {
    let s = &inputs.training.serving;
    let total = super::shared::cuda_total(inputs.device);
    let fraction = s.gpu_memory_utilization.unwrap_or(1.0);
    let prefill = s.max_num_batched_tokens.unwrap_or(DEFAULT_PREFILL_TOKENS).max(1);
    let block = s.block_size.unwrap_or(1).max(1);
    let max_model_len = inputs.max_model_len();
    let mut report = ServingReport {
        engine: Engine::Tgi,
        block_size: block,
        max_model_len,
        max_num_seqs: s.max_num_seqs.unwrap_or(0),
        max_num_batched_tokens: prefill,
        memory_fraction: fraction,
        budget_bytes: (total * fraction) as u64,
        ..ServingReport::default()
    };
    let weights = add_weights(inputs, "weights", ledger);
    let nccl = add_process_overhead(inputs, ledger);
    let Some(t) = inputs.arch.transformer() else { return report };
    let activation_bytes = inputs.training.precision.activation_bytes() as f64;
    let warmup = forward_peak(t, inputs.layout.tp, prefill, activation_bytes);
    ledger.add(
        Component::Temporary,
        "warm-up prefill (kept in PyTorch's cache)",
        warmup,
        "one prefill of --max-batch-prefill-tokens through the busiest block (TGI FlashCausalLM.warmup)",
        Lifetime::WholeStep,
    );
    let Some(geometry) = KvGeometry::new(t, inputs.training, inputs.layout) else { return report };
    let per_token = geometry.bytes_per_token();
    let free = total - CUDA_CONTEXT - nccl - inputs.runtime.other_processes_bytes as f64 - weights - warmup - (1.0 - fraction) * total;
    let warmup_blocks = prefill.div_ceil(block) as f64;
    let block_bytes = per_token * block as f64;
    if free <= 0.0 {
        report.error = Some(format!("Not enough memory to handle {prefill} prefill tokens. You need to decrease `--max-batch-prefill-tokens`"));
        ledger.add(Component::Activations, "KV cache (the warm-up's blocks)", warmup_blocks * block_bytes, "prefill tokens × bytes per token", Lifetime::WholeStep);
        return report;
    }
    let blocks = (free * WIGGLE_ROOM / block_bytes).floor() + warmup_blocks;
    let kv_bytes = blocks * block_bytes;
    ledger.add(Component::Activations, "KV cache (blocks)", kv_bytes, "(free × 0.90) // block bytes + the warm-up's blocks (TGI FlashCausalLM.warmup)", Lifetime::WholeStep);
    let tokens = blocks as u64 * block;
    report.num_blocks = blocks as u64;
    report.kv_cache_bytes = kv_bytes as u64;
    report.kv_cache_tokens = tokens;
    report.max_concurrency = tokens as f64 / max_model_len as f64;
    report.outside_budget_bytes = 0;
    report.log.push(format!("KV-cache blocks: {}, size: {block}", blocks as u64));
    report.log.push(format!("Setting max batch total tokens to {tokens}"));
    if tokens < max_model_len {
        report.error = Some(format!("`max_batch_total_tokens` ({tokens}) is smaller than the context ({max_model_len}): no request of that length can run"));
    }
    report
}
