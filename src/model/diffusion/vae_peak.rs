//! The working set of an [`AutoencoderKl`] encode or decode under `torch.no_grad()`, beyond
//! the weights and the input (`autoencoder_kl.py` `_encode`/`_decode`, `_tiled_encode` and
//! `tiled_decode` lines 158–410; `vae.py` `Encoder.forward`, `Decoder.forward`): the
//! encoder's and decoder's `sample` keeps each block's input while the block's own
//! `hidden_states` moves on; each module's working set is in
//! [`live`](crate::model::diffusion::live); the encoder's `Downsample2D` pads its input first
//! (`F.pad(…, (0, 1, 0, 1))`, a new tensor). With `enable_tiling()` an image larger than
//! `sample_size` (a latent larger than `sample_size / spatial_factor`) is cut into tiles of
//! that size stepping by 3/4 of it (`tile_overlap_factor` 0.25); every tile's output is kept
//! until the tiles are blended, cropped and concatenated row by row and then whole. With
//! `enable_slicing()` the batch runs one sample at a time and the outputs are concatenated.
//! Measured with `LiveBytes` on CPU in `tests/measure/diffusion_unet_vae.py`.

use crate::model::diffusion::live::{self, Ledger};
use crate::model::diffusion::vae::AutoencoderKl;
use crate::model::diffusion::Run;
use crate::model::precision::Precision;

impl AutoencoderKl {
    /// Peak bytes of `vae.encode(images).latent_dist.sample()` for `run.batch` images of
    /// `run.height × run.width` (fp32 with `Precision::Fp32`, else 16-bit).
    pub fn encode_peak(&self, run: &Run, tiled: bool) -> f64 {
        let e = bytes(run);
        let b = run.batch as f64;
        let (h, w) = (run.height.max(1), run.width.max(1));
        let t = self.sample_size;
        if !(tiled && (h > t || w > t)) {
            return self.encoder_peak(b, h, w, e).max(self.posterior(b, h, w, e));
        }
        let f = self.spatial_factor();
        let z = 2 * self.latent_channels;
        let (tiles, peak) = tile_loop(h, w, t, t * 3 / 4, |th, tw| self.encoder_peak(b, th, tw, e), |th, tw| b * (z * (th / f) * (tw / f)) as f64 * e);
        let moments = b * (z * (h / f) * (w / f)) as f64 * e;
        peak.max(tiles + 2.0 * moments).max(self.posterior(b, h, w, e))
    }

    /// Peak bytes of `vae.decode(latents)` for `run.batch` latents of
    /// `run.latent_height × run.latent_width` (images `spatial_factor` times larger).
    pub fn decode_peak(&self, run: &Run, tiled: bool) -> f64 {
        let e = bytes(run);
        let b = run.batch as f64;
        let (h, w) = (run.latent_height.max(1), run.latent_width.max(1));
        let t = self.sample_size / self.spatial_factor();
        if !(tiled && (h > t || w > t)) {
            return self.decoder_peak(b, h, w, e);
        }
        let f = self.spatial_factor();
        let image = |th: u64, tw: u64| b * (self.out_channels * th * f * tw * f) as f64 * e;
        let (tiles, peak) = tile_loop(h, w, t, t * 3 / 4, |th, tw| self.decoder_peak(b, th, tw, e), image);
        peak.max(tiles + 2.0 * image(h, w))
    }

    /// [`Self::encode_peak`] with `enable_slicing()`: one sample at a time, then `torch.cat`.
    pub fn encode_peak_sliced(&self, run: &Run, tiled: bool) -> f64 {
        let one = Run { batch: 1, ..run.clone() };
        let f = self.spatial_factor();
        let moments = (2 * self.latent_channels * (run.height / f) * (run.width / f)) as f64 * bytes(run);
        let b = run.batch as f64;
        let one_encoder = self.encode_peak(&one, tiled);
        (one_encoder + (b - 1.0) * moments).max(2.0 * b * moments).max(self.posterior(b, run.height, run.width, bytes(run)))
    }

    /// [`Self::decode_peak`] with `enable_slicing()`: one sample at a time, then `torch.cat`.
    pub fn decode_peak_sliced(&self, run: &Run, tiled: bool) -> f64 {
        let one = Run { batch: 1, ..run.clone() };
        let f = self.spatial_factor();
        let image = (self.out_channels * run.latent_height * f * run.latent_width * f) as f64 * bytes(run);
        let b = run.batch as f64;
        (self.decode_peak(&one, tiled) + (b - 1.0) * image).max(2.0 * b * image)
    }

