//! The working set of an [`WanVae`] decode under `torch.no_grad()` (no tiling), beyond the
//! weights and the latents: `AutoencoderKLWan._decode` (`autoencoder_kl_wan.py` lines
//! 1191–1220) runs `post_quant_conv` on the whole latent, then the decoder one latent frame
//! at a time (`first_chunk` for the first), concatenating each chunk's frames onto the video
//! so far (`torch.cat([out, out_], 2)`), and clamps the result. Every causal 3D conv with a
//! time kernel keeps a cache of the last two frames of its input between chunks
//! (`CACHE_T = 2`; one after the first chunk; `upsample3d`'s time conv starts after the
//! first chunk, "Rep"); the loop's `out_` keeps the previous chunk's frames while the next
//! chunk decodes. Within a chunk (`WanResidualBlock.forward` lines 349–391): the
//! block input and its shortcut are held while the RMS norm (`F.normalize`, in fp32 for
//! 16-bit inputs, then `× scale × gamma + bias`), the SiLU, the cache's clone, the
//! concatenation of the old cache with the input, its zero padding (`F.pad`) and the conv's
//! output live; `WanResample` (lines 270–317) stacks the time conv's two halves, copies the
//! frames into the batch and upsamples (`WanUpsample`, in fp32) before its 2D conv.
//! Measured with `LiveBytes` on CPU in `tests/measure/diffusion_unet_vae.py`.

use crate::model::diffusion::live::Ledger;
use crate::model::diffusion::wan_vae::WanVae;
use crate::model::diffusion::Run;
use crate::model::precision::Precision;

/// One chunk's walk: sizes, the caches' state, what is held.
pub(crate) struct Chunk {
    pub(crate) b: f64,
    pub(crate) e: f64,
    /// Frames the caches hold before and after this chunk (0, 1 or 2).
    pub(crate) old: f64,
    pub(crate) new: f64,
    /// `upsample3d` runs its time conv (every chunk but the first).
    pub(crate) time_up: bool,
    /// The caches' bytes now (old caches not yet replaced, new ones already).
    pub(crate) caches: f64,
    /// Bytes held by the decode loop: the whole latent after `post_quant_conv` and the frames so far.
    pub(crate) outer: f64,
    pub(crate) l: Ledger,
}

impl Chunk {
    pub(crate) fn bytes(&self, c: u64, frames: f64, hw: f64) -> f64 {
        self.b * c as f64 * frames * hw * self.e
    }

    /// Run with `local` bytes held by the caller and `transient` above them.
    pub(crate) fn run(&mut self, local: f64, transient: f64) {
        self.l.held = self.outer + self.caches;
        self.l.run(local + transient);
    }

    /// A `WanCausalConv3d` with a time kernel of 3 on `f` frames of `cin` at `hw` positions
    /// (`pad`: spatial padding of 1 around `h × w`), with `local` bytes held around it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cached_conv(&mut self, local: f64, cin: u64, cout: u64, f: f64, (h, w): (u64, u64), pad: bool, old: f64, new: f64) {
        let hw = (h * w) as f64;
        let x = self.bytes(cin, f, hw);
        let unit = self.bytes(cin, 1.0, hw);
        let cat = if old > 0.0 { old * unit + x } else { 0.0 };
        let padded_hw = if pad { ((h + 2) * (w + 2)) as f64 } else { hw };
        let padded = self.bytes(cin, f + 2.0, padded_hw);
        let out = self.bytes(cout, f, hw);
        let new_cache = new * unit;
        self.run(local, new_cache + cat + padded);
        self.run(local, new_cache + padded + out);
        self.caches += new_cache - old * unit;
    }

    /// `WanRMS_norm`: `F.normalize` (in fp32 for 16-bit), then `× scale × gamma + bias`.
    pub(crate) fn norm(&self, x: f64) -> f64 {
        if self.e == 2.0 {
            4.0 * x
        } else {
            3.0 * x
        }
    }

    /// `WanResidualBlock` on `f` frames at `h × w`, `cin → cout`; returns the output's bytes.
    pub(crate) fn residual(&mut self, cin: u64, cout: u64, f: f64, (h, w): (u64, u64)) -> f64 {
        let hw = (h * w) as f64;
        let (x_in, x_out) = (self.bytes(cin, f, hw), self.bytes(cout, f, hw));
        let mut held = x_in;
        if cin != cout {
            // the 1×1×1 shortcut pads (a copy) and convolves
            self.run(held, x_in + x_out);
            held += x_out;
        }
        self.run(held, self.norm(x_in));
        self.run(held, 2.0 * x_in);
        let (old, new) = (self.old, self.new);
        self.cached_conv(held + x_in, cin, cout, f, (h, w), true, old, new);
        self.run(held, x_out + self.norm(x_out));
        self.run(held, 3.0 * x_out);
        self.cached_conv(held + x_out, cout, cout, f, (h, w), true, old, new);
        self.run(held, 2.0 * x_out);
        x_out
    }
}

