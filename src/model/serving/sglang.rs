//! SGLang's memory plan, from its source (`python/sglang/srt/`):
//! - `mem_fraction_static` is the share of the GPU for the weights and the KV pool together;
//!   the rest is left for activations and CUDA graphs. Its default
//!   (`arg_groups/memory_hook.py` `handle_gpu_memory_settings`) reserves
//!   `512 + 1.5 × max(chunked_prefill_size, 2048) + tp·pp/8 × 1024 + 2 × decode max_bs` MiB,
//!   at least 10 GiB on GPUs over 60 GiB, with `chunked_prefill_size` and the decode graphs'
//!   `max_bs` chosen by the GPU's memory;
//! - the pool gets the free memory after loading less `(1 − mem_fraction_static)` × the free
//!   memory measured before loading (`mem_cache/kv_cache_configurator.py`
//!   `_profile_available_bytes`: `rest_memory = available_gpu_memory − pre_model_load_memory
//!   × (1 − mem_fraction_static)`), that is `mem_fraction_static × free before − weights`;
//! - `max_total_num_tokens = rest // cell_size`, page-aligned, `cell_size` the bytes of one
//!   token's K and V in every layer (`model_executor/pool_configurator.py`); it prints
//!   "KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB" (GB = 2³⁰ bytes).

use super::kv::KvGeometry;
use super::shared::{add_process_overhead, add_weights, EngineInputs, ServingReport};
use crate::model::breakdown::{Component, Lifetime};
use crate::model::inputs::Engine;
use crate::model::ledger::Ledger;
use crate::model::overhead::CUDA_CONTEXT;

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = MIB * 1024.0;

/// (chunked_prefill_size, decode CUDA-graph max batch) by the GPU's memory in MiB and TP
/// (`handle_gpu_memory_settings`).
fn defaults(gpu_mib: f64, tp: u64) -> (u64, u64) {
    let wide = tp >= 4;
    if gpu_mib < 20.0 * 1024.0 {
        (2048, 8)
    } else if gpu_mib < 35.0 * 1024.0 {
        (4096, if wide { 160 } else { 48 })
    } else if gpu_mib < 60.0 * 1024.0 {
        (4096, if wide { 160 } else { 32 })
    } else if gpu_mib < 160.0 * 1024.0 {
        (8192, if wide { 512 } else { 256 })
    } else {
        (16384, 512)
    }
}

/// The default `mem_fraction_static` on this GPU.
pub fn default_mem_fraction(gpu_bytes: f64, tp: u64, pp: u64, chunked_prefill: u64, graph_batch: u64, eager: bool) -> f64 {
    let gpu_mib = gpu_bytes / MIB;
    let mut reserved = 512.0 + chunked_prefill.max(2048) as f64 * 1.5 + (tp * pp) as f64 / 8.0 * 1024.0;
    if !eager {
        reserved += graph_batch as f64 * 2.0;
    }
    if gpu_mib > 60.0 * 1024.0 {
        reserved = reserved.max(10.0 * 1024.0);
    }
    ((gpu_mib - reserved) / gpu_mib * 1000.0).round() / 1000.0
}

/// SGLang's plan for one GPU.
pub fn plan(inputs: &EngineInputs, ledger: &mut Ledger) -> ServingReport {
    let s = &inputs.training.serving;
    let total = super::shared::cuda_total(inputs.device);
    let tp = inputs.layout.tp.max(1.0) as u64;
    let pp = inputs.layout.pp.max(1.0) as u64;
    let (chunk_default, graph_batch) = defaults(total / MIB, tp);
    let chunk = s.max_num_batched_tokens.unwrap_or(chunk_default).max(1);
    let fraction = s.mem_fraction_static.unwrap_or_else(|| default_mem_fraction(total, tp, pp, chunk, graph_batch, s.enforce_eager));
    let page = s.block_size.unwrap_or(1).max(1);
    let max_model_len = inputs.max_model_len();
    let mut report = ServingReport {
        engine: Engine::Sglang,
        block_size: page,
        max_model_len,
        max_num_seqs: s.max_num_seqs.unwrap_or(0),
        max_num_batched_tokens: chunk,
        memory_fraction: fraction,
        ..ServingReport::default()
    };
    let weights = add_weights(inputs, "weights", ledger);
    // The communicators exist before SGLang measures the free memory.
    let nccl = add_process_overhead(inputs, ledger);
    let before_load = (total - CUDA_CONTEXT - nccl - inputs.runtime.other_processes_bytes as f64).max(0.0);
    let slack = before_load * (1.0 - fraction);
    ledger.add(
        Component::Temporary,
        "activation and CUDA-graph reserve (1 − mem_fraction_static)",
        slack,
        "free memory before loading × (1 − mem_fraction_static) (SGLang kv_cache_configurator._profile_available_bytes)",
        Lifetime::WholeStep,
    );
    report.budget_bytes = (before_load * fraction) as u64;
    report.outside_budget_bytes = (CUDA_CONTEXT + nccl + slack) as u64;
    let rest = before_load * fraction - weights;
    let Some(geometry) = inputs.arch.transformer().and_then(|t| KvGeometry::new(t, inputs.training, inputs.layout)) else {
        return report;
    };
    let cell = geometry.bytes_per_token();
    if rest <= 0.0 {
        let minimum = 1.0 - (before_load - weights) / before_load;
        report.error = Some(format!(
            "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={}. Raise --mem-fraction-static above {:.3}.",
            crate::format::short_real(fraction),
            (minimum * 1000.0).ceil() / 1000.0
        ));
        ledger.add(Component::Activations, "KV cache (one request at the context, needed to start)", cell * max_model_len as f64, "cell size × context", Lifetime::WholeStep);
        return report;
    }
    let tokens = ((rest / cell).floor() as u64) / page * page;
    let kv_bytes = tokens as f64 * cell;
    ledger.add(
        Component::Activations,
        "KV cache (token pool)",
        kv_bytes,
        "(mem_fraction_static × free before loading − weights) // cell size (SGLang pool_configurator)",
        Lifetime::WholeStep,
    );
    report.kv_cache_tokens = tokens;
    report.kv_cache_bytes = kv_bytes as u64;
    report.num_blocks = tokens / page;
    report.max_concurrency = tokens as f64 / max_model_len as f64;
    let half = kv_bytes / 2.0 / GIB;
    report.log.push(format!("KV Cache is allocated. #tokens: {tokens}, K size: {half:.2} GB, V size: {half:.2} GB"));
    report.log.push(format!("max_total_num_tokens={tokens}, chunked_prefill_size={chunk}, context_len={max_model_len}"));
    report
}

#[cfg(test)]
mod tests {
    /// An H100 80GB at TP 1: 512 + 1.5 × 8192 + 128 + 2 × 256 = 13,440 MiB reserved of 81,559.
    #[test]
    fn default_fraction_on_an_h100() {
        let f = super::default_mem_fraction(81559.0 * super::MIB, 1, 1, 8192, 256, false);
        assert_eq!(f, ((81559.0 - 13440.0) / 81559.0 * 1000.0_f64).round() / 1000.0);
        assert_eq!(f, 0.835);
    }
}
