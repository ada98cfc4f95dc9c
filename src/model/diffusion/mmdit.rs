//! The two-stream joint-attention diffusion transformers (MMDiT), as diffusers 0.42.1 builds them:
//! - `FluxTransformer2DModel` (`models/transformers/transformer_flux.py`: `FluxTransformer2DModel.__init__`
//!   lines 612–665, `FluxTransformerBlock` 415–500, `FluxSingleTransformerBlock` 358–414,
//!   `FluxAttention` 278–357): `num_layers` double-stream blocks (image and text streams each with
//!   `AdaLayerNormZero`, q/k/v/out projections, a 4× GELU(tanh) feed-forward, joint attention over
//!   the concatenated text + image tokens with per-head RMS q/k norms) then `num_single_layers`
//!   single-stream blocks over the concatenation (`AdaLayerNormZeroSingle`, q/k/v, a parallel
//!   4× `proj_mlp`, one `proj_out` over attention and MLP together), time/pooled-text (and, with
//!   `guidance_embeds`, guidance) embeddings (`embeddings.py` `CombinedTimestepGuidanceTextProjEmbeddings`),
//!   `AdaLayerNormContinuous` and `proj_out`. Flux.1-dev and schnell.
//! - `SD3Transformer2DModel` (`transformer_sd3.py` `SD3Transformer2DModel.__init__` lines 119–175,
//!   `attention.py` `JointTransformerBlock` lines 580–760): a conv `PatchEmbed`, `num_layers`
//!   `JointTransformerBlock`s (the last one `context_pre_only`: its text stream has an
//!   `AdaLayerNormContinuous`, no `to_add_out` and no feed-forward), `dual_attention_layers`
//!   with `SD35AdaLayerNormZeroX` and a second image-only attention `attn2` (SD3.5 medium),
//!   optional `qk_norm` (`rms_norm` in SD3.5, `layer_norm`). SD3 medium, SD3.5 medium and large.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape, T};
use crate::model::diffusion::{Run, Saved};
use crate::model::precision::Precision;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// A `nn.Linear(inp, out)` with its bias: weight `[out, inp]` and bias `[out]`.
pub(crate) fn linear(out: &mut Vec<ParamTensor>, name: &'static str, kinds: Option<&'static [LinearKind]>, o: u64, i: u64) {
    out.push(match kinds {
        Some(k) => ParamTensor::linear(name, k, o, i, S),
        None => ParamTensor::new(name, &[o, i], S, R),
    });
    out.push(ParamTensor::vector(name, o, S, R));
}

/// diffusers' `TimestepEmbedding(in, h)` / `PixArtAlphaTextProjection(in, h)`: two linears
/// (`embeddings.py`).
pub(crate) fn embedder(out: &mut Vec<ParamTensor>, name: &'static str, inp: u64, h: u64) {
    linear(out, name, None, h, inp);
    linear(out, name, None, h, h);
}

/// diffusers' `FeedForward(dim, inner)` with a GELU projection (`attention.py`): `net.0.proj`, `net.2`.
pub(crate) fn feed_forward(out: &mut Vec<ParamTensor>, h: u64, inner: u64) {
    linear(out, "feed-forward up (ff.net.0.proj)", Some(&[LinearKind::Up]), inner, h);
    linear(out, "feed-forward down (ff.net.2)", Some(&[LinearKind::Down]), h, inner);
}

/// q/k/v/out of one attention stream (`to_q/to_k/to_v/to_out.0`, or the context stream's
/// `add_q_proj/add_k_proj/add_v_proj/to_add_out`), with biases.
pub(crate) fn attention(out: &mut Vec<ParamTensor>, h: u64, with_out: bool) {
    linear(out, "attention q (to_q)", Some(&[LinearKind::Q]), h, h);
    linear(out, "attention k (to_k)", Some(&[LinearKind::K]), h, h);
    linear(out, "attention v (to_v)", Some(&[LinearKind::V]), h, h);
    if with_out {
        linear(out, "attention out (to_out.0)", Some(&[LinearKind::O]), h, h);
    }
}

