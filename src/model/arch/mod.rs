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

pub mod attention;
pub mod mixer;
pub mod mlp;
pub mod norm;
pub mod resnet;
pub mod tensors;
pub mod tower;
pub mod transformer;

use serde::{Deserialize, Serialize};

use crate::error::InputError;

pub use attention::{AttentionPart, LatentAttention, QkNorm};
pub use mixer::{HybridPart, Mixer};
pub use mlp::{Activation, MlpPart, MoePart, Router};
pub use norm::{NormKind, NormPart, Placement};
pub use resnet::{resnet_blocks, ResNetArch, ResNetBlock};
pub use tensors::Tensors;
pub use tower::{TowerKind, VisionTower};
pub use transformer::{vit_patches, EmbeddingPart, Stack, TransformerArch, VisionPart};

/// A model: a transformer stack (decoder, encoder, encoder-decoder or vision) or a ResNet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
// One architecture per estimate (and per layout search), never a collection of them: the
// transformer's size beside a ResNet's costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Architecture {
    Transformer(TransformerArch),
    Resnet(ResNetArch),
    /// A diffusion pipeline or one of its components (`model/diffusion/`).
    Diffusion(Box<crate::model::diffusion::pipeline::DiffusionArch>),
}

/// Which blocks hold a parameter tensor: decides how many copies exist and which pipeline
/// stage holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Before the first block (embeddings, patch projection, ResNet stem): first stage.
    Input,
    /// Once in every block.
    Layer,
    /// Once in every block whose feed-forward is dense (all blocks of a dense model; the
    /// `first_k_dense_replace` blocks of DeepSeek).
    DenseMlp,
    /// Once in every mixture-of-experts block (router, shared experts).
    MoeLayer,
    /// Once per routed expert per mixture-of-experts block.
    Expert,
    /// Once in every decoder block of an encoder-decoder (cross-attention).
    Cross,
    /// Once in every block with attention, in a hybrid stack (`mixer.rs`; a stack without
    /// other mixers keeps its attention in `Layer`).
    Attention,
    /// Once in every block with a non-attention token mixer (Mamba, Mamba-2, Gated
    /// DeltaNet, short conv).
    Mixer,
    /// A vision-language model's vision tower and projector (`tower.rs`), before the
    /// language model's first block: first stage.
    Tower,
    /// A diffusion pipeline's VAE (`model/diffusion/`), frozen, beside the denoiser: first stage.
    Vae,
    /// A diffusion pipeline's text encoders (`model/diffusion/`), frozen: first stage.
    TextEncoder,
    /// After the last block (final norm, LM head, classifier): last stage.
    Output,
}

impl Scope {
    /// Whether the tensor repeats with the blocks (as opposed to the model's edges).
    pub fn in_blocks(self) -> bool {
        !matches!(self, Scope::Input | Scope::Output | Scope::Tower | Scope::Vae | Scope::TextEncoder)
    }
}

/// How tensor parallelism (Megatron-LM, Shoeybi et al. 2019 §3) splits a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpSplit {
    /// Split across TP ranks (column- or row-parallel linear, vocab-parallel embedding).
    Sharded,
    /// Every TP rank holds a full copy (norms, row-parallel biases, positions, router).
    Replicated,
}

/// The linear layers LoRA can adapt, by their usual Hugging Face names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinearKind {
    Q,
    K,
    V,
    O,
    Gate,
    Up,
    Down,
}

impl LinearKind {
    pub const ALL: [LinearKind; 7] = [LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O, LinearKind::Gate, LinearKind::Up, LinearKind::Down];
}

/// One parameter tensor of the model (or one per block / per expert, see `scope`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamTensor {
    pub name: &'static str,
    /// Shape as PyTorch stores it (Linear weights are `[out, in]`), in the first `ndim`
    /// entries (a fixed array: building the tensor list allocates nothing per tensor).
    shape: [u64; 4],
    ndim: usize,
    pub scope: Scope,
    pub tp: TpSplit,
    /// Set for the matrices of linear layers (LoRA / QLoRA targets). A fused linear
    /// (GPT-2's `c_attn`, Phi-3's `qkv_proj`) carries every kind it stands for.
    pub linear: Option<&'static [LinearKind]>,
    /// For a LoRA target: `(in_features, out_features)` of the whole linear.
    pub lora_dims: Option<(u64, u64)>,
    /// An embedding lookup table (read by index, never cast by autocast).
    pub table: bool,
}

