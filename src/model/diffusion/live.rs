//! The live tensors of a no-grad forward through diffusers' convolutional parts, for
//! [`UNet2D::forward_peak`](crate::model::diffusion::unet::UNet2D) and the VAE's encode and
//! decode peaks: a ledger of what the caller holds (skip connections, the current hidden
//! state) and each module's own working set above it, read from the modules' `forward`
//! (diffusers 0.42.1; measured with `LiveBytes` in `tests/measure/diffusion_unet_vae.py`).
//! All sizes are bytes.

/// Held bytes and the largest total seen.
#[derive(Default)]
pub(crate) struct Ledger {
    pub held: f64,
    pub peak: f64,
}

impl Ledger {
    /// A module runs with `transient` bytes of its own above what is held.
    pub fn run(&mut self, transient: f64) {
        self.peak = self.peak.max(self.held + transient);
    }
}

/// `ResnetBlock2D.forward` (`models/resnet.py` lines 320–372) on an input of `x_in` bytes the
/// caller holds, giving `x_out`: norm1's output and the SiLU's (`2 x_in`), the SiLU output
/// and conv1's (`x_in + x_out`), conv1's output plus temb and the sum, norm2, SiLU, conv2
/// (`2 x_out`), then `conv_shortcut`'s output (when the channels change), the branch output,
/// their sum and its division by `output_scale_factor` (3 or 4 × `x_out`).
pub(crate) fn resnet(x_in: f64, x_out: f64, shortcut: bool) -> f64 {
    let tail = if shortcut { 4.0 } else { 3.0 } * x_out;
    (2.0 * x_in).max(x_in + x_out).max(tail)
}

/// `Transformer2DModel` on `x` bytes of input (`transformer_2d.py` lines 464–512 and
/// `BasicTransformerBlock.forward`, `attention.py`): the GEGLU feed-forward is the largest
/// moment: the block's input (held by the transformer's loop), the residual stream after
/// cross-attention, `attn2`'s output (a local until the feed-forward returns), the LayerNorm
/// output, `proj`'s 8-wide output, the GELU's and the product's 4-wide outputs: 20 `x`.
pub(crate) fn transformer(x: f64) -> f64 {
    20.0 * x
}

/// A single-head `Attention` with a GroupNorm and a residual (the VAE's mid block,
/// `AttnProcessor2_0`, `attention_processor.py` lines 2719–2786) on `x` bytes: the norm's
/// output (aliased as the key/value source until return), q, k, v, the attention output and
/// `to_out`'s: 6 `x` (the attention output is gone before the reshaped copy and the residual
/// sum are made).
pub(crate) fn vae_attention(x: f64) -> f64 {
    6.0 * x
}

/// `Upsample2D` (nearest ×2, 3×3 conv) on `x` bytes: the interpolated input and the conv's
/// output, each 4 `x`.
pub(crate) fn upsample(x: f64) -> f64 {
    8.0 * x
}