/// `FluxTransformer2DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flux {
    pub patch_size: u64,
    pub in_channels: u64,
    pub out_channels: u64,
    /// Double-stream blocks (`num_layers`).
    pub layers: u64,
    /// Single-stream blocks (`num_single_layers`).
    pub single_layers: u64,
    pub heads: u64,
    pub head_dim: u64,
    /// Width of the T5 embeddings (`joint_attention_dim`).
    pub joint_attention_dim: u64,
    /// Width of the pooled CLIP embedding (`pooled_projection_dim`).
    pub pooled_projection_dim: u64,
    /// Flux.1-dev's guidance embedding (`guidance_embeds`).
    pub guidance_embeds: bool,
}

impl Flux {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("patch_size", self.patch_size)?;
        check_dim("in_channels", self.in_channels)?;
        check_dim("out_channels", self.out_channels)?;
        check_dim("num_layers", self.layers)?;
        check_dim("num_single_layers", self.single_layers)?;
        check_dim("num_attention_heads", self.heads)?;
        check_dim("attention_head_dim", self.head_dim)?;
        check_dim("joint_attention_dim", self.joint_attention_dim)?;
        check_dim("pooled_projection_dim", self.pooled_projection_dim)
    }

    /// `inner_dim = num_attention_heads × attention_head_dim`.
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

    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let (h, d) = (self.hidden(), self.head_dim);
        let mut out = Vec::new();
        embedder(&mut out, "timestep embedder", 256, h);
        if self.guidance_embeds {
            embedder(&mut out, "guidance embedder", 256, h);
        }
        embedder(&mut out, "pooled text embedder", self.pooled_projection_dim, h);
        linear(&mut out, "context embedder", None, h, self.joint_attention_dim);
        linear(&mut out, "x embedder", None, h, self.in_channels);
        for _ in 0..self.layers {
            for _stream in 0..2 {
                linear(&mut out, "AdaLayerNormZero (norm1.linear)", None, 6 * h, h);
                attention(&mut out, h, true);
                out.push(ParamTensor::new("q/k RMS norms", &[2, d], S, R));
                feed_forward(&mut out, h, 4 * h);
            }
        }
        for _ in 0..self.single_layers {
            linear(&mut out, "AdaLayerNormZeroSingle (norm.linear)", None, 3 * h, h);
            attention(&mut out, h, false);
            out.push(ParamTensor::new("q/k RMS norms", &[2, d], S, R));
            // Not in train_dreambooth_lora_flux.py's default targets, so no LoRA kind.
            linear(&mut out, "single-block MLP (proj_mlp)", None, 4 * h, h);
            linear(&mut out, "single-block out (proj_out)", None, h, 5 * h);
        }
        linear(&mut out, "AdaLayerNormContinuous (norm_out.linear)", None, 2 * h, h);
        linear(&mut out, "proj_out", None, self.patch_size * self.patch_size * self.out_channels, h);
        out
    }

    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }
}

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
            attention(&mut out, h, true);
            attention(&mut out, h, !last);
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

/// The pieces of a forward shared by the MMDiT and Wan simulations (`autograd.rs`).
pub(crate) mod ops {
    use crate::model::arch::LinearKind;
    use crate::model::diffusion::autograd::{Tape, T, W};

    /// `TimestepEmbedding` / `PixArtAlphaTextProjection` (`embeddings.py`): linear → SiLU/GELU →
    /// linear on a `b × inp` input.
    pub(crate) fn embedder(tape: &mut Tape, x: T, inp: u64, h: u64) -> T {
        let w = tape.weight(None);
        let y = tape.linear(x, inp, h, w);
        let y = tape.activation(y);
        tape.linear(y, h, h, w)
    }

    /// An adaLN modulation `linear(silu(temb))` of `chunks × h` (`AdaLayerNormZero*`,
    /// `AdaLayerNormContinuous`).
    pub(crate) fn modulation(tape: &mut Tape, temb: T, h: u64, chunks: u64) -> T {
        if temb.grad {
            tape.save("activation inputs", temb);
        }
        let s = tape.new_tensor(temb.elems, temb.bytes, temb.grad);
        let w = tape.weight(None);
        tape.linear(s, h, chunks * h, w)
    }

