//! `CogVideoXTransformer3DModel` as diffusers 0.42.1 builds it (`cogvideox_transformer_3d.py`
//! `__init__` lines 220–330, `CogVideoXBlock` lines 80–120): a conv (or, with `patch_size_t`,
//! linear) patch embedding and the text projection, the time embedding to `time_embed_dim`,
//! blocks of two `CogVideoXLayerNormZero` (a 6-way modulation from the time embedding and an
//! affine LayerNorm), full attention over text + video with LayerNorm q/k norms, a 4×
//! feed-forward, then `norm_final`, an `AdaLayerNorm` and `proj_out`; its training forward,
//! no-grad peak and FLOPs. CogVideoX-2b and 5b.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape, T};
use crate::model::diffusion::blocks::{act_bytes, embedder, feed_forward, linear, ops};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `CogVideoXTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CogVideoX {
    pub heads: u64,
    pub head_dim: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    pub time_embed_dim: u64,
    pub text_embed_dim: u64,
    pub layers: u64,
    pub patch_size: u64,
    /// CogVideoX 1.5: a temporal patch (the patch embedding is then a linear).
    pub patch_size_t: Option<u64>,
    /// `attention_bias`: biases on q/k/v.
    pub attention_bias: bool,
    /// `norm_elementwise_affine`: weight and bias on every LayerNorm.
    pub affine: bool,
    /// `patch_bias` (of the Conv2d patch embedding).
    pub patch_bias: bool,
    /// CogVideoX 1.5 I2V's `ofs_embed_dim` embedding.
    pub ofs_embed_dim: Option<u64>,
    /// `use_rotary_positional_embeddings` (5b): 3-D RoPE instead of the sincos table.
    pub rope: bool,
}

impl CogVideoX {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("time_embed_dim", self.time_embed_dim),
            ("text_embed_dim", self.text_embed_dim),
            ("num_layers", self.layers),
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
        let (h, p, t) = (self.hidden(), self.patch_size, self.time_embed_dim);
        let pt = self.patch_size_t.unwrap_or(1);
        let ln = |out: &mut Vec<ParamTensor>, name: &'static str, width: u64| {
            if self.affine {
                out.push(ParamTensor::new(name, &[2, width], S, R));
            }
        };
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding", &[h, self.in_channels * pt, p, p], S, R));
        // `patch_bias` reaches the Conv2d only; the linear of a temporal patch always has a bias
        // (`embeddings.py` `CogVideoXPatchEmbed.__init__`)
        if self.patch_bias || self.patch_size_t.is_some() {
            out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        }
        linear(&mut out, "text projection (patch_embed.text_proj)", None, h, self.text_embed_dim);
        linear(&mut out, "time embedding linear_1", None, t, h);
        linear(&mut out, "time embedding linear_2", None, t, t);
        if let Some(ofs) = self.ofs_embed_dim {
            embedder(&mut out, "ofs embedding", ofs, ofs);
        }
        for _ in 0..self.layers {
            for _norm in 0..2 {
                linear(&mut out, "CogVideoXLayerNormZero (norm.linear)", None, 6 * h, t);
                ln(&mut out, "CogVideoXLayerNormZero LayerNorm", h);
            }
            const QKV: [(&str, &[LinearKind]); 3] = [("attention q (to_q)", &[LinearKind::Q]), ("attention k (to_k)", &[LinearKind::K]), ("attention v (to_v)", &[LinearKind::V])];
            for (name, kind) in QKV {
                out.push(ParamTensor::linear(name, kind, h, h, S));
                if self.attention_bias {
                    out.push(ParamTensor::vector(name, h, S, R));
                }
            }
            linear(&mut out, "attention out (to_out.0)", Some(&[LinearKind::O]), h, h);
            out.push(ParamTensor::new("q/k LayerNorms", &[4, self.head_dim], S, R));
            feed_forward(&mut out, h, 4 * h);
        }
        ln(&mut out, "norm_final", h);
        linear(&mut out, "AdaLayerNorm (norm_out.linear)", None, 2 * h, t);
        ln(&mut out, "AdaLayerNorm LayerNorm", h);
        linear(&mut out, "proj_out", None, p * p * pt * self.out_channels, h);
        out
    }
}

impl CogVideoX {
    /// Latent tokens: frames (÷ `patch_size_t`) × the latent in `patch_size` squares.
    pub fn image_tokens(&self, run: &Run) -> u64 {
        let pt = self.patch_size_t.unwrap_or(1);
        run.latent_frames.max(1).div_ceil(pt) * (run.latent_height / self.patch_size) * (run.latent_width / self.patch_size)
    }

    /// One training forward, op by op through [`Tape`] (`CogVideoXTransformer3DModel.forward`
    /// lines 400–500, `CogVideoXBlock.forward` lines 118–157, `attention_processor.py`
    /// `CogVideoXAttnProcessor2_0` lines 2277–2340): the time embedding, the patch embedding
    /// and text projection concatenated; per block two `CogVideoXLayerNormZero` (the same affine
    /// LayerNorm over the video and the text stream, each modulated), attention over
    /// `cat([text, video])` with LayerNorm q/k norms (RoPE written in place into the video part of
    /// q and k keeps only the cos/sin tables), the gated residuals from slices of `to_out`'s
    /// output, and one feed-forward over the concatenation; `norm_final`, `norm_out`, `proj_out`.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
        let (h, hd, heads, te) = (self.hidden(), self.head_dim, self.heads, self.time_embed_dim);
        let (p, pt) = (self.patch_size, self.patch_size_t.unwrap_or(1));
        let rope = self.rope;
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let s = n + tt;
        let input = t.input_bytes();
        let w = t.weight(None);
        let proj = t.new_tensor(b * h as f64, input, false);
        let e = t.linear(proj, h, te, w);
        let e = t.activation(e);
        let emb = t.linear(e, te, te, w);
        let text = t.new_tensor(b * (tt * self.text_embed_dim) as f64, input, false);
        let text = t.linear(text, self.text_embed_dim, h, w);
        let patch = self.in_channels * p * p * pt;
        let latent = t.new_tensor(b * (n * patch) as f64, input, false);
        let video = if self.patch_size_t.is_some() { t.linear(latent, patch, h, w) } else { t.patch_conv(latent, patch, h, w) };
        let video = t.new_tensor(video.elems, video.bytes, video.grad); // flatten(1, 2) copy
        let joint = t.cat(&[text, video]);
        let joint = if rope { joint } else { t.new_tensor(joint.elems, joint.bytes, joint.grad) }; // + sincos table
        let tokens = |k: u64| b * (k * h) as f64;
        let (mut x, mut c) = (Tape::view(joint, tokens(n)), Tape::view(joint, tokens(tt)));
        let cos = t.new_tensor((n * hd) as f64, 4.0, false);
        let sin = t.new_tensor((n * hd) as f64, 4.0, false);
        for _ in 0..self.layers {
            let inputs = if rope { vec![x, c, emb, cos, sin] } else { vec![x, c, emb] };
            (x, c) = t.checkpoint(run.checkpointing, &inputs, |t| {
                // CogVideoXLayerNormZero: linear(silu(temb)) to 6 chunks, one LayerNorm for both streams
                let norm_zero = |t: &mut Tape, x: T, c: T| {
                    if emb.grad {
                        t.save("activation inputs", emb);
                    }
                    let silu = t.new_tensor(emb.elems, emb.bytes, emb.grad);
                    let w = t.weight(None);
                    let e = t.linear(silu, te, 6 * h, w);
                    let mut m = [x, c];
                    for v in m.iter_mut() {
                        let nv = if self.affine { t.layer_norm_affine(*v, h, false) } else { t.layer_norm(*v, h) };
                        let one_plus = t.new_tensor(t.batch * h as f64, e.bytes, e.grad);
                        let mv = t.mul(nv, one_plus);
                        *v = t.add2(mv, Tape::view(e, t.batch * h as f64));
                    }
                    (m[0], m[1], e)
                };
                let (xm, cm, e) = norm_zero(t, x, c);
                let j = t.cat(&[cm, xm]);
                let (q, k, v) = ops::qkv(t, j, h, false);
                let mut q = t.layer_norm_affine(q, hd, false);
                let mut k = t.layer_norm_affine(k, hd, false);
                if rope {
                    // `query[:, :, text:] = apply_rotary_emb(...)`: in place, keeps the tables
                    q = Tape::view(ops::rotary_in_place(t, q, cos, sin), q.elems);
                    k = Tape::view(ops::rotary_in_place(t, k, cos, sin), k.elems);
                }
                let o = t.attention(q, k, v, heads, s);
                // flash writes q's (b, heads, s, d) layout: `transpose(1, 2).reshape` copies
                let o = if t.mode == Mode::Fp32 { o } else { t.new_tensor(o.elems, o.bytes, o.grad) };
                let wo = ops::w_out(t, false);
                let a = t.linear(o, h, h, wo);
                let xa = ops::gated(t, e, Tape::view(a, tokens(n)), h);
                let x = t.add2(x, xa);
                let ca = ops::gated(t, e, Tape::view(a, tokens(tt)), h);
                let c = t.add2(c, ca);
                let (xm, cm, e) = norm_zero(t, x, c);
                let j = t.cat(&[cm, xm]);
                let f = ops::feed_forward(t, j, h, 4 * h);
                let xf = ops::gated(t, e, Tape::view(f, tokens(n)), h);
                let cf = ops::gated(t, e, Tape::view(f, tokens(tt)), h);
                (t.add2(x, xf), t.add2(c, cf))
            });
        }
        let x = if self.affine { t.layer_norm_affine(x, h, false) } else { t.layer_norm(x, h) };
        if emb.grad {
            t.save("activation inputs", emb);
        }
        let silu = t.new_tensor(emb.elems, emb.bytes, emb.grad);
        let e = t.linear(silu, te, 2 * h, w);
        let nx = if self.affine { t.layer_norm_affine(x, h, false) } else { t.layer_norm(x, h) };
        let one_plus = t.new_tensor(b * h as f64, e.bytes, e.grad);
        let m = t.mul(nx, one_plus);
        let m = t.add2(m, Tape::view(e, b * h as f64));
        t.linear(m, h, p * p * pt * self.out_channels, w);
        t
    }

    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment, the feed-forward's GELU in a block (`CogVideoXBlock.forward`; s = text +
    /// video tokens, in units of b × hidden activations): the caller's streams (s), the
    /// residual streams after attention (s), the attention output the gated slices keep (s),
    /// the text stream's norm (text), the concatenated norm (s) and the GELU's input and output
    /// (8s); or, with RoPE, its application to k (`embeddings.py` lines 984–997): the caller's
    /// streams, both modulated norms, the concatenation, q, k and v (6s) beside the video part's
    /// rotated copy and the fp32 products `x.float() * cos`, `x_rotated.float() * sin` (and, for
    /// 16-bit activations, the `x_rotated.float()` copy).
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let (n, t) = (self.image_tokens(run) as f64, run.text_tokens as f64);
        let s = n + t;
        let f = 4.0 / a;
        let feed_forward = 12.0 * s + t;
        let rope = if self.rope { 6.0 * s + n * (1.0 + if a == 4.0 { 2.0 } else { 3.0 } * f) } else { 0.0 };
        feed_forward.max(rope) * run.batch as f64 * self.hidden() as f64 * a
    }
}
