//! `AutoencoderKLWan`, Wan 2.1's causal 3D VAE, as diffusers 0.42.1 builds it
//! (`models/autoencoders/autoencoder_kl_wan.py`: `AutoencoderKLWan.__init__` lines 980–1060,
//! `WanEncoder3d` 513–590, `WanDecoder3d` 792–880, `WanResidualBlock` 319–348,
//! `WanAttentionBlock` 393–408, `WanResample` 228–270, `WanRMS_norm` 180–200):
//! - causal 3D convolutions (`WanCausalConv3d`, a `Conv3d` with bias) of kernel 3 in the
//!   residual blocks, `conv_in` and `conv_out`; RMS norms with a per-channel `gamma` only;
//! - the encoder: `conv_in`, per level `num_res_blocks` residual blocks (a 1×1×1 shortcut
//!   when the width changes) and, except at the last level, a 2D stride-2 conv
//!   (`downsample2d`) plus, where `temperal_downsample` says so, a (3, 1, 1) stride-2 time conv
//!   (`downsample3d`); the mid block (residual block, one single-head attention with 1×1
//!   `to_qkv` and `proj` 2D convs, residual block); `norm_out`, `conv_out` to 2 × `z_dim`;
//! - `quant_conv` (2 z → 2 z) and `post_quant_conv` (z → z), 1×1×1;
//! - the decoder on the reversed widths: `conv_in`, the mid block, per level
//!   `num_res_blocks + 1` residual blocks (every level after the first takes half the width
//!   its predecessor's upsampler leaves: `WanResample`'s `upsample_out_dim = dim // 2`) and,
//!   except at the last, nearest ×2 and a 3×3 conv to half the width (`upsample2d`) plus a
//!   (3, 1, 1) time conv doubling the channels (`upsample3d`, which doubles the frames);
//!   `norm_out`, `conv_out`.
//!
//! Wan 2.2's layout (`is_residual`, Wan2.2-TI2V-5B's VAE): the encoder's levels are
//! `WanResidualDownBlock`s (the same residual blocks and resamplers, no attention, plus a
//! weightless `AvgDown3D` shortcut, lines 477–510); the decoder's are `WanResidualUpBlock`s
//! (lines 635–720): the input width is not halved and the up-sampling conv keeps the width
//! (`upsample_out_dim=out_dim`), beside a weightless `DupUp3D` shortcut. `patch_size` folds
//! p × p pixels into the channels before `conv_in` (`patchify`, lines 921–942: the config's
//! `in_channels` already counts them, 12 = 3 × 2 × 2), so a latent pixel covers p × 8 pixels.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor, Scope, TpSplit};

/// An `AutoencoderKLWan` (Wan 2.1 layout, or Wan 2.2's with `is_residual`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WanVae {
    pub in_channels: u64,
    pub out_channels: u64,
    /// `base_dim` (encoder) and `decoder_base_dim` (decoder; `base_dim` when absent).
    pub base_dim: u64,
    pub decoder_base_dim: u64,
    pub z_dim: u64,
    pub dim_mult: Vec<u64>,
    pub num_res_blocks: u64,
    /// `temperal_downsample`, one per level but the last.
    pub temporal_downsample: Vec<bool>,
    /// `attn_scales` entries that fall on a level (1, 1/2, 1/4, …): attention after each of
    /// that level's encoder residual blocks.
    pub attn_levels: Vec<bool>,
    /// Wan 2.2's residual up and down blocks (`is_residual`).
    #[serde(default)]
    pub is_residual: bool,
    /// `patch_size` (Wan 2.2: 2; 1 when the config has none).
    #[serde(default = "one")]
    pub patch_size: u64,
}

fn one() -> u64 {
    1
}

