//! Model architectures in Headroom's own terms, and the exact list of parameter tensors
//! each one builds.
//!
//! A transformer is assembled from parts (`transformer.rs`): an attention part
//! (`attention.rs`: MHA/GQA/MQA, fused QKV, q/k norm, sliding windows, sinks, Multi-head
//! Latent Attention), a feed-forward part (`mlp.rs`: dense gated or not, mixtures of experts
//! with shared experts and dense-first layers), a norm part (`norm.rs`: RMSNorm/LayerNorm,
//! pre/post/sandwich/parallel placement), embeddings and a head. Each part lists its own
//! parameter tensors; `activations/` lists what each part saves for backward. A ResNet is
//! described by `resnet.rs`.
//!
//! Every count mirrors the module tree transformers builds for the same `config.json`; the
//! native tests check the totals against `tests/fixtures/measured/param_counts.json`
//! (transformers on the `meta` device). This module knows nothing of precision, optimizers
//! or parallelism: it only says which tensors exist, their shapes, and how they may be split.

pub mod anyres;
pub mod architecture;
pub mod attention;
pub mod cross_attention;
pub mod gemma4_vision;
pub mod llama4_tiles;
pub mod mixer;
pub mod mllama_vision;
pub mod mlp;
pub mod moe_peft;
pub mod norm;
pub mod param;
pub mod per_layer;
pub mod resnet;
pub mod shared;
pub mod tensors;
pub mod tiling;
pub mod tower;
pub mod transformer;

pub use architecture::Architecture;
pub use attention::{AttentionPart, KindShape, LatentAttention, QkNorm};
pub use cross_attention::VisionCrossAttention;
pub use mixer::{HybridPart, LeadBlocks, Mixer};
pub use mlp::{Activation, MlpPart, MoePart, Router};
pub use moe_peft::{MoePeft, PeftConversion};
pub use norm::{NormKind, NormPart, Placement};
pub use param::{check_dim, BlockSubset, Bypass, LinearKind, ParamTensor, PeftReach, Scope, TpSplit, MAX_DIM};
pub use per_layer::PerLayerInputs;
pub use resnet::{resnet_blocks, ResNetArch, ResNetBlock};
pub use shared::SharedBlocks;
pub use tensors::Tensors;
pub use tower::{TowerKind, VisionTower};
pub use transformer::{vit_patches, EmbeddingPart, Stack, TransformerArch, VisionPart};