impl ParamTensor {
    /// A tensor of up to four dimensions (extra dimensions are ignored).
    pub fn new(name: &'static str, dims: &[u64], scope: Scope, tp: TpSplit) -> Self {
        let mut shape = [1; 4];
        let ndim = dims.len().min(4);
        shape[..ndim].copy_from_slice(&dims[..ndim]);
        ParamTensor { name, shape, ndim, scope, tp, linear: None, lora_dims: None, table: false }
    }

    /// The weight `[out, in]` of a linear layer that LoRA may adapt.
    pub fn linear(name: &'static str, kinds: &'static [LinearKind], out: u64, inp: u64, scope: Scope) -> Self {
        ParamTensor { linear: Some(kinds), lora_dims: Some((inp, out)), ..ParamTensor::new(name, &[out, inp], scope, TpSplit::Sharded) }
    }

    /// A bias or norm vector of `n` elements.
    pub fn vector(name: &'static str, n: u64, scope: Scope, tp: TpSplit) -> Self {
        ParamTensor::new(name, &[n], scope, tp)
    }

    /// An embedding table `[rows, width]`.
    pub fn table(name: &'static str, rows: u64, width: u64, scope: Scope, tp: TpSplit) -> Self {
        ParamTensor { table: true, ..ParamTensor::new(name, &[rows, width], scope, tp) }
    }

    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[u64] {
        &self.shape[..self.ndim]
    }

    /// Elements in one copy.
    pub fn numel(&self) -> f64 {
        self.shape().iter().map(|&d| d as f64).product()
    }

    /// Whether autocast casts this tensor for a matmul or convolution (every weight matrix
    /// except embedding tables).
    pub fn is_matmul_weight(&self) -> bool {
        self.ndim >= 2 && !self.table
    }
}

/// Upper bound on any one dimension of an architecture given in our own fields.
pub const MAX_DIM: u64 = 1 << 24;

/// `Ok` when `v` is a usable dimension, else an error naming `field`.
pub fn check_dim(field: &str, v: u64) -> Result<(), InputError> {
    if v == 0 || v > MAX_DIM {
        Err(InputError::new(field, format!("must be between 1 and {MAX_DIM}, got {v}")))
    } else {
        Ok(())
    }
}

impl Architecture {
    /// Reject shapes no model has (zero sizes, heads that do not group), naming the field.
    pub fn check(&self) -> Result<(), InputError> {
        match self {
            Architecture::Transformer(t) => t.check(),
            Architecture::Resnet(r) => r.check(),
            Architecture::Diffusion(d) => d.check(),
        }
    }

