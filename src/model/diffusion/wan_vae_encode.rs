//! The working set of an [`WanVae`] encode under `torch.no_grad()` (`vae.encode(video)`,
//! what training reads when latents are not cached), beyond the weights and the video:
//! `AutoencoderKLWan._encode` (`autoencoder_kl_wan.py` lines 1137–1162) runs the encoder on the
//! first frame, then on each following group of 4 frames (`_encode`'s constant; frames past
//! the last whole group are not encoded), with the same two-frame causal caches as the decoder
//! ([`wan_vae_peak`](crate::model::diffusion::wan_vae_peak)); each `downsample3d` keeps one
//! frame of its (spatially halved) input and halves the frames with a stride-2 time conv on
//! that frame and the chunk (`WanResample.forward` lines 300–316); the chunks' latents are
//! concatenated, `quant_conv` runs on all of them, then the posterior is sampled.
//! `tiled_encode` (lines 1265–1334) walks 256-pixel tiles stepping by 192, each chunk by
//! chunk, keeping every tile's latents. Encoder attention (`attn_scales`, empty in Wan 2.1)
//! is left out: diffusers 0.42.1 cannot encode with it (`WanEncoder3d.forward` passes
//! `feat_cache` to `WanAttentionBlock.forward`, which takes none). Measured with `LiveBytes` on CPU in
//! `tests/measure/diffusion_unet_vae.py`.

use crate::model::diffusion::live::Ledger;
use crate::model::diffusion::wan_vae::WanVae;
use crate::model::diffusion::wan_vae_peak::{bytes, Chunk};
use crate::model::diffusion::Run;

impl WanVae {
    /// Peak bytes of `vae.encode(video).latent_dist.sample()` for `run.batch` videos of
    /// `run.frames × run.height × run.width` (fp32 with `Precision::Fp32`, else 16-bit);
    /// `tiled`: after `enable_tiling()` with its default 256-pixel tiles stepping by 192.
    pub fn encode_peak(&self, run: &Run, tiled: bool) -> f64 {
        if tiled {
            self.tiled_encode_peak(run, 256, 192)
        } else {
            self.encode_loop(bytes(run), run.batch as f64, run.frames.max(1), (run.height.max(1), run.width.max(1)), false)
        }
    }

    /// `tiled_encode` with tiles of `tile` pixels stepping by `stride`, when the video is larger
    /// than one tile.
    pub fn tiled_encode_peak(&self, run: &Run, tile: u64, stride: u64) -> f64 {
        let (e, b) = (bytes(run), run.batch as f64);
        let (h, w, frames) = (run.height.max(1), run.width.max(1), run.frames.max(1));
        if h <= tile && w <= tile {
            return self.encode_loop(e, b, frames, (h, w), false);
        }
        let s = self.spatial_factor();
        let latent_frames = 1 + (frames - 1) / 4 * (4 / self.temporal_factor()).max(1);
        let latents = |th: u64, tw: u64| b * (2 * self.z_dim * latent_frames * (th / s) * (tw / s)) as f64 * e;
        let (mut kept, mut peak) = (0.0_f64, 0.0_f64);
        for i in (0..h).step_by(stride.max(1) as usize) {
            for j in (0..w).step_by(stride.max(1) as usize) {
                let (th, tw) = (tile.min(h - i), tile.min(w - j));
                peak = peak.max(kept + self.encode_loop(e, b, frames, (th, tw), true));
                kept += latents(th, tw);
            }
        }
        // blending, the rows' concatenation and the whole, then the posterior
        peak.max(kept + 3.0 * latents(h, w)).max(kept + self.posterior_bytes(b, e, latent_frames, (h / s, w / s)))
    }

    /// The chunked encode of `frames` frames of `h × w` pixels; `tiled`: one tile's loop
    /// (chunks kept in a list, `quant_conv` per chunk, no posterior).
    fn encode_loop(&self, e: f64, b: f64, frames: u64, (h, w): (u64, u64), tiled: bool) -> f64 {
        let chunks = 1 + (frames - 1) / 4;
        let (mut lh, mut lw) = (h, w);
        for _ in 1..self.dim_mult.len() {
            lh = lh.saturating_sub(2) / 2 + 1;
            lw = lw.saturating_sub(2) / 2 + 1;
        }
        // one latent frame's moments; a chunk of 4 frames gives 4 / temporal_factor of them
        let moment = b * (2 * self.z_dim * lh * lw) as f64 * e;
        let per_chunk = |k: u64| if k == 0 { 1.0 } else { (4 / self.temporal_factor()).max(1) as f64 };
        let done_before = |k: u64| if k == 0 { 0.0 } else { 1.0 + (k - 1) as f64 * per_chunk(1) };
        let mut peak = 0.0_f64;
        let mut caches = 0.0;
        let mut ks = vec![0, 1, 2, chunks - 1];
        ks.retain(|&k| k < chunks);
        ks.dedup();
        for k in ks {
            let (old, new) = match k {
                0 => (0.0, 1.0),
                1 => (1.0, 2.0),
                _ => (2.0, 2.0),
            };
            // latents so far, and `_encode`'s `out_` from the previous chunk
            let done = done_before(k) * moment;
            let previous = if k >= 2 && !tiled { per_chunk(1) * moment } else { 0.0 };
            let caches_now = if k >= 2 { self.encoder_cache_bytes(b, e, h, w) } else { caches };
            let mut c = Chunk { b, e, old, new, time_up: k > 0, caches: caches_now, outer: done + previous, l: Ledger::default() };
            self.encode_chunk(&mut c, (h, w), if k == 0 { 1.0 } else { 4.0 });
            let mine = per_chunk(k) * moment;
            if k == 0 || k == 1 {
                caches = c.caches;
            }
            if tiled {
                // quant_conv on the chunk's latents
                c.run(mine, mine);
            } else {
                c.run(mine, done + mine);
            }
            if k == chunks - 1 {
                c.caches = 0.0;
                c.outer = previous;
                let all = done + mine;
                let latent_frames = (done_before(k) + per_chunk(k)) as u64;
                // quant_conv on all latents (or the tile's concatenation), then the posterior
                let end = if tiled { 2.0 * all } else { (2.0 * all).max(all + self.posterior_bytes(b, e, latent_frames, (lh, lw))) };
                c.run(0.0, end);
            }
            peak = peak.max(c.l.peak);
        }
        peak
    }

