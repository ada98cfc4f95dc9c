//! The working set of one no-grad [`UNet2D`] call (a generation step's denoiser call) beyond
//! the weights and the inputs: `UNet2DConditionModel.forward` (`unet_2d_condition.py`) keeps
//! every down-path output in `down_block_res_samples` until the up block that consumes it
//! returns; each module runs on top of those skips and the current hidden state
//! ([`live`](crate::model::diffusion::live) has each module's own working set). The up
//! blocks concatenate the hidden state with a skip (`torch.cat`, a new tensor) before each
//! resnet. Measured with `LiveBytes` on CPU in `tests/measure/diffusion_unet_vae.py`.

use crate::model::diffusion::live::{self, Ledger};
use crate::model::diffusion::unet::{LevelKind, UNet2D};
use crate::model::diffusion::Run;
use crate::model::precision::Precision;

impl UNet2D {
    /// Peak live bytes of one `torch.no_grad()` call on `run.batch` latents of
    /// `run.latent_height × run.latent_width` (fp32 weights and activations with
    /// `Precision::Fp32`, else 16-bit).
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let e = if run.precision == Precision::Fp32 { 4.0 } else { 2.0 };
        let b = run.batch as f64;
        let (h0, w0) = (run.latent_height.max(1), run.latent_width.max(1));
        let x = |c: u64, level: usize| -> f64 {
            let (mut h, mut w) = (h0, w0);
            for _ in 0..level {
                h = h.div_ceil(2);
                w = w.div_ceil(2);
            }
            b * (c * h * w) as f64 * e
        };
        let n = self.channels.len();
        let temb = self.time_embed_dim() as f64;
        // the forward's locals: t_emb, emb (and SDXL's add embeddings)
        let base = b * e * (self.channels[0] as f64 + 2.0 * temb + self.text_time.map_or(0.0, |t| t.input_dim as f64));
        let mut l = Ledger { held: base, peak: base };
        let mut skips: Vec<f64> = Vec::new();
        let sum = |s: &[f64]| s.iter().sum::<f64>();
        // conv_in: its output is the first skip and the hidden state
        let mut h = x(self.channels[0], 0);
        l.run(h);
        skips.push(h);
        l.held = base + sum(&skips);
        let mut prev = self.channels[0];
        for i in 0..n {
            let c = self.channels[i];
            for layer in 0..self.layers[i] {
                let cin = if layer == 0 { prev } else { c };
                l.run(live::resnet(h, x(c, i), cin != c));
                h = x(c, i);
                l.held = base + sum(&skips) + h;
                if self.down[i] == LevelKind::CrossAttn {
                    l.run(live::transformer(h));
                }
                skips.push(h);
                l.held = base + sum(&skips);
            }
            if i + 1 < n {
                h = x(c, i + 1);
                l.run(h);
                skips.push(h);
                l.held = base + sum(&skips);
            }
            prev = c;
        }
        if self.mid_block {
            l.run(live::resnet(h, h, false));
            l.held = base + sum(&skips) + h;
            l.run(live::transformer(h));
            l.run(live::resnet(h, h, false));
        }
        for i in 0..n {
            let level = n - 1 - i;
            let out = self.channels[level];
            let layers = self.layers[level] as usize + 1;
            // this block's skips stay held (the forward's `res_samples`) until it returns
            let mine = skips.split_off(skips.len().saturating_sub(layers));
            // ... and so does the block's input (the forward's `sample`, while the block's own
            // `hidden_states` moves on)
            let held_skips = sum(&skips) + sum(&mine) + h;
            let mut first = true;
            for layer in 0..layers {
                let skip = mine[layers - 1 - layer];
                let cat = h + skip;
                l.held = base + held_skips + if first { 0.0 } else { h };
                l.run(cat);
                l.held = base + held_skips + cat;
                first = false;
                l.run(live::resnet(cat, x(out, level), true));
                h = x(out, level);
                l.held = base + held_skips + h;
                if self.up[i] == LevelKind::CrossAttn {
                    l.run(live::transformer(h));
                }
            }
            if i + 1 < n {
                l.run(live::upsample(h));
                h = x(out, level - 1);
            }
            l.held = base + sum(&skips) + h;
        }
        // conv_norm_out, SiLU, conv_out
        l.run(h + x(self.out_channels, 0));
        l.peak
    }
}