pub(crate) fn bytes(run: &Run) -> f64 {
    if run.precision == Precision::Fp32 {
        4.0
    } else {
        2.0
    }
}

impl WanVae {
    /// Peak bytes of `vae.decode(latents)` for `run.batch` latents of
    /// `run.latent_frames × run.latent_height × run.latent_width` (fp32 with
    /// `Precision::Fp32`, else 16-bit); `tiled`: after `enable_tiling()` with its default
    /// 256-pixel tiles stepping by 192 (`AutoencoderKLWan.__init__` lines 1080–1086).
    pub fn decode_peak(&self, run: &Run, tiled: bool) -> f64 {
        if tiled {
            self.tiled_decode_peak(run, 256, 192)
        } else {
            let (e, b) = (bytes(run), run.batch as f64);
            let (h, w) = (run.latent_height.max(1), run.latent_width.max(1));
            let latent = b * (self.z_dim * run.latent_frames.max(1) * h * w) as f64 * e;
            self.chunk_loop(b, e, run.latent_frames.max(1), (h, w), latent, false)
        }
    }

    /// `tiled_decode` (lines 1335–1410) with tiles of `tile` pixels stepping by `stride`, when
    /// the latent is larger than one tile: each tile is decoded chunk by chunk (its chunks kept
    /// in a list and concatenated), every tile's video is kept until the tiles are blended, cut
    /// to the stride, concatenated by rows and whole, and clamped. Pixels become latents by
    /// [`WanVae::spatial_factor`] (diffusers divides by the config's `scale_factor_spatial`,
    /// 8 for Wan 2.1, the same).
    pub fn tiled_decode_peak(&self, run: &Run, tile: u64, stride: u64) -> f64 {
        let (e, b) = (bytes(run), run.batch as f64);
        let s = self.spatial_factor();
        let t = run.latent_frames.max(1);
        let (h, w) = (run.latent_height.max(1), run.latent_width.max(1));
        let (tl, step) = (tile / s, (stride / s).max(1));
        if h <= tl && w <= tl {
            let latent = b * (self.z_dim * t * h * w) as f64 * e;
            return self.chunk_loop(b, e, t, (h, w), latent, false);
        }
        let frames = (1 + self.temporal_factor() * (t - 1)) as f64;
        let video = |th: u64, tw: u64| b * (self.out_channels * th * s * tw * s) as f64 * frames * e;
        let (mut kept, mut peak) = (0.0_f64, 0.0_f64);
        for i in (0..h).step_by(step as usize) {
            for j in (0..w).step_by(step as usize) {
                let (th, tw) = (tl.min(h - i), tl.min(w - j));
                // post_quant_conv's output for one frame of the tile
                let one = b * (self.z_dim * th * tw) as f64 * e;
                peak = peak.max(kept + self.chunk_loop(b, e, t, (th, tw), one, true));
                kept += video(th, tw);
            }
        }
        // the rows' cut tiles, their concatenation and the clamp, all while the tiles are kept
        peak.max(kept + 3.0 * video(h, w))
    }

    /// The chunk-by-chunk decode of `t` latent frames at `h × w` with `outer` bytes held
    /// throughout (the latent after `post_quant_conv`); `tiled`: the chunks are kept in a list
    /// and concatenated at the end (`tiled_decode`), else each is concatenated onto the video
    /// so far (`_decode`) and the video clamped.
    fn chunk_loop(&self, b: f64, e: f64, t: u64, (h, w): (u64, u64), outer: f64, tiled: bool) -> f64 {
        let s = self.spatial_factor();
        let frame = b * (self.out_channels * h * s * w * s) as f64 * e;
        let frames_before = |k: u64| if k == 0 { 0 } else { 1 + self.temporal_factor() * (k - 1) };
        let mut peak = 0.0_f64;
        let mut caches = 0.0;
        // the first chunk, the second (caches grow from one frame to two), the steady state at
        // the last chunk (the most frames kept so far)
        let mut chunks = vec![0, 1, 2, t - 1];
        chunks.retain(|&k| k < t);
        chunks.dedup();
        for k in chunks {
            let (old, new) = match k {
                0 => (0.0, 1.0),
                1 => (1.0, 2.0),
                _ => (2.0, 2.0),
            };
            let done = frames_before(k) as f64 * frame;
            // `_decode`'s `out_` keeps the previous chunk's frames until this chunk returns
            let previous = if k >= 2 && !tiled { self.temporal_factor() as f64 * frame } else { 0.0 };
            let caches_now = if k >= 2 { self.cache_bytes(b, e, h, w) } else { caches };
            let mut c = Chunk { b, e, old, new, time_up: k > 0, caches: caches_now, outer: outer + done + previous, l: Ledger::default() };
            let frames = self.chunk(&mut c, (h, w));
            if k == 0 {
                caches = c.caches;
            }
            let out = frames * frame;
            if !tiled {
                // torch.cat([out, out_], 2)
                c.run(out, done + out);
            }
            if k == t - 1 {
                // the caches are cleared after the loop (`clear_cache`): the final
                // concatenation of the tile's chunks, or the clamp of the video
                c.outer = outer + previous;
                c.caches = 0.0;
                c.run(0.0, 2.0 * (done + out));
            }
            peak = peak.max(c.l.peak);
            if k == 1 {
                caches = c.caches;
            }
        }
        peak
    }

