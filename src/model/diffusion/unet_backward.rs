//! A [`UNet2D`]'s training forward written op by op over the [`Tape`], for the walk of its
//! backward (`backward_walk.rs`); what it saves is `unet_saved.rs`'s (measured to the byte),
//! this walk gives the backward's working set beyond it.
//!
//! The ops follow `UNet2DConditionModel.forward` (`unet_2d_condition.py`): the time embedding
//! (`TimestepEmbedding`: linear → SiLU → linear), `conv_in`, the down blocks (each
//! `ResnetBlock2D` then, in a cross-attention level, its `Transformer2DModel`; every output and
//! each down-sampler's pushed to `down_block_res_samples`), the mid block, the up blocks (each
//! resnet takes `torch.cat([hidden_states, res_hidden_states])` of the last skip,
//! `unet_2d_blocks.py` `CrossAttnUpBlock2D.forward`), `conv_norm_out` → SiLU → `conv_out`.
//! A `ResnetBlock2D` (`resnet.py` lines 327–375): GroupNorm → SiLU → conv 3×3, plus the
//! time projection of SiLU(temb), GroupNorm → SiLU → conv 3×3, a 1×1 shortcut when the
//! channels change, the residual sum. A `Transformer2DModel` (`transformer_2d.py`): GroupNorm,
//! `proj_in` (1×1 conv, or a linear with `use_linear_projection`), its `BasicTransformerBlock`s
//! (`attention.py`: LayerNorm → self-attention, LayerNorm → cross-attention on the text,
//! LayerNorm → GEGLU feed-forward, each with its residual), `proj_out` and the residual.
//! Under `enable_gradient_checkpointing()` every resnet but the mid block's first and every
//! `BasicTransformerBlock` runs under `torch.utils.checkpoint` (as `unet_saved.rs` says).
//!
//! The skips' gradients are what a UNet's backward holds that a DiT's does not: the up path
//! hands each concatenated skip its gradient (a view of the cat's), which waits until backward
//! reaches the down-path op that made it.

use super::autograd::{Tape, T, W};
use super::backward_walk::Walk;
use super::blocks::ops;
use super::unet::{UNet2D, UNetOp};
use super::Run;
use crate::model::arch::param::LinearKind;

impl UNet2D {
    /// The backward after one training forward: the most it holds beyond the saved tensors.
    pub fn backward(&self, run: &Run) -> Walk {
        self.simulate(run).backward()
    }

    // long: the UNet's forward in order (time embedding, conv_in, down, mid and up blocks,
    // conv_out), the skip stack and the running stream shared by every step.
    fn simulate(&self, run: &Run) -> Tape {
        let mut t = Tape::new(run);
        let b = t.batch;
        let input = t.input_bytes();
        let hw = |level: u32| -> f64 {
            let (mut h, mut w) = (run.latent_height.max(1), run.latent_width.max(1));
            for _ in 0..level {
                h = h.div_ceil(2);
                w = w.div_ceil(2);
            }
            (h * w) as f64
        };
        let text = t.new_tensor(b * (run.text_tokens * self.cross_attention_dim) as f64, input, false);
        let c0 = self.channels[0];
        let sinusoid = t.new_tensor(b * c0 as f64, input, false);
        let temb = ops::embedder(&mut t, sinusoid, c0, self.time_embed_dim());
        let groups = self.norm_num_groups;
        let w = t.weight(None);
        let mid_first = self.mid_index();
        let ops = self.walk();
        let mut skips: Vec<T> = Vec::new();
        let mut x = t.new_tensor(0.0, input, false);
        let mut channels = 0;
        let mut down = true;
        for (i, op) in ops.iter().enumerate() {
            let push = down && !matches!(ops.get(i + 1), Some(UNetOp::Transformer { .. }));
            match *op {
                UNetOp::ConvIn { cin, cout, kernel } => {
                    let sample = t.new_tensor(b * cin as f64 * hw(0), input, false);
                    x = t.conv(sample, cin, cout, kernel, 1.0, w);
                    channels = cout;
                    skips.push(x);
                }
                UNetOp::Resnet { cin, cout, .. } => {
                    down = down && mid_first != Some(i) && cin == channels;
                    if cin > channels {
                        let skip = skips.pop().unwrap_or(x);
                        x = t.cat(&[x, skip]);
                    }
                    let ckpt = run.checkpointing && mid_first != Some(i);
                    let temb_dim = self.time_embed_dim();
                    x = t.checkpoint(ckpt, &[x, temb], |t| resnet(t, x, temb, cin, cout, temb_dim, groups, w));
                    channels = cout;
                    if push && down {
                        skips.push(x);
                    }
                }
                UNetOp::Transformer { level, channels: c, heads, layers } => {
                    x = self.transformer_ops(&mut t, x, text, run, hw(level), c, heads, layers);
                    if down {
                        skips.push(x);
                    }
                }
                UNetOp::Downsample { channels: c, .. } => {
                    x = t.conv(x, c, c, 3, 0.25, w);
                    skips.push(x);
                }
                UNetOp::Upsample { channels: c, .. } => {
                    let up = t.map(x, x.elems * 4.0, 0.0);
                    x = t.conv(up, c, c, 3, 1.0, w);
                }
                UNetOp::ConvOut { cin, cout, kernel } => {
                    let n = t.group_norm(x, cin, groups);
                    let n = t.activation(n);
                    x = t.conv(n, cin, cout, kernel, 1.0, w);
                }
            }
        }
        t
    }

