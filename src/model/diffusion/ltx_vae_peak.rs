//! The working set of an [`LtxVideoVae`] decode under `torch.no_grad()`, beyond the weights
//! and the latents, without tiling (diffusers 0.42.1 `models/autoencoders/autoencoder_kl_ltx.py`:
//! `LTXVideoCausalConv3d.forward` lines 66–79, `LTXVideoResnetBlock3d.forward` 149–195,
//! `LTXVideoUpsampler3d.forward` 273–296, `LTXVideoMidBlock3d.forward` 573–598,
//! `LTXVideoUpBlock3d.forward` 694–724, `LTXVideoDecoder3d.forward` 990–1033; `RMSNorm` in
//! `normalization.py` 554–566). The decoder is not causal: every 3×3×3 conv first
//! concatenates a copy of its input between one repeated first and last frame (both kept to
//! the conv's return); a 1×1×1 shortcut still copies its input (`torch.concatenate` of
//! empty pads). The weightless RMS norms square an fp32 copy of their input (in 16 bits the
//! input, the copy and the square, 10 bytes an element; in fp32 the input and its square, or
//! the input and the normalised product, beside the variance). An up-sampler's 8c-wide conv
//! output is shuffled into a copy (`permute` then `flatten`) of which the first frame is
//! sliced off: the next block's input is a view that keeps all 2t frames. Each block's input
//! stays referenced by the decoder's loop until the block returns. `enable_tiling()` and
//! framewise decoding are not modelled (a tiled decode is counted as the whole latent's, an
//! upper bound). Measured with `LiveBytes` on CPU in `tests/measure/diffusion_video_parts.py`
//! (`ltx_vae_peaks`).

use crate::model::diffusion::live::Ledger;
use crate::model::diffusion::ltx_vae::LtxVideoVae;
use crate::model::diffusion::Run;
use crate::model::precision::Precision;

/// A video tensor's size: channels, frames and pixels per frame, for a batch, in bytes.
#[derive(Clone, Copy)]
struct Shape {
    frames: f64,
    pixels: f64,
    batch: f64,
    e: f64,
}

impl Shape {
    fn bytes(&self, c: f64) -> f64 {
        self.batch * c * self.frames * self.pixels * self.e
    }
}

impl LtxVideoVae {
    /// Peak bytes of `vae.decode(latents, timestep)` for `run.batch` latents of
    /// `run.latent_frames × run.latent_height × run.latent_width`.
    pub fn decode_peak(&self, run: &Run, _tiled: bool) -> f64 {
        let e = if run.precision == Precision::Fp32 { 4.0 } else { 2.0 };
        let rev: Vec<f64> = self.decoder_channels.iter().rev().map(|&c| c as f64).collect();
        let layers: Vec<u64> = self.decoder_layers.iter().rev().copied().collect();
        let scaling: Vec<bool> = self.decoder_scaling.iter().take(rev.len()).rev().copied().collect();
        let mut s = Shape { frames: run.latent_frames.max(1) as f64, pixels: (run.latent_height.max(1) * run.latent_width.max(1)) as f64, batch: run.batch as f64, e };
        let mut l = Ledger::default();
        // conv_in from the latent (the input itself is not counted).
        conv(&mut l, 0.0, s.bytes(self.latent_channels as f64), s, s.bytes(rev[0]), 3);
        let mut block_in = s.bytes(rev[0]);
        // The mid block: its input is held by the decoder while it runs.
        let mut r = block_in;
        for j in 0..layers[0] {
            resnet(&mut l, if j == 0 { 0.0 } else { block_in }, r, s, rev[0], rev[0]);
            r = s.bytes(rev[0]);
        }
        block_in = r;
        let mut c_in = rev[0];
        for (i, &c) in rev.iter().enumerate() {
            let mut held = 0.0;
            let mut r = block_in;
            if c_in != c {
                resnet(&mut l, 0.0, r, s, c_in, c);
                r = s.bytes(c);
                held = block_in;
            }
            if scaling[i] {
                // The conv to 8c beside its input, then the shuffled copy beside the conv.
                let out = s.bytes(8.0 * c);
                conv(&mut l, held, r, s, out, 3);
                l.held = held;
                l.run(r + 2.0 * out);
                s.frames *= 2.0;
                s.pixels *= 4.0;
                r = s.bytes(c);
                s.frames -= 1.0;
                held = block_in;
            }
            for j in 0..layers[i + 1] {
                let other = if j == 0 && held == 0.0 { 0.0 } else { block_in };
                resnet(&mut l, other, r, s, c, c);
                r = s.bytes(c);
            }
            block_in = r;
            c_in = c;
        }
        // norm_out (weightless), SiLU, conv_out, then the un-patchified copy.
        let x = s.bytes(c_in);
        l.held = 0.0;
        l.run(rms(x, s));
        l.run(2.0 * x);
        let p2 = (self.patch_size * self.patch_size * self.patch_size_t) as f64;
        let out = s.bytes(self.out_channels as f64 * p2);
        conv(&mut l, 0.0, x, s, out, 3);
        l.run(2.0 * out);
        l.peak
    }
}

/// A non-causal conv of kernel `kt` frames on an input of `input` bytes (`s` its frames),
/// `held` bytes beside it: the input, the repeated first and last frames, their
/// concatenation and the output.
fn conv(l: &mut Ledger, held: f64, input: f64, s: Shape, out: f64, kt: u64) {
    let pad = ((kt - 1) / 2) as f64;
    let frame = input / s.frames;
    l.held = held;
    l.run(input + 2.0 * pad * frame + input + 2.0 * pad * frame + out);
}

/// `LTXVideoResnetBlock3d` from `cin` to `cout` channels on `s`, its input `r` bytes (a view
/// may keep more than its frames) and `other` bytes held by the caller beside it.
fn resnet(l: &mut Ledger, other: f64, r: f64, s: Shape, cin: f64, cout: f64) {
    let (xi, xo) = (s.bytes(cin), s.bytes(cout));
    let held = other + r;
    l.held = other;
    l.run(r - xi + rms(xi, s));
    l.held = held;
    l.run(2.0 * xi);
    conv(l, held, xi, s, xo, 3);
    l.held = held;
    l.run(rms(xo, s));
    l.run(2.0 * xo);
    conv(l, held, xo, s, xo, 3);
    l.held = held;
    if cin != cout {
        // norm3 (LayerNorm) on the input, the 1×1×1 shortcut's copy and output.
        l.run(xo + xi + xi + xo);
        l.run(3.0 * xo);
    } else {
        l.run(2.0 * xo);
    }
}

/// A weightless `RMSNorm` on `x` bytes: in 16 bits the input, its fp32 copy and the square;
/// in fp32 the input and its square beside the per-pixel variance.
fn rms(x: f64, s: Shape) -> f64 {
    if s.e < 4.0 {
        x / s.e * (s.e + 8.0)
    } else {
        2.0 * x + s.batch * s.frames * s.pixels * 4.0
    }
}
