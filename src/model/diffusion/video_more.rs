//! The other video diffusion transformers of the catalogue, as diffusers 0.42.1 builds them
//! (parameter tensors, the training forward, the no-grad peak and FLOPs):
//! - `HunyuanVideoTransformer3DModel` (`transformer_hunyuan_video.py` `__init__` lines 904–990):
//!   a `Conv3d` patch embedding, the text token refiner (`HunyuanVideoTokenRefiner` lines
//!   429–456: time + mean-pooled text embedding, `proj_in`, `num_refiner_layers` blocks of affine
//!   LayerNorm, q/k/v/out attention with biases, a 4× SiLU feed-forward and an adaLN `norm_out`
//!   of 2 × hidden, lines 332–358), the condition embedding (time, pooled CLIP, guidance), Flux-like
//!   double-stream blocks with RMS q/k norms and single-stream blocks (`mlp_ratio`), the
//!   continuous adaLN output and `proj_out`. HunyuanVideo (13B).
//! - `CogVideoXTransformer3DModel` (`cogvideox_transformer_3d.py` `__init__` lines 220–330,
//!   `CogVideoXBlock` lines 80–120): a conv (or, with `patch_size_t`, linear) patch embedding and
//!   the text projection, the time embedding to `time_embed_dim`, blocks of two
//!   `CogVideoXLayerNormZero` (a 6-way modulation from the time embedding and an affine
//!   LayerNorm), full attention over text + video with LayerNorm q/k norms, a 4× feed-forward,
//!   then `norm_final`, an `AdaLayerNorm` and `proj_out`. CogVideoX-2b and 5b.
//! - `LTXVideoTransformer3DModel` (`transformer_ltx.py` `__init__` lines 430–490): `proj_in` over
//!   the pipeline-packed latent, `AdaLayerNormSingle` (time embedding and 6-way projection), the
//!   caption projection, blocks with a learned `scale_shift_table`, self-attention and
//!   cross-attention (RMS norms across heads), a 4× GELU(tanh) feed-forward. LTX-Video 2B.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape, T};
use crate::model::diffusion::mmdit::{act_bytes, attention, embedder, feed_forward, linear, ops};
use crate::model::diffusion::{Run, Saved};

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `HunyuanVideoTransformer3DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HunyuanVideo {
    pub in_channels: u64,
    pub out_channels: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub layers: u64,
    pub single_layers: u64,
    pub refiner_layers: u64,
    /// Feed-forward width of the double and single blocks (`int(hidden × mlp_ratio)`).
    pub mlp_width: u64,
    pub patch_size: u64,
    pub patch_size_t: u64,
    /// `qk_norm: "rms_norm"` (a weight per head width) or none.
    pub qk_norm: bool,
    pub guidance_embeds: bool,
    pub text_embed_dim: u64,
    pub pooled_projection_dim: u64,
}

impl HunyuanVideo {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("num_layers", self.layers),
            ("num_single_layers", self.single_layers),
            ("mlp_ratio", self.mlp_width),
            ("patch_size", self.patch_size),
            ("patch_size_t", self.patch_size_t),
            ("text_embed_dim", self.text_embed_dim),
            ("pooled_projection_dim", self.pooled_projection_dim),
        ] {
            check_dim(field, v)?;
        }
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, d, (p, pt)) = (self.hidden(), self.head_dim, (self.patch_size, self.patch_size_t));
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding (Conv3d)", &[h, self.in_channels, pt * p, p], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        // token refiner
        embedder(&mut out, "refiner timestep embedder", 256, h);
        embedder(&mut out, "refiner pooled text embedder", self.text_embed_dim, h);
        linear(&mut out, "refiner proj_in", None, h, self.text_embed_dim);
        for _ in 0..self.refiner_layers {
            out.push(ParamTensor::new("refiner LayerNorms", &[4, h], S, R));
            attention(&mut out, h, true);
            feed_forward(&mut out, h, 4 * h);
            linear(&mut out, "refiner adaLN (norm_out.linear)", None, 2 * h, h);
        }
        embedder(&mut out, "timestep embedder", 256, h);
        embedder(&mut out, "pooled text embedder", self.pooled_projection_dim, h);
        if self.guidance_embeds {
            embedder(&mut out, "guidance embedder", 256, h);
        }
        let norms = |out: &mut Vec<ParamTensor>, n: u64| {
            if self.qk_norm {
                out.push(ParamTensor::new("q/k RMS norms", &[n, d], S, R));
            }
        };
        for _ in 0..self.layers {
            for stream in 0..2 {
                linear(&mut out, "AdaLayerNormZero (norm1.linear)", None, 6 * h, h);
                if stream == 0 {
                    attention(&mut out, h, true);
                } else {
                    // the text stream's add_q/k/v_proj and to_add_out: not LoRA targets
                    for name in ["text attention (add_q/k/v_proj, to_add_out)"; 4] {
                        linear(&mut out, name, None, h, h);
                    }
                }
                feed_forward(&mut out, h, self.mlp_width);
            }
            norms(&mut out, 4);
        }
        for _ in 0..self.single_layers {
            linear(&mut out, "AdaLayerNormZeroSingle (norm.linear)", None, 3 * h, h);
            attention(&mut out, h, false);
            norms(&mut out, 2);
            linear(&mut out, "single-block MLP (proj_mlp)", None, self.mlp_width, h);
            linear(&mut out, "single-block out (proj_out)", None, h, h + self.mlp_width);
        }
        linear(&mut out, "AdaLayerNormContinuous (norm_out.linear)", None, 2 * h, h);
        linear(&mut out, "proj_out", None, pt * p * p * self.out_channels, h);
        out
    }
}

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

impl HunyuanVideo {
    /// Latent tokens: frames ÷ `patch_size_t` × the latent in `patch_size` squares.
    pub fn image_tokens(&self, run: &Run) -> u64 {
        run.latent_frames.max(1).div_ceil(self.patch_size_t) * (run.latent_height / self.patch_size) * (run.latent_width / self.patch_size)
    }

    /// One training forward, op by op through [`Tape`] (`HunyuanVideoTransformer3DModel.forward`
    /// lines 995–1130, `HunyuanVideoTokenRefiner` and its blocks lines 332–480,
    /// `HunyuanVideoTransformerBlock` / `HunyuanVideoSingleTransformerBlock`,
    /// `HunyuanVideoAttnProcessor2_0` lines 60–160): the token refiner over the prompt (affine
    /// LayerNorms, self-attention through the prompt mask, a SiLU feed-forward, gates from its
    /// own time + mean-prompt embedding), Flux-like double-stream blocks (diffusers RMSNorm q/k
    /// norms, RoPE on the video part) and single-stream blocks (the attention concatenates the
    /// two halves of the norm again and RoPEs the video part before one more concatenation);
    /// every joint attention goes through the boolean text mask, which the memory-efficient
    /// kernel takes as a new float mask and keeps.
    fn simulate(&self, run: &Run) -> Tape {
        let (h, hd, heads) = (self.hidden(), self.head_dim, self.heads);
        let (p, pt) = (self.patch_size, self.patch_size_t);
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let s = n + tt;
        let input = t.input_bytes();
        let w = t.weight(None);
        // the condition embedding: time (and guidance) in the proj's dtype, the pooled CLIP
        let proj = t.new_tensor(b * 256.0, input, false);
        let e = ops::embedder(&mut t, proj, 256, h);
        let pooled = t.new_tensor(b * self.pooled_projection_dim as f64, input, false);
        let pe = ops::embedder(&mut t, pooled, self.pooled_projection_dim, h);
        let mut temb = t.add2(e, pe);
        if self.guidance_embeds {
            let g = t.new_tensor(b * 256.0, input, false);
            let g = ops::embedder(&mut t, g, 256, h);
            temb = t.add2(temb, g);
        }
        let patch = self.in_channels * pt * p * p;
        let latent = t.new_tensor(b * (n * patch) as f64, input, false);
        let x = t.patch_conv(latent, patch, h, w);
        // the token refiner
        let c = {
            let proj = t.new_tensor(b * 256.0, input, false);
            let e = ops::embedder(&mut t, proj, 256, h);
            let pooled = t.new_tensor(b * self.text_embed_dim as f64, input, false);
            let pe = ops::embedder(&mut t, pooled, self.text_embed_dim, h);
            let temb_r = t.add2(e, pe);
            let prompt = t.new_tensor(b * (tt * self.text_embed_dim) as f64, input, false);
            let mut c = t.linear(prompt, self.text_embed_dim, h, w);
            for _ in 0..self.refiner_layers {
                let n1 = t.layer_norm_affine(c, h, false);
                let (q, k, v) = ops::qkv(&mut t, n1, h);
                // the boolean prompt mask, per head, as a new float mask in q's type
                let mask_bytes = if t.mode == Mode::Fp32 { 4.0 } else { 2.0 };
                let mask = t.new_tensor(b * (heads * tt * tt.div_ceil(8) * 8) as f64, mask_bytes, false);
                let o = t.attention_masked(q, k, v, heads, tt, Some(mask));
                let wo = ops::w_out(&t);
                let a = t.linear(o, h, h, wo);
                let a = t.new_tensor(a.elems, a.bytes, a.grad); // `/ rescale_output_factor`
                let g = ops::modulation(&mut t, temb_r, h, 2);
                let ga = ops::gated(&mut t, g, a, h);
                c = t.add2(c, ga);
                let n2 = t.layer_norm_affine(c, h, false);
                let f = ops::feed_forward(&mut t, n2, h, 4 * h);
                let gf = ops::gated(&mut t, g, f, h);
                c = t.add2(c, gf);
            }
            c
        };
        let cos = t.new_tensor((n * hd) as f64, 4.0, false);
        let sin = t.new_tensor((n * hd) as f64, 4.0, false);
        let bool_mask = t.new_tensor(b * s as f64, 1.0, false);
        let joint_mask = |t: &mut Tape| {
            let bytes = if t.mode == Mode::Fp32 { 4.0 } else { 2.0 };
            t.new_tensor(b * (s.div_ceil(8) * 8) as f64, bytes, false)
        };
        let tokens = |k: u64| b * (k * h) as f64;
        let ckpt = run.checkpointing;
        let (mut x, mut c) = (x, c);
        for _ in 0..self.layers {
            (x, c) = t.checkpoint(ckpt, &[x, c, temb, bool_mask, cos, sin], |t| {
                let e_x = ops::modulation(t, temb, h, 6);
                let (_, xm) = ops::modulate(t, x, e_x, h);
                let e_c = ops::modulation(t, temb, h, 6);
                let (_, cm) = ops::modulate(t, c, e_c, h);
                let (q, k, v) = ops::qkv(t, xm, h);
                let q = t.rms_norm_diffusers(q, hd);
                let k = t.rms_norm_diffusers(k, hd);
                let q = ops::rotary(t, q, cos, sin);
                let k = ops::rotary(t, k, cos, sin);
                let wc = t.weight(None);
                let (cq, ck, cv) = (t.linear(cm, h, h, wc), t.linear(cm, h, h, wc), t.linear(cm, h, h, wc));
                let cq = t.rms_norm_diffusers(cq, hd);
                let ck = t.rms_norm_diffusers(ck, hd);
                let (q, k, v) = (t.cat(&[q, cq]), t.cat(&[k, ck]), t.cat(&[v, cv]));
                let m = joint_mask(t);
                let o = t.attention_masked(q, k, v, heads, s, Some(m));
                let o = t.cast(o, q.bytes);
                let wo = ops::w_out(t);
                let xo = t.linear_strided(Tape::view(o, tokens(n)), h, h, wo, true);
                let co = t.linear_strided(Tape::view(o, tokens(tt)), h, h, wc, true);
                let xa = ops::gated(t, e_x, xo, h);
                let x = t.add2(x, xa);
                let ca = ops::gated(t, e_c, co, h);
                let c = t.add2(c, ca);
                let (_, xm) = ops::modulate(t, x, e_x, h);
                let (_, cm) = ops::modulate(t, c, e_c, h);
                let f = ops::feed_forward(t, xm, h, self.mlp_width);
                let cf = ops::feed_forward(t, cm, h, self.mlp_width);
                let fx = ops::gated(t, e_x, f, h);
                let fc = ops::gated(t, e_c, cf, h);
                (t.add2(x, fx), t.add2(c, fc))
            });
        }
        let mut joint = None;
        for _ in 0..self.single_layers {
            let inputs = match joint {
                None => vec![x, c, temb, bool_mask, cos, sin],
                Some(j) => vec![j, temb, bool_mask, cos, sin],
            };
            let out = t.checkpoint(ckpt, &inputs, |t| {
                let js = t.cat(&[x, c]);
                let e = ops::modulation(t, temb, h, 3);
                let (_, jm) = ops::modulate(t, js, e, h);
                let w = t.weight(None);
                let mlp = t.linear(jm, h, self.mlp_width, w);
                let mlp = t.activation(mlp);
                // the processor concatenates the two halves of the norm again
                let j2 = t.cat(&[jm]);
                let (q, k, v) = ops::qkv(t, j2, h);
                let q = t.rms_norm_diffusers(q, hd);
                let k = t.rms_norm_diffusers(k, hd);
                let qr = ops::rotary(t, Tape::view(q, tokens(n)), cos, sin);
                let q = t.cat(&[qr, Tape::view(q, tokens(tt))]);
                let kr = ops::rotary(t, Tape::view(k, tokens(n)), cos, sin);
                let k = t.cat(&[kr, Tape::view(k, tokens(tt))]);
                let m = joint_mask(t);
                let o = t.attention_masked(q, k, v, heads, s, Some(m));
                let o = t.cast(o, q.bytes);
                let o = t.cat(&[o]); // `cat([attn_output, context_attn_output])`
                let both = t.cat(&[o, mlp]);
                let y = t.linear(both, h + self.mlp_width, h, w);
                let y = ops::gated(t, e, y, h);
                t.add2(y, js)
            });
            (x, c) = (Tape::view(out, tokens(n)), Tape::view(out, tokens(tt)));
            joint = Some(out);
        }
        let e = ops::modulation(&mut t, temb, h, 2);
        let (_, xm) = ops::modulate(&mut t, x, e, h);
        t.linear(xm, h, pt * p * p * self.out_channels, w);
        t
    }

    /// What one training forward keeps for backward, by kind (the forward is `simulate`'s).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        self.simulate(run).finish()
    }

    /// Forward FLOPs of one call (2 per multiply-add of the linears, the patch embedding and
    /// attention's products).
    pub fn forward_flops(&self, run: &Run) -> f64 {
        self.simulate(run).flops
    }

    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment, in a single-stream block (s = text + video tokens, `u` = b × s × hidden
    /// activations): the caller's streams (u), the concatenation and its norm (2u), the MLP
    /// output (4u), then either the end of the block (the attention output the text slice keeps,
    /// its re-concatenation, `cat([attn, mlp])` 5u, `proj_out` and the gated product: 16u in
    /// all) or RoPE on the video part of k (the processor's re-concatenation, q, k, v: 4u,
    /// beside the rotated copy and the fp32 products over the video tokens, and the
    /// `x_rotated.float()` copy for 16-bit activations); plus the fp32 cos/sin tables.
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let n = self.image_tokens(run) as f64;
        let s = n + run.text_tokens as f64;
        let width = run.batch as f64 * self.hidden() as f64;
        let (u, video) = (s * width * a, n * width);
        let end = 16.0 * u;
        let rope = 11.0 * u + video * a + if a == 4.0 { 2.0 } else { 3.0 } * video * 4.0;
        end.max(rope) + 2.0 * n * self.head_dim as f64 * 4.0
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
    fn simulate(&self, run: &Run) -> Tape {
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
                let (q, k, v) = ops::qkv(t, j, h);
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
                let wo = ops::w_out(t);
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

    /// What one training forward keeps for backward, by kind (the forward is `simulate`'s).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        self.simulate(run).finish()
    }

    /// Forward FLOPs of one call (2 per multiply-add of the linears, the patch embedding and
    /// attention's two products).
    pub fn forward_flops(&self, run: &Run) -> f64 {
        self.simulate(run).flops
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
    fn simulate(&self, run: &Run) -> Tape {
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
                let (q, k, v) = ops::qkv(t, xm, h);
                let q = t.rms_norm(q, h);
                let k = t.rms_norm(k, h);
                let q = ops::rotary(t, q, cos, sin);
                let k = ops::rotary(t, k, cos, sin);
                let o = t.attention(q, k, v, heads, n);
                let o = t.cast(o, q.bytes);
                let wo = ops::w_out(t);
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

    /// What one training forward keeps for backward, by kind (the forward is `simulate`'s).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        self.simulate(run).finish()
    }

    /// Forward FLOPs of one call (2 per multiply-add of the linears and attention's products).
    pub fn forward_flops(&self, run: &Run) -> f64 {
        self.simulate(run).flops
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
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    fn projection(&self, out: &mut Vec<ParamTensor>, name: &'static str, kind: &'static [LinearKind], o: u64, i: u64, bias: bool) {
        out.push(ParamTensor::linear(name, kind, o, i, S));
        if bias {
            out.push(ParamTensor::vector(name, o, S, R));
        }
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
                self.projection(&mut out, "attention q (to_q)", &[LinearKind::Q], h, h, self.attention_bias);
                self.projection(&mut out, "attention k (to_k)", &[LinearKind::K], h, kv_in, self.attention_bias);
                self.projection(&mut out, "attention v (to_v)", &[LinearKind::V], h, kv_in, self.attention_bias);
                self.projection(&mut out, "attention out (to_out.0)", &[LinearKind::O], h, h, self.attention_out_bias);
                out.push(ParamTensor::new("q/k RMS norms across heads", &[2, h], S, R));
            }
            feed_forward(&mut out, h, 4 * h);
        }
        linear(&mut out, "proj_out", None, self.out_channels, h);
        out
    }
}
