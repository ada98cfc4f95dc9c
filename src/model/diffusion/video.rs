//! The 3-D (video) diffusion transformers, as diffusers 0.42.1 builds them:
//! - `WanTransformer3DModel` (`models/transformers/transformer_wan.py`: `WanTransformer3DModel.__init__`
//!   lines 571–620, `WanTransformerBlock` 419–506, `WanAttention` 175–283,
//!   `WanTimeTextImageEmbedding` 308–353, `WanImageEmbedding` 284–307): a `Conv3d` patch embedding
//!   (`patch_size` (t, h, w), (1, 2, 2) in every release), the time embedding and its 6-way
//!   projection, the text projection from umT5's 4096, then `num_layers` blocks of self-attention
//!   (RMS norms across heads on q and k, 3-D RoPE), cross-attention to the text (and, for
//!   image-to-video, `add_k_proj/add_v_proj` over CLIP image tokens), a GELU(tanh) feed-forward of
//!   `ffn_dim`, `FP32LayerNorm`s and a learned `scale_shift_table` per block. Wan 2.1 T2V 1.3B and
//!   14B. Wan 2.2 A14B ships two experts of this same shape (`transformer` for high noise,
//!   `transformer_2` for low noise, `WanPipeline(boundary_ratio)`), loaded together: a pipeline
//!   holds two of these parts.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Tape, T};
use crate::model::diffusion::blocks::{act_bytes, attention, embedder, feed_forward, linear, ops};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `WanTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wan {
    /// (frames, height, width) of one patch.
    pub patch_size: [u64; 3],
    pub heads: u64,
    pub head_dim: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    /// Width of the umT5 embeddings (`text_dim`).
    pub text_dim: u64,
    /// Sinusoidal timestep channels (`freq_dim`).
    pub freq_dim: u64,
    pub ffn_dim: u64,
    pub layers: u64,
    /// `cross_attn_norm`: an affine `FP32LayerNorm` before cross-attention.
    pub cross_attn_norm: bool,
    /// Image-to-video: CLIP image embedding width (`image_dim`).
    pub image_dim: Option<u64>,
    /// Image-to-video: `add_k_proj/add_v_proj` input width (`added_kv_proj_dim`).
    pub added_kv_proj_dim: Option<u64>,
    /// FLF2V: learned positions of the image tokens (`pos_embed_seq_len`).
    pub pos_embed_seq_len: Option<u64>,
}

impl Wan {
    pub fn check(&self) -> Result<(), InputError> {
        for p in self.patch_size {
            check_dim("patch_size", p)?;
        }
        check_dim("num_attention_heads", self.heads)?;
        check_dim("attention_head_dim", self.head_dim)?;
        check_dim("in_channels", self.in_channels)?;
        check_dim("out_channels", self.out_channels)?;
        check_dim("text_dim", self.text_dim)?;
        check_dim("freq_dim", self.freq_dim)?;
        check_dim("ffn_dim", self.ffn_dim)?;
        check_dim("num_layers", self.layers)?;
        super::check_blocks("num_layers", self.layers)?;
        if let Some(d) = self.image_dim {
            check_dim("image_dim", d)?;
        }
        if let Some(d) = self.added_kv_proj_dim {
            check_dim("added_kv_proj_dim", d)?;
        }
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    pub fn in_channels(&self) -> u64 {
        self.in_channels
    }

    /// The spatial patch (height = width in every release).
    pub fn patch_size(&self) -> u64 {
        self.patch_size[1]
    }

    pub fn temporal_patch(&self) -> u64 {
        self.patch_size[0]
    }

    pub fn text_width(&self) -> u64 {
        self.text_dim
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let h = self.hidden();
        let [pt, ph, pw] = self.patch_size;
        let mut out = Vec::new();
        // Conv3d weight [h, in, pt, ph, pw], stored with the kernel's frames and height merged.
        out.push(ParamTensor::new("patch embedding (Conv3d)", &[h, self.in_channels, pt * ph, pw], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        embedder(&mut out, "timestep embedder", self.freq_dim, h);
        linear(&mut out, "timestep projection (time_proj)", None, 6 * h, h);
        embedder(&mut out, "text embedder", self.text_dim, h);
        if let Some(img) = self.image_dim {
            out.push(ParamTensor::new("image embedder norms", &[2, img + h], S, R));
            linear(&mut out, "image embedder ff.net.0.proj", None, img, img);
            linear(&mut out, "image embedder ff.net.2", None, h, img);
            if let Some(n) = self.pos_embed_seq_len {
                out.push(ParamTensor::new("image embedder positions", &[n, img], S, R));
            }
        }
        for _ in 0..self.layers {
            out.push(ParamTensor::new("block scale_shift_table", &[6, h], S, R));
            attention(&mut out, h, true, false);
            out.push(ParamTensor::new("self-attention q/k RMS norms", &[2, h], S, R));
            attention(&mut out, h, true, false);
            out.push(ParamTensor::new("cross-attention q/k RMS norms", &[2, h], S, R));
            if let Some(added) = self.added_kv_proj_dim {
                linear(&mut out, "image cross-attention k (add_k_proj)", None, h, added);
                linear(&mut out, "image cross-attention v (add_v_proj)", None, h, added);
                out.push(ParamTensor::vector("image cross-attention k norm", h, S, R));
            }
            if self.cross_attn_norm {
                out.push(ParamTensor::new("cross-attention LayerNorm (norm2)", &[2, h], S, R));
            }
            feed_forward(&mut out, h, self.ffn_dim);
        }
        linear(&mut out, "proj_out", None, self.out_channels * pt * ph * pw, h);
        out.push(ParamTensor::new("output scale_shift_table", &[2, h], S, R));
        out
    }

    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

impl Wan {
    /// Latent tokens: frames × height × width in (t, h, w) patches.
    pub fn image_tokens(&self, run: &Run) -> u64 {
        let [pt, ph, pw] = self.patch_size;
        (run.latent_frames.max(1) / pt) * (run.latent_height / ph) * (run.latent_width / pw)
    }

    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment in a block (`WanTransformerBlock.forward`; `u` = b × tokens × hidden
    /// activations, `f` the same in fp32), the largest of
    /// - RoPE on k (`WanAttnProcessor`'s `apply_rotary_emb`): the caller's stream, the modulated
    ///   norm, q, k, v and the `empty_like` output (6u) beside the three fp32 half-width products
    ///   of `x1 * cos - x2 * sin` (1.5f);
    /// - the feed-forward's gated residual `x.float() + ff.float() * c_gate`: the caller's
    ///   stream, the stream, the cross-attention output, the norm and the feed-forward output
    ///   (5u) beside the fp32 copies and product (3f for a 16-bit stream; the product and the sum,
    ///   2f, in fp32);
    /// - the feed-forward itself: its input, the caller's stream, the stream and the
    ///   cross-attention output (4u) beside the GELU's input and output (2 × ffn_dim / hidden u);
    ///
    /// plus the fp32 RoPE tables (tokens × head_dim each) and the projected text embeddings
    /// every block reads (b × text tokens × hidden).
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let n = self.image_tokens(run) as f64;
        let rows = run.batch as f64 * n * self.hidden() as f64;
        let (u, f) = (rows * a, rows * 4.0);
        let rope = 6.0 * u + 1.5 * f;
        let residual = 5.0 * u + if a == 4.0 { 2.0 } else { 3.0 } * f;
        let ffn = 4.0 * u + 2.0 * u * self.ffn_dim as f64 / self.hidden() as f64;
        let tables = 2.0 * n * self.head_dim as f64 * 4.0;
        let text = run.batch as f64 * (run.text_tokens * self.hidden()) as f64 * a;
        rope.max(residual).max(ffn) + tables + text
    }

    /// One training forward, op by op through [`Tape`] (`WanTransformer3DModel.forward` lines
    /// 629–735, `WanTransformerBlock.forward` 462–506, `WanAttnProcessor.__call__` 80–163): the
    /// block's modulation is `scale_shift_table + temb.float()` (fp32), every norm runs on
    /// `x.float()` (`FP32LayerNorm`) and every residual sum is `x.float() + …` cast back, so a
    /// 16-bit stream keeps fp32 copies at each of them; self-attention with RMS q/k norms across
    /// heads and 3-D RoPE (the products by the cos/sin tables keep the tables), cross-attention to
    /// the text, the feed-forward, `norm_out` and `proj_out`.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
        let (h, hd, heads) = (self.hidden(), self.head_dim, self.heads);
        let [pt, ph, pw] = self.patch_size;
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let input = t.input_bytes();
        let w = t.weight(None);
        let cos = t.new_tensor((n * hd) as f64, 4.0, false);
        let sin = t.new_tensor((n * hd) as f64, 4.0, false);
        let patch = self.in_channels * pt * ph * pw;
        let latent = t.new_tensor(b * (n * patch) as f64, input, false);
        let x = t.patch_conv(latent, patch, h, w);
        let x = t.new_tensor(x.elems, x.bytes, x.grad); // `.contiguous()`
        let freq = t.new_tensor(b * self.freq_dim as f64, input, false);
        let temb = ops::embedder(&mut t, freq, self.freq_dim, h);
        let temb = t.cast(temb, input); // `.type_as(encoder_hidden_states)`
        let s = t.activation(temb);
        let tp = t.linear(s, h, 6 * h, w);
        let text = t.new_tensor(b * (tt * self.text_dim) as f64, input, false);
        let enc = t.linear(text, self.text_dim, h, w);
        let enc = t.activation(enc);
        let enc = t.linear(enc, h, h, w);
        let full = t.full();
        let mut x = x;
        for _ in 0..self.layers {
            x = t.checkpoint(run.checkpointing, &[x, enc, tp, cos, sin], |t| {
                let tp32 = t.cast(tp, 4.0);
                let e = t.new_tensor(tp32.elems, 4.0, tp32.grad || full);
                let modulated = |t: &mut Tape, x: T| {
                    let x32 = t.cast(x, 4.0);
                    let n = t.layer_norm(x32, h);
                    let one_plus = t.new_tensor(t.batch * h as f64, 4.0, e.grad);
                    let m = t.mul(n, one_plus);
                    let m = t.add2(m, Tape::view(e, t.batch * h as f64));
                    t.cast(m, x.bytes)
                };
                // `(x.float() + y * gate).type_as(x)`; the feed-forward's is `y.float() * gate`
                let residual = |t: &mut Tape, x: T, y: T, upcast: bool| {
                    let x32 = t.cast(x, 4.0);
                    let y = if upcast { t.cast(y, 4.0) } else { y };
                    let g = t.mul(y, Tape::view(e, t.batch * h as f64));
                    let sum = t.add2(x32, g);
                    t.cast(sum, x.bytes)
                };
                // self-attention
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
                let x = residual(t, x, a, false);
                // cross-attention to the text
                let x32 = t.cast(x, 4.0);
                let nx = if self.cross_attn_norm { t.layer_norm_affine(x32, h, true) } else { x32 };
                let nx = t.cast(nx, x.bytes);
                let (wq, wk, wv) = (t.weight(Some(LinearKind::Q)), t.weight(Some(LinearKind::K)), t.weight(Some(LinearKind::V)));
                let q = t.linear(nx, h, h, wq);
                let k = t.linear(enc, h, h, wk);
                let v = t.linear(enc, h, h, wv);
                let q = t.rms_norm(q, h);
                let k = t.rms_norm(k, h);
                let o = t.attention(q, k, v, heads, n);
                let o = t.cast(o, q.bytes);
                let a = t.linear(o, h, h, wo);
                let x = t.add2(x, a);
                // feed-forward
                let xm = modulated(t, x);
                let f = ops::feed_forward(t, xm, h, self.ffn_dim);
                // `WanTransformerBlock.forward`'s locals until it returns (`transformer_wan.py` lines
                // 462–504): `attn_output`,
                // `norm_hidden_states`, `ff_output`, and `hidden_states` until its last rebinding
                for local in [a, xm, f, x] {
                    t.hold(local);
                }
                residual(t, x, f, true)
            });
        }
        let table = t.new_tensor(b * 2.0 * h as f64, temb.bytes, full);
        let x32 = t.cast(x, 4.0);
        let nx = t.layer_norm(x32, h);
        let one_plus = t.new_tensor(b * h as f64, table.bytes, full);
        let m = t.mul(nx, one_plus);
        let m = t.add2(m, table);
        let m = t.cast(m, x.bytes);
        t.linear(m, h, self.out_channels * pt * ph * pw, w);
        t
    }
}
