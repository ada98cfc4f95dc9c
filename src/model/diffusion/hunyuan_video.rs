//! `HunyuanVideoTransformer3DModel` as diffusers 0.42.1 builds it (`transformer_hunyuan_video.py`
//! `__init__` lines 904–990): a `Conv3d` patch embedding, the text token refiner
//! (`HunyuanVideoTokenRefiner` lines 429–456: time + mean-pooled text embedding, `proj_in`,
//! `num_refiner_layers` blocks of affine LayerNorm, q/k/v/out attention with biases, a 4× SiLU
//! feed-forward and an adaLN `norm_out` of 2 × hidden, lines 332–358), the condition embedding
//! (time, pooled CLIP, guidance), Flux-like double-stream blocks with RMS q/k norms and
//! single-stream blocks (`mlp_ratio`), the continuous adaLN output and `proj_out`; its training
//! forward, no-grad peak and FLOPs. HunyuanVideo (13B).
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape};
use crate::model::diffusion::blocks::{act_bytes, attention, embedder, feed_forward, linear, ops};
use crate::model::diffusion::Run;

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
        super::check_blocks("num_layers", self.layers)?;
        super::check_blocks("num_single_layers", self.single_layers)?;
        super::check_blocks("num_refiner_layers", self.refiner_layers)?;
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
            attention(&mut out, h, true, false);
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
                    attention(&mut out, h, true, false);
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
            attention(&mut out, h, false, false);
            norms(&mut out, 2);
            linear(&mut out, "single-block MLP (proj_mlp)", None, self.mlp_width, h);
            linear(&mut out, "single-block out (proj_out)", None, h, h + self.mlp_width);
        }
        linear(&mut out, "AdaLayerNormContinuous (norm_out.linear)", None, 2 * h, h);
        linear(&mut out, "proj_out", None, pt * p * p * self.out_channels, h);
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
    // long: one training forward written op by op in the order HunyuanVideoTransformer3DModel.forward runs it (token refiner, double and single blocks); cut into pieces, the tensors the ops share would have to be passed around by hand.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
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
                let (q, k, v) = ops::qkv(&mut t, n1, h, false);
                // the boolean prompt mask, per head, as a new float mask in q's type
                let mask_bytes = if t.mode == Mode::Fp32 { 4.0 } else { 2.0 };
                let mask = t.new_tensor(b * (heads * tt * tt.div_ceil(8) * 8) as f64, mask_bytes, false);
                let o = t.attention_masked(q, k, v, heads, tt, Some(mask));
                let wo = ops::w_out(&t, false);
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
                let (q, k, v) = ops::qkv(t, xm, h, false);
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
                let wo = ops::w_out(t, false);
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
                let (q, k, v) = ops::qkv(t, j2, h, false);
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
