//! Forward FLOPs of one [`UNet2D`] call: 2 × the multiply-adds of every convolution and
//! linear along [`UNet2D::walk`], and the attention products (`QKᵀ` and `PV`, 4 × queries ×
//! keys × width) of the self-attention over the latent positions and the cross-attention
//! over the text; as `torch.utils.flop_counter.FlopCounterMode` counts them (measured in
//! `tests/measure/diffusion_unet_vae.py`). Norms, activations and additions are left out.

use crate::model::diffusion::unet::{UNet2D, UNetOp};
use crate::model::diffusion::Run;

impl UNet2D {
    /// FLOPs of one forward call on `run.batch` latents (a generation step with guidance
    /// batched in is one call of twice the batch).
    pub fn forward_flops(&self, run: &Run) -> f64 {
        let b = run.batch as f64;
        let (h0, w0) = (run.latent_height.max(1), run.latent_width.max(1));
        let hw = |level: u32| -> f64 {
            let (mut h, mut w) = (h0, w0);
            for _ in 0..level {
                h = h.div_ceil(2);
                w = w.div_ceil(2);
            }
            (h * w) as f64
        };
        let temb = self.time_embed_dim() as f64;
        let t = run.text_tokens as f64;
        let x = self.cross_attention_dim as f64;
        let mut macs = b * (self.channels[0] as f64 * temb + temb * temb);
        if let Some(tt) = self.text_time {
            macs += b * (tt.input_dim as f64 * temb + temb * temb);
        }
        for op in self.walk() {
            macs += match op {
                UNetOp::ConvIn { cin, cout, kernel } | UNetOp::ConvOut { cin, cout, kernel } => b * hw(0) * (cin * cout * kernel * kernel) as f64,
                UNetOp::Resnet { level, cin, cout } => {
                    let (ci, co) = (cin as f64, cout as f64);
                    let shortcut = if cin != cout { ci * co } else { 0.0 };
                    b * hw(level) * (9.0 * ci * co + 9.0 * co * co + shortcut) + b * temb * co
                }
                UNetOp::Transformer { level, channels, layers, .. } => {
                    let (s, c) = (hw(level), channels as f64);
                    // proj_in and proj_out; per layer: attn1's q, k, v, out and QKᵀ, PV over s keys;
                    // attn2's q and out on the image, k and v on the text, QKᵀ, PV over t keys;
                    // GEGLU's 8c-wide proj and the 4c → c projection
                    let per_layer = b * s * (4.0 * c * c + 2.0 * s * c) + b * (2.0 * s * c * c + 2.0 * t * x * c + 2.0 * s * t * c) + b * s * 12.0 * c * c;
                    2.0 * b * s * c * c + layers as f64 * per_layer
                }
                UNetOp::Downsample { level, channels } => b * hw(level + 1) * 9.0 * (channels * channels) as f64,
                UNetOp::Upsample { level, channels } => b * hw(level - 1) * 9.0 * (channels * channels) as f64,
            };
        }
        2.0 * macs
    }
}
