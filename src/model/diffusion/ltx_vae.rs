//! `AutoencoderKLLTXVideo`, LTX-Video's VAE (32 × 32 × 8 compression into 128 channels), as
//! diffusers 0.42.1 builds it for the 0.9.0 layout (`models/autoencoders/autoencoder_kl_ltx.py`:
//! `LTXVideoCausalConv3d` 30–79, `LTXVideoResnetBlock3d` 81–195, `LTXVideoDownsampler3d`
//! 197–244, `LTXVideoUpsampler3d` 246–296, `LTXVideoDownBlock3D` 298–402,
//! `LTXVideoMidBlock3d` 517–598, `LTXVideoUpBlock3d` 600–724, `LTXVideoEncoder3d` 726–877,
//! `LTXVideoDecoder3d` 879–1033, `AutoencoderKLLTXVideo.__init__` 1078–1140):
//! - the input is patchified (`patch_size`² pixels per channel, so `conv_in` takes
//!   `in_channels · p²`); every conv is a 3×3×3 (causal in the encoder) conv with bias;
//! - a residual block: RMS norms without weights, conv1, conv2, and where the width changes a
//!   LayerNorm (`norm3`, weight and bias) and a 1×1×1 shortcut;
//! - the encoder: per level `layers_per_block[i]` residual blocks at the level's width, a
//!   stride-2 conv where `spatio_temporal_scaling[i]`, a residual block to the next level's
//!   width (`conv_out`) where it changes; a mid block of `layers_per_block[-1]` residual
//!   blocks; `conv_out` to latent + 1 channels (the shared log-variance);
//! - the decoder on the reversed widths: `conv_in`, a mid block of
//!   `decoder_layers_per_block[-1]` residual blocks, per level a residual block to the
//!   level's width where it changes, an up-sampling conv to 8 × the width (2 × 2 × 2 pixel
//!   shuffle) where the reversed `decoder_spatio_temporal_scaling` says so, then
//!   the level's residual blocks; `conv_out` to `out_channels · p²`.
//!
//! The 0.9.1+ decoders (`timestep_conditioning`, `decoder_inject_noise`,
//! `upsample_residual`, `upsample_factor`) and 0.9.5's `LTXVideo095DownBlock3D` encoder are
//! refused by the reader, naming the key.

use serde::{Deserialize, Serialize};

use super::conv::{conv, vector};
use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor};

/// An `AutoencoderKLLTXVideo` (0.9.0 layout).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LtxVideoVae {
    pub in_channels: u64,
    pub out_channels: u64,
    pub latent_channels: u64,
    /// `block_out_channels` (encoder) and `decoder_block_out_channels`.
    pub channels: Vec<u64>,
    pub decoder_channels: Vec<u64>,
    /// `layers_per_block` (one per level and one for the mid block) and
    /// `decoder_layers_per_block`.
    pub layers: Vec<u64>,
    pub decoder_layers: Vec<u64>,
    /// `spatio_temporal_scaling` and `decoder_spatio_temporal_scaling`, one per level.
    pub scaling: Vec<bool>,
    pub decoder_scaling: Vec<bool>,
    pub patch_size: u64,
    pub patch_size_t: u64,
}

