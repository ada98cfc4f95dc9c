//! The working set of an [`DcAe`] decode under `torch.no_grad()`, beyond the weights and the
//! latents (diffusers 0.42.1 `models/autoencoders/autoencoder_dc.py` `Decoder.forward` lines
//! 362–377, `ResBlock` 49–61, `DCUpBlock2d` 183–199, `EfficientViTBlock` 91–94;
//! `attention_processor.py` `SanaMultiscaleAttnProcessor2_0` 5250–5302 and
//! `SanaMultiscaleLinearAttention.apply_linear_attention` 912–919;
//! `transformers/sana_transformer.py` `GLUMBConv.forward` 62–82; `normalization.py`
//! `RMSNorm.forward` 554–566). Every block of an up level runs inside an `nn.Sequential`
//! whose input the decoder's loop variable keeps until the level returns.
//!
//! The RMS norms (every block's and `norm_out`) square an fp32 copy of their input: in 16 bits
//! the input, its fp32 copy and the square are live at once (10 bytes per element; 8 in fp32,
//! where the copy is the input itself). `enable_tiling()` is not modelled: a tiled decode is
//! counted as the whole latent's (an upper bound). Measured with `LiveBytes` on CPU in
//! `tests/measure/diffusion_video_parts.py` (`dc_ae_peaks`).

use crate::model::diffusion::dc_ae::DcAe;
use crate::model::diffusion::live::Ledger;
use crate::model::diffusion::Run;
use crate::model::precision::Precision;

impl DcAe {
    /// Peak bytes of `vae.decode(latents)` for `run.batch` latents of
    /// `run.latent_height × run.latent_width`.
    pub fn decode_peak(&self, run: &Run, _tiled: bool) -> f64 {
        let e = if run.precision == Precision::Fp32 { 4.0 } else { 2.0 };
        let d = &self.decoder;
        let n = d.channels.len();
        let (mut hh, mut ww) = (run.latent_height.max(1), run.latent_width.max(1));
        let px = |hh: u64, ww: u64| (run.batch * hh * ww) as f64;
        let mut l = Ledger::default();
        // conv_in plus the repeated latent (`in_shortcut`), then their sum.
        let top = d.channels[n - 1] as f64 * px(hh, ww) * e;
        l.run(if self.in_shortcut { 3.0 * top } else { top });
        // `x`, the repeated latent, is a local of `Decoder.forward`: it stays to the end.
        let kept = if self.decoder_in_shortcut() { top } else { 0.0 };
        let mut cur = top;
        for i in (0..n).rev() {
            let c = d.channels[i] as f64;
            let input = cur;
            if i + 1 < n && d.layers[i] > 0 {
                let cin = d.channels[i + 1] as f64;
                l.held = kept;
                let (h2, w2) = (2 * hh, 2 * ww);
                let out = c * px(h2, w2) * e;
                // The interpolated input beside the conv's output (or the conv's 4c-wide output
                // before its pixel shuffle), then the repeated input and its shuffle, the sum.
                let first = if self.interpolate { input + cin * px(h2, w2) * e + out } else { input + 2.0 * 4.0 * c * px(hh, ww) * e };
                l.run(first);
                l.run(input + out + 2.0 * out);
                l.run(input + 3.0 * out);
                hh = h2;
                ww = w2;
                cur = out;
            }
            for _ in 0..d.layers[i] {
                l.held = kept + if cur == input { input } else { input + cur };
                let x = c * px(hh, ww) * e;
                if d.vit[i] {
                    self.vit_peak(&mut l, c, px(hh, ww), d.scales[i].len() as f64, e);
                } else {
                    // conv1 beside its SiLU, then conv2 in its norm, then the norm's output and
                    // the residual sum; the residual (the block's input) is held.
                    l.run(2.0 * x);
                    l.run(rms(x, e, px(hh, ww)));
                    l.run(2.0 * x);
                }
                cur = x;
            }
        }
        // norm_out, ReLU, conv_out.
        l.held = kept;
        l.run(rms(cur, e, px(hh, ww)));
        let image = self.in_channels as f64 * px(hh, ww) * e;
        l.run(2.0 * cur + image);
        l.peak
    }

    /// An `EfficientViTBlock` at width `c` over `px` pixels (`l.held` holds its input, the
    /// residual): the multiscale linear attention, then `GLUMBConv`.
    fn vit_peak(&self, l: &mut Ledger, c: f64, px: f64, scales: f64, e: f64) {
        let x = c * px * e;
        let branches = 1.0 + scales;
        // to_q/to_k/to_v stay referenced until the chunk; their concatenation and each scale's
        // grouped projection stay in the `multi_scale_qkv` list to the end of the call.
        let qkv = 3.0 * x;
        let list = qkv * branches;
        l.run(qkv * (3.0 + scales));
        l.run(qkv + 2.0 * list);
        // Linear attention (pixels > head width) on an fp32 copy of the concatenation (in fp32
        // the concatenation itself); ReLU(q) and ReLU(k); `value` is a view of the copy. All
        // of them stay to the end of the call.
        let big = 3.0 * c * branches * px * 4.0;
        if e < 4.0 {
            l.run(qkv + 2.0 * list + big);
        }
        let lanes = c * branches * px * 4.0;
        let alive = list + big + 2.0 * lanes;
        // The padded value and scores·q (head width + 1 rows), the last row plus eps, the division.
        let heads = c * branches / self.attention_head_dim as f64;
        let padded = heads * (self.attention_head_dim as f64 + 1.0) * px * 4.0;
        l.run(alive + 2.0 * padded + heads * px * 4.0 + lanes);
        // Back to the input dtype, to_out, its norm, the residual sum.
        let merged = c * branches * px * e;
        if e < 4.0 {
            l.run(alive + lanes + merged);
        }
        l.run(alive + merged + x);
        l.run(alive + rms(x, e, px));
        l.run(alive + 2.0 * x);
        // GLUMBConv beside the attention's output: the 8c-wide conv and its SiLU, the
        // depthwise conv (alive to the end through the `gate` view) beside the gate's SiLU and
        // the product, the 1×1 conv back to c, its norm, the residual sum.
        l.run(x + 16.0 * x);
        l.run(x + 8.0 * x + rms(x, e, px));
    }
}

/// `RMSNorm` (with weight and bias) on `x` bytes: in 16 bits the input, its fp32 copy and the
/// fp32 square (10 bytes an element); in fp32, where `.to(float32)` returns the input itself,
/// the input, the normalised product and its product with the weight (12 bytes), beside
/// the variance (one fp32 per pixel).
/// `px` pixels' fp32 variance stays beside the fp32 products.
fn rms(x: f64, e: f64, px: f64) -> f64 {
    if e < 4.0 {
        x / e * (e + 8.0)
    } else {
        3.0 * x + px * 4.0
    }
}