    /// `norm(x) * (1 + scale[:, None]) + shift[:, None]` with `emb`'s chunk as scale: returns
    /// (the layer-norm output, the modulated input).
    pub(crate) fn modulate(tape: &mut Tape, x: T, emb: T, h: u64) -> (T, T) {
        let n = tape.layer_norm(x, h);
        let one_plus = tape.new_tensor(tape.batch * h as f64, emb.bytes, emb.grad);
        let m = tape.mul(n, one_plus);
        let shift = Tape::view(emb, tape.batch * h as f64);
        (n, tape.add2(m, shift))
    }

    /// `gate[:, None] * y` with the gate a chunk of `emb`.
    pub(crate) fn gated(tape: &mut Tape, emb: T, y: T, h: u64) -> T {
        let gate = Tape::view(emb, tape.batch * h as f64);
        tape.mul(gate, y)
    }

    /// diffusers' `FeedForward(h, inner)` with a GELU(tanh) projection (`ff.net.0.proj`, `ff.net.2`).
    pub(crate) fn feed_forward(tape: &mut Tape, x: T, h: u64, inner: u64) -> T {
        let w_up = tape.weight(Some(LinearKind::Up));
        let up = tape.linear(x, h, inner, w_up);
        let act = tape.activation(up);
        let w_down = tape.weight(Some(LinearKind::Down));
        tape.linear(act, inner, h, w_down)
    }

    /// q, k, v projections of one stream.
    pub(crate) fn qkv(tape: &mut Tape, x: T, h: u64) -> (T, T, T) {
        let (wq, wk, wv) = (tape.weight(Some(LinearKind::Q)), tape.weight(Some(LinearKind::K)), tape.weight(Some(LinearKind::V)));
        (tape.linear(x, h, h, wq), tape.linear(x, h, h, wk), tape.linear(x, h, h, wv))
    }

    /// `apply_rotary_emb(x, (cos, sin))` (`embeddings.py` lines 960–1000): `(x.float() * cos +
    /// rotated.float() * sin).to(x.dtype)`; the products by the constant tables save only them.
    pub(crate) fn rotary(tape: &mut Tape, x: T, cos: T, sin: T) -> T {
        if x.grad {
            tape.save("rotary tables", cos);
            tape.save("rotary tables", sin);
        }
        tape.new_tensor(x.elems, x.bytes, x.grad)
    }

    /// RoPE written in place into (part of) `x` (`x[..] = apply_rotary_emb(x[..], …)`): keeps
    /// the tables; `x` keeps its storage.
    pub(crate) fn rotary_in_place(tape: &mut Tape, x: T, cos: T, sin: T) -> T {
        if x.grad {
            tape.save("rotary tables", cos);
            tape.save("rotary tables", sin);
        }
        x
    }

    /// `W` of an out projection (`to_out.0`, `to_add_out`).
    pub(crate) fn w_out(tape: &Tape) -> W {
        tape.weight(Some(LinearKind::O))
    }
}

/// Bytes of an activation in a no-grad forward: fp32, else the 16-bit weights' type (pipelines
/// run the denoiser in `torch_dtype=torch.bfloat16`).
pub(crate) fn act_bytes(run: &Run) -> f64 {
    if run.precision == Precision::Fp32 {
        4.0
    } else {
        2.0
    }
}

impl Flux {
    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment, which is inside a single-stream block (`FluxSingleTransformerBlock.forward`,
    /// over s = text + image tokens, `u` = b × s × hidden activations): the caller's two streams
    /// (u), the concatenation and its modulated norm (2u), the MLP output (4u), then either
    /// - the end of the block: attention output (u), `cat([attn, mlp])` (5u), `proj_out` (u) and
    ///   the gated product (u); or
    /// - RoPE on k (`apply_rotary_emb`, `embeddings.py` lines 984–997): q, k, v and the rotated
    ///   copy (4u) beside the fp32 products `x.float() * cos`, `x_rotated.float() * sin` (and, for
    ///   a 16-bit k, the `x_rotated.float()` copy);
    ///
    /// plus the fp32 cos/sin tables (s × head_dim each). Terms of b × hidden (the time embedding,
    /// the modulations) are left out.
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let s = (self.image_tokens(run) + run.text_tokens) as f64;
        let rows = run.batch as f64 * s * self.hidden() as f64;
        let (u, f32) = (rows * a, rows * 4.0);
        let base = 7.0 * u;
        let end = base + 8.0 * u;
        let rope = base + 4.0 * u + if a == 4.0 { 2.0 } else { 3.0 } * f32;
        let tables = 2.0 * s * self.head_dim as f64 * 4.0;
        end.max(rope) + tables
    }

