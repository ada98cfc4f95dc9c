//! `PixArtTransformer2DModel` (diffusers 0.42.1 `models/transformers/pixart_transformer_2d.py`
//! `__init__` lines 85–185; `attention.py` `BasicTransformerBlock` with `norm_type
//! "ada_norm_single"`), as parameter tensors, its training forward, no-grad peak and FLOPs: a conv
//! `PatchEmbed`, `num_layers` blocks of a learned 6-way `scale_shift_table`, self-attention,
//! cross-attention to the caption (k/v from `cross_attention_dim`), a 4× GELU(tanh)
//! feed-forward, weightless LayerNorms; `AdaLayerNormSingle` (time embedding, and with
//! `use_additional_conditions` — the default at `sample_size` 128 — the resolution and aspect
//! ratio embeddings of a third of the width each), the caption projection (with
//! `caption_channels`), the output `scale_shift_table` and `proj_out`. PixArt-α and PixArt-Σ.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape};
use crate::model::diffusion::blocks::{act_bytes, embedder, feed_forward, linear, ops, projection};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `PixArtTransformer2DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PixArt {
    pub heads: u64,
    pub head_dim: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    pub layers: u64,
    pub cross_attention_dim: u64,
    /// `attention_bias`: biases on q/k/v.
    pub attention_bias: bool,
    pub patch_size: u64,
    /// The resolution and aspect-ratio embeddings of `AdaLayerNormSingle`.
    pub additional_conditions: bool,
    /// T5's width the caption projection takes (`caption_channels`; none: no projection).
    pub caption_channels: Option<u64>,
}

impl PixArt {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_layers", self.layers),
            ("cross_attention_dim", self.cross_attention_dim),
            ("patch_size", self.patch_size),
        ] {
            check_dim(field, v)?;
        }
        super::check_blocks("num_layers", self.layers)?;
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, p) = (self.hidden(), self.patch_size);
        let mut out = Vec::new();
        out.push(ParamTensor::new("output scale_shift_table", &[2, h], S, R));
        out.push(ParamTensor::new("patch embedding (pos_embed.proj)", &[h, self.in_channels, p, p], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        for _ in 0..self.layers {
            out.push(ParamTensor::new("block scale_shift_table", &[6, h], S, R));
            for kv_in in [h, self.cross_attention_dim] {
                projection(&mut out, "attention q (to_q)", &[LinearKind::Q], h, h, self.attention_bias);
                projection(&mut out, "attention k (to_k)", &[LinearKind::K], h, kv_in, self.attention_bias);
                projection(&mut out, "attention v (to_v)", &[LinearKind::V], h, kv_in, self.attention_bias);
                projection(&mut out, "attention out (to_out.0)", &[LinearKind::O], h, h, true);
            }
            feed_forward(&mut out, h, 4 * h);
        }
        linear(&mut out, "proj_out", None, p * p * self.out_channels, h);
        embedder(&mut out, "timestep embedder", 256, h);
        if self.additional_conditions {
            embedder(&mut out, "resolution embedder", 256, h / 3);
            embedder(&mut out, "aspect ratio embedder", 256, h / 3);
        }
        linear(&mut out, "AdaLayerNormSingle (adaln_single.linear)", None, 6 * h, h);
        if let Some(c) = self.caption_channels {
            embedder(&mut out, "caption projection", c, h);
        }
        out
    }
}

impl PixArt {
    /// Latent tokens: the latent in `patch_size` squares.
    pub fn image_tokens(&self, run: &Run) -> u64 {
        (run.latent_height / self.patch_size) * (run.latent_width / self.patch_size)
    }

    /// One training forward, op by op through [`Tape`] (`PixArtTransformer2DModel.forward`
    /// lines 290–420, `BasicTransformerBlock.forward` for `ada_norm_single`, `AttnProcessor2_0`):
    /// the patch embedding plus its sincos table cast back to the conv's type, the time
    /// embedding and caption projection; per block the `scale_shift_table + timestep`
    /// modulation, self-attention over the modulated norm, cross-attention from the raw stream
    /// to the caption through the prompt mask (memory-efficient kernel), the gated 4×
    /// feed-forward (every attention output is divided by `rescale_output_factor`, a new
    /// tensor); the output norm, modulation and `proj_out`.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
        let (h, heads, p) = (self.hidden(), self.heads, self.patch_size);
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let input = t.input_bytes();
        let full = t.full();
        let w = t.weight(None);
        let latent = t.new_tensor(b * (n * self.in_channels * p * p) as f64, input, false);
        let x = t.patch_conv(latent, self.in_channels * p * p, h, w);
        let x = t.new_tensor(x.elems, x.bytes, x.grad); // `(latent + pos_embed).to(latent.dtype)`
        let table_bytes = if t.mode == Mode::Half || (t.mode == Mode::Autocast && !full) { 2.0 } else { 4.0 };
        let proj = t.new_tensor(b * 256.0, x.bytes, false);
        let embedded = ops::embedder(&mut t, proj, 256, h);
        let temb = {
            if embedded.grad {
                t.save("activation inputs", embedded);
            }
            let silu = t.new_tensor(embedded.elems, embedded.bytes, embedded.grad);
            t.linear(silu, h, 6 * h, w)
        };
        let enc = match self.caption_channels {
            Some(c) => {
                let caption = t.new_tensor(b * (tt * c) as f64, input, false);
                ops::embedder(&mut t, caption, c, h)
            }
            None => t.new_tensor(b * (tt * self.cross_attention_dim) as f64, input, false),
        };
        let mask = t.new_tensor(b * tt as f64, input, false);
        let mut x = x;
        for _ in 0..self.layers {
            x = t.checkpoint(run.checkpointing, &[x, mask, enc, temb], |t| {
                let e = t.new_tensor(temb.elems, temb.bytes.max(table_bytes), temb.grad || full);
                let modulated = |t: &mut Tape, x| {
                    let nx = t.layer_norm(x, h);
                    let one_plus = t.new_tensor(t.batch * h as f64, e.bytes, e.grad);
                    let m = t.mul(nx, one_plus);
                    t.add2(m, Tape::view(e, t.batch * h as f64))
                };
                let xm = modulated(t, x);
                let (q, k, v) = ops::qkv(t, xm, h, false);
                let o = t.attention(q, k, v, heads, n);
                let o = t.cast(o, q.bytes);
                let wo = ops::w_out(t, false);
                let a = t.linear(o, h, h, wo);
                let a = t.new_tensor(a.elems, a.bytes, a.grad); // `/ rescale_output_factor`
                let g = ops::gated(t, e, a, h);
                let x = t.add2(g, x);
                let (wq, wk, wv) = (t.weight(Some(LinearKind::Q)), t.weight(Some(LinearKind::K)), t.weight(Some(LinearKind::V)));
                let q = t.linear(x, h, h, wq);
                let k = t.linear(enc, self.cross_attention_dim, h, wk);
                let v = t.linear(enc, self.cross_attention_dim, h, wv);
                let per_head = t.new_tensor(t.batch * (heads * tt.div_ceil(8) * 8) as f64, mask.bytes, false);
                let o = t.attention_masked(q, k, v, heads, n, Some(per_head));
                let o = t.cast(o, q.bytes);
                let a = t.linear(o, h, h, wo);
                let a = t.new_tensor(a.elems, a.bytes, a.grad); // `/ rescale_output_factor`
                let x = t.add2(a, x);
                let xm = modulated(t, x);
                let f = ops::feed_forward(t, xm, h, 4 * h);
                let g = ops::gated(t, e, f, h);
                t.add2(g, x)
            });
        }
        let table = t.new_tensor(b * 2.0 * h as f64, embedded.bytes.max(table_bytes), full);
        let nx = t.layer_norm(x, h);
        let one_plus = t.new_tensor(b * h as f64, table.bytes, table.grad);
        let m = t.mul(nx, one_plus);
        let m = t.add2(m, table);
        t.linear(m, h, p * p * self.out_channels, w);
        t
    }

    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment, the feed-forward's GELU in a block (`u` = b × tokens × hidden
    /// activations): its input and output (2 × 4u) beside the caller's stream, the stream after
    /// cross-attention, the cross-attention output and the modulated norm (4u), plus the
    /// projected caption every block reads.
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let h = self.hidden() as f64;
        let u = run.batch as f64 * self.image_tokens(run) as f64 * h * a;
        let caption = run.batch as f64 * run.text_tokens as f64 * h * a;
        12.0 * u + caption
    }
}
