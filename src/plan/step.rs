//! The ladder's steps: each memory-saving move, its label, and the default training ladders
//! (one GPU, several). What a step does to a scenario is `escalation::apply` (training),
//! `serving_ladder` (serving) and `diffusion_ladder` (pipelines); the ladder for a kind of
//! run is `Step::ladder_for` (`escalation.rs`).

use serde::{Deserialize, Serialize};

/// One memory-saving move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    MixedPrecision,
    SelectiveCheckpointing,
    ActivationCheckpointing,
    Zero2,
    Zero3,
    PipelineParallel,
    TensorParallel,
    ContextParallel,
    Optimizer8bit,
    CpuOffload,
    SmallerMicroBatch,
    FlashAttention,
    Lora,
    Qlora,
    OptimizerInBackward,
    ChunkedCrossEntropy,
    FusedCrossEntropy,
    ActivationOffload,
    PureBf16,
    /// Serving (`serving_ladder.rs`): an 8-bit KV cache.
    Fp8KvCache,
    /// Serving: FP8 weights.
    Fp8Weights,
    /// Serving: 4-bit weights (AWQ / GPTQ).
    Int4Weights,
    /// Serving: a larger share of the GPU for the engine.
    HigherMemoryFraction,
    /// Serving: a shorter context per request.
    ShorterContext,
    /// Serving: fewer sequences at once.
    FewerSequences,
    /// Diffusion (`diffusion_ladder.rs`): prompt embeddings computed once, text encoders freed.
    CacheTextEmbeddings,
    /// Diffusion: latents computed once, the VAE freed.
    CacheLatents,
    /// Diffusion generation: the VAE decodes tile by tile.
    VaeTiling,
    /// Diffusion generation: one part on the GPU at a time.
    ModelCpuOffload,
    /// Diffusion generation: one layer on the GPU at a time.
    SequentialCpuOffload,
    /// Diffusion: a smaller picture or fewer frames.
    SmallerPicture,
}

impl Step {
    pub const ALL: [Step; 31] = [
        Step::MixedPrecision,
        Step::SelectiveCheckpointing,
        Step::ActivationCheckpointing,
        Step::Zero2,
        Step::Zero3,
        Step::PipelineParallel,
        Step::TensorParallel,
        Step::ContextParallel,
        Step::Optimizer8bit,
        Step::CpuOffload,
        Step::SmallerMicroBatch,
        Step::FlashAttention,
        Step::Lora,
        Step::Qlora,
        Step::OptimizerInBackward,
        Step::ChunkedCrossEntropy,
        Step::FusedCrossEntropy,
        Step::ActivationOffload,
        Step::PureBf16,
        Step::Fp8KvCache,
        Step::Fp8Weights,
        Step::Int4Weights,
        Step::HigherMemoryFraction,
        Step::ShorterContext,
        Step::FewerSequences,
        Step::CacheTextEmbeddings,
        Step::CacheLatents,
        Step::VaeTiling,
        Step::ModelCpuOffload,
        Step::SequentialCpuOffload,
        Step::SmallerPicture,
    ];

    /// The seed flowchart's ladder.
    /// A smaller micro-batch with more accumulation comes first among the memory steps: it
    /// keeps the global batch and costs no recomputation or communication, so where it
    /// suffices nothing more invasive is needed.
    pub const DEFAULT_LADDER: [Step; 6] = [Step::MixedPrecision, Step::SmallerMicroBatch, Step::ActivationCheckpointing, Step::Zero2, Step::Zero3, Step::PipelineParallel];

    /// The ladder for one GPU, where nothing can be sharded: the frameworks' single-device
    /// techniques, cheapest in step time first — a smaller micro-batch with more
    /// accumulation (the global batch kept), the loss without full logits (Liger), block
    /// recomputation, bf16 weights and states (torchtune `dtype: bf16`), 8-bit states
    /// (bitsandbytes), the optimizer step fused into backward (torchtune `optimizer_in_bwd`),
    /// activations and then optimizer states moved to host memory (torchtune
    /// `enable_activation_offloading`, DeepSpeed ZeRO-Offload).
    pub const SINGLE_GPU_LADDER: [Step; 9] = [
        Step::SmallerMicroBatch,
        Step::FusedCrossEntropy,
        Step::ActivationCheckpointing,
        Step::PureBf16,
        Step::Optimizer8bit,
        Step::OptimizerInBackward,
        Step::ActivationOffload,
        Step::CpuOffload,
        Step::Qlora,
    ];

    /// The ladder a view starts from for a budget of `gpus`.
    pub fn default_ladder(gpus: u64) -> &'static [Step] {
        if gpus <= 1 {
            &Step::SINGLE_GPU_LADDER
        } else {
            &Step::DEFAULT_LADDER
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Step::MixedPrecision => "Mixed precision (bf16)",
            Step::SelectiveCheckpointing => "Selective checkpointing",
            Step::ActivationCheckpointing => "Activation checkpointing",
            Step::Zero2 => "ZeRO-2",
            Step::Zero3 => "ZeRO-3 / FSDP",
            Step::PipelineParallel => "Pipeline parallel",
            Step::TensorParallel => "Tensor parallel",
            Step::ContextParallel => "Context parallel",
            Step::Optimizer8bit => "8-bit optimizer",
            Step::CpuOffload => "CPU offload",
            Step::SmallerMicroBatch => "Smaller micro-batch",
            Step::FlashAttention => "Flash attention",
            Step::Lora => "LoRA",
            Step::Qlora => "QLoRA",
            Step::OptimizerInBackward => "Optimizer step in backward",
            Step::ChunkedCrossEntropy => "Chunked cross-entropy",
            Step::FusedCrossEntropy => "Fused linear cross-entropy",
            Step::ActivationOffload => "Activation offloading",
            Step::PureBf16 => "Pure bf16 (no fp32 master)",
            Step::Fp8KvCache => "FP8 KV cache",
            Step::Fp8Weights => "FP8 weights",
            Step::Int4Weights => "4-bit weights (AWQ / GPTQ)",
            Step::HigherMemoryFraction => "Larger memory fraction",
            Step::ShorterContext => "Shorter context",
            Step::FewerSequences => "Fewer sequences at once",
            Step::CacheTextEmbeddings => "Cache prompt embeddings",
            Step::CacheLatents => "Cache latents",
            Step::VaeTiling => "VAE tiling",
            Step::ModelCpuOffload => "Model CPU offload",
            Step::SequentialCpuOffload => "Sequential CPU offload",
            Step::SmallerPicture => "Smaller picture or clip",
        }
    }
}