impl WanVae {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("in_channels", self.in_channels)?;
        check_dim("out_channels", self.out_channels)?;
        check_dim("base_dim", self.base_dim)?;
        check_dim("decoder_base_dim", self.decoder_base_dim)?;
        check_dim("z_dim", self.z_dim)?;
        check_dim("num_res_blocks", self.num_res_blocks)?;
        check_dim("patch_size", self.patch_size)?;
        super::check_blocks("num_res_blocks", self.num_res_blocks)?;
        if self.dim_mult.is_empty() || self.dim_mult.len() > 8 {
            return Err(InputError::new("dim_mult", "needs 1 to 8 levels"));
        }
        if self.temporal_downsample.len() + 1 < self.dim_mult.len() {
            return Err(InputError::new("temperal_downsample", format!("needs {} entries (one per level but the last)", self.dim_mult.len() - 1)));
        }
        Ok(())
    }

    /// Pixels per latent pixel along each side: 2 per level but the last, times the patch
    /// (`scale_factor_spatial`: 8 for Wan 2.1, 16 for Wan 2.2's patchified VAE).
    pub fn spatial_factor(&self) -> u64 {
        (1 << (self.dim_mult.len() - 1)) * self.patch_size.max(1)
    }

    /// Frames per latent frame after the first: 2 per temporally down-sampling level
    /// (Wan 2.1: 4; a clip of `1 + 4k` frames has `1 + k` latent frames).
    pub fn temporal_factor(&self) -> u64 {
        1 << self.temporal_downsample.iter().take(self.dim_mult.len() - 1).filter(|&&t| t).count()
    }

    pub fn latent_channels(&self) -> u64 {
        self.z_dim
    }

    /// Every parameter tensor, in [`Scope::Vae`].
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let s = Scope::Vae;
        let n = self.dim_mult.len();
        let mut out = Vec::new();
        // Encoder.
        let dims: Vec<u64> = std::iter::once(1).chain(self.dim_mult.iter().copied()).map(|m| self.base_dim * m).collect();
        conv3(&mut out, "wan vae encoder conv_in", self.in_channels, dims[0], [3, 3, 3]);
        for i in 0..n {
            let (mut cin, c) = (dims[i], dims[i + 1]);
            for _ in 0..self.num_res_blocks {
                residual(&mut out, cin, c);
                if !self.is_residual && self.attn_levels.get(i).copied().unwrap_or(false) {
                    attention(&mut out, c);
                }
                cin = c;
            }
            if i + 1 < n {
                conv2(&mut out, "wan vae downsample conv", c, c);
                if self.temporal_downsample[i] {
                    conv3(&mut out, "wan vae downsample time_conv", c, c, [3, 1, 1]);
                }
            }
        }
        let last = dims[n];
        mid(&mut out, last);
        out.push(ParamTensor::vector("wan vae encoder norm_out", last, s, TpSplit::Replicated));
        conv3(&mut out, "wan vae encoder conv_out", last, 2 * self.z_dim, [3, 3, 3]);
        conv3(&mut out, "wan vae quant_conv", 2 * self.z_dim, 2 * self.z_dim, [1, 1, 1]);
        conv3(&mut out, "wan vae post_quant_conv", self.z_dim, self.z_dim, [1, 1, 1]);
        // Decoder: widths [mult[-1]] + reversed(mult), times decoder_base_dim.
        let dd: Vec<u64> = std::iter::once(self.dim_mult[n - 1]).chain(self.dim_mult.iter().rev().copied()).map(|m| self.decoder_base_dim * m).collect();
        conv3(&mut out, "wan vae decoder conv_in", self.z_dim, dd[0], [3, 3, 3]);
        mid(&mut out, dd[0]);
        let temporal_up: Vec<bool> = self.temporal_downsample.iter().take(n - 1).rev().copied().collect();
        for i in 0..n {
            // Wan 2.1 halves the width at every up-sampler; Wan 2.2's residual blocks keep it.
            let halved = i > 0 && !self.is_residual;
            let (mut cin, c) = (if halved { dd[i] / 2 } else { dd[i] }, dd[i + 1]);
            for _ in 0..=self.num_res_blocks {
                residual(&mut out, cin, c);
                cin = c;
            }
            if i + 1 < n {
                conv2(&mut out, "wan vae upsample conv", c, if self.is_residual { c } else { c / 2 });
                if temporal_up[i] {
                    conv3(&mut out, "wan vae upsample time_conv", c, 2 * c, [3, 1, 1]);
                }
            }
        }
        let c0 = dd[n];
        out.push(ParamTensor::vector("wan vae decoder norm_out", c0, s, TpSplit::Replicated));
        conv3(&mut out, "wan vae decoder conv_out", c0, self.out_channels, [3, 3, 3]);
        out
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

/// A `WanCausalConv3d` (a `Conv3d` with bias) of `kernel` (time, height, width).
fn conv3(out: &mut Vec<ParamTensor>, name: &'static str, cin: u64, cout: u64, kernel: [u64; 3]) {
    out.push(ParamTensor::new(name, &[cout, cin, kernel[0] * kernel[1], kernel[2]], Scope::Vae, TpSplit::Replicated));
    out.push(ParamTensor::vector(name, cout, Scope::Vae, TpSplit::Replicated));
}

/// A 3×3 `Conv2d` with bias (the resamplers' spatial conv).
fn conv2(out: &mut Vec<ParamTensor>, name: &'static str, cin: u64, cout: u64) {
    out.push(ParamTensor::new(name, &[cout, cin, 3, 3], Scope::Vae, TpSplit::Replicated));
    out.push(ParamTensor::vector(name, cout, Scope::Vae, TpSplit::Replicated));
}

/// `WanResidualBlock`: RMS norm, causal 3×3×3 conv, RMS norm, causal 3×3×3 conv, a 1×1×1
/// shortcut when the width changes.
fn residual(out: &mut Vec<ParamTensor>, cin: u64, cout: u64) {
    out.push(ParamTensor::vector("wan vae residual norm1", cin, Scope::Vae, TpSplit::Replicated));
    conv3(out, "wan vae residual conv1", cin, cout, [3, 3, 3]);
    out.push(ParamTensor::vector("wan vae residual norm2", cout, Scope::Vae, TpSplit::Replicated));
    conv3(out, "wan vae residual conv2", cout, cout, [3, 3, 3]);
    if cin != cout {
        conv3(out, "wan vae residual conv_shortcut", cin, cout, [1, 1, 1]);
    }
}

/// `WanAttentionBlock`: RMS norm, 1×1 `to_qkv` (3 × width) and `proj` 2D convs with biases.
fn attention(out: &mut Vec<ParamTensor>, c: u64) {
    out.push(ParamTensor::vector("wan vae attention norm", c, Scope::Vae, TpSplit::Replicated));
    out.push(ParamTensor::new("wan vae attention to_qkv", &[3 * c, c, 1, 1], Scope::Vae, TpSplit::Replicated));
    out.push(ParamTensor::vector("wan vae attention to_qkv bias", 3 * c, Scope::Vae, TpSplit::Replicated));
    out.push(ParamTensor::new("wan vae attention proj", &[c, c, 1, 1], Scope::Vae, TpSplit::Replicated));
    out.push(ParamTensor::vector("wan vae attention proj bias", c, Scope::Vae, TpSplit::Replicated));
}

/// `WanMidBlock`: residual block, attention, residual block.
fn mid(out: &mut Vec<ParamTensor>, c: u64) {
    residual(out, c, c);
    attention(out, c);
    residual(out, c, c);
}