    /// Every parameter tensor, with `scope` saying how often it repeats.
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Architecture::Transformer(t) => t.param_tensors(),
            Architecture::Resnet(r) => r.param_tensors(),
            Architecture::Diffusion(d) => d.param_tensors(),
        }
    }

    /// Transformer blocks (1 for a ResNet, whose stages are not split by pipeline stage).
    pub fn layers(&self) -> u64 {
        match self {
            Architecture::Transformer(t) => t.layers.max(1),
            Architecture::Resnet(_) | Architecture::Diffusion(_) => 1,
        }
    }

    /// Routed experts per MoE block (1 for dense models).
    pub fn experts(&self) -> u64 {
        match self {
            Architecture::Transformer(t) => t.moe.as_ref().map_or(1, |m| m.experts.max(1)),
            Architecture::Resnet(_) | Architecture::Diffusion(_) => 1,
        }
    }

    /// How many blocks hold a tensor of this scope (1 for the edges).
    pub fn blocks(&self, scope: Scope) -> u64 {
        match self {
            Architecture::Transformer(t) => t.blocks(scope),
            Architecture::Resnet(_) | Architecture::Diffusion(_) => 1,
        }
    }

    /// How many copies of a tensor with this scope the whole model holds.
    pub fn multiplicity(&self, scope: Scope) -> f64 {
        match scope {
            Scope::Expert => self.blocks(scope) as f64 * self.experts() as f64,
            _ => self.blocks(scope) as f64,
        }
    }

    /// Total parameters, counting tied weights once (as `sum(p.numel())` in PyTorch).
    pub fn param_count(&self) -> f64 {
        self.count_params(&self.param_tensors())
    }

    /// [`Self::param_count`] of this architecture's `tensors`.
    fn count_params(&self, tensors: &[ParamTensor]) -> f64 {
        tensors.iter().map(|p| p.numel() * self.multiplicity(p.scope)).sum()
    }

    /// Parameters one token uses: like `param_count`, but only the top-k routed experts of
    /// each MoE block (Fedus et al. 2021; Mixtral's "12.9B active"; DeepSeek-V3's "37B").
    pub fn active_param_count(&self) -> f64 {
        let tensors = self.param_tensors();
        self.count_active_params(&tensors, self.count_params(&tensors))
    }

    /// [`Self::active_param_count`] of this architecture's `tensors`, whose count is `all`.
    fn count_active_params(&self, tensors: &[ParamTensor], all: f64) -> f64 {
        let Architecture::Transformer(TransformerArch { moe: Some(moe), .. }) = self else {
            return all;
        };
        let unused = moe.experts.saturating_sub(moe.top_k.min(moe.experts)) as f64;
        let per_expert: f64 = tensors.iter().filter(|p| p.scope == Scope::Expert).map(|p| p.numel()).sum();
        all - per_expert * unused * self.blocks(Scope::Expert) as f64
    }

    /// Default input resolution for vision models (0 for language models).
    pub fn default_image_size(&self) -> u64 {
        match self {
            Architecture::Transformer(t) if t.stack == Stack::Vision => t.vision.image_size,
            Architecture::Resnet(r) => r.image_size,
            Architecture::Diffusion(d) => d.resolution[0],
            _ => 0,
        }
    }

    /// Whether the tensors of `scope` are on the GPU during the run: a diffusion pipeline's
    /// VAE and text encoders leave it when their outputs are cached ([`DiffusionArch::for_run`](crate::model::diffusion::pipeline::DiffusionArch::for_run)).
    pub fn resident(&self, scope: Scope) -> bool {
        match (self, scope) {
            (Architecture::Diffusion(d), Scope::Vae) => d.resident.vae,
            (Architecture::Diffusion(d), Scope::TextEncoder) => d.resident.text_encoders,
            _ => true,
        }
    }

    /// This architecture as one run holds it on the GPU (a diffusion pipeline without the
    /// parts its caching or offload keeps off it); other architectures as they are.
    pub fn for_run(&self, training: &crate::model::inputs::Training) -> std::borrow::Cow<'_, Architecture> {
        match self {
            Architecture::Diffusion(d) => std::borrow::Cow::Owned(Architecture::Diffusion(Box::new(d.for_run(training)))),
            _ => std::borrow::Cow::Borrowed(self),
        }
    }

    /// The transformer, if this is one.
    pub fn transformer(&self) -> Option<&TransformerArch> {
        match self {
            Architecture::Transformer(t) => Some(t),
            Architecture::Resnet(_) | Architecture::Diffusion(_) => None,
        }
    }

    /// A one-line description for people: "decoder · 8.0B params · GQA · MoE 64×top-6".
    pub fn summary(&self) -> String {
        let params = crate::format::count(self.param_count() as u64);
        match self {
            Architecture::Transformer(t) => {
                let mut parts = vec![format!("{} · {params} params", t.stack.label())];
                if let Some(m) = &t.moe {
                    parts.push(format!("{} active · MoE {}×top-{}", crate::format::count(self.active_param_count() as u64), m.experts, m.top_k));
                }
                match &t.hybrid {
                    Some(hy) => parts.push(format!("{} {} + {} attention layers", hy.mixer_layers, hy.mixer.label(), hy.attention_layers)),
                    None => parts.push(t.attention.label().into()),
                }
                parts.push(format!("{} layers · h {}", t.layers, t.hidden));
                if let Some(tower) = &t.tower {
                    let tower_params: f64 = self.param_tensors().iter().filter(|p| p.scope == Scope::Tower).map(|p| p.numel()).sum();
                    parts.push(format!("vision tower + projector {} ({} blocks)", crate::format::count(tower_params as u64), tower.layers));
                }
                parts.join(" · ")
            }
            Architecture::Resnet(r) => {
                format!("ResNet · {params} params · {} stages", r.widths.len())
            }
            Architecture::Diffusion(d) => d.summary(|t| crate::format::count(t.iter().map(ParamTensor::numel).sum::<f64>() as u64)),
        }
    }
}
