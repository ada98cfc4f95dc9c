//! `AutoencoderDC`, the deep-compression autoencoder of Sana (32× spatial, 32 latent
//! channels), as diffusers 0.42.1 builds it (`models/autoencoders/autoencoder_dc.py`:
//! `ResBlock` 32–62, `EfficientViTBlock` 64–99, `DCDownBlock2d` 120–157, `DCUpBlock2d`
//! 159–199, `Encoder` 201–285, `Decoder` 287–377, `AutoencoderDC.__init__` 433–480; the
//! attention is `attention_processor.py` `SanaMultiscaleLinearAttention` 866–910 with
//! `SanaMultiscaleAttentionProjection` 840–864, the feed-forward `GLUMBConv` in
//! `transformers/sana_transformer.py` 38–75):
//! - a `ResBlock`: 3×3 conv1 (bias), 3×3 conv2 (no bias), a norm with weight and bias
//!   (RMS or batch norm);
//! - an `EfficientViTBlock` at width c with `heads = c / attention_head_dim`: bias-free
//!   `to_q/to_k/to_v` (c → c), per multiscale kernel k a depthwise k×k `proj_in` and a
//!   grouped 1×1 `proj_out` over the 3c q/k/v channels (both bias-free), a bias-free
//!   `to_out` from c · (1 + scales) to c, a norm (weight and bias); then `GLUMBConv` with
//!   expansion 4: a 1×1 conv to 8c (bias), a depthwise 3×3 (bias), a bias-free 1×1 from 4c to
//!   c and an RMS norm with weight and bias;
//! - the encoder: a 3×3 `conv_in`, per level its blocks at the level's width and, on every
//!   level but the last, a stride-2 3×3 conv to the next width (`downsample_block_type`
//!   "Conv"; "pixel_unshuffle" convolves to a quarter of it and unshuffles); a 3×3 `conv_out`
//!   to the latent channels;
//! - the decoder: a 3×3 `conv_in` from the latent, per level (deepest first) an up-sampling
//!   3×3 conv from the next width (`upsample_block_type` "interpolate" after a nearest ×2;
//!   "pixel_shuffle" to 4 × the width before the shuffle) and the level's blocks; an RMS
//!   `norm_out` with weight and bias; a 3×3 `conv_out`.
//!
//! A level with no blocks has no resampler; a first level with none moves `conv_in`'s
//! (and `conv_out`'s) resampling into a `DCDownBlock2d`/`DCUpBlock2d` of its own.

use serde::{Deserialize, Serialize};

use super::conv::{conv, linear, vector};
use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor};

/// One side of a DC-AE: its levels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DcSide {
    /// `*_block_out_channels`.
    pub channels: Vec<u64>,
    /// `*_layers_per_block`.
    pub layers: Vec<u64>,
    /// `*_block_types` entry is `EfficientViTBlock` (else `ResBlock`), per level.
    pub vit: Vec<bool>,
    /// `*_qkv_multiscales`: the kernel sizes of each level's multiscale projections.
    pub scales: Vec<Vec<u64>>,
}

/// An `AutoencoderDC`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DcAe {
    pub in_channels: u64,
    pub latent_channels: u64,
    pub attention_head_dim: u64,
    pub encoder: DcSide,
    pub decoder: DcSide,
    /// `downsample_block_type` is "pixel_unshuffle" (else "Conv").
    pub pixel_unshuffle: bool,
    /// `upsample_block_type` is "interpolate" (else "pixel_shuffle").
    pub interpolate: bool,
    /// `decoder_in_shortcut`: the latent, repeated to the deepest width, is added to
    /// `conv_in`'s output (default true).
    #[serde(default = "yes")]
    pub in_shortcut: bool,
}

fn yes() -> bool {
    true
}

