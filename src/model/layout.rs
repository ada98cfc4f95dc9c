//! Where the tensors of a model land in a parallel layout: which pipeline stage we are
//! looking at, how many copies of each parameter tensor one GPU holds, and over how many
//! ranks ZeRO shards.
//!
//! Rules: Megatron-LM (Shoeybi et al. 2019 §3: column/row-parallel linears and a
//! vocab-parallel embedding split by TP; norms replicated), pipeline stages of ⌈L/p⌉ blocks
//! with the embedding on the first stage and the head on the last (Narayanan et al. 2021),
//! experts split by EP (Lepikhin et al. 2020), and ZeRO sharding over the data-parallel
//! ranks (Rajbhandari et al. 2020; Megatron's distributed optimizer shards over dp × cp).

use super::arch::{Architecture, ParamTensor, Scope, TpSplit};
use super::inputs::{Parallel, Zero, Zero3Impl};

/// One pipeline stage of one layout, as seen from one of its GPUs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub tp: f64,
    pub pp: f64,
    pub dp: f64,
    pub cp: f64,
    pub ep: f64,
    pub zero: Zero,
    /// Stage index (0 = first).
    pub stage: u64,
    pub first: bool,
    pub last: bool,
    /// Transformer blocks on this stage.
    pub layers_on_stage: f64,
    /// Whether the embedding is tied to the LM head (the last stage then keeps a copy).
    pub tied: bool,
    /// The implementation of ZeRO stage 3 (FSDP2 or DeepSpeed).
    pub zero3_impl: Zero3Impl,
    /// FSDP2's `reshard_after_forward` for the blocks.
    pub reshard_after_forward: bool,
    /// DDP's `gradient_as_bucket_view` (`Parallel::gradient_as_bucket_view`).
    pub bucket_view: bool,
    /// A diffusion pipeline's VAE and text encoders on the GPU ([`Architecture::resident`]).
    pub vae_resident: bool,
    pub text_encoders_resident: bool,
}

impl Layout {
    /// Plain data parallelism (`DistributedDataParallel`): gradients all-reduced over the data-
    /// and context-parallel ranks, no ZeRO.
    pub fn ddp(&self) -> bool {
        self.dp * self.cp > 1.0 && self.zero == Zero::Off
    }

    /// The layout for `stage` (clamped to the pipeline).
    pub fn new(arch: &Architecture, p: &Parallel, stage: u64) -> Self {
        let pp = p.pp.max(1).min(arch.layers());
        let stage = stage.min(pp - 1);
        let layers = arch.layers();
        let tied = matches!(arch, Architecture::Transformer(t) if t.embedding.tied);
        Layout {
            tp: p.tp.max(1) as f64,
            pp: pp as f64,
            dp: p.dp.max(1) as f64,
            cp: p.cp.max(1) as f64,
            ep: p.ep.max(1).min(arch.experts()) as f64,
            zero: p.zero,
            stage,
            first: stage == 0,
            last: stage == pp - 1,
            layers_on_stage: layers.div_ceil(pp) as f64,
            tied,
            zero3_impl: p.zero3_impl,
            reshard_after_forward: p.fsdp_reshard_after_forward,
            bucket_view: p.gradient_as_bucket_view,
            vae_resident: arch.resident(Scope::Vae),
            text_encoders_resident: arch.resident(Scope::TextEncoder),
        }
    }

    /// Copies of `tensor` this GPU holds (fractional when TP splits it).
    pub fn copies(&self, arch: &Architecture, tensor: &ParamTensor) -> f64 {
        let stage_copies = match tensor.scope {
            Scope::Input => {
                let lm_head_copy = self.tied && self.last && !self.first && tensor.name == "embed_tokens";
                if self.first || lm_head_copy {
                    1.0
                } else {
                    0.0
                }
            }
            Scope::Vae if !self.vae_resident => 0.0,
            Scope::TextEncoder if !self.text_encoders_resident => 0.0,
            Scope::Tower | Scope::Vae | Scope::TextEncoder => {
                if self.first {
                    1.0
                } else {
                    0.0
                }
            }
            Scope::Layer => self.layers_on_stage,
            // Blocks of this kind on the stage, in proportion (multiplied first: exact counts
            // with a single stage).
            Scope::DenseMlp | Scope::MoeLayer | Scope::Cross | Scope::Attention | Scope::Mixer | Scope::KvLayer | Scope::Subset(_) => {
                self.layers_on_stage * arch.blocks(tensor.scope) as f64 / arch.layers() as f64
            }
            // Every stage that invokes a shared block holds it whole: all of them, an upper
            // bound where a stage's hybrid layers do not cycle through every block.
            Scope::Shared | Scope::SharedAdapter => arch.blocks(tensor.scope) as f64,
            Scope::Expert => self.layers_on_stage * arch.blocks(tensor.scope) as f64 / arch.layers() as f64 * arch.experts() as f64 / self.ep,
            Scope::Output => {
                if self.last {
                    1.0
                } else {
                    0.0
                }
            }
        };
        let split = match tensor.tp {
            TpSplit::Sharded => self.tp,
            TpSplit::Replicated => 1.0,
        };
        stage_copies / split
    }

    /// Ranks that share one ZeRO partition of a dense parameter.
    pub fn zero_shards(&self) -> f64 {
        self.dp * self.cp
    }

    /// Whether stage 3 runs as PyTorch FSDP2 (`fully_shard`), whose buffers and mixed
    /// precision differ from DeepSpeed's.
    pub fn fsdp2(&self) -> bool {
        self.zero == Zero::Parameters && self.zero3_impl == Zero3Impl::Fsdp2
    }
}
