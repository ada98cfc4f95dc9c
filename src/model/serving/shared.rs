//! What every engine's plan shares: the report an engine prints at startup
//! ([`ServingReport`], from `report.rs`), what a plan reads ([`EngineInputs`]), the total memory CUDA reports,
//! and the weights and process overhead every engine loads first. The engines' files
//! (`vllm.rs`, `sglang.rs`, `tgi.rs`, `llama_cpp.rs`) import it; `mod.rs` only dispatches.

pub use super::report::ServingReport;
use crate::model::arch::{Architecture, ParamTensor};
use crate::model::breakdown::{Component, Lifetime};
use crate::model::device::Device;
use crate::model::inference::{weights_on_gpu, WEIGHTS_FORMULA};
use crate::model::inputs::{Runtime, Training};
use crate::model::layout::Layout;
use crate::model::ledger::Ledger;
use crate::model::overhead::{CUDA_CONTEXT, NCCL_INIT};

/// Everything an engine's plan reads.
pub struct EngineInputs<'a> {
    pub arch: &'a Architecture,
    pub tensors: &'a [ParamTensor],
    pub training: &'a Training,
    pub layout: &'a Layout,
    pub device: &'a Device,
    pub runtime: &'a Runtime,
    /// GPUs one model replica spans (tensor × pipeline parallel).
    pub model_parallel: u64,
}

impl EngineInputs<'_> {
    /// The context each request may reach: `max_model_len`, else the planner's sequence.
    pub(super) fn max_model_len(&self) -> u64 {
        self.training.serving.max_model_len.unwrap_or(self.training.seq_len).max(1)
    }
}

/// The total memory the CUDA driver reports for the GPU (`cudaMemGetInfo`, PyTorch's
/// `total_memory`), from which vLLM and SGLang take their fractions: a few hundred MiB less
/// than nvidia-smi's total (the device table's capacity), reserved by the driver. Known from
/// logs and PyTorch's out-of-memory messages ("GPU 0 has a total capacity of …"); other GPUs
/// use the device's capacity.
pub fn cuda_total(device: &Device) -> f64 {
    const GIB: f64 = (1u64 << 30) as f64;
    let reported = match device.id.as_str() {
        // vLLM v0.11 startup logs, H100 SXM ("vLLM Empirical Memory Profiling Results").
        "h100-sxm-80gb" => 79.18,
        // PyTorch OOM messages: A100 80GB (OOTDiffusion #235), A100 40GB (CoSeR #10),
        // RTX 4090 (CogVideo #36), RTX 5090 (Wan2.1 #465), T4 (Open-Sora #697).
        "a100-80gb" => 79.25,
        "a100-40gb" => 39.50,
        "rtx-4090-24gb" => 23.68,
        "rtx-5090-32gb" => 31.37,
        "t4-16gb" => 14.75,
        _ => return device.capacity_bytes,
    };
    (reported * GIB).min(device.capacity_bytes)
}

/// The weights on this GPU, as every engine loads them (`inference::weights_on_gpu`), into
/// `ledger` under `name`; returns their bytes.
pub(super) fn add_weights(inputs: &EngineInputs, name: &'static str, ledger: &mut Ledger) -> f64 {
    let weights = weights_on_gpu(inputs.arch, inputs.tensors, inputs.training, inputs.layout);
    ledger.add(Component::Parameters, name, weights, WEIGHTS_FORMULA, Lifetime::WholeStep);
    weights
}

/// The CUDA context and, across tensor- or pipeline-parallel ranks, the NCCL communicators
/// (`overhead.rs`'s measurements), which exist before an engine measures its free memory;
/// returns the communicators' bytes.
pub(super) fn add_process_overhead(inputs: &EngineInputs, ledger: &mut Ledger) -> f64 {
    ledger.add(Component::Overhead, "CUDA context", CUDA_CONTEXT, "0.47 GB (ml-engineering)", Lifetime::WholeStep);
    if inputs.model_parallel <= 1 {
        return 0.0;
    }
    ledger.add(Component::Overhead, "NCCL communicators", NCCL_INIT, "+1.45 GB at the first collective (ml-engineering torch-dist-mem-usage.py)", Lifetime::WholeStep);
    NCCL_INIT
}

/// Bytes in GiB with two decimals, as the engines print them.
pub(super) fn gib(bytes: f64) -> String {
    format!("{:.2}", bytes / (1u64 << 30) as f64)
}
