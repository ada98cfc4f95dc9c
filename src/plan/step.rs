//! The ladder's steps and the default training ladders (one GPU, several). Each step's label,
//! what it changes and costs, and what it does are its row in `rungs.rs`; the ladder for a kind
//! of run is `Step::ladder_for` (`escalation.rs`).

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
}
