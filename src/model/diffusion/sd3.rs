//! `SD3Transformer2DModel`, the MMDiT of Stable Diffusion 3 and 3.5, as diffusers 0.42.1 builds
//! it (`transformer_sd3.py` `SD3Transformer2DModel.__init__` lines 119–175, `attention.py`
//! `JointTransformerBlock` lines 580–760): a conv `PatchEmbed`, `num_layers`
//! `JointTransformerBlock`s (the last one `context_pre_only`: its text stream has an
//! `AdaLayerNormContinuous`, no `to_add_out` and no feed-forward), `dual_attention_layers` with
//! `SD35AdaLayerNormZeroX` and a second image-only attention `attn2` (SD3.5 medium), optional
//! `qk_norm` (`rms_norm` in SD3.5, `layer_norm`). SD3 medium, SD3.5 medium and large.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape, T};
use crate::model::diffusion::blocks::{act_bytes, attention, embedder, feed_forward, linear, ops};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `qk_norm` of diffusers' `Attention` (`attention_processor.py` `Attention.__init__`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QkNorm {
    None,
    /// `nn.LayerNorm(head_dim)` with weight and bias.
    LayerNorm,
    /// `RMSNorm(head_dim)` with a weight.
    RmsNorm,
}

/// `SD3Transformer2DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sd3 {
    pub patch_size: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    pub layers: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub joint_attention_dim: u64,
    /// Width `context_embedder` projects the T5/CLIP embeddings to (equals the hidden width in
    /// every released model).
    pub caption_projection_dim: u64,
    pub pooled_projection_dim: u64,
    /// The `pos_embed_max_size` × `pos_embed_max_size` position table is a buffer, not a parameter.
    pub pos_embed_max_size: u64,
    /// Blocks with the second, image-only attention (SD3.5 medium: 0..=12).
    pub dual_attention_layers: Vec<u64>,
    pub qk_norm: QkNorm,
}

impl Sd3 {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("patch_size", self.patch_size)?;
        check_dim("in_channels", self.in_channels)?;
        check_dim("out_channels", self.out_channels)?;
        check_dim("num_layers", self.layers)?;
        super::check_blocks("num_layers", self.layers)?;
        check_dim("num_attention_heads", self.heads)?;
        check_dim("attention_head_dim", self.head_dim)?;
        check_dim("joint_attention_dim", self.joint_attention_dim)?;
        check_dim("caption_projection_dim", self.caption_projection_dim)?;
        check_dim("pooled_projection_dim", self.pooled_projection_dim)?;
        if self.caption_projection_dim != self.hidden() {
            return Err(InputError::new(
                "caption_projection_dim",
                format!("must equal num_attention_heads × attention_head_dim ({}) for the joint blocks, got {}", self.hidden(), self.caption_projection_dim),
            ));
        }
        Ok(())
    }

    pub fn hidden(&self) -> u64 {
        self.heads * self.head_dim
    }

    pub fn in_channels(&self) -> u64 {
        self.in_channels
    }

    pub fn patch_size(&self) -> u64 {
        self.patch_size
    }

    pub fn text_width(&self) -> u64 {
        self.joint_attention_dim
    }

    fn dual(&self, layer: u64) -> bool {
        self.dual_attention_layers.contains(&layer)
    }

    fn qk_norm_tensors(&self, out: &mut Vec<ParamTensor>, count: u64) {
        let per = match self.qk_norm {
            QkNorm::None => 0,
            QkNorm::RmsNorm => 1,
            QkNorm::LayerNorm => 2,
        };
        if per > 0 {
            out.push(ParamTensor::new("q/k norms", &[count * per, self.head_dim], S, R));
        }
    }

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, p) = (self.hidden(), self.patch_size);
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding (pos_embed.proj)", &[h, self.in_channels, p, p], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        embedder(&mut out, "timestep embedder", 256, h);
        embedder(&mut out, "pooled text embedder", self.pooled_projection_dim, h);
        linear(&mut out, "context embedder", None, self.caption_projection_dim, self.joint_attention_dim);
        for layer in 0..self.layers {
            let last = layer + 1 == self.layers;
            let dual = self.dual(layer);
            // SD35AdaLayerNormZeroX: 9 modulations; AdaLayerNormZero: 6.
            linear(&mut out, "AdaLayerNormZero (norm1.linear)", None, if dual { 9 } else { 6 } * h, h);
            // The last block's context stream: AdaLayerNormContinuous (scale and shift only).
            linear(&mut out, "context AdaLayerNorm (norm1_context.linear)", None, if last { 2 } else { 6 } * h, h);
            attention(&mut out, h, true, false);
            // The text stream's `add_*_proj` (no `to_add_out` in the last, context-pre-only block).
            attention(&mut out, h, !last, true);
            self.qk_norm_tensors(&mut out, 4);
            if dual {
                // attn2 is not reached by train_dreambooth_lora_sd3.py's `attn.*` targets
                for name in ["second attention q, k, v, out (attn2)"; 4] {
                    linear(&mut out, name, None, h, h);
                }
                self.qk_norm_tensors(&mut out, 2);
            }
            feed_forward(&mut out, h, 4 * h);
            if !last {
                feed_forward(&mut out, h, 4 * h);
            }
        }
        linear(&mut out, "AdaLayerNormContinuous (norm_out.linear)", None, 2 * h, h);
        linear(&mut out, "proj_out", None, p * p * self.out_channels, h);
        out
    }

    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

