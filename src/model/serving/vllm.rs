//! vLLM's memory plan (V1 engine), from its source:
//! - the budget is `gpu_memory_utilization` × the GPU's total memory, taken after the CUDA
//!   context and NCCL exist (`vllm/v1/worker/gpu_worker.py` `init_device`:
//!   `requested_memory = init_snapshot.total_memory * gpu_memory_utilization`), default 0.9
//!   (`vllm/config/cache.py`, through v0.20);
//! - the KV cache gets the budget less the weights, the profile run's torch peak and the
//!   non-torch memory that appeared since the snapshot (`determine_available_memory`:
//!   `requested_memory - profile_result.non_kv_cache_memory`);
//! - the profile run is one forward over `max_num_batched_tokens` tokens, then the sampler
//!   over `max_num_seqs` rows of logits (`gpu_model_runner.py` `profile_run`,
//!   `_dummy_sampler_run`);
//! - blocks: `available // bytes_per_block`, a block holding `block_size` tokens of every layer
//!   of a group, window layers in groups of their own (`v1/core/kv_cache_utils.py`
//!   `get_kv_cache_config_from_groups`, `_get_kv_cache_groups_uniform_page_size`); the printed
//!   size is `max_concurrency × max_model_len` tokens, `max_concurrency = num_blocks / blocks
//!   one request at max_model_len needs` (`get_max_concurrency_for_kv_cache_config`);
//! - CUDA graphs are captured after the cache is allocated (`compile_or_warm_up_model`), so
//!   their pool lies outside the budget, as does the CUDA context. (From v0.21 vLLM also
//!   profiles the graphs first and takes them from the KV cache,
//!   `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`; the printed sizes here follow the earlier,
//!   widely logged behaviour.)
//!
//! Defaults for `max_num_batched_tokens` and `max_num_seqs` follow `vllm serve` on the GPU
//! (`engine/arg_utils.py` `get_batch_defaults`).

use super::activation::forward_peak;
use super::kv::KvGeometry;
use super::shared::{add_weights, gib, EngineInputs, ServingReport};
use crate::format::thousands;
use crate::model::breakdown::{Component, Lifetime};
use crate::model::inputs::Engine;
use crate::model::ledger::Ledger;
use crate::model::overhead::CUDA_CONTEXT;

const GIB: f64 = (1u64 << 30) as f64;

/// `CacheConfig.gpu_memory_utilization`'s default (`vllm/config/cache.py`, v0.x–v0.20).
pub const DEFAULT_UTILIZATION: f64 = 0.9;

/// `CacheConfig.block_size`'s default on CUDA: 16 tokens.
const DEFAULT_BLOCK_SIZE: u64 = 16;

/// Bytes the sampler's profile holds per logit (row × vocabulary entry): the model-dtype
/// logits, their fp32 copy, the sort of top-k/top-p (fp32 values and int64 indices), the
/// softmax, the scattered result and the exponential draws of `random_sample`
/// (`v1/sample/ops/topk_topp_sampler.py`). Measured as the whole: the torch peak increase vLLM
/// v0.11 logs on an H100 (max_num_seqs 1024, max_num_batched_tokens 8192), less the forward's
/// kept hidden states, over 1024 × vocabulary, is 38.3–38.6 B for Llama-3.1-8B, Llama-3.3-70B
/// FP8 (TP 2), Qwen3-0.6B, Qwen3-32B and gpt-oss-20b ("vLLM Empirical Memory Profiling
/// Results", llm-d capacity planner notes): one mechanism, five vocabularies.
const SAMPLER_BYTES_PER_LOGIT: f64 = 38.4;

/// Memory outside PyTorch's allocator that appears during the profile run (cuBLAS/cuBLASLt
/// workspaces, kernel images): 0.13–0.14 GiB logged at TP 1 on an H100 (v0.11, same table).
const NON_TORCH_SINGLE: f64 = 0.13 * GIB;

/// With tensor parallelism NCCL's channel buffers and vLLM's custom all-reduce buffers add
/// to it: 0.54–0.55 GiB logged at TP 2 (same table).
const NON_TORCH_TP_EXTRA: f64 = 0.41 * GIB;