    /// Image tokens of a latent: the pipeline packs 2×2 latent pixels into one 64-channel token
    /// (`pipeline_flux.py` `_pack_latents`), then `patch_size` (1) more.
    pub fn image_tokens(&self, run: &Run) -> u64 {
        let p = 2 * self.patch_size;
        (run.latent_height / p) * (run.latent_width / p) * run.latent_frames.max(1)
    }

    /// One training forward, op by op through [`Tape`] (`FluxTransformer2DModel.forward`, lines
    /// 671–821; `FluxTransformerBlock.forward` 443–498, `FluxSingleTransformerBlock.forward`
    /// 383–413): per double block each stream's adaLN, q/k/v with their RMS norms, the joint
    /// attention over text + image, the gated residuals and the feed-forward; per single block the
    /// same over the concatenated sequence with the parallel MLP; checkpointing keeps each block's
    /// inputs instead; LoRA keeps only what the adapters and the ops after the first adapter need.
    fn simulate(&self, run: &Run) -> Tape {
        let (h, hd, heads) = (self.hidden(), self.head_dim, self.heads);
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let s = n + tt;
        let mode_in = t.input_bytes();
        let w = t.weight(None);
        // inputs: packed latents, T5 embeddings, pooled CLIP, timestep (and guidance)
        let x_in = t.new_tensor(b * (n * self.in_channels) as f64, mode_in, false);
        let x = t.linear(x_in, self.in_channels, h, w);
        let temb = {
            let proj = t.new_tensor(b * 256.0, mode_in, false);
            let e = ops::embedder(&mut t, proj, 256, h);
            let e = if self.guidance_embeds {
                let g = t.new_tensor(b * 256.0, mode_in, false);
                let g = ops::embedder(&mut t, g, 256, h);
                t.add2(e, g)
            } else {
                e
            };
            let pooled = t.new_tensor(b * self.pooled_projection_dim as f64, mode_in, false);
            let p = ops::embedder(&mut t, pooled, self.pooled_projection_dim, h);
            t.add2(e, p)
        };
        let c_in = t.new_tensor(b * (tt * self.joint_attention_dim) as f64, mode_in, false);
        let c = t.linear(c_in, self.joint_attention_dim, h, w);
        let cos = t.new_tensor((s * hd) as f64, 4.0, false);
        let sin = t.new_tensor((s * hd) as f64, 4.0, false);
        let ckpt = run.checkpointing;
        let (bf, hf) = (b, h as f64);
        let tokens = |k: u64| bf * k as f64 * hf;
        let (mut x, mut c) = (x, c);
        for _ in 0..self.layers {
            (c, x) = t.checkpoint(ckpt, &[x, c, temb, cos, sin], |t| {
                let e_x = ops::modulation(t, temb, h, 6);
                let e_c = ops::modulation(t, temb, h, 6);
                let (_, xm) = ops::modulate(t, x, e_x, h);
                let (_, cm) = ops::modulate(t, c, e_c, h);
                let (q, k, v) = ops::qkv(t, xm, h);
                let q = t.rms_norm(q, hd);
                let k = t.rms_norm(k, hd);
                let (cq, ck, cv) = ops::qkv(t, cm, h);
                let cq = t.rms_norm(cq, hd);
                let ck = t.rms_norm(ck, hd);
                let q = t.cat(&[cq, q]);
                let k = t.cat(&[ck, k]);
                let v = t.cat(&[cv, v]);
                let q = ops::rotary(t, q, cos, sin);
                let k = ops::rotary(t, k, cos, sin);
                let o = t.attention(q, k, v, heads, s);
                // `.to(query.dtype)`, split into text and image, `.contiguous()` each
                let o = t.cast(o, q.bytes);
                let wo = ops::w_out(t);
                let (xo, co) = (Tape::view(o, tokens(n)), Tape::view(o, tokens(tt)));
                let xo = t.linear_strided(xo, h, h, wo, true);
                let co = t.linear_strided(co, h, h, wo, true);
                let xa = ops::gated(t, e_x, xo, h);
                let x = t.add2(x, xa);
                let (_, xm) = ops::modulate(t, x, e_x, h);
                let f = ops::feed_forward(t, xm, h, 4 * h);
                let f = ops::gated(t, e_x, f, h);
                let x = t.add2(x, f);
                let ca = ops::gated(t, e_c, co, h);
                let c = t.add2(c, ca);
                let (_, cm) = ops::modulate(t, c, e_c, h);
                let f = ops::feed_forward(t, cm, h, 4 * h);
                let f = ops::gated(t, e_c, f, h);
                (t.add2(c, f), x)
            });
        }
        // single blocks: each concatenates the text and image streams (views of the previous
        // block's output after the first) into a new sequence
        let mut joint = None;
        for _ in 0..self.single_layers {
            let inputs = match joint {
                None => vec![x, c, temb, cos, sin],
                Some(j) => vec![j, temb, cos, sin],
            };
            let out = t.checkpoint(ckpt, &inputs, |t| {
                let js = t.cat(&[c, x]);
                let e = ops::modulation(t, temb, h, 3);
                let (_, jm) = ops::modulate(t, js, e, h);
                let w = t.weight(None);
                let mlp = t.linear(jm, h, 4 * h, w);
                let mlp = t.activation(mlp);
                let (q, k, v) = ops::qkv(t, jm, h);
                let q = t.rms_norm(q, hd);
                let k = t.rms_norm(k, hd);
                let q = ops::rotary(t, q, cos, sin);
                let k = ops::rotary(t, k, cos, sin);
                let o = t.attention(q, k, v, heads, s);
                let o = t.cast(o, q.bytes);
                let both = t.cat(&[o, mlp]);
                let y = t.linear(both, 5 * h, h, w);
                let y = ops::gated(t, e, y, h);
                t.add2(js, y)
            });
            (c, x) = (Tape::view(out, tokens(tt)), Tape::view(out, tokens(n)));
            joint = Some(out);
        }
        // norm_out over the image part (a slice of the last sequence), proj_out
        let e = ops::modulation(&mut t, temb, h, 2);
        let (_, xm) = ops::modulate(&mut t, x, e, h);
        t.linear(xm, h, self.patch_size * self.patch_size * self.out_channels, w);
        t
    }

