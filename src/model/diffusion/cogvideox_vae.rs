//! `AutoencoderKLCogVideoX`, CogVideoX's causal 3-D VAE, as diffusers 0.42.1 builds it
//! (`models/autoencoders/autoencoder_kl_cogvideox.py`: `CogVideoXCausalConv3d` 67–145,
//! `CogVideoXSpatialNorm3D` 147–196, `CogVideoXResnetBlock3D` 198–327, the down, mid and up
//! blocks 329–642, `CogVideoXEncoder3D` 644–794, `CogVideoXDecoder3D` 796–954,
//! `AutoencoderKLCogVideoX.__init__` 991–1051):
//! - the encoder: a causal 3×3×3 `conv_in`, per level `layers_per_block` residual blocks
//!   (GroupNorm, causal 3×3×3 conv, GroupNorm, causal 3×3×3 conv, a 1×1×1 shortcut when the
//!   width changes; no time embedding: `temb_channels=0`), a 2-D stride-2 3×3 conv on every
//!   level but the last (`CogVideoXDownsample3D`; the time halving is an average pool), a mid
//!   block of two residual blocks, `norm_out`, `conv_out` to 2 × latent channels;
//! - the decoder on the reversed widths: `conv_in`, the mid block, per level
//!   `layers_per_block + 1` residual blocks whose norms are `CogVideoXSpatialNorm3D` (a
//!   GroupNorm and two 1×1×1 convs from the latent), a 3×3 conv after every level but the
//!   last (`CogVideoXUpsample3D`), a spatial `norm_out`, `conv_out`;
//! - `quant_conv`/`post_quant_conv` (1×1×1) only where the config asks (the Hub's do not).

use serde::{Deserialize, Serialize};

use super::conv::{conv, vector};
use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor};

/// An `AutoencoderKLCogVideoX`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CogVideoXVae {
    pub in_channels: u64,
    pub out_channels: u64,
    pub latent_channels: u64,
    /// `block_out_channels`, one per level.
    pub channels: Vec<u64>,
    pub layers_per_block: u64,
    pub norm_num_groups: u64,
    /// `temporal_compression_ratio` (4: 1 + 4k frames → 1 + k latent frames).
    pub temporal_compression_ratio: u64,
    pub use_quant_conv: bool,
    pub use_post_quant_conv: bool,
}

impl CogVideoXVae {
    pub fn check(&self) -> Result<(), InputError> {
        super::vae_shape::check_levels(self.in_channels, self.out_channels, self.latent_channels, self.layers_per_block, &self.channels, self.norm_num_groups)?;
        check_dim("temporal_compression_ratio", self.temporal_compression_ratio)?;
        Ok(())
    }

    /// Pixels per latent pixel along each side: 2 per level but the last.
    pub fn spatial_factor(&self) -> u64 {
        1 << (self.channels.len() - 1)
    }

    pub fn temporal_factor(&self) -> u64 {
        self.temporal_compression_ratio
    }

    pub fn latent_channels(&self) -> u64 {
        self.latent_channels
    }

    /// Every parameter tensor, in [`Scope::Vae`](crate::model::arch::param::Scope::Vae).
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (n, z) = (self.channels.len(), self.latent_channels);
        let mut out = Vec::new();
        let k3 = [3, 3, 3];
        // Encoder.
        conv(&mut out, "cogvideox vae encoder conv_in", self.channels[0], self.in_channels, &k3, 1, true);
        let mut cin = self.channels[0];
        for (i, &c) in self.channels.iter().enumerate() {
            for _ in 0..self.layers_per_block {
                resnet(&mut out, cin, c, None);
                cin = c;
            }
            if i + 1 < n {
                conv(&mut out, "cogvideox vae downsample conv", c, c, &[3, 3], 1, true);
            }
        }
        let last = self.channels[n - 1];
        for _ in 0..2 {
            resnet(&mut out, last, last, None);
        }
        vector(&mut out, "cogvideox vae encoder norm_out", 2 * last);
        conv(&mut out, "cogvideox vae encoder conv_out", 2 * z, last, &k3, 1, true);
        if self.use_quant_conv {
            conv(&mut out, "cogvideox vae quant_conv", 2 * z, 2 * z, &[1, 1, 1], 1, true);
        }
        if self.use_post_quant_conv {
            conv(&mut out, "cogvideox vae post_quant_conv", z, z, &[1, 1, 1], 1, true);
        }
        // Decoder on the reversed widths, every norm spatial (conditioned on the latent).
        let rev: Vec<u64> = self.channels.iter().rev().copied().collect();
        conv(&mut out, "cogvideox vae decoder conv_in", rev[0], z, &k3, 1, true);
        for _ in 0..2 {
            resnet(&mut out, rev[0], rev[0], Some(z));
        }
        let mut cin = rev[0];
        for (i, &c) in rev.iter().enumerate() {
            for _ in 0..=self.layers_per_block {
                resnet(&mut out, cin, c, Some(z));
                cin = c;
            }
            if i + 1 < n {
                conv(&mut out, "cogvideox vae upsample conv", c, c, &[3, 3], 1, true);
            }
        }
        spatial_norm(&mut out, rev[n - 1], z);
        conv(&mut out, "cogvideox vae decoder conv_out", self.out_channels, rev[n - 1], &k3, 1, true);
        out
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

/// `CogVideoXSpatialNorm3D`: a GroupNorm (weight and bias) and `conv_y`, `conv_b` (1×1×1
/// causal convs from the `zq`-channel latent, with bias).
fn spatial_norm(out: &mut Vec<ParamTensor>, c: u64, zq: u64) {
    vector(out, "cogvideox vae spatial norm", 2 * c);
    conv(out, "cogvideox vae spatial norm conv_y", c, zq, &[1, 1, 1], 1, true);
    conv(out, "cogvideox vae spatial norm conv_b", c, zq, &[1, 1, 1], 1, true);
}

/// `CogVideoXResnetBlock3D` without a time embedding: two norms (GroupNorm, or spatial norms
/// from a `zq`-channel latent in the decoder), two causal 3×3×3 convs, a 1×1×1 shortcut
/// (`CogVideoXSafeConv3d` with bias) when the width changes.
fn resnet(out: &mut Vec<ParamTensor>, cin: u64, cout: u64, zq: Option<u64>) {
    for c in [cin, cout] {
        match zq {
            Some(z) => spatial_norm(out, c, z),
            None => vector(out, "cogvideox vae resnet norm", 2 * c),
        }
    }
    conv(out, "cogvideox vae resnet conv1", cout, cin, &[3, 3, 3], 1, true);
    conv(out, "cogvideox vae resnet conv2", cout, cout, &[3, 3, 3], 1, true);
    if cin != cout {
        conv(out, "cogvideox vae resnet conv_shortcut", cout, cin, &[1, 1, 1], 1, true);
    }
}