impl LtxVideoVae {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("in_channels", self.in_channels)?;
        check_dim("out_channels", self.out_channels)?;
        check_dim("latent_channels", self.latent_channels)?;
        check_dim("patch_size", self.patch_size)?;
        check_dim("patch_size_t", self.patch_size_t)?;
        for (field, channels, layers, scaling) in [
            ("block_out_channels", &self.channels, &self.layers, &self.scaling),
            ("decoder_block_out_channels", &self.decoder_channels, &self.decoder_layers, &self.decoder_scaling),
        ] {
            let n = channels.len();
            if n == 0 || n > 8 {
                return Err(InputError::new(field, "needs 1 to 8 levels"));
            }
            for &c in channels.iter() {
                check_dim(field, c)?;
            }
            let layers_field = if field == "block_out_channels" { "layers_per_block" } else { "decoder_layers_per_block" };
            if layers.len() != n + 1 {
                return Err(InputError::new(layers_field, format!("needs {} entries (one per level and one for the mid block), got {}", n + 1, layers.len())));
            }
            for &l in layers.iter() {
                super::check_blocks(layers_field, l)?;
            }
            if scaling.len() < n {
                let key = if field == "block_out_channels" { "spatio_temporal_scaling" } else { "decoder_spatio_temporal_scaling" };
                return Err(InputError::new(key, format!("needs {n} entries, one per level")));
            }
        }
        Ok(())
    }

    /// Pixels per latent pixel along each side: the patch × 2 per scaling level
    /// (`spatial_compression_ratio = patch_size * 2 ** sum(spatio_temporal_scaling)`).
    pub fn spatial_factor(&self) -> u64 {
        self.patch_size << self.scaling.iter().take(self.channels.len()).filter(|&&s| s).count()
    }

    /// Frames per latent frame after the first (`patch_size_t * 2 ** sum(...)`: 8).
    pub fn temporal_factor(&self) -> u64 {
        self.patch_size_t << self.scaling.iter().take(self.channels.len()).filter(|&&s| s).count()
    }

    pub fn latent_channels(&self) -> u64 {
        self.latent_channels
    }

    /// Every parameter tensor, in [`Scope::Vae`](crate::model::arch::param::Scope::Vae).
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let k3 = [3, 3, 3];
        let p2 = self.patch_size * self.patch_size;
        let mut out = Vec::new();
        // Encoder: block i goes from channels[i] to channels[i + 1] (the last keeps its width).
        let n = self.channels.len();
        conv(&mut out, "ltx vae encoder conv_in", self.channels[0], self.in_channels * p2, &k3, 1, true);
        for i in 0..n {
            let c = self.channels[i];
            let next = self.channels.get(i + 1).copied().unwrap_or(c);
            for _ in 0..self.layers[i] {
                resnet(&mut out, c, c);
            }
            if self.scaling[i] {
                conv(&mut out, "ltx vae downsample conv", c, c, &k3, 1, true);
            }
            if next != c {
                resnet(&mut out, c, next);
            }
        }
        let last = self.channels.get(n).copied().unwrap_or(self.channels[n - 1]);
        for _ in 0..self.layers[n] {
            resnet(&mut out, last, last);
        }
        conv(&mut out, "ltx vae encoder conv_out", self.latent_channels + 1, last, &k3, 1, true);
        // Decoder on the reversed widths, layers and scaling.
        let rev: Vec<u64> = self.decoder_channels.iter().rev().copied().collect();
        let layers: Vec<u64> = self.decoder_layers.iter().rev().copied().collect();
        let scaling: Vec<bool> = self.decoder_scaling.iter().take(rev.len()).rev().copied().collect();
        conv(&mut out, "ltx vae decoder conv_in", rev[0], self.latent_channels, &k3, 1, true);
        for _ in 0..layers[0] {
            resnet(&mut out, rev[0], rev[0]);
        }
        let mut cin = rev[0];
        for (i, &c) in rev.iter().enumerate() {
            if cin != c {
                resnet(&mut out, cin, c);
            }
            if scaling[i] {
                conv(&mut out, "ltx vae upsample conv", 8 * c, c, &k3, 1, true);
            }
            for _ in 0..layers[i + 1] {
                resnet(&mut out, c, c);
            }
            cin = c;
        }
        conv(&mut out, "ltx vae decoder conv_out", self.out_channels * p2, cin, &k3, 1, true);
        out
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

/// `LTXVideoResnetBlock3d` without timestep conditioning or noise: weightless RMS norms,
/// conv1 (cin → cout), conv2, and where the width changes `norm3` (a LayerNorm with weight
/// and bias on cin) and a 1×1×1 `conv_shortcut`.
fn resnet(out: &mut Vec<ParamTensor>, cin: u64, cout: u64) {
    conv(out, "ltx vae resnet conv1", cout, cin, &[3, 3, 3], 1, true);
    conv(out, "ltx vae resnet conv2", cout, cout, &[3, 3, 3], 1, true);
    if cin != cout {
        vector(out, "ltx vae resnet norm3", 2 * cin);
        conv(out, "ltx vae resnet conv_shortcut", cout, cin, &[1, 1, 1], 1, true);
    }
}
