//! `SanaTransformer2DModel` (diffusers 0.42.1 `models/transformers/sana_transformer.py`:
//! `__init__` lines 340–420, `SanaTransformerBlock` lines 190–250, `GLUMBConv` lines 40–80,
//! `SanaCombinedTimestepGuidanceEmbeddings` lines 99–110), as parameter tensors (its
//! activations are not modelled yet): a conv patch embedding, `AdaLayerNormSingle` (time
//! embedding and a 6-way projection; Sana Sprint's guidance embedding beside it), the caption
//! projection from Gemma-2's 2304 and its RMS norm, blocks of linear self-attention (q/k/v without
//! bias by default), cross-attention with its own heads (`num_cross_attention_heads` ×
//! `cross_attention_head_dim`), and the GLUMBConv feed-forward (1×1 conv to 2 × `mlp_ratio` ×
//! hidden, a depthwise 3×3, a bias-free 1×1 back), a learned `scale_shift_table` per block and
//! at the output; its training forward, no-grad peak and FLOPs. Sana 600M and 1600M.

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::autograd::{Mode, Tape};
use crate::model::diffusion::blocks::{act_bytes, embedder, linear, ops, projection};
use crate::model::diffusion::Run;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// `SanaTransformer2DModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sana {
    pub in_channels: u64,
    pub out_channels: u64,
    pub heads: u64,
    pub head_dim: u64,
    pub layers: u64,
    pub cross_heads: u64,
    pub cross_head_dim: u64,
    /// `cross_attention_dim` (`None`: no cross-attention).
    pub cross_attention_dim: Option<u64>,
    pub caption_channels: u64,
    /// GLUMBConv's hidden width, `int(mlp_ratio × hidden)`.
    pub mlp_width: u64,
    pub attention_bias: bool,
    pub patch_size: u64,
    /// `norm_elementwise_affine`: the cross-attention LayerNorm's weight and bias.
    pub affine: bool,
    pub guidance_embeds: bool,
    /// `qk_norm: "rms_norm_across_heads"` (Sana 1.5, Sprint).
    pub qk_norm: bool,
}

impl Sana {
    pub fn check(&self) -> Result<(), InputError> {
        for (field, v) in [
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("num_attention_heads", self.heads),
            ("attention_head_dim", self.head_dim),
            ("num_layers", self.layers),
            ("num_cross_attention_heads", self.cross_heads),
            ("cross_attention_head_dim", self.cross_head_dim),
            ("caption_channels", self.caption_channels),
            ("mlp_ratio", self.mlp_width),
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
        let (h, p, m) = (self.hidden(), self.patch_size, self.mlp_width);
        let mut out = Vec::new();
        out.push(ParamTensor::new("patch embedding (pos_embed.proj)", &[h, self.in_channels, p, p], S, R));
        out.push(ParamTensor::vector("patch embedding bias", h, S, R));
        embedder(&mut out, "timestep embedder", 256, h);
        if self.guidance_embeds {
            embedder(&mut out, "guidance embedder", 256, h);
        }
        linear(&mut out, "AdaLayerNormSingle (time_embed.linear)", None, 6 * h, h);
        embedder(&mut out, "caption projection", self.caption_channels, h);
        out.push(ParamTensor::vector("caption RMS norm", h, S, R));
        for _ in 0..self.layers {
            out.push(ParamTensor::new("block scale_shift_table", &[6, h], S, R));
            projection(&mut out, "linear attention q (to_q)", &[LinearKind::Q], h, h, self.attention_bias);
            projection(&mut out, "linear attention k (to_k)", &[LinearKind::K], h, h, self.attention_bias);
            projection(&mut out, "linear attention v (to_v)", &[LinearKind::V], h, h, self.attention_bias);
            projection(&mut out, "linear attention out (to_out.0)", &[LinearKind::O], h, h, true);
            if self.qk_norm {
                out.push(ParamTensor::new("q/k RMS norms across heads", &[2, h], S, R));
            }
            if let Some(cross) = self.cross_attention_dim {
                let c = self.cross_heads * self.cross_head_dim;
                if self.affine {
                    out.push(ParamTensor::new("cross-attention LayerNorm (norm2)", &[2, h], S, R));
                }
                projection(&mut out, "cross-attention q (to_q)", &[LinearKind::Q], c, h, true);
                projection(&mut out, "cross-attention k (to_k)", &[LinearKind::K], c, cross, true);
                projection(&mut out, "cross-attention v (to_v)", &[LinearKind::V], c, cross, true);
                projection(&mut out, "cross-attention out (to_out.0)", &[LinearKind::O], h, c, true);
                if self.qk_norm {
                    out.push(ParamTensor::new("cross-attention q/k RMS norms", &[2, c], S, R));
                }
            }
            linear(&mut out, "GLUMBConv conv_inverted (1×1)", None, 2 * m, h);
            out.push(ParamTensor::new("GLUMBConv conv_depth (3×3 depthwise)", &[2 * m, 1, 3, 3], S, R));
            out.push(ParamTensor::vector("GLUMBConv conv_depth bias", 2 * m, S, R));
            out.push(ParamTensor::new("GLUMBConv conv_point (1×1)", &[h, m], S, R));
        }
        out.push(ParamTensor::new("output scale_shift_table", &[2, h], S, R));
        linear(&mut out, "proj_out", None, p * p * self.out_channels, h);
        out
    }
}

impl Sana {
    /// Latent tokens: the latent in `patch_size` squares.
    pub fn image_tokens(&self, run: &Run) -> u64 {
        (run.latent_height / self.patch_size) * (run.latent_width / self.patch_size)
    }