impl Sd3 {
    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment (`JointTransformerBlock.forward`; N image and T text tokens, in units of
    /// b × hidden activations): the feed-forward's GELU (its input and output, 4N each) beside the
    /// caller's streams (N + T), the gated attention output, the new residual stream and its
    /// modulated norm (3N) and the text stream's norm (T); in the last block (`context_pre_only`)
    /// the text part of the attention output is a slice that keeps the whole output (N + T)
    /// alive; a dual-attention block also keeps the second attention's modulated input and
    /// gated output (2N) and the projected text output (T). The other candidates: the joint
    /// attention itself (q, k, v and the output over N + T, the text q/k/v, both streams'
    /// norms), and the text stream's feed-forward, which leads for long prompts.
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let unit = run.batch as f64 * self.hidden() as f64 * act_bytes(run);
        let (n, t) = (self.image_tokens(run) as f64, run.text_tokens as f64);
        let s = n + t;
        let last = 12.0 * n + 2.0 * t + s;
        let dual = if self.dual_attention_layers.is_empty() { 0.0 } else { 14.0 * n + 3.0 * t };
        let attention = 5.0 * s + n + 4.0 * t + if self.dual_attention_layers.is_empty() { 0.0 } else { n };
        // a block before the last one, in the text stream's feed-forward: the image side's
        // caller stream, attention output, stream, norm and feed-forward output (5N) beside the
        // text side's caller stream, gated attention output, stream and norm (4T) and GELU (8T)
        let extra = if self.dual_attention_layers.is_empty() { 0.0 } else { 2.0 * n };
        let context = if self.layers > 1 { 5.0 * n + 12.0 * t + extra } else { 0.0 };
        last.max(dual).max(attention).max(context) * unit
    }

    /// Image tokens: the latent in `patch_size` × `patch_size` patches (`PatchEmbed`).
    pub fn image_tokens(&self, run: &Run) -> u64 {
        (run.latent_height / self.patch_size) * (run.latent_width / self.patch_size) * run.latent_frames.max(1)
    }

    /// `norm_q`/`norm_k` of one attention stream (`qk_norm`).
    fn qk(&self, t: &mut Tape, x: T) -> T {
        match self.qk_norm {
            QkNorm::None => x,
            QkNorm::RmsNorm => t.rms_norm_diffusers(x, self.head_dim),
            QkNorm::LayerNorm => t.layer_norm(x, self.head_dim),
        }
    }

