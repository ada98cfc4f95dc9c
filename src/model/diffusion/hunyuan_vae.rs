//! `AutoencoderKLHunyuanVideo`, HunyuanVideo's causal 3-D VAE, as diffusers 0.42.1 builds it
//! (`models/autoencoders/autoencoder_kl_hunyuan_video.py`: `HunyuanVideoCausalConv3d` 46–77,
//! the causal up/down-sampling convs 79–139, `HunyuanVideoResnetBlockCausal3D` 141–185,
//! `HunyuanVideoMidBlock3D` 187–282, the down and up blocks 284–408,
//! `HunyuanVideoEncoder3D` 410–516, `HunyuanVideoDecoder3D` 518–623,
//! `AutoencoderKLHunyuanVideo.__init__` 637–690):
//! `AutoencoderKL`'s layout with causal 3-D convs:
//! - the encoder: a causal 3×3×3 `conv_in`; per level `layers_per_block` residual blocks
//!   (GroupNorm, 3×3×3 conv, GroupNorm, 3×3×3 conv, a 1×1×1 causal shortcut when the width
//!   changes) and a 3×3×3 down-sampling conv where the level halves space
//!   (`i < log2(spatial_compression_ratio)`) or time (`temporal_compression_ratio` 4: the
//!   levels `i >= n − 1 − log2(4)` but the last); a mid block (residual block, one
//!   single-head attention with a GroupNorm and biased `to_q/to_k/to_v/to_out.0` linears when
//!   `mid_block_add_attention`, residual block); `conv_norm_out`, `conv_out` to 2 × latent;
//! - `quant_conv` (2z → 2z) and `post_quant_conv` (z → z), 1×1×1;
//! - the decoder on the reversed widths: `conv_in`, the mid block, per level
//!   `layers_per_block + 1` residual blocks and a 3×3×3 up-sampling conv on the same rule;
//!   `conv_norm_out`, `conv_out`.

use serde::{Deserialize, Serialize};

use super::conv::{conv, linear, vector};
use crate::error::InputError;
use crate::model::arch::param::ParamTensor;

/// An `AutoencoderKLHunyuanVideo`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HunyuanVideoVae {
    pub in_channels: u64,
    pub out_channels: u64,
    pub latent_channels: u64,
    /// `block_out_channels`, one per level.
    pub channels: Vec<u64>,
    pub layers_per_block: u64,
    pub norm_num_groups: u64,
    pub mid_block_add_attention: bool,
    pub spatial_compression_ratio: u64,
    pub temporal_compression_ratio: u64,
}

impl HunyuanVideoVae {
    pub fn check(&self) -> Result<(), InputError> {
        super::vae_shape::check_levels(self.in_channels, self.out_channels, self.latent_channels, self.layers_per_block, &self.channels, self.norm_num_groups)?;
        for (field, ratio) in [("spatial_compression_ratio", self.spatial_compression_ratio), ("temporal_compression_ratio", self.temporal_compression_ratio)] {
            if !ratio.is_power_of_two() || ratio > 1 << (self.channels.len() - 1).max(1) {
                return Err(InputError::new(field, format!("must be a power of two the levels can reach, got {ratio}")));
            }
        }
        if self.temporal_compression_ratio != 4 {
            // The decoder refuses any other ratio (`HunyuanVideoDecoder3D.__init__`).
            return Err(InputError::new("temporal_compression_ratio", "diffusers builds this VAE with 4 only"));
        }
        Ok(())
    }

    pub fn spatial_factor(&self) -> u64 {
        self.spatial_compression_ratio
    }

    pub fn temporal_factor(&self) -> u64 {
        self.temporal_compression_ratio
    }

    pub fn latent_channels(&self) -> u64 {
        self.latent_channels
    }

    /// Whether level `i` (encoder order) changes the size: halves space or time.
    fn resamples(&self, i: usize) -> bool {
        let n = self.channels.len();
        let spatial = (i as u32) < self.spatial_compression_ratio.trailing_zeros();
        let time = i + 1 + self.temporal_compression_ratio.trailing_zeros() as usize >= n && i + 1 < n;
        spatial || time
    }

    /// Every parameter tensor, in [`Scope::Vae`](crate::model::arch::param::Scope::Vae).
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (n, z) = (self.channels.len(), self.latent_channels);
        let k3 = [3, 3, 3];
        let mut out = Vec::new();
        conv(&mut out, "hunyuan vae encoder conv_in", self.channels[0], self.in_channels, &k3, 1, true);
        let mut cin = self.channels[0];
        for (i, &c) in self.channels.iter().enumerate() {
            for _ in 0..self.layers_per_block {
                resnet(&mut out, cin, c);
                cin = c;
            }
            if self.resamples(i) {
                conv(&mut out, "hunyuan vae downsample conv", c, c, &k3, 1, true);
            }
        }
        let last = self.channels[n - 1];
        self.mid(&mut out, last);
        vector(&mut out, "hunyuan vae encoder conv_norm_out", 2 * last);
        conv(&mut out, "hunyuan vae encoder conv_out", 2 * z, last, &k3, 1, true);
        conv(&mut out, "hunyuan vae quant_conv", 2 * z, 2 * z, &[1, 1, 1], 1, true);
        conv(&mut out, "hunyuan vae post_quant_conv", z, z, &[1, 1, 1], 1, true);
        let rev: Vec<u64> = self.channels.iter().rev().copied().collect();
        conv(&mut out, "hunyuan vae decoder conv_in", rev[0], z, &k3, 1, true);
        self.mid(&mut out, rev[0]);
        let mut cin = rev[0];
        for (i, &c) in rev.iter().enumerate() {
            for _ in 0..=self.layers_per_block {
                resnet(&mut out, cin, c);
                cin = c;
            }
            if self.resamples(i) {
                conv(&mut out, "hunyuan vae upsample conv", c, c, &k3, 1, true);
            }
        }
        vector(&mut out, "hunyuan vae decoder conv_norm_out", 2 * rev[n - 1]);
        conv(&mut out, "hunyuan vae decoder conv_out", self.out_channels, rev[n - 1], &k3, 1, true);
        out
    }

    /// `HunyuanVideoMidBlock3D`: residual block, attention (when asked), residual block.
    fn mid(&self, out: &mut Vec<ParamTensor>, c: u64) {
        resnet(out, c, c);
        if self.mid_block_add_attention {
            vector(out, "hunyuan vae attention group_norm", 2 * c);
            for name in ["hunyuan vae attention to_q", "hunyuan vae attention to_k", "hunyuan vae attention to_v", "hunyuan vae attention to_out"] {
                linear(out, name, c, c, true);
            }
        }
        resnet(out, c, c);
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

/// `HunyuanVideoResnetBlockCausal3D`: GroupNorm, causal 3×3×3 conv, GroupNorm, causal 3×3×3
/// conv, a 1×1×1 causal shortcut when the width changes.
fn resnet(out: &mut Vec<ParamTensor>, cin: u64, cout: u64) {
    vector(out, "hunyuan vae resnet norm1", 2 * cin);
    conv(out, "hunyuan vae resnet conv1", cout, cin, &[3, 3, 3], 1, true);
    vector(out, "hunyuan vae resnet norm2", 2 * cout);
    conv(out, "hunyuan vae resnet conv2", cout, cout, &[3, 3, 3], 1, true);
    if cin != cout {
        conv(out, "hunyuan vae resnet conv_shortcut", cout, cin, &[1, 1, 1], 1, true);
    }
}