/// Largest batch a CUDA graph is captured for: `min(max_num_seqs × 2, 512)`
/// (`vllm/config/compilation.py`, `max_cudagraph_capture_size`).
const MAX_GRAPH_BATCH: u64 = 512;

/// `vllm serve`'s batch defaults on this GPU: (max_num_batched_tokens, max_num_seqs).
fn batch_defaults(inputs: &EngineInputs) -> (u64, u64) {
    let memory = super::shared::cuda_total(inputs.device);
    let a100 = inputs.device.id.contains("a100");
    if memory >= 160.0 * GIB {
        (16384, 1024)
    } else if memory >= 70.0 * GIB && !a100 {
        (8192, 1024)
    } else {
        (2048, 256)
    }
}

// long: follows vLLM's startup in order (weights, profile run, KV-cache sizing, CUDA graphs), each stage cited at its lines.
/// vLLM's plan for one GPU.
pub fn plan(inputs: &EngineInputs, ledger: &mut Ledger) -> ServingReport {
    let s = &inputs.training.serving;
    let max_model_len = inputs.max_model_len();
    let (default_tokens, default_seqs) = batch_defaults(inputs);
    let max_num_seqs = s.max_num_seqs.unwrap_or(default_seqs).max(1);
    let max_num_batched_tokens = s.max_num_batched_tokens.unwrap_or_else(|| default_tokens.min(max_num_seqs.saturating_mul(max_model_len))).max(1);
    let max_num_seqs = if s.max_num_seqs.is_some() { max_num_seqs } else { max_num_seqs.min(max_num_batched_tokens) };
    let block_size = s.block_size.unwrap_or(DEFAULT_BLOCK_SIZE).max(1);
    let utilization = s.gpu_memory_utilization.unwrap_or(DEFAULT_UTILIZATION);
    let total = super::shared::cuda_total(inputs.device);
    let requested = total * utilization;
    let mut report = ServingReport {
        engine: Engine::Vllm,
        block_size,
        max_model_len,
        max_num_seqs,
        max_num_batched_tokens,
        memory_fraction: utilization,
        budget_bytes: requested as u64,
        ..ServingReport::default()
    };

    let weights = add_weights(inputs, "weights", ledger);

    let t = inputs.arch.transformer();
    let activation_bytes = inputs.training.precision.activation_bytes() as f64;
    let tp = inputs.layout.tp;
    let peak = t.map_or(0.0, |t| {
        let forward = forward_peak(t, tp, max_num_batched_tokens, activation_bytes);
        let kept_hidden = max_num_batched_tokens as f64 * t.hidden as f64 * activation_bytes;
        let sampler = if inputs.layout.last { max_num_seqs as f64 * t.vocab as f64 * SAMPLER_BYTES_PER_LOGIT } else { 0.0 };
        forward.max(kept_hidden + sampler)
    });
    ledger.add(
        Component::Temporary,
        "profile run peak (forward of max_num_batched_tokens, sampler of max_num_seqs)",
        peak,
        "max(tokens × (2h + max(qkv + attn out + h, 3f + h)) × 2 B, kept hidden + max_num_seqs × vocab × 38.4 B) — vLLM gpu_model_runner.profile_run",
        Lifetime::WholeStep,
    );
    let non_torch = NON_TORCH_SINGLE + if inputs.model_parallel > 1 { NON_TORCH_TP_EXTRA } else { 0.0 };
    ledger.add(
        Component::Overhead,
        "non-torch memory (cuBLAS, NCCL, custom all-reduce)",
        non_torch,
        "0.13 GiB at TP 1, 0.54 GiB at TP 2 (vLLM v0.11 logs, H100)",
        Lifetime::WholeStep,
    );

    // Outside the budget: the CUDA context (before the snapshot) and the graphs' pool.
    let graphs = match t {
        Some(t) if !s.enforce_eager => forward_peak(t, tp, max_num_seqs.saturating_mul(2).min(MAX_GRAPH_BATCH), activation_bytes),
        _ => 0.0,
    };
    ledger.add(Component::Overhead, "CUDA context (outside the budget)", CUDA_CONTEXT, "0.47 GB (ml-engineering); created before vLLM's memory snapshot", Lifetime::WholeStep);
    if graphs > 0.0 {
        ledger.add(Component::Overhead, "CUDA graphs (outside the budget)", graphs, "the largest captured batch's forward, min(2 × max_num_seqs, 512) tokens, in the graphs' shared pool; captured after the KV cache (vLLM gpu_worker.compile_or_warm_up_model)", Lifetime::WholeStep);
    }
    report.outside_budget_bytes = (CUDA_CONTEXT + graphs) as u64;

    let free_at_start = total - CUDA_CONTEXT - inputs.runtime.other_processes_bytes as f64;
    let available = requested - weights - peak - non_torch;
    report.log.push(format!("Model loading took {} GiB", gib(weights)));
    report.log.push(format!("Available KV cache memory: {} GiB", gib(available.max(0.0))));

    let Some(geometry) = t.and_then(|t| KvGeometry::new(t, inputs.training, inputs.layout)) else {
        return report;
    };
    let hybrid = t.and_then(|t| t.hybrid.as_ref().filter(|hy| hy.mixer_layers > 0).map(|hy| (t, hy)));
    let (request, bytes_per_block, blocks_per_request) = match hybrid {
        Some((t, hy)) => {
            let h = hybrid_layout(&geometry, t, hy, inputs, block_size, max_model_len);
            report.block_size = h.block_size;
            report.log.push(format!("Setting attention block size to {} tokens to ensure that attention page size is >= mamba page size.", h.block_size));
            (h.bytes_per_block * h.blocks_per_request, h.bytes_per_block, h.blocks_per_request)
        }
        None => {
            let (bytes_per_block, blocks_per_request) = block_layout(&geometry, block_size, max_model_len, max_num_batched_tokens);
            (geometry.request_bytes(max_model_len, max_num_batched_tokens), bytes_per_block, blocks_per_request)
        }
    };
    if free_at_start < requested {
        report.error = Some(format!(
            "Free memory on device ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
            gib(free_at_start),
            gib(total),
            utilization,
            gib(requested)
        ));
    } else if available <= 0.0 {
        report.error = Some("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.".into());
    } else if available < request {
        let estimated = (available / request * max_model_len as f64) as u64;
        report.error = Some(format!(
            "To serve at least one request with the model's max seq len ({max_model_len}), ({} GiB KV cache is needed, which is larger than the available KV cache memory ({} GiB). Based on the available memory, the estimated maximum model length is {estimated}. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            gib(request),
            gib(available)
        ));
    }
    if report.error.is_some() {
        // What starting would need: one request's cache beside everything else.
        ledger.add(
            Component::Activations,
            "KV cache (one request at max_model_len, needed to start)",
            request,
            "per-layer K/V bytes × tokens kept (window layers: window − 1 + chunk)",
            Lifetime::WholeStep,
        );
        return report;
    }
    let num_blocks = (available / bytes_per_block).floor();
    let kv_bytes = num_blocks * bytes_per_block;
    ledger.add(
        Component::Activations,
        "KV cache (paged blocks)",
        kv_bytes,
        "⌊(utilization × total − weights − profile peak − non-torch) / bytes per block⌋ blocks (vLLM determine_available_memory, kv_cache_utils)",
        Lifetime::WholeStep,
    );
    let max_concurrency = num_blocks / blocks_per_request;
    let tokens = (max_concurrency * max_model_len as f64) as u64;
    report.num_blocks = num_blocks as u64;
    report.kv_cache_bytes = kv_bytes as u64;
    report.kv_cache_tokens = tokens;
    report.max_concurrency = max_concurrency;
    report.log.push(format!("GPU KV cache size: {} tokens", thousands(tokens)));
    report.log.push(format!("Maximum concurrency for {} tokens per request: {:.2}x", thousands(max_model_len), max_concurrency));
    report
}