    /// One training forward, op by op through [`Tape`] (`SD3Transformer2DModel.forward` lines
    /// 249–347, `attention.py` `JointTransformerBlock.forward` lines 681–760,
    /// `attention_processor.py` `JointAttnProcessor2_0` lines 1422–1500): the patch embedding,
    /// per block each stream's adaLN, q/k/v (and their `qk_norm`), the joint attention over image +
    /// text, the gated residuals and feed-forwards (the last block's text stream stops after
    /// attention), the dual blocks' second image-only attention; `norm_out` and `proj_out`.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
        let (h, heads, p) = (self.hidden(), self.heads, self.patch_size);
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let s = n + tt;
        let mode_in = t.input_bytes();
        let w = t.weight(None);
        let latent = t.new_tensor(b * (n * self.in_channels * p * p) as f64, mode_in, false);
        let x = t.patch_conv(latent, self.in_channels * p * p, h, w);
        let x = t.new_tensor(x.elems, x.bytes, x.grad); // `+ pos_embed`
        let temb = {
            let proj = t.new_tensor(b * 256.0, mode_in, false);
            let e = ops::embedder(&mut t, proj, 256, h);
            let pooled = t.new_tensor(b * self.pooled_projection_dim as f64, mode_in, false);
            let pe = ops::embedder(&mut t, pooled, self.pooled_projection_dim, h);
            t.add2(e, pe)
        };
        let c_in = t.new_tensor(b * (tt * self.joint_attention_dim) as f64, mode_in, false);
        let mut c = t.linear(c_in, self.joint_attention_dim, h, w);
        let mut x = x;
        let tokens = |k: u64| b * (k * h) as f64;
        for layer in 0..self.layers {
            let last = layer + 1 == self.layers;
            let dual = self.dual_attention_layers.contains(&layer);
            (x, c) = t.checkpoint(run.checkpointing, &[x, c, temb], |t| {
                let e_x = ops::modulation(t, temb, h, if dual { 9 } else { 6 });
                let (xn, xm) = ops::modulate(t, x, e_x, h);
                let xm2 = if dual {
                    let one_plus = t.new_tensor(t.batch * h as f64, e_x.bytes, e_x.grad);
                    let m = t.mul(xn, one_plus);
                    Some(t.add2(m, Tape::view(e_x, t.batch * h as f64)))
                } else {
                    None
                };
                let e_c = ops::modulation(t, temb, h, if last { 2 } else { 6 });
                let (_, cm) = ops::modulate(t, c, e_c, h);
                let (q, k, v) = ops::qkv(t, xm, h, false);
                let q = self.qk(t, q);
                let k = self.qk(t, k);
                let (cq, ck, cv) = ops::qkv(t, cm, h, true);
                let cq = self.qk(t, cq);
                let ck = self.qk(t, ck);
                let q = t.cat(&[q, cq]);
                let k = t.cat(&[k, ck]);
                let v = t.cat(&[v, cv]);
                let o = t.attention(q, k, v, heads, s);
                // the flash kernel's output takes q's layout, and q is `cat`'s contiguous
                // (b, heads, s, d): `transpose(1, 2).reshape(b, s, h)` copies it (the
                // memory-efficient kernel writes (b, s, heads, d) and the reshape is a view)
                let o = if t.mode == Mode::Fp32 { o } else { t.new_tensor(o.elems, o.bytes, o.grad) };
                let o = t.cast(o, q.bytes);
                let (wo, wo_text) = (ops::w_out(t, false), ops::w_out(t, true));
                let co = if last { None } else { Some(t.linear_strided(Tape::view(o, tokens(tt)), h, h, wo_text, true)) };
                let xo = t.linear_strided(Tape::view(o, tokens(n)), h, h, wo, true);
                let xa = ops::gated(t, e_x, xo, h);
                let mut x = t.add2(x, xa);
                if let Some(xm2) = xm2 {
                    let w2 = t.weight(None);
                    let q = t.linear(xm2, h, h, w2);
                    let k = t.linear(xm2, h, h, w2);
                    let v = t.linear(xm2, h, h, w2);
                    let q = self.qk(t, q);
                    let k = self.qk(t, k);
                    let o = t.attention(q, k, v, heads, n);
                    let o = t.cast(o, q.bytes);
                    let o = t.linear(o, h, h, w2);
                    let a = ops::gated(t, e_x, o, h);
                    x = t.add2(x, a);
                }
                let (_, xm) = ops::modulate(t, x, e_x, h);
                let f = ops::feed_forward(t, xm, h, 4 * h);
                let f = ops::gated(t, e_x, f, h);
                let x = t.add2(x, f);
                let c = match co {
                    None => c,
                    Some(co) => {
                        let ca = ops::gated(t, e_c, co, h);
                        let c = t.add2(c, ca);
                        let (_, cm) = ops::modulate(t, c, e_c, h);
                        let f = ops::feed_forward(t, cm, h, 4 * h);
                        let f = ops::gated(t, e_c, f, h);
                        t.add2(c, f)
                    }
                };
                (x, c)
            });
        }
        let e = ops::modulation(&mut t, temb, h, 2);
        let (_, xm) = ops::modulate(&mut t, x, e, h);
        t.linear(xm, h, p * p * self.out_channels, w);
        t
    }
}