impl DcAe {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("in_channels", self.in_channels)?;
        check_dim("latent_channels", self.latent_channels)?;
        check_dim("attention_head_dim", self.attention_head_dim)?;
        for (side, s) in [("encoder", &self.encoder), ("decoder", &self.decoder)] {
            let n = s.channels.len();
            if !(2..=8).contains(&n) {
                return Err(InputError::new(format!("{side}_block_out_channels"), "needs 2 to 8 levels"));
            }
            for &c in &s.channels {
                check_dim(&format!("{side}_block_out_channels"), c)?;
            }
            for (key, len) in [("layers_per_block", s.layers.len()), ("block_types", s.vit.len()), ("qkv_multiscales", s.scales.len())] {
                if len != n {
                    return Err(InputError::new(format!("{side}_{key}"), format!("needs {n} entries, one per level, got {len}")));
                }
            }
            for &l in &s.layers {
                super::check_blocks(&format!("{side}_layers_per_block"), l)?;
            }
            for (i, &vit) in s.vit.iter().enumerate() {
                if vit && s.channels[i] % self.attention_head_dim != 0 {
                    return Err(InputError::new("attention_head_dim", format!("must divide the {side}'s width {} at level {i}", s.channels[i])));
                }
            }
            if s.layers[0] == 0 && s.layers.get(1).copied().unwrap_or(0) == 0 {
                return Err(InputError::new(format!("{side}_layers_per_block"), "the first two levels cannot both be empty"));
            }
        }
        Ok(())
    }

    /// Pixels per latent pixel along each side: 2 per encoder level but the last
    /// (`spatial_compression_ratio = 2 ** (len(encoder_block_out_channels) - 1)`).
    pub fn spatial_factor(&self) -> u64 {
        1 << (self.encoder.channels.len() - 1)
    }

    pub fn temporal_factor(&self) -> u64 {
        1
    }

    pub(super) fn decoder_in_shortcut(&self) -> bool {
        self.in_shortcut
    }

    pub fn latent_channels(&self) -> u64 {
        self.latent_channels
    }

    /// Every parameter tensor, in [`Scope::Vae`](crate::model::arch::param::Scope::Vae).
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let mut out = Vec::new();
        let e = &self.encoder;
        let n = e.channels.len();
        let first = if e.layers[0] > 0 { e.channels[0] } else { e.channels[1] };
        // `conv_in`: a plain 3×3 conv, or a `DCDownBlock2d` without shortcut when level 0 is empty.
        let down_out = |c: u64| if self.pixel_unshuffle { c / 4 } else { c };
        let stem = if e.layers[0] > 0 { first } else { down_out(first) };
        conv(&mut out, "dc-ae encoder conv_in", stem, self.in_channels, &[3, 3], 1, true);
        for i in 0..n {
            let c = e.channels[i];
            for _ in 0..e.layers[i] {
                self.block(&mut out, e, i);
            }
            if i + 1 < n && e.layers[i] > 0 {
                conv(&mut out, "dc-ae downsample conv", down_out(e.channels[i + 1]), c, &[3, 3], 1, true);
            }
        }
        conv(&mut out, "dc-ae encoder conv_out", self.latent_channels, e.channels[n - 1], &[3, 3], 1, true);
        let d = &self.decoder;
        let n = d.channels.len();
        let up_out = |c: u64| if self.interpolate { c } else { 4 * c };
        conv(&mut out, "dc-ae decoder conv_in", d.channels[n - 1], self.latent_channels, &[3, 3], 1, true);
        for i in (0..n).rev() {
            if i + 1 < n && d.layers[i] > 0 {
                conv(&mut out, "dc-ae upsample conv", up_out(d.channels[i]), d.channels[i + 1], &[3, 3], 1, true);
            }
            for _ in 0..d.layers[i] {
                self.block(&mut out, d, i);
            }
        }
        let last = if d.layers[0] > 0 { d.channels[0] } else { d.channels[1] };
        vector(&mut out, "dc-ae decoder norm_out", 2 * last);
        let head = if d.layers[0] > 0 { self.in_channels } else { up_out(self.in_channels) };
        conv(&mut out, "dc-ae decoder conv_out", head, last, &[3, 3], 1, true);
        out
    }

    /// One block of `side`'s level `i` at that level's width.
    fn block(&self, out: &mut Vec<ParamTensor>, side: &DcSide, i: usize) {
        let c = side.channels[i];
        if !side.vit[i] {
            conv(out, "dc-ae resblock conv1", c, c, &[3, 3], 1, true);
            conv(out, "dc-ae resblock conv2", c, c, &[3, 3], 1, false);
            vector(out, "dc-ae resblock norm", 2 * c);
            return;
        }
        let heads = c / self.attention_head_dim;
        for name in ["dc-ae attention to_q", "dc-ae attention to_k", "dc-ae attention to_v"] {
            linear(out, name, c, c, false);
        }
        for &k in &side.scales[i] {
            conv(out, "dc-ae attention multiscale proj_in", 3 * c, 3 * c, &[k, k], 3 * c, false);
            conv(out, "dc-ae attention multiscale proj_out", 3 * c, 3 * c, &[1, 1], 3 * heads, false);
        }
        linear(out, "dc-ae attention to_out", c, c * (1 + side.scales[i].len() as u64), false);
        vector(out, "dc-ae attention norm_out", 2 * c);
        let hidden = 4 * c;
        conv(out, "dc-ae glumbconv conv_inverted", 2 * hidden, c, &[1, 1], 1, true);
        conv(out, "dc-ae glumbconv conv_depth", 2 * hidden, 2 * hidden, &[3, 3], 2 * hidden, true);
        conv(out, "dc-ae glumbconv conv_point", c, hidden, &[1, 1], 1, false);
        vector(out, "dc-ae glumbconv norm", 2 * c);
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}
