//! Serving engines' memory plans: how vLLM, SGLang, text-generation-inference and llama.cpp
//! divide a GPU between the weights, a profiled activation peak, their own buffers and the KV
//! cache, and the numbers each prints at startup (KV-cache tokens, blocks, concurrency), so a
//! user can hold the plan against their own log.
//!
//! Unlike a transformers `generate` (`inference.rs`), these engines do not size memory by the
//! batch: they reserve a share of the GPU and give what is left after the weights and the
//! profile run to a paged KV cache; the question becomes how many sequences of a given length
//! fit at once. Each engine's file cites the source lines it follows.

mod activation;
pub mod kv;
mod llama_cpp;
pub mod report;
mod sglang;
mod shared;
pub mod speed;
mod tgi;
mod vllm;

use super::inputs::Engine;
use super::ledger::Ledger;
pub use shared::{cuda_total, EngineInputs, ServingReport};

/// vLLM's default `gpu_memory_utilization`.
pub use vllm::DEFAULT_UTILIZATION as VLLM_DEFAULT_UTILIZATION;

/// The engine's terms on this GPU (into `ledger`) and its startup report; `None` for
/// [`Engine::Transformers`], whose memory `inference.rs` plans.
pub fn engine_memory(inputs: &EngineInputs, ledger: &mut Ledger) -> Option<ServingReport> {
    match inputs.training.serving.engine {
        Engine::Transformers => None,
        Engine::Vllm => Some(vllm::plan(inputs, ledger)),
        Engine::Sglang => Some(sglang::plan(inputs, ledger)),
        Engine::Tgi => Some(tgi::plan(inputs, ledger)),
        Engine::LlamaCpp => Some(llama_cpp::plan(inputs, ledger)),
    }
}