    /// `DiagonalGaussianDistribution(moments).sample()`: the moments, the clamped
    /// log-variance, the deviation (and its `0.5 ×` temporary), the variance, the noise, its
    /// product and the sum: 8 latents.
    fn posterior_bytes(&self, b: f64, e: f64, frames: u64, (lh, lw): (u64, u64)) -> f64 {
        8.0 * b * (self.z_dim * frames * lh * lw) as f64 * e
    }

    /// Bytes of the encoder's caches in the steady state: two frames of every time-kernel
    /// conv's input, one frame of every `downsample3d`'s.
    fn encoder_cache_bytes(&self, b: f64, e: f64, h: u64, w: u64) -> f64 {
        let n = self.dim_mult.len();
        let dims: Vec<u64> = std::iter::once(1).chain(self.dim_mult.iter().copied()).map(|m| self.base_dim * m).collect();
        let unit = |c: u64, hh: u64, ww: u64| b * (c * hh * ww) as f64 * e;
        let (mut hh, mut ww) = (h, w);
        let mut total = 2.0 * unit(self.in_channels, hh, ww);
        for i in 0..n {
            let (mut cin, c) = (dims[i], dims[i + 1]);
            for _ in 0..self.num_res_blocks {
                total += 2.0 * unit(cin, hh, ww) + 2.0 * unit(c, hh, ww);
                cin = c;
            }
            if i + 1 < n {
                hh = hh.saturating_sub(2) / 2 + 1;
                ww = ww.saturating_sub(2) / 2 + 1;
                if self.temporal_downsample[i] {
                    total += unit(c, hh, ww);
                }
            }
        }
        let last = dims[n];
        total + 4.0 * 2.0 * unit(last, hh, ww) + 2.0 * unit(last, hh, ww)
    }

    /// One chunk of `f` frames through `WanEncoder3d.forward` (lines 594–633).
    fn encode_chunk(&self, c: &mut Chunk, (h, w): (u64, u64), mut f: f64) {
        let n = self.dim_mult.len();
        let dims: Vec<u64> = std::iter::once(1).chain(self.dim_mult.iter().copied()).map(|m| self.base_dim * m).collect();
        let (old, new) = (c.old, c.new);
        let (mut hh, mut ww) = (h, w);
        c.cached_conv(0.0, self.in_channels, dims[0], f, (hh, ww), true, old, new);
        for i in 0..n {
            let (mut cin, ch) = (dims[i], dims[i + 1]);
            for _ in 0..self.num_res_blocks {
                c.residual(cin, ch, f, (hh, ww));
                cin = ch;
            }
            if i + 1 < n {
                // frames into the batch (a copy unless one frame), ZeroPad2d, the stride-2 conv
                let x = c.bytes(ch, f, (hh * ww) as f64);
                let copy = if f > 1.0 { x } else { 0.0 };
                let padded = c.bytes(ch, f, ((hh + 1) * (ww + 1)) as f64);
                hh = hh.saturating_sub(2) / 2 + 1;
                ww = ww.saturating_sub(2) / 2 + 1;
                let hw = (hh * ww) as f64;
                let out = c.bytes(ch, f, hw);
                c.run(x, copy + padded);
                c.run(x, padded + out);
                if self.temporal_downsample[i] {
                    let unit = c.bytes(ch, 1.0, hw);
                    if c.time_up {
                        // the cache's last frame and the chunk, concatenated, padded (a copy)
                        // and convolved with stride 2 in time; the chunk's last frame is the new cache
                        let cat = unit + out;
                        let halved = c.bytes(ch, ((f + 1.0 - 3.0) / 2.0).floor() + 1.0, hw);
                        c.run(out, unit + 2.0 * cat);
                        c.run(out, unit + cat + halved);
                        f = ((f + 1.0 - 3.0) / 2.0).floor() + 1.0;
                    } else {
                        // the first chunk: the whole output becomes the cache
                        c.run(out, unit);
                        c.caches += unit;
                    }
                }
            }
        }
        // mid block, norm_out, SiLU, conv_out to 2 × z_dim
        let last = dims[n];
        c.residual(last, last, f, (hh, ww));
        let x = c.bytes(last, f, (hh * ww) as f64);
        c.run(x, 7.0 * x);
        c.residual(last, last, f, (hh, ww));
        c.run(x, c.norm(x));
        c.run(0.0, 2.0 * x);
        c.cached_conv(x, last, 2 * self.z_dim, f, (hh, ww), true, old, new);
    }
}
