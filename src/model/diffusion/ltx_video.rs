//! `LTXVideoTransformer3DModel` as diffusers 0.42.1 builds it (`transformer_ltx.py` `__init__`
//! lines 430–490): `proj_in` over the pipeline-packed latent, `AdaLayerNormSingle` (time
//! embedding and 6-way projection), the caption projection, blocks with a learned
//! `scale_shift_table`, self-attention and cross-attention (RMS norms across heads), a 4×
//! GELU(tanh) feed-forward; its training forward, no-grad peak and FLOPs. LTX-Video 2B.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape, T};
use crate::model::diffusion::blocks::{act_bytes, embedder, feed_forward, linear, ops, projection};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `LTXVideoTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LtxVideo {
    /// Channels of the pipeline-packed latent (`_pack_latents` folds `patch_size` ×
    /// `patch_size` × `patch_size_t` latent pixels into one token).
    pub in_channels: u64,
    pub patch_size: u64,
    pub out_channels: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub cross_attention_dim: u64,
    pub layers: u64,
    pub caption_channels: u64,
    pub attention_bias: bool,
    pub attention_out_bias: bool,
}

impl LtxVideo {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("cross_attention_dim", self.cross_attention_dim),
            ("num_layers", self.layers),
            ("caption_channels", self.caption_channels),
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
        let h = self.hidden();
        let mut out = Vec::new();
        out.push(ParamTensor::new("output scale_shift_table", &[2, h], S, R));
        linear(&mut out, "proj_in", None, h, self.in_channels);
        embedder(&mut out, "timestep embedder", 256, h);
        linear(&mut out, "AdaLayerNormSingle (time_embed.linear)", None, 6 * h, h);
        embedder(&mut out, "caption projection", self.caption_channels, h);
        for _ in 0..self.layers {
            out.push(ParamTensor::new("block scale_shift_table", &[6, h], S, R));
            for kv_in in [h, self.cross_attention_dim] {
                projection(&mut out, "attention q (to_q)", &[LinearKind::Q], h, h, self.attention_bias);
                projection(&mut out, "attention k (to_k)", &[LinearKind::K], h, kv_in, self.attention_bias);
                projection(&mut out, "attention v (to_v)", &[LinearKind::V], h, kv_in, self.attention_bias);
                projection(&mut out, "attention out (to_out.0)", &[LinearKind::O], h, h, self.attention_out_bias);
                out.push(ParamTensor::new("q/k RMS norms across heads", &[2, h], S, R));
            }
            feed_forward(&mut out, h, 4 * h);
        }
        linear(&mut out, "proj_out", None, self.out_channels, h);
        out
    }
}

impl LtxVideo {
    /// Latent tokens: the pipeline packs `patch_size` squares (1 in the releases).
    pub fn image_tokens(&self, run: &Run) -> u64 {
        run.latent_frames.max(1) * (run.latent_height / self.patch_size) * (run.latent_width / self.patch_size)
    }

    /// One training forward, op by op through [`Tape`] (`LTXVideoTransformer3DModel.forward`
    /// lines 520–600, `LTXVideoTransformerBlock.forward` lines 344–381, `LTXVideoAttnProcessor`
    /// lines 63–112): `proj_in`, `AdaLayerNormSingle`, the caption projection, the RoPE tables
    /// (b × tokens × hidden, fp32, from `self.rope`) and the T5 mask as a float bias; per block
    /// diffusers' weightless RMSNorm (`x.to(float32).pow(2)`, `rsqrt`, `x * rstd`, cast back),
    /// the fp32 or 16-bit `scale_shift_table + temb` modulation, self-attention with RMS q/k
    /// norms across heads and RoPE, cross-attention from the raw stream to the caption through
    /// the mask (the memory-efficient kernel, which keeps the mask), the gated feed-forward;
    /// `norm_out` and `proj_out`.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
        let (h, heads) = (self.hidden(), self.heads);
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let input = t.input_bytes();
        let full = t.full();
        let w = t.weight(None);
        let latent = t.new_tensor(b * (n * self.in_channels) as f64, input, false);
        let x = t.linear(latent, self.in_channels, h, w);
        // the parameters' type: fp32, or 16-bit in a pure 16-bit run and a LoRA run's base
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
        let caption = t.new_tensor(b * (tt * self.caption_channels) as f64, input, false);
        let c = t.linear(caption, self.caption_channels, h, w);
        let c = t.activation(c);
        let enc = t.linear(c, h, h, w);
        let cos = t.new_tensor(b * (n * h) as f64, 4.0, false);
        let sin = t.new_tensor(b * (n * h) as f64, 4.0, false);
        let mask = t.new_tensor(b * tt as f64, input, false);
        let mut x = x;
        for _ in 0..self.layers {
            x = t.checkpoint(run.checkpointing, &[x, enc, temb, cos, sin, mask], |t| {
                let ada = t.new_tensor(temb.elems, temb.bytes.max(table_bytes), temb.grad || full);
                let modulated = |t: &mut Tape, x: T| {
                    let nx = t.rms_norm_diffusers_with(x, h, false);
                    let one_plus = t.new_tensor(t.batch * h as f64, ada.bytes, ada.grad);
                    let m = t.mul(nx, one_plus);
                    t.add2(m, Tape::view(ada, t.batch * h as f64))
                };
                let xm = modulated(t, x);
                let (q, k, v) = ops::qkv(t, xm, h, false);
                let q = t.rms_norm(q, h);
                let k = t.rms_norm(k, h);
                let q = ops::rotary(t, q, cos, sin);
                let k = ops::rotary(t, k, cos, sin);
                let o = t.attention(q, k, v, heads, n);
                let o = t.cast(o, q.bytes);
                let wo = ops::w_out(t, false);
                let a = t.linear(o, h, h, wo);
                let g = ops::gated(t, ada, a, h);
                let x = t.add2(x, g);
                // cross-attention: q from the raw stream, k/v from the caption, through the mask
                let (wq, wk, wv) = (t.weight(Some(LinearKind::Q)), t.weight(Some(LinearKind::K)), t.weight(Some(LinearKind::V)));
                let q = t.linear(x, h, h, wq);
                let k = t.linear(enc, self.cross_attention_dim, h, wk);
                let v = t.linear(enc, self.cross_attention_dim, h, wv);
                let q = t.rms_norm(q, h);
                let k = t.rms_norm(k, h);
                // `prepare_attention_mask` repeats it per head; the kernel aligns keys to 8
                let per_head = t.new_tensor(t.batch * (heads * tt.div_ceil(8) * 8) as f64, mask.bytes, false);
                let o = t.attention_masked(q, k, v, heads, n, Some(per_head));
                let o = t.cast(o, q.bytes);
                let a = t.linear(o, h, h, wo);
                let x = t.add2(x, a);
                let xm = modulated(t, x);
                let f = ops::feed_forward(t, xm, h, 4 * h);
                let g = ops::gated(t, ada, f, h);
                t.add2(x, g)
            });
        }
        let table = t.new_tensor(b * 2.0 * h as f64, embedded.bytes.max(table_bytes), full);
        let nx = t.layer_norm(x, h);
        let one_plus = t.new_tensor(b * h as f64, table.bytes, table.grad);
        let m = t.mul(nx, one_plus);
        let m = t.add2(m, table);
        t.linear(m, h, self.out_channels, w);
        t
    }

    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment in a block (`u` = b × tokens × hidden activations, `f` the same in fp32):
    /// the fp32 RoPE tables `self.rope` computes (2f) and the projected caption stay throughout;
    /// then either RoPE on k (`apply_rotary_emb` lines 596–601: the caller's stream, the
    /// modulated norm, q, k, v and the rotated copy, 6u, beside the fp32 products, and for a
    /// 16-bit k the `x_rotated.float()` copy), or the feed-forward's GELU (the caller's stream,
    /// the stream, the cross-attention output and the norm, 4u, beside 2 × 4u).
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let rows = run.batch as f64 * self.image_tokens(run) as f64 * self.hidden() as f64;
        let (u, f) = (rows * a, rows * 4.0);
        let rope = 6.0 * u + if a == 4.0 { 2.0 } else { 3.0 } * f;
        let feed_forward = 12.0 * u;
        let caption = run.batch as f64 * (run.text_tokens * self.hidden()) as f64 * a;
        rope.max(feed_forward) + 2.0 * f + caption
    }
}
