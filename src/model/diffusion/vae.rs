//! `AutoencoderKL`, the image VAE of Stable Diffusion 1.x/2.x/XL (4 latent channels) and of
//! SD3/Flux (16 latent channels, no `quant_conv`/`post_quant_conv`), as diffusers 0.42.1
//! builds it (`models/autoencoders/autoencoder_kl.py` `AutoencoderKL.__init__`, lines 78–140;
//! `models/autoencoders/vae.py` `Encoder` and `Decoder`):
//! - Encoder: `conv_in` (3×3), per level `layers_per_block` `ResnetBlock2D`s without a time
//!   embedding (`DownEncoderBlock2D`) and, except at the last level, a stride-2 3×3
//!   `Downsample2D` (padding 0 after an asymmetric pad); `UNetMidBlock2D`: resnet, one
//!   single-head self-attention over all positions (`Attention` with a GroupNorm, biased
//!   q/k/v/out, residual; `mid_block_add_attention`), resnet; GroupNorm → SiLU → `conv_out` to
//!   2 × `latent_channels` (mean and log-variance, `double_z`); `quant_conv` (1×1).
//! - Decoder: `post_quant_conv` (1×1), `conv_in` to the last level's channels, the same mid
//!   block, per level (deepest first) `layers_per_block + 1` resnets (`UpDecoderBlock2D`) and,
//!   except at the last, nearest ×2 then a 3×3 conv (`Upsample2D`); GroupNorm → SiLU →
//!   `conv_out`.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::unet::{conv, resnet_params};

/// An `AutoencoderKL`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoencoderKl {
    pub in_channels: u64,
    pub out_channels: u64,
    pub latent_channels: u64,
    /// `block_out_channels`, one per level.
    pub channels: Vec<u64>,
    pub layers_per_block: u64,
    pub norm_num_groups: u64,
    /// `sample_size`: the tile edge of `enable_tiling()` (`tile_sample_min_size`).
    pub sample_size: u64,
    pub use_quant_conv: bool,
    pub use_post_quant_conv: bool,
    pub mid_block_add_attention: bool,
    /// `force_upcast`: the pipelines run the VAE in fp32 whatever the pipeline's dtype.
    pub force_upcast: bool,
}

impl AutoencoderKl {
    pub fn check(&self) -> Result<(), InputError> {
        super::vae_shape::check_levels(self.in_channels, self.out_channels, self.latent_channels, self.layers_per_block, &self.channels, self.norm_num_groups)?;
        check_dim("sample_size", self.sample_size)?;
        Ok(())
    }

    /// Pixels per latent pixel along each side: 2^(levels − 1).
    pub fn spatial_factor(&self) -> u64 {
        1 << (self.channels.len() - 1)
    }

    /// An image VAE: one latent frame per frame.
    pub fn temporal_factor(&self) -> u64 {
        1
    }

    pub fn latent_channels(&self) -> u64 {
        self.latent_channels
    }

    /// Every parameter tensor, in [`Scope::Vae`].
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let s = Scope::Vae;
        let r = TpSplit::Replicated;
        let (n, z) = (self.channels.len(), self.latent_channels);
        let last = self.channels[n - 1];
        let mut out = Vec::new();
        // Encoder.
        conv(&mut out, "vae encoder conv_in", self.in_channels, self.channels[0], 3, s);
        let mut prev = self.channels[0];
        for (i, &c) in self.channels.iter().enumerate() {
            for l in 0..self.layers_per_block {
                resnet_params(&mut out, if l == 0 { prev } else { c }, c, None, s);
            }
            if i + 1 < n {
                conv(&mut out, "vae encoder downsampler", c, c, 3, s);
            }
            prev = c;
        }
        self.mid_params(&mut out);
        out.push(ParamTensor::new("vae encoder conv_norm_out", &[2, last], s, r));
        conv(&mut out, "vae encoder conv_out", last, 2 * z, 3, s);
        if self.use_quant_conv {
            conv(&mut out, "vae quant_conv", 2 * z, 2 * z, 1, s);
        }
        // Decoder.
        if self.use_post_quant_conv {
            conv(&mut out, "vae post_quant_conv", z, z, 1, s);
        }
        conv(&mut out, "vae decoder conv_in", z, last, 3, s);
        self.mid_params(&mut out);
        let mut prev = last;
        for i in 0..n {
            let c = self.channels[n - 1 - i];
            for l in 0..=self.layers_per_block {
                resnet_params(&mut out, if l == 0 { prev } else { c }, c, None, s);
            }
            if i + 1 < n {
                conv(&mut out, "vae decoder upsampler", c, c, 3, s);
            }
            prev = c;
        }
        out.push(ParamTensor::new("vae decoder conv_norm_out", &[2, self.channels[0]], s, r));
        conv(&mut out, "vae decoder conv_out", self.channels[0], self.out_channels, 3, s);
        out
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }

    /// `UNetMidBlock2D` (`models/unets/unet_2d_blocks.py`): two resnets around one
    /// `Attention(c, heads = 1, dim_head = c, norm_num_groups, bias = True)` when
    /// `mid_block_add_attention`.
    fn mid_params(&self, out: &mut Vec<ParamTensor>) {
        let (s, r) = (Scope::Vae, TpSplit::Replicated);
        let c = self.channels[self.channels.len() - 1];
        resnet_params(out, c, c, None, s);
        if self.mid_block_add_attention {
            out.push(ParamTensor::new("vae attention group norm", &[2, c], s, r));
            out.push(ParamTensor::new("vae attention q, k, v, out", &[4, c, c], s, r));
            out.push(ParamTensor::new("vae attention biases", &[4, c], s, r));
        }
        resnet_params(out, c, c, None, s);
    }
}