/// The block pool of a hybrid model (attention beside Mamba / Gated DeltaNet / short-conv
/// layers) on this GPU.
pub struct HybridLayout {
    /// The attention block size vLLM forces so one attention page holds a mamba state.
    pub block_size: u64,
    /// Bytes of one block id: one page in each of the `group_size` tensors.
    pub bytes_per_block: f64,
    /// Blocks one request at the full context takes: ⌈context / block_size⌉ in each attention
    /// group, one (its state) in each mamba group.
    pub blocks_per_request: f64,
}

/// vLLM's hybrid KV cache (`vllm/platforms/interface.py` `_align_hybrid_block_size`; v1
/// `kv_cache_utils.py` `_get_kv_cache_groups_uniform_page_size`, `get_num_blocks`):
/// - a mamba layer's page is its state per sequence: the conv state, channels × (d_conv − 1)
///   (vLLM keeps one token fewer than transformers), and the recurrent state, both in the model
///   dtype (`mamba_ssm_cache_dtype: auto`), split by TP;
/// - the attention block size becomes `align × ⌈mamba page / (align × attention bytes per
///   token)⌉` with `align = max(16, block_size)` (FlashAttention's kernel block sizes are
///   multiples of 16), and the mamba page is padded to the attention page;
/// - layers are grouped by kind into groups of the smaller kind's size (at most 1.25× it is
///   one group); each of `group_size` tensors holds one page per block id, so a block id costs
///   `page × group_size` and `num_blocks = available // (page × group_size)`;
/// - a request holds ⌈context / block_size⌉ blocks in each attention group and one block in
///   each mamba group (no prefix caching of states, `mamba_cache_mode` none).
pub fn hybrid_layout(
    g: &KvGeometry,
    t: &crate::model::arch::TransformerArch,
    hy: &crate::model::arch::HybridPart,
    inputs: &EngineInputs,
    block_size: u64,
    context: u64,
) -> HybridLayout {
    let tp = inputs.layout.tp.max(1.0);
    let model_bytes = inputs.training.precision.activation_bytes() as f64;
    let mixer = &hy.mixer;
    let conv = (mixer.conv_channels(t.hidden) * mixer.conv_width().saturating_sub(1)) as f64;
    let mamba_page = (conv + mixer.recurrent_state() as f64) * model_bytes / tp;
    let attn_token = g.bytes_per_token_layer.max(1.0);
    let align = block_size.max(16);
    let attn_block = align * (mamba_page / (align as f64 * attn_token)).ceil().max(1.0) as u64;
    let page = attn_block as f64 * attn_token;
    let share = inputs.layout.layers_on_stage / t.layers.max(1) as f64;
    let attention = (hy.attention_layers as f64 * share).round().max(1.0);
    let mamba = (hy.mixer_layers as f64 * share).round().max(1.0);
    let (small, large) = (attention.min(mamba), attention.max(mamba));
    let group_size = if large <= 1.25 * small { large } else { small };
    let (attention_groups, mamba_groups) = ((attention / group_size).ceil(), (mamba / group_size).ceil());
    HybridLayout { block_size: attn_block, bytes_per_block: page * group_size, blocks_per_request: attention_groups * context.div_ceil(attn_block) as f64 + mamba_groups }
}