    /// What one training forward keeps for backward, by kind (the forward is `simulate`'s).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        self.simulate(run).finish()
    }

    /// Forward FLOPs of one call: 2 per multiply-add of every linear, patch convolution and
    /// LoRA adapter, and of attention's q·kᵀ and p·v (as `torch.utils.flop_counter` counts them).
    pub fn forward_flops(&self, run: &Run) -> f64 {
        self.simulate(run).flops
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
    fn simulate(&self, run: &Run) -> Tape {
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
                let (q, k, v) = ops::qkv(t, xm, h);
                let q = self.qk(t, q);
                let k = self.qk(t, k);
                let (cq, ck, cv) = ops::qkv(t, cm, h);
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
                let wo = ops::w_out(t);
                let co = if last { None } else { Some(t.linear_strided(Tape::view(o, tokens(tt)), h, h, wo, true)) };
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

    /// What one training forward keeps for backward, by kind (the forward is `simulate`'s).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        self.simulate(run).finish()
    }

    /// Forward FLOPs of one call: 2 per multiply-add of every linear, patch convolution and
    /// LoRA adapter, and of attention's q·kᵀ and p·v (as `torch.utils.flop_counter` counts them).
    pub fn forward_flops(&self, run: &Run) -> f64 {
        self.simulate(run).flops
    }
}
