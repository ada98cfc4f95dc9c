//! llama.cpp's memory on a GPU with every layer offloaded (`-ngl 99`), from its source:
//! - the model buffer: every tensor in its GGUF type (`gguf.rs`);
//! - the KV cache: `n_ctx` cells of every layer, K and V in `--cache-type-k/v` (f16 by
//!   default, `q8_0` when an 8-bit cache is chosen), cells padded to 256
//!   (`src/llama-kv-cache.cpp`; `llama_context` pads `n_ctx`); sliding-window layers keep
//!   `n_swa × n_seq + n_ubatch` cells, padded (`llama-kv-cache-iswa.cpp`, `swa_full` off);
//!   printed as "llama_kv_cache: size = X MiB (N cells, L layers, S/S seqs), K (f16): …";
//! - the compute buffer: the largest graph of one micro-batch (`n_ubatch`, default 512), whose
//!   biggest live tensor is the fp32 logits of the micro-batch (`n_ubatch × n_vocab × 4`,
//!   `llama-graph.cpp` output) or the block's fp32 intermediates, with flash attention (the
//!   CUDA default) so no `n_ctx × n_ubatch` score matrix.
//!
//! Here `max_model_len` is each sequence's context and `max_num_seqs` the parallel slots
//! (`llama-server -np`), so `n_ctx = max_model_len × slots`.

use super::activation::forward_elements_per_token;
use super::kv::KvGeometry;
use super::shared::{add_weights, EngineInputs, ServingReport};
use crate::model::breakdown::{Component, Lifetime};
use crate::model::inputs::Engine;
use crate::model::ledger::Ledger;
use crate::model::overhead::CUDA_CONTEXT;

const MIB: f64 = 1024.0 * 1024.0;

/// `n_ubatch`'s default (`common/common.h`).
const DEFAULT_UBATCH: u64 = 512;

/// Cells are allocated in multiples of 256.
const CELL_PAD: u64 = 256;

/// llama.cpp's plan for one GPU.
pub fn plan(inputs: &EngineInputs, ledger: &mut Ledger) -> ServingReport {
    let s = &inputs.training.serving;
    let max_model_len = inputs.max_model_len();
    let slots = s.max_num_seqs.unwrap_or(1).max(1);
    let ubatch = s.max_num_batched_tokens.unwrap_or(DEFAULT_UBATCH).max(1);
    let cells = max_model_len.saturating_mul(slots).next_multiple_of(CELL_PAD);
    let mut report = ServingReport {
        engine: Engine::LlamaCpp,
        block_size: 1,
        max_model_len,
        max_num_seqs: slots,
        max_num_batched_tokens: ubatch,
        memory_fraction: 1.0,
        budget_bytes: super::shared::cuda_total(inputs.device) as u64,
        ..ServingReport::default()
    };
    let weights = add_weights(inputs, "weights (model buffer)", ledger);
    ledger.add(Component::Overhead, "CUDA context", CUDA_CONTEXT, "0.47 GB (ml-engineering)", Lifetime::WholeStep);
    report.log.push(format!("load_tensors: CUDA0 model buffer size = {:.2} MiB", weights / MIB));
    let Some(t) = inputs.arch.transformer() else { return report };
    let Some(mut geometry) = KvGeometry::new(t, inputs.training, inputs.layout) else { return report };
    if inputs.training.serving.kv_cache.is_some_and(|k| k == crate::model::inputs::KvCacheFormat::Fp8) {
        // q8_0: 34 bytes per 32 elements.
        geometry.bytes_per_token_layer *= 34.0 / 32.0 / geometry.element_bytes;
    }
    let window_cells = if geometry.window > 0 { (geometry.window.saturating_mul(slots) + ubatch).next_multiple_of(CELL_PAD).min(cells) } else { cells };
    let kv = geometry.bytes_per_token_layer * (geometry.full_layers * cells as f64 + geometry.window_layers * window_cells as f64);
    ledger.add(
        Component::Activations,
        "KV cache (cells)",
        kv,
        "n_ctx cells (padded to 256) × layers × K and V bytes; window layers n_swa × slots + n_ubatch (llama-kv-cache.cpp)",
        Lifetime::WholeStep,
    );
    let logits = ubatch as f64 * t.vocab as f64 * 4.0;
    let block = ubatch as f64 * forward_elements_per_token(t, inputs.layout.tp) * 4.0;
    let compute = logits.max(block);
    ledger.add(
        Component::Temporary,
        "compute buffer",
        compute,
        "max(n_ubatch × n_vocab × 4 B logits, n_ubatch × a block's intermediates × 4 B), flash attention (llama-graph.cpp)",
        Lifetime::WholeStep,
    );
    report.kv_cache_tokens = cells;
    report.kv_cache_bytes = kv as u64;
    report.num_blocks = cells;
    report.max_concurrency = cells as f64 / max_model_len as f64;
    let layers = (geometry.full_layers + geometry.window_layers).round() as u64;
    let half = kv / 2.0 / MIB;
    let kind = if geometry.element_bytes < 2.0 { "q8_0" } else { "f16" };
    report.log.push(format!(
        "llama_kv_cache: size = {:.2} MiB ({cells:>6} cells, {layers:>3} layers, {slots}/{slots} seqs), K ({kind}): {half:.2} MiB, V ({kind}): {half:.2} MiB",
        kv / MIB
    ));
    report.log.push(format!("CUDA0 compute buffer size = {:.2} MiB", compute / MIB));
    report
}
