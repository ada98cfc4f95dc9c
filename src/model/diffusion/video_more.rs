//! The other video diffusion transformers of the catalogue, as diffusers 0.42.1 builds them
//! (parameter tensors; their activations are not modelled yet):
//! - `HunyuanVideoTransformer3DModel` (`transformer_hunyuan_video.py` `__init__` lines 904–990):
//!   a `Conv3d` patch embedding, the text token refiner (`HunyuanVideoTokenRefiner` lines
//!   429–456: time + mean-pooled text embedding, `proj_in`, `num_refiner_layers` blocks of affine
//!   LayerNorm, q/k/v/out attention with biases, a 4× SiLU feed-forward and an adaLN `norm_out`
//!   of 2 × hidden, lines 332–358), the condition embedding (time, pooled CLIP, guidance), Flux-like
//!   double-stream blocks with RMS q/k norms and single-stream blocks (`mlp_ratio`), the
//!   continuous adaLN output and `proj_out`. HunyuanVideo (13B).
//! - `CogVideoXTransformer3DModel` (`cogvideox_transformer_3d.py` `__init__` lines 220–330,
//!   `CogVideoXBlock` lines 80–120): a conv (or, with `patch_size_t`, linear) patch embedding and
//!   the text projection, the time embedding to `time_embed_dim`, blocks of two
//!   `CogVideoXLayerNormZero` (a 6-way modulation from the time embedding and an affine
//!   LayerNorm), full attention over text + video with LayerNorm q/k norms, a 4× feed-forward,
//!   then `norm_final`, an `AdaLayerNorm` and `proj_out`. CogVideoX-2b and 5b.
//! - `LTXVideoTransformer3DModel` (`transformer_ltx.py` `__init__` lines 430–490): `proj_in` over
//!   the pipeline-packed latent, `AdaLayerNormSingle` (time embedding and 6-way projection), the
//!   caption projection, blocks with a learned `scale_shift_table`, self-attention and
//!   cross-attention (RMS norms across heads), a 4× GELU(tanh) feed-forward. LTX-Video 2B.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::mmdit::{attention, embedder, feed_forward, linear};

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `HunyuanVideoTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HunyuanVideo {
    pub in_channels: u64,
    pub out_channels: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub layers: u64,
    pub single_layers: u64,
    pub refiner_layers: u64,
    /// Feed-forward width of the double and single blocks (`int(hidden × mlp_ratio)`).
    pub mlp_width: u64,
    pub patch_size: u64,
    pub patch_size_t: u64,
    /// `qk_norm: "rms_norm"` (a weight per head width) or none.
    pub qk_norm: bool,
    pub guidance_embeds: bool,
    pub text_embed_dim: u64,
    pub pooled_projection_dim: u64,
}

impl HunyuanVideo {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("num_layers", self.layers),
            ("num_single_layers", self.single_layers),
            ("mlp_ratio", self.mlp_width),
            ("patch_size", self.patch_size),
            ("patch_size_t", self.patch_size_t),
            ("text_embed_dim", self.text_embed_dim),
            ("pooled_projection_dim", self.pooled_projection_dim),
        ] {
            check_dim(field, v)?;
        }
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, d, (p, pt)) = (self.hidden(), self.head_dim, (self.patch_size, self.patch_size_t));
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding (Conv3d)", &[h, self.in_channels, pt * p, p], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        // token refiner
        embedder(&mut out, "refiner timestep embedder", 256, h);
        embedder(&mut out, "refiner pooled text embedder", self.text_embed_dim, h);
        linear(&mut out, "refiner proj_in", None, h, self.text_embed_dim);
        for _ in 0..self.refiner_layers {
            out.push(ParamTensor::new("refiner LayerNorms", &[4, h], S, R));
            attention(&mut out, h, true);
            feed_forward(&mut out, h, 4 * h);
            linear(&mut out, "refiner adaLN (norm_out.linear)", None, 2 * h, h);
        }
        embedder(&mut out, "timestep embedder", 256, h);
        embedder(&mut out, "pooled text embedder", self.pooled_projection_dim, h);
        if self.guidance_embeds {
            embedder(&mut out, "guidance embedder", 256, h);
        }
        let norms = |out: &mut Vec<ParamTensor>, n: u64| {
            if self.qk_norm {
                out.push(ParamTensor::new("q/k RMS norms", &[n, d], S, R));
            }
        };
        for _ in 0..self.layers {
            for _stream in 0..2 {
                linear(&mut out, "AdaLayerNormZero (norm1.linear)", None, 6 * h, h);
                attention(&mut out, h, true);
                feed_forward(&mut out, h, self.mlp_width);
            }
            norms(&mut out, 4);
        }
        for _ in 0..self.single_layers {
            linear(&mut out, "AdaLayerNormZeroSingle (norm.linear)", None, 3 * h, h);
            attention(&mut out, h, false);
            norms(&mut out, 2);
            linear(&mut out, "single-block MLP (proj_mlp)", None, self.mlp_width, h);
            linear(&mut out, "single-block out (proj_out)", None, h, h + self.mlp_width);
        }
        linear(&mut out, "AdaLayerNormContinuous (norm_out.linear)", None, 2 * h, h);
        linear(&mut out, "proj_out", None, pt * p * p * self.out_channels, h);
        out
    }
}

/// `CogVideoXTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CogVideoX {
    pub heads: u64,
    pub head_dim: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    pub time_embed_dim: u64,
    pub text_embed_dim: u64,
    pub layers: u64,
    pub patch_size: u64,
    /// CogVideoX 1.5: a temporal patch (the patch embedding is then a linear).
    pub patch_size_t: Option<u64>,
    /// `attention_bias`: biases on q/k/v.
    pub attention_bias: bool,
    /// `norm_elementwise_affine`: weight and bias on every LayerNorm.
    pub affine: bool,
    /// `patch_bias` (of the Conv2d patch embedding).
    pub patch_bias: bool,
    /// CogVideoX 1.5 I2V's `ofs_embed_dim` embedding.
    pub ofs_embed_dim: Option<u64>,
}