    /// One training forward, op by op through [`Tape`] (`SanaTransformer2DModel.forward` lines
    /// 420–500, `SanaTransformerBlock.forward` lines 250–300, `attention_processor.py`
    /// `SanaLinearAttnProcessor2_0` lines 5341–5385, `SanaAttnProcessor2_0` lines 124–185,
    /// `GLUMBConv.forward`): the stream stays the transposed view the patch embedding makes
    /// (`flatten(2).transpose(1, 2)`), so the cross-attention's `to_q` copies it; linear
    /// self-attention keeps the ReLU outputs of q and k, the fp32 (16-bit under autocast) copies
    /// its two batched matmuls read (k and q reshaped, v padded with ones, the d × d scores) and
    /// the numerator and denominator of its division; cross-attention to the normed caption
    /// through the prompt mask (memory-efficient kernel); GLUMBConv keeps the 1×1 conv's input,
    /// the SiLU and depthwise conv inputs (2 × `mlp_ratio` × hidden), the gate's SiLU output and
    /// the product `conv_point` reads.
    // long: one training forward written op by op in the order SanaTransformer2DModel.forward runs it (linear attention, cross-attention, GLUMBConv); cut into pieces, the tensors the ops share would have to be passed around by hand.
    pub(crate) fn simulate(&self, run: &Run) -> Tape {
        let (h, heads, p, m) = (self.hidden(), self.heads, self.patch_size, self.mlp_width);
        let d = self.head_dim;
        let mut t = Tape::new(run);
        let b = t.batch;
        let (n, tt) = (self.image_tokens(run), run.text_tokens);
        let input = t.input_bytes();
        let full = t.full();
        let w = t.weight(None);
        let latent = t.new_tensor(b * (n * self.in_channels * p * p) as f64, input, false);
        let x = t.patch_conv(latent, self.in_channels * p * p, h, w);
        let table_bytes = if t.mode == Mode::Half || (t.mode == Mode::Autocast && !full) { 2.0 } else { 4.0 };
        let proj = t.new_tensor(b * 256.0, x.bytes, false);
        let embedded = ops::embedder(&mut t, proj, 256, h);
        if self.guidance_embeds {
            let g = t.new_tensor(b * 256.0, x.bytes, false);
            ops::embedder(&mut t, g, 256, h);
        }
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
        let c = t.linear(c, h, h, w);
        let enc = t.rms_norm_diffusers(c, h);
        let mask = t.new_tensor(b * tt as f64, input, false);
        let la = if t.mode == Mode::Autocast { 2.0 } else { 4.0 };
        let mut x = x;
        for _ in 0..self.layers {
            x = t.checkpoint(run.checkpointing, &[x, enc, temb, mask], |t| {
                let e = t.new_tensor(temb.elems, temb.bytes.max(table_bytes), temb.grad || full);
                let modulated = |t: &mut Tape, x| {
                    let nx = t.layer_norm(x, h);
                    let one_plus = t.new_tensor(t.batch * h as f64, e.bytes, e.grad);
                    let mm = t.mul(nx, one_plus);
                    t.add2(mm, Tape::view(e, t.batch * h as f64))
                };
                // linear self-attention
                let xm = modulated(t, x);
                let xm = t.cast(xm, x.bytes);
                let (q, k, _v) = ops::qkv(t, xm, h, false);
                let rows = t.batch * n as f64;
                let q = t.activation_result(q);
                let k = t.activation_result(k);
                let grad = q.grad || k.grad;
                if grad {
                    let la_name = "linear attention (ReLU q/k, fp32 matmul operands, division)";
                    for (elems, name) in [
                        (rows * h as f64, "k copy"),
                        (t.batch * (heads * (d + 1)) as f64 * n as f64, "padded v"),
                        (rows * h as f64, "q copy"),
                        (t.batch * (heads * (d + 1) * d) as f64, "scores"),
                        (t.batch * heads as f64 * n as f64, "denominator"),
                        (t.batch * (heads * (d + 1)) as f64 * n as f64, "numerator"),
                    ] {
                        let _ = name;
                        let s = t.new_tensor(elems, la, true);
                        t.save(la_name, s);
                    }
                }
                t.flops += 2.0 * 2.0 * t.batch * (heads * (d + 1) * d * n) as f64;
                let o = t.new_tensor(rows * h as f64, x.bytes, grad);
                let wo = ops::w_out(t, false);
                let a = t.linear_transposed(o, h, h, wo);
                let g = ops::gated(t, e, a, h);
                let x = t.add2(x, g);
                // cross-attention from the raw (transposed) stream
                let x = if let Some(cross) = self.cross_attention_dim {
                    let ci = self.cross_heads * self.cross_head_dim;
                    let (wq, wk, wv) = (t.weight(Some(LinearKind::Q)), t.weight(Some(LinearKind::K)), t.weight(Some(LinearKind::V)));
                    let q = t.linear_transposed(x, h, ci, wq);
                    let k = t.linear(enc, cross, ci, wk);
                    let v = t.linear(enc, cross, ci, wv);
                    let per_head = t.new_tensor(t.batch * (self.cross_heads * tt.div_ceil(8) * 8) as f64, mask.bytes, false);
                    let o = t.attention_masked(q, k, v, self.cross_heads, n, Some(per_head));
                    let o = t.cast(o, q.bytes);
                    let a = t.linear(o, ci, h, wo);
                    let a = t.new_tensor(a.elems, a.bytes, a.grad); // `/ rescale_output_factor`
                    t.add2(x, a)
                } else {
                    x
                };
                // GLUMBConv over the (b, hidden, height, width) view of the modulated norm
                let xm = modulated(t, x);
                let w_ff = t.weight(None);
                let up = t.patch_conv(xm, h, 2 * m, w_ff);
                let up = t.activation(up);
                let dw = t.depthwise(up, 2 * m, 3);
                let gate = t.activation(Tape::view(dw, dw.elems / 2.0));
                let prod = t.mul(Tape::view(dw, dw.elems / 2.0), gate);
                let f = t.patch_conv(prod, m, h, w_ff);
                let f = ops::gated(t, e, f, h);
                t.add2(x, f)
            });
        }
        let table = t.new_tensor(b * 2.0 * h as f64, embedded.bytes.max(table_bytes), full);
        let nx = t.layer_norm(x, h);
        let one_plus = t.new_tensor(b * h as f64, table.bytes, table.grad);
        let mm = t.mul(nx, one_plus);
        let mm = t.add2(mm, table);
        t.linear(mm, h, p * p * self.out_channels, w);
        t
    }

    /// The live tensors of one `torch.no_grad()` call beyond the weights and inputs, at its
    /// largest moment: GLUMBConv's first SiLU (`u` = b × tokens × hidden activations): the
    /// caller's stream, the stream after self-attention, the cross-attention output and the
    /// modulated norm (4u) beside `conv_inverted`'s output and its SiLU (2 × 2 × `mlp_ratio` ×
    /// hidden per token), plus the normed caption. The linear attention's own moment (its fp32
    /// copies of q, k, the padded v and the products) stays below it at the released
    /// `mlp_ratio` 2.5 (measured on the tiny configs in fp32 and bf16).
    pub fn forward_peak(&self, run: &Run) -> f64 {
        let a = act_bytes(run);
        let tokens = run.batch as f64 * self.image_tokens(run) as f64;
        let h = self.hidden() as f64;
        let caption = run.batch as f64 * run.text_tokens as f64 * h * a;
        tokens * a * (4.0 * h + 4.0 * self.mlp_width as f64) + caption
    }
}