    /// Bytes of every cache holding two frames (the steady state).
    fn cache_bytes(&self, b: f64, e: f64, h: u64, w: u64) -> f64 {
        let mut total = 0.0;
        self.for_each_cache(h, w, |cin, hw| total += 2.0 * b * cin as f64 * hw * e);
        total
    }

    /// Input channels and positions of every cached conv of the decoder, in order.
    fn for_each_cache(&self, h: u64, w: u64, mut visit: impl FnMut(u64, f64)) {
        let n = self.dim_mult.len();
        let dd = self.decoder_dims();
        let (mut hh, mut ww) = (h, w);
        visit(self.z_dim, (hh * ww) as f64);
        for _ in 0..2 {
            visit(dd[0], (hh * ww) as f64);
            visit(dd[0], (hh * ww) as f64);
        }
        let up = self.temporal_up();
        for i in 0..n {
            let (mut cin, c) = (if i > 0 { dd[i] / 2 } else { dd[i] }, dd[i + 1]);
            for _ in 0..=self.num_res_blocks {
                visit(cin, (hh * ww) as f64);
                visit(c, (hh * ww) as f64);
                cin = c;
            }
            if i + 1 < n {
                if up[i] {
                    visit(c, (hh * ww) as f64);
                }
                hh *= 2;
                ww *= 2;
            }
        }
        visit(dd[n], (hh * ww) as f64);
    }

    fn decoder_dims(&self) -> Vec<u64> {
        let n = self.dim_mult.len();
        std::iter::once(self.dim_mult[n - 1]).chain(self.dim_mult.iter().rev().copied()).map(|m| self.decoder_base_dim * m).collect()
    }

    fn temporal_up(&self) -> Vec<bool> {
        self.temporal_downsample.iter().take(self.dim_mult.len() - 1).rev().copied().collect()
    }

    /// One chunk through `WanDecoder3d.forward`; returns the frames it produces.
    fn chunk(&self, c: &mut Chunk, (h, w): (u64, u64)) -> f64 {
        let n = self.dim_mult.len();
        let dd = self.decoder_dims();
        let up = self.temporal_up();
        let (old, new) = (c.old, c.new);
        let (mut hh, mut ww, mut f) = (h, w, 1.0);
        c.cached_conv(0.0, self.z_dim, dd[0], f, (hh, ww), true, old, new);
        // mid block: residual, single-head attention per frame, residual; the decoder's `x`
        // holds each block's input until the block returns
        let outer = c.outer;
        let x = c.bytes(dd[0], f, (hh * ww) as f64);
        c.outer = outer + x;
        c.residual(dd[0], dd[0], f, (hh, ww));
        c.run(x, 7.0 * x);
        c.residual(dd[0], dd[0], f, (hh, ww));
        for i in 0..n {
            let (mut cin, ch) = (if i > 0 { dd[i] / 2 } else { dd[i] }, dd[i + 1]);
            c.outer = outer + c.bytes(cin, f, (hh * ww) as f64);
            for _ in 0..=self.num_res_blocks {
                c.residual(cin, ch, f, (hh, ww));
                cin = ch;
            }
            if i + 1 < n {
                let hw = (hh * ww) as f64;
                // the upsampler's input stays held by the up block's `x`
                let xi = c.bytes(ch, f, hw);
                let mut stacked = 0.0;
                if up[i] && c.time_up {
                    // time conv to 2 × channels, then the two halves stacked along time
                    let (o, nw) = if old == 1.0 { (0.0, 2.0) } else { (old, new) };
                    c.cached_conv(xi, ch, 2 * ch, f, (hh, ww), false, o, nw);
                    c.run(xi, 4.0 * xi);
                    f *= 2.0;
                    stacked = 2.0 * xi;
                }
                // frames into the batch (a copy unless one frame), nearest ×2 (`WanUpsample`
                // computes in fp32: a float copy of a 16-bit input, the fp32 output, its 16-bit
                // copy), the 2D conv to half the width
                let x = c.bytes(ch, f, hw);
                let copy = if f > 1.0 { x } else { 0.0 };
                c.run(xi, stacked + copy);
                let upsampled = if c.e == 2.0 { copy + 12.0 * x } else { (copy + 4.0 * x).max(6.0 * x) };
                c.run(xi, upsampled);
                hh *= 2;
                ww *= 2;
            }
        }
        c.outer = outer;
        // norm_out, SiLU, conv_out
        let x = c.bytes(dd[n], f, (hh * ww) as f64);
        c.run(x, c.norm(x));
        c.run(0.0, 2.0 * x);
        c.cached_conv(x, dd[n], self.out_channels, f, (hh, ww), true, old, new);
        f
    }
}
