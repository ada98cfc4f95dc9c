//! The norms of a transformer block: which kind, and where they sit.
//!
//! Placement decides how many norms a block holds and which tensors they save:
//! pre-norm (GPT-2, Llama: before attention and before the MLP), post-norm (BERT: after
//! each residual add), sandwich (Gemma-2/3: before and after each sublayer, four per
//! block), post-sublayer (OLMo-2: after each sublayer, before the residual add), and
//! parallel residual (GPT-NeoX, Falcon, Phi, Cohere: attention and MLP read the same
//! input, through one shared norm or two).

use serde::{Deserialize, Serialize};

use super::param::{ParamTensor, Scope, TpSplit};

/// The norm layer's implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NormKind {
    /// `nn.LayerNorm` with weight and bias (2h parameters).
    Layernorm,
    /// `CohereLayerNorm`: a LayerNorm without bias computed in fp32 (h parameters).
    CohereLayernorm,
    /// `LlamaRMSNorm`: weight · (x·rsqrt(mean x²)).to(dtype).
    Rmsnorm,
    /// `T5LayerNorm`: an RMSNorm that multiplies the input in its own dtype by the fp32 rsqrt.
    T5Layernorm,
    /// `GemmaRMSNorm`: the whole norm in fp32, times (1 + weight), then cast.
    GemmaRmsnorm,
    /// `Olmo2RMSNorm`, `GptOssRMSNorm`: the weight multiplied in fp32 before the cast.
    RmsnormFp32Weight,
    /// `Gemma4RMSNorm` (transformers 5.25 `modeling_gemma4.py` lines 196–214): x ·
    /// `torch.pow(mean x² + eps, −0.5)` in fp32, the weight multiplied in fp32 before the cast.
    RmsnormPow,
}

impl NormKind {
    /// Parameters of one norm over `h` features.
    pub fn params(self, h: u64) -> u64 {
        match self {
            NormKind::Layernorm => 2 * h,
            _ => h,
        }
    }
}

/// Where a block's norms sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Before attention and before the MLP (2 per block).
    Pre,
    /// After each residual add (BERT, RoBERTa; 2 per block, plus one on the embeddings).
    Post,
    /// Before and after each sublayer (Gemma-2/3; 4 per block).
    Sandwich,
    /// After each sublayer, before the residual add (OLMo-2; 2 per block).
    PostSublayer,
    /// Attention and MLP in parallel on one shared norm (GPT-J, Falcon-7B, Phi, Cohere).
    ParallelShared,
    /// Attention and MLP in parallel, each with its own norm (GPT-NeoX, Falcon-40B).
    ParallelTwo,
}

impl Placement {
    /// Norms in one block.
    pub fn per_block(self) -> u64 {
        match self {
            Placement::ParallelShared => 1,
            Placement::Sandwich => 4,
            _ => 2,
        }
    }

    /// Whether attention and the MLP read the same input.
    pub fn parallel(self) -> bool {
        matches!(self, Placement::ParallelShared | Placement::ParallelTwo)
    }
}

/// The norms of a block and of the stack's edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NormPart {
    pub kind: NormKind,
    pub placement: Placement,
}

impl Default for NormPart {
    fn default() -> Self {
        NormPart { kind: NormKind::Rmsnorm, placement: Placement::Pre }
    }
}

impl NormPart {
    /// One norm's tensors (weight, and bias for LayerNorm).
    pub fn push(&self, name: &'static str, h: u64, scope: Scope, out: &mut Vec<ParamTensor>) {
        out.push(ParamTensor::vector(name, h, scope, TpSplit::Replicated));
        if self.kind == NormKind::Layernorm {
            out.push(ParamTensor::vector(name, h, scope, TpSplit::Replicated));
        }
    }

    /// The norms of one block.
    pub fn block_tensors(&self, h: u64, out: &mut Vec<ParamTensor>) {
        const NAMES: [&str; 4] = ["attention_norm", "mlp_norm", "post_attention_norm", "post_mlp_norm"];
        for name in NAMES.iter().take(self.placement.per_block() as usize) {
            self.push(name, h, Scope::Layer, out);
        }
    }
}