/// Bytes of one block across the layers that share the block pool, and blocks one request at
/// `context` tokens takes. Layers are grouped by kind (full attention, sliding window) into
/// groups of the smallest kind's size (`_get_kv_cache_groups_uniform_page_size`); one block id
/// is one block in every group, so a block costs `block_size × per-layer token bytes × group
/// size × groups`, and a request takes `⌈tokens kept / block_size⌉` blocks in each group.
pub fn block_layout(g: &KvGeometry, block_size: u64, context: u64, chunk: u64) -> (f64, f64) {
    let page = block_size as f64 * g.bytes_per_token_layer;
    let full = g.full_layers.round();
    let window = g.window_layers.round();
    let blocks = |tokens: u64| tokens.div_ceil(block_size) as f64;
    let windowed = if g.window > 0 { (g.window - 1 + chunk).min(context) } else { context };
    if window == 0.0 || full == 0.0 {
        let layers = (full + window).max(1.0);
        let kept = if full == 0.0 { windowed } else { context };
        return (page * layers, blocks(kept));
    }
    let size = full.min(window);
    let (full_groups, window_groups) = ((full / size).ceil(), (window / size).ceil());
    (page * size * (full_groups + window_groups), full_groups * blocks(context) + window_groups * blocks(windowed))
}
