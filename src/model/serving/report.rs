//! `ServingReport`: what an engine does with one GPU, as it prints it at startup. Plain data,
//! held by the `Breakdown`; the engines' files fill it in.

use serde::{Deserialize, Serialize};

use crate::model::inputs::Engine;

/// What an engine does with one GPU, as it reports it at startup.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServingReport {
    pub engine: Engine,
    /// Tokens the KV cache holds on this GPU (vLLM "GPU KV cache size: N tokens", SGLang
    /// "#tokens", TGI "max batch total tokens", llama.cpp cells).
    pub kv_cache_tokens: u64,
    /// Bytes of the KV cache on this GPU.
    pub kv_cache_bytes: u64,
    /// Blocks (pages) of the cache (`block_size` tokens each).
    pub num_blocks: u64,
    /// Tokens per block.
    pub block_size: u64,
    /// Requests of `max_model_len` tokens the cache holds at once (vLLM "Maximum concurrency
    /// for N tokens per request: X×").
    pub max_concurrency: f64,
    /// The context each request may reach (`max_model_len`).
    pub max_model_len: u64,
    /// Requests the scheduler runs at once (`max_num_seqs`).
    pub max_num_seqs: u64,
    /// Tokens of one scheduled batch (the profiled chunk).
    pub max_num_batched_tokens: u64,
    /// Bytes the engine allows itself on this GPU (its fraction of the GPU).
    pub budget_bytes: u64,
    /// The fraction behind `budget_bytes`, as the engine's flag takes it.
    pub memory_fraction: f64,
    /// Bytes the engine uses outside its budget (CUDA context, CUDA graphs captured after the
    /// cache is allocated).
    pub outside_budget_bytes: u64,
    /// Why the engine would refuse to start, in its own terms; `None` when it starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The startup lines the engine would print, in its own format.
    pub log: Vec<String>,
    /// Sequences the user asks to serve at once (`training.micro_batch`).
    pub requested: u64,
    /// Sequences served at once: the request, capped by the cache.
    pub concurrency: u64,
    /// One decode step for all running sequences at the full context, seconds (`speed.rs`).
    pub decode_step_seconds: f64,
    /// Tokens per second each running sequence receives.
    pub tokens_per_second_per_sequence: f64,
    /// Tokens per second across the running sequences.
    pub tokens_per_second: f64,
    /// Prefill of a prompt of the full context, seconds.
    pub time_to_first_token_seconds: f64,
}

impl ServingReport {
    /// Whether the engine starts with these settings.
    pub fn starts(&self) -> bool {
        self.error.is_none()
    }

    /// The most the engine's process holds on this GPU: its budget plus what lies outside it.
    pub fn ceiling(&self) -> u64 {
        self.budget_bytes.saturating_add(self.outside_budget_bytes)
    }
}