impl CogVideoX {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("time_embed_dim", self.time_embed_dim),
            ("text_embed_dim", self.text_embed_dim),
            ("num_layers", self.layers),
            ("patch_size", self.patch_size),
        ] {
            check_dim(field, v)?;
        }
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, p, t) = (self.hidden(), self.patch_size, self.time_embed_dim);
        let pt = self.patch_size_t.unwrap_or(1);
        let ln = |out: &mut Vec<ParamTensor>, name: &'static str, width: u64| {
            if self.affine {
                out.push(ParamTensor::new(name, &[2, width], S, R));
            }
        };
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding", &[h, self.in_channels * pt, p, p], S, R));
        // `patch_bias` reaches the Conv2d only; the linear of a temporal patch always has a bias
        // (`embeddings.py` `CogVideoXPatchEmbed.__init__`)
        if self.patch_bias || self.patch_size_t.is_some() {
            out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        }
        linear(&mut out, "text projection (patch_embed.text_proj)", None, h, self.text_embed_dim);
        linear(&mut out, "time embedding linear_1", None, t, h);
        linear(&mut out, "time embedding linear_2", None, t, t);
        if let Some(ofs) = self.ofs_embed_dim {
            embedder(&mut out, "ofs embedding", ofs, ofs);
        }
        for _ in 0..self.layers {
            for _norm in 0..2 {
                linear(&mut out, "CogVideoXLayerNormZero (norm.linear)", None, 6 * h, t);
                ln(&mut out, "CogVideoXLayerNormZero LayerNorm", h);
            }
            const QKV: [(&str, &[LinearKind]); 3] = [("attention q (to_q)", &[LinearKind::Q]), ("attention k (to_k)", &[LinearKind::K]), ("attention v (to_v)", &[LinearKind::V])];
            for (name, kind) in QKV {
                out.push(ParamTensor::linear(name, kind, h, h, S));
                if self.attention_bias {
                    out.push(ParamTensor::vector(name, h, S, R));
                }
            }
            linear(&mut out, "attention out (to_out.0)", Some(&[LinearKind::O]), h, h);
            out.push(ParamTensor::new("q/k LayerNorms", &[4, self.head_dim], S, R));
            feed_forward(&mut out, h, 4 * h);
        }
        ln(&mut out, "norm_final", h);
        linear(&mut out, "AdaLayerNorm (norm_out.linear)", None, 2 * h, t);
        ln(&mut out, "AdaLayerNorm LayerNorm", h);
        linear(&mut out, "proj_out", None, p * p * pt * self.out_channels, h);
        out
    }
}

/// `LTXVideoTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LtxVideo {
    /// Channels of the pipeline-packed latent (`_pack_latents` folds `patch_size` ×
    /// `patch_size` × `patch_size_t` latent pixels into one token).
    pub in_channels: u64,
    pub patch_size: u64,
    pub out_channels: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub cross_attention_dim: u64,
    pub layers: u64,
    pub caption_channels: u64,
    pub attention_bias: bool,
    pub attention_out_bias: bool,
}

impl LtxVideo {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("cross_attention_dim", self.cross_attention_dim),
            ("num_layers", self.layers),
            ("caption_channels", self.caption_channels),
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
        let h = self.hidden();
        let mut out = Vec::new();
        out.push(ParamTensor::new("output scale_shift_table", &[2, h], S, R));
        linear(&mut out, "proj_in", None, h, self.in_channels);
        embedder(&mut out, "timestep embedder", 256, h);
        linear(&mut out, "AdaLayerNormSingle (time_embed.linear)", None, 6 * h, h);
        embedder(&mut out, "caption projection", self.caption_channels, h);
        for _ in 0..self.layers {
            out.push(ParamTensor::new("block scale_shift_table", &[6, h], S, R));
            for kv_in in [h, self.cross_attention_dim] {
                self.projection(&mut out, "attention q (to_q)", &[LinearKind::Q], h, h, self.attention_bias);
                self.projection(&mut out, "attention k (to_k)", &[LinearKind::K], h, kv_in, self.attention_bias);
                self.projection(&mut out, "attention v (to_v)", &[LinearKind::V], h, kv_in, self.attention_bias);
                self.projection(&mut out, "attention out (to_out.0)", &[LinearKind::O], h, h, self.attention_out_bias);
                out.push(ParamTensor::new("q/k RMS norms across heads", &[2, h], S, R));
            }
            feed_forward(&mut out, h, 4 * h);
        }
        linear(&mut out, "proj_out", None, self.out_channels, h);
        out
    }
}