    /// `Encoder.forward` then `quant_conv` on `b` images of `h × w`.
    fn encoder_peak(&self, b: f64, h: u64, w: u64, e: f64) -> f64 {
        let n = self.channels.len();
        let (mut hh, mut ww) = (h, w);
        let x = |c: u64, hh: u64, ww: u64| b * (c * hh * ww) as f64 * e;
        let mut l = Ledger::default();
        let mut cur = x(self.channels[0], hh, ww);
        l.run(cur);
        let mut prev = self.channels[0];
        for (i, &c) in self.channels.iter().enumerate() {
            let input = cur;
            for layer in 0..self.layers_per_block {
                l.held = if layer == 0 { input } else { input + cur };
                let cin = if layer == 0 { prev } else { c };
                l.run(live::resnet(cur, x(c, hh, ww), cin != c));
                cur = x(c, hh, ww);
            }
            if i + 1 < n {
                // F.pad to (h + 1) × (w + 1), then a stride-2 3×3 conv without padding
                l.held = if self.layers_per_block > 0 { input + cur } else { input };
                let padded = x(c, hh + 1, ww + 1);
                hh = hh.saturating_sub(2) / 2 + 1;
                ww = ww.saturating_sub(2) / 2 + 1;
                l.run(padded + x(c, hh, ww));
                cur = x(c, hh, ww);
            }
            prev = c;
        }
        self.mid_peak(&mut l, cur);
        // conv_norm_out, SiLU, conv_out (2 × latent channels), quant_conv
        let z2 = x(2 * self.latent_channels, hh, ww);
        l.held = 0.0;
        l.run(2.0 * cur);
        l.run(cur + z2);
        if self.use_quant_conv {
            l.run(2.0 * z2);
        }
        l.peak
    }

    /// `Decoder.forward` (after `post_quant_conv`) on `b` latents of `h × w`.
    fn decoder_peak(&self, b: f64, h: u64, w: u64, e: f64) -> f64 {
        let n = self.channels.len();
        let x = |c: u64, hh: u64, ww: u64| b * (c * hh * ww) as f64 * e;
        let z = x(self.latent_channels, h, w);
        let mut l = Ledger::default();
        let mut held_z = 0.0;
        if self.use_post_quant_conv {
            l.run(z);
            held_z = z;
        }
        l.held = held_z;
        let last = self.channels[n - 1];
        let mut cur = x(last, h, w);
        l.run(cur);
        l.held = 0.0;
        self.mid_peak(&mut l, cur);
        let (mut hh, mut ww) = (h, w);
        let mut prev = last;
        for i in 0..n {
            let c = self.channels[n - 1 - i];
            let input = cur;
            for layer in 0..=self.layers_per_block {
                l.held = if layer == 0 { input } else { input + cur };
                let cin = if layer == 0 { prev } else { c };
                l.run(live::resnet(cur, x(c, hh, ww), cin != c));
                cur = x(c, hh, ww);
            }
            if i + 1 < n {
                l.held = input + cur;
                l.run(live::upsample(cur));
                hh *= 2;
                ww *= 2;
                cur = x(c, hh, ww);
            }
            prev = c;
        }
        // conv_norm_out, SiLU, conv_out
        l.held = 0.0;
        l.run(2.0 * cur);
        l.run(cur + x(self.out_channels, hh, ww));
        l.peak
    }

    /// `UNetMidBlock2D`: resnet, attention, resnet on `cur` bytes, the block's input held.
    fn mid_peak(&self, l: &mut Ledger, cur: f64) {
        l.held = cur;
        l.run(live::resnet(cur, cur, false));
        l.held = 2.0 * cur;
        if self.mid_block_add_attention {
            l.run(live::vae_attention(cur));
        }
        l.run(live::resnet(cur, cur, false));
    }

    /// `DiagonalGaussianDistribution(moments)` and `.sample()`: the moments, the clamped
    /// log-variance, the standard deviation (and its `0.5 ×` temporary), the variance, the
    /// noise, its product with the deviation and the sum: 8 latents.
    fn posterior(&self, b: f64, h: u64, w: u64, e: f64) -> f64 {
        let f = self.spatial_factor();
        8.0 * b * (self.latent_channels * (h / f) * (w / f)) as f64 * e
    }
}

fn bytes(run: &Run) -> f64 {
    if run.precision == Precision::Fp32 {
        4.0
    } else {
        2.0
    }
}

/// The tile loop of `_tiled_encode`/`tiled_decode` over an `h × w` input cut into tiles of
/// `tile` stepping by `step`: returns the bytes of all tile outputs and the largest moment
/// (a tile's own peak on top of the outputs of the tiles before it).
fn tile_loop(h: u64, w: u64, tile: u64, step: u64, peak: impl Fn(u64, u64) -> f64, output: impl Fn(u64, u64) -> f64) -> (f64, f64) {
    let step = step.max(1);
    let (mut kept, mut most) = (0.0_f64, 0.0_f64);
    for i in (0..h).step_by(step as usize) {
        for j in (0..w).step_by(step as usize) {
            let (th, tw) = (tile.min(h - i), tile.min(w - j));
            most = most.max(kept + peak(th, tw));
            kept += output(th, tw);
        }
    }
    (kept, most)
}
