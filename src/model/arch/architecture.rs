//! `Architecture`: a transformer stack, a ResNet or a diffusion pipeline, its shape check, its
//! parameter tensors and counts, and how many blocks hold each scope.

use serde::{Deserialize, Serialize};

use super::param::{ParamTensor, Scope};
use super::resnet::ResNetArch;
use super::transformer::{Stack, TransformerArch};
use crate::error::InputError;

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
    pub(super) fn count_params(&self, tensors: &[ParamTensor]) -> f64 {
        tensors.iter().map(|p| p.numel() * self.multiplicity(p.scope)).sum()
    }

    /// Parameters one token uses: like `param_count`, but only the top-k routed experts of
    /// each MoE block (Fedus et al. 2021; Mixtral's "12.9B active"; DeepSeek-V3's "37B").
    pub fn active_param_count(&self) -> f64 {
        let tensors = self.param_tensors();
        self.count_active_params(&tensors, self.count_params(&tensors))
    }

    /// [`Self::active_param_count`] of this architecture's `tensors`, whose count is `all`.
    pub(super) fn count_active_params(&self, tensors: &[ParamTensor], all: f64) -> f64 {
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

    /// Whether the frozen tensors of `scope` stay in fp32 in a 16-bit run (an SDXL pipeline's
    /// own VAE in its training scripts: [`Resident::vae_fp32`](crate::model::diffusion::pipeline::Resident::vae_fp32)).
    pub fn keeps_fp32(&self, scope: Scope) -> bool {
        matches!((self, scope), (Architecture::Diffusion(d), Scope::Vae) if d.resident.vae_fp32)
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
