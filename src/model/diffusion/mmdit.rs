//! `FluxTransformer2DModel`, Flux.1's two-stream joint-attention transformer (MMDiT), as
//! diffusers 0.42.1 builds it (`models/transformers/transformer_flux.py`:
//! `FluxTransformer2DModel.__init__` lines 612–665, `FluxTransformerBlock` 415–500,
//! `FluxSingleTransformerBlock` 358–414, `FluxAttention` 278–357): `num_layers` double-stream
//! blocks (image and text streams each with `AdaLayerNormZero`, q/k/v/out projections, a 4×
//! GELU(tanh) feed-forward, joint attention over the concatenated text + image tokens with
//! per-head RMS q/k norms) then `num_single_layers` single-stream blocks over the concatenation
//! (`AdaLayerNormZeroSingle`, q/k/v, a parallel 4× `proj_mlp`, one `proj_out` over attention and
//! MLP together), time/pooled-text (and, with `guidance_embeds`, guidance) embeddings
//! (`embeddings.py` `CombinedTimestepGuidanceTextProjEmbeddings`), `AdaLayerNormContinuous` and
//! `proj_out`. Flux.1-dev and schnell.
//!
//! Every tensor is listed in [`Scope::Layer`] (a diffusion part reports one block).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::Tape;
use crate::model::diffusion::blocks::{act_bytes, attention, embedder, feed_forward, linear, ops};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

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
        super::check_blocks("num_layers", self.layers)?;
        super::check_blocks("num_single_layers", self.single_layers)?;
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
            // The image stream, then the text stream (its `add_*_proj` projections).
            for stream in 0..2 {
                linear(&mut out, "AdaLayerNormZero (norm1.linear)", None, 6 * h, h);
                attention(&mut out, h, true, stream == 1);
                out.push(ParamTensor::new("q/k RMS norms", &[2, d], S, R));
                feed_forward(&mut out, h, 4 * h);
            }
        }
        for _ in 0..self.single_layers {
            linear(&mut out, "AdaLayerNormZeroSingle (norm.linear)", None, 3 * h, h);
            attention(&mut out, h, false, false);
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
    // long: one training forward written op by op in the order FluxTransformer2DModel.forward runs it (both streams, the double and single blocks); cut into pieces, the tensors the ops share would have to be passed around by hand.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
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
                let (q, k, v) = ops::qkv(t, xm, h, false);
                let q = t.rms_norm(q, hd);
                let k = t.rms_norm(k, hd);
                let (cq, ck, cv) = ops::qkv(t, cm, h, true);
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
                let (wo, wo_text) = (ops::w_out(t, false), ops::w_out(t, true));
                let (xo, co) = (Tape::view(o, tokens(n)), Tape::view(o, tokens(tt)));
                let xo = t.linear_strided(xo, h, h, wo, true);
                let co = t.linear_strided(co, h, h, wo_text, true);
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
                let (q, k, v) = ops::qkv(t, jm, h, false);
                let q = t.rms_norm(q, hd);
                let k = t.rms_norm(k, hd);
                let q = ops::rotary(t, q, cos, sin);
                let k = ops::rotary(t, k, cos, sin);
                let o = t.attention(q, k, v, heads, s);
                let o = t.cast(o, q.bytes);
                let both = t.cat(&[o, mlp]);
                // `FluxSingleTransformerBlock.forward`'s locals until it returns (`transformer_flux.py`
                // lines 383–412):
                // `norm_hidden_states`, `mlp_hidden_states`, `attn_output`, and the concatenation
                // as `hidden_states` until it is rebound
                for local in [jm, mlp, o, both] {
                    t.hold(local);
                }
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
}
