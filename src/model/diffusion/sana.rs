//! `SanaTransformer2DModel` (diffusers 0.42.1 `models/transformers/sana_transformer.py`:
//! `__init__` lines 340–420, `SanaTransformerBlock` lines 190–250, `GLUMBConv` lines 40–80,
//! `SanaCombinedTimestepGuidanceEmbeddings` lines 99–110), as parameter tensors (its
//! activations are not modelled yet): a conv patch embedding, `AdaLayerNormSingle` (time
//! embedding and a 6-way projection; Sana Sprint's guidance embedding beside it), the caption
//! projection from Gemma-2's 2304 and its RMS norm, blocks of linear self-attention (q/k/v without
//! bias by default), cross-attention with its own heads (`num_cross_attention_heads` ×
//! `cross_attention_head_dim`), and the GLUMBConv feed-forward (1×1 conv to 2 × `mlp_ratio` ×
//! hidden, a depthwise 3×3, a bias-free 1×1 back), a learned `scale_shift_table` per block and
//! at the output. Sana 600M and 1600M.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::blocks::{embedder, linear};

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `SanaTransformer2DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sana {
    pub in_channels: u64,
    pub out_channels: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub layers: u64,
    pub cross_heads: u64,
    pub cross_head_dim: u64,
    /// `cross_attention_dim` (`None`: no cross-attention).
    pub cross_attention_dim: Option<u64>,
    pub caption_channels: u64,
    /// GLUMBConv's hidden width, `int(mlp_ratio × hidden)`.
    pub mlp_width: u64,
    pub attention_bias: bool,
    pub patch_size: u64,
    /// `norm_elementwise_affine`: the cross-attention LayerNorm's weight and bias.
    pub affine: bool,
    pub guidance_embeds: bool,
    /// `qk_norm: "rms_norm_across_heads"` (Sana 1.5, Sprint).
    pub qk_norm: bool,
}

impl Sana {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("num_layers", self.layers),
            ("num_cross_attention_heads", self.cross_heads),
            ("cross_attention_head_dim", self.cross_head_dim),
            ("caption_channels", self.caption_channels),
            ("mlp_ratio", self.mlp_width),
            ("patch_size", self.patch_size),
        ] {
            check_dim(field, v)?;
        }
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    fn projection(&self, out: &mut Vec<ParamTensor>, name: &'static str, kind: &'static [LinearKind], o: u64, i: u64, bias: bool) {
        out.push(ParamTensor::linear(name, kind, o, i, S));
        if bias {
            out.push(ParamTensor::vector(name, o, S, R));
        }
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, p, m) = (self.hidden(), self.patch_size, self.mlp_width);
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding (pos_embed.proj)", &[h, self.in_channels, p, p], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        embedder(&mut out, "timestep embedder", 256, h);
        if self.guidance_embeds {
            embedder(&mut out, "guidance embedder", 256, h);
        }
        linear(&mut out, "AdaLayerNormSingle (time_embed.linear)", None, 6 * h, h);
        embedder(&mut out, "caption projection", self.caption_channels, h);
        out.push(ParamTensor::vector("caption RMS norm", h, S, R));
        for _ in 0..self.layers {
            out.push(ParamTensor::new("block scale_shift_table", &[6, h], S, R));
            self.projection(&mut out, "linear attention q (to_q)", &[LinearKind::Q], h, h, self.attention_bias);
            self.projection(&mut out, "linear attention k (to_k)", &[LinearKind::K], h, h, self.attention_bias);
            self.projection(&mut out, "linear attention v (to_v)", &[LinearKind::V], h, h, self.attention_bias);
            self.projection(&mut out, "linear attention out (to_out.0)", &[LinearKind::O], h, h, true);
            if self.qk_norm {
                out.push(ParamTensor::new("q/k RMS norms across heads", &[2, h], S, R));
            }
            if let Some(cross) = self.cross_attention_dim {
                let c = self.cross_heads * self.cross_head_dim;
                if self.affine {
                    out.push(ParamTensor::new("cross-attention LayerNorm (norm2)", &[2, h], S, R));
                }
                self.projection(&mut out, "cross-attention q (to_q)", &[LinearKind::Q], c, h, true);
                self.projection(&mut out, "cross-attention k (to_k)", &[LinearKind::K], c, cross, true);
                self.projection(&mut out, "cross-attention v (to_v)", &[LinearKind::V], c, cross, true);
                self.projection(&mut out, "cross-attention out (to_out.0)", &[LinearKind::O], h, c, true);
                if self.qk_norm {
                    out.push(ParamTensor::new("cross-attention q/k RMS norms", &[2, c], S, R));
                }
            }
            linear(&mut out, "GLUMBConv conv_inverted (1×1)", None, 2 * m, h);
            out.push(ParamTensor::new("GLUMBConv conv_depth (3×3 depthwise)", &[2 * m, 1, 3, 3], S, R));
            out.push(ParamTensor::vector("GLUMBConv conv_depth bias", 2 * m, S, R));
            out.push(ParamTensor::new("GLUMBConv conv_point (1×1)", &[h, m], S, R));
        }
        out.push(ParamTensor::new("output scale_shift_table", &[2, h], S, R));
        linear(&mut out, "proj_out", None, p * p * self.out_channels, h);
        out
    }
}