    /// A `Transformer2DModel` of `layers` blocks over `s` positions of `c` channels.
    #[allow(clippy::too_many_arguments)]
    fn transformer_ops(&self, t: &mut Tape, x: T, text: T, run: &Run, s: f64, c: u64, heads: u64, layers: u64) -> T {
        let w = t.weight(None);
        let n = t.group_norm(x, c, self.norm_num_groups);
        // proj_in: a 1×1 conv then `permute(0, 2, 3, 1).reshape` (a copy), or the copy then a linear
        let mut h = if self.use_linear_projection {
            let seq = t.derived(n, 0.0);
            t.linear(seq, c, c, w)
        } else {
            let p = t.conv(n, c, c, 1, 1.0, w);
            t.derived(p, 0.0)
        };
        let text_width = self.cross_attention_dim;
        for _ in 0..layers {
            h = t.checkpoint(run.checkpointing, &[h, text], |t| basic_block(t, h, text, s, c, heads, text_width));
        }
        let out = if self.use_linear_projection {
            let o = t.linear(h, c, c, w);
            t.derived(o, 0.0)
        } else {
            let seq = t.derived(h, 0.0);
            t.conv(seq, c, c, 1, 1.0, w)
        };
        t.add2(x, out)
    }
}

/// A `ResnetBlock2D` `cin → cout` on `x`, with the time embedding `temb` (`temb_dim` wide).
#[allow(clippy::too_many_arguments)]
fn resnet(t: &mut Tape, x: T, temb: T, cin: u64, cout: u64, temb_dim: u64, groups: u64, w: W) -> T {
    let h = t.group_norm(x, cin, groups);
    let h = t.activation(h);
    let h = t.conv(h, cin, cout, 3, 1.0, w);
    let e = t.activation(temb);
    let e = t.linear(e, temb_dim, cout, w);
    let h = t.add2(h, e);
    let h = t.group_norm(h, cout, groups);
    let h = t.activation(h);
    let h = t.conv(h, cout, cout, 3, 1.0, w);
    let shortcut = if cin == cout { x } else { t.conv(x, cin, cout, 1, 1.0, w) };
    t.add2(shortcut, h)
}

/// A `BasicTransformerBlock` on `x` (`s` positions of `c` channels) attending to `text`.
#[allow(clippy::too_many_arguments)]
fn basic_block(t: &mut Tape, x: T, text: T, s: f64, c: u64, heads: u64, text_width: u64) -> T {
    let sq = s as u64;
    let [wq, wk, wv, wo] = [LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O].map(|k| t.weight(Some(k)));
    // self-attention
    let n = t.layer_norm_affine(x, c, false);
    let (q, k, v) = (t.linear(n, c, c, wq), t.linear(n, c, c, wk), t.linear(n, c, c, wv));
    let a = t.attention(q, k, v, heads, sq);
    let a = t.linear(a, c, c, wo);
    let x = t.add2(a, x);
    // cross-attention: queries from the image, keys and values from the text
    let n = t.layer_norm_affine(x, c, false);
    let q = t.linear(n, c, c, wq);
    let (k, v) = (t.linear(text, text_width, c, wk), t.linear(text, text_width, c, wv));
    let a = t.attention(q, k, v, heads, sq);
    let a = t.linear(a, c, c, wo);
    let x = t.add2(a, x);
    // GEGLU: `proj` to 8c, `hidden * gelu(gate)` over its two halves, then `ff.net.2`
    let n = t.layer_norm_affine(x, c, false);
    let p = t.linear(n, c, 8 * c, t.weight(Some(LinearKind::Up)));
    let half = Tape::chunk(p, p.elems / 2.0);
    let gate = t.activation(half);
    let prod = t.mul(half, gate);
    let f = t.linear(prod, 4 * c, c, t.weight(Some(LinearKind::Down)));
    t.add2(f, x)
}
