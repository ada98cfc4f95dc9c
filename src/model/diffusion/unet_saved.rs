//! What one training forward of a [`UNet2D`] keeps for backward, op by op, as autograd saves
//! it on CUDA (measured with fake CUDA tensors in `tests/measure/diffusion_unet_vae.py`,
//! fixture `tests/fixtures/measured/diffusion_unet_vae.json`):
//! - GroupNorm (`native_group_norm`) saves its input and a mean and rstd per (sample, group),
//!   LayerNorm its input and a mean and rstd per token (fp32); under autocast both are on
//!   CUDA's fp32 list, so a 16-bit input is saved as a new fp32 copy; in pure bf16 the group
//!   statistics are bf16, the LayerNorm ones fp32.
//! - SiLU and GELU save their input; a convolution saves its input whenever it has a graph
//!   (even with a frozen weight), a linear only when its weight is trained (`addmm` keeps
//!   `mat1` for the weight's gradient); under autocast the saved input is the 16-bit copy
//!   autocast makes of an fp32 input (one per consumer: `to_q`, `to_k`, `to_v` each cast
//!   the LayerNorm's fp32 output).
//! - `F.scaled_dot_product_attention` (diffusers' `AttnProcessor2_0`, `attention_processor.py`
//!   lines 2719–2786): the flash kernel in 16-bit (head dim a multiple of 8, at most 256),
//!   the memory-efficient kernel otherwise; both save q, k, v, the output and an fp32
//!   log-sum-exp per (sample, head, query) (the efficient kernel's padded to 32 queries) and
//!   the RNG state; `to_out.0` reads the output's own storage.
//! - GEGLU (`activations.py` `GEGLU.forward`): `proj` output (both halves: the GELU's input
//!   and the product's), the GELU output, and the product as `ff.net.2`'s input.
//! - `enable_gradient_checkpointing()`: every `ResnetBlock2D` but the mid block's first
//!   (`UNetMidBlock2DCrossAttn.forward` runs `resnets[0]` outside the checkpoint) and every
//!   `BasicTransformerBlock` run under non-reentrant `torch.utils.checkpoint`, keeping only
//!   their inputs (`unet_2d_blocks.py` lines 742–878, `transformer_2d.py` lines 413–425); the
//!   transformers' GroupNorm, `proj_in`/`proj_out`, the samplers, `conv_in`, `conv_out` and
//!   the time embedding save as usual.
//! - LoRA (PEFT on frozen weights in the training dtype, adapters fp32): nothing is saved
//!   before the first adapter (no input needs a gradient); each adapter saves a 16-bit copy
//!   of its input for `lora_A` (PEFT casts the input to the adapter's dtype, autocast casts
//!   it back) and `lora_A`'s output for `lora_B`; with `lora_dropout` the dropout's output
//!   and its 1-byte mask; frozen linears save nothing.
//! - Autocast's 16-bit weight copies (reported apart as `autocast weight copies`): every
//!   conv weight and every linear weight whose input needs a gradient; with LoRA the fp32
//!   copies of the frozen 16-bit norm weights and the adapters' 16-bit copies.
//!
//! Precision: `Fp32` everything fp32; `Bf16` a pure 16-bit model; every mixed mode (`Bf16Mixed`,
//! `Fp16Mixed`, `Fp8Mixed`) is modelled as CUDA autocast to 16 bits with fp32 weights and
//! 16-bit latents and text (the training scripts feed both in `weight_dtype`); with LoRA the
//! frozen base is in that 16-bit dtype. `run.attention` is not read: diffusers'
//! `AttnProcessor2_0` always calls SDPA, whose kernel follows the dtype and head width.
//! Measured on tiny configs only: cuDNN's convolution workspaces and the allocator's
//! rounding are not in these numbers.

use crate::model::arch::param::LinearKind;
use crate::model::diffusion::unet::{LevelKind, UNet2D, UNetOp};
use crate::model::diffusion::{LoraRun, Run, Saved};
use crate::model::precision::Precision;

/// Bytes by group, in a fixed order.
#[derive(Default)]
struct Groups {
    resnets: f64,
    norms: f64,
    attention: f64,
    feed_forward: f64,
    lora: f64,
    other: f64,
    checkpoint: f64,
    weight_copies: f64,
}

/// How tensors flow through the forward: their sizes and what needs a gradient.
struct Flow<'a> {
    b: f64,
    /// Bytes of a hidden state between modules (fp32: 4; 16-bit or autocast: 2).
    a: f64,
    /// Autocast: norms compute in fp32 (a saved fp32 copy), matmuls on 16-bit copies.
    mixed: bool,
    /// Bytes of GroupNorm's mean/rstd.
    stat: f64,
    lora: Option<&'a LoraRun>,
    /// Bytes of a LoRA adapter's saved input (16-bit under autocast, else the adapter's).
    lora_in: f64,
    /// Whether the hidden states need a gradient (always with trained base weights).
    grad: bool,
    ckpt: bool,
    /// The time embedding and the text are held once, whoever saves them first.
    temb_held: bool,
    text_held: bool,
}

impl Flow<'_> {
    fn full(&self) -> bool {
        self.lora.is_none()
    }

    fn adapted(&self, kind: LinearKind) -> bool {
        self.lora.is_some_and(|l| l.targets.contains(&kind))
    }

    /// Bytes of a norm's saved input and of its output (fp32 under autocast).
    fn norm_bytes(&self) -> f64 {
        if self.mixed {
            4.0
        } else {
            self.a
        }
    }

    /// Bytes a conv or trained linear saves for an input that a norm or SiLU produced.
    fn matmul_in(&self) -> f64 {
        if self.mixed {
            2.0
        } else {
            self.a
        }
    }
}

impl UNet2D {
    /// What one training forward keeps for backward, by group (see the module doc).
    pub fn saved(&self, run: &Run) -> Vec<Saved> {
        let g = self.forward(run);
        [
            ("resnet blocks", g.resnets),
            ("transformer norms and projections", g.norms),
            ("attention", g.attention),
            ("feed-forward", g.feed_forward),
            ("LoRA adapter inputs", g.lora),
            ("conv_in, samplers, conv_out, time embedding", g.other),
            ("checkpointed block inputs", g.checkpoint),
            ("autocast weight copies", g.weight_copies),
        ]
        .into_iter()
        .map(|(name, bytes)| Saved { name, bytes })
        .collect()
    }

    // long: the UNet's forward in order (time embedding, down, mid and up blocks), each op's
    // saved tensors where it runs; the parts share the running flow state.
    /// The saved groups of one training forward.
    fn forward(&self, run: &Run) -> Groups {
        let mixed = run.precision.is_mixed();
        let a = if run.precision == Precision::Fp32 { 4.0 } else { 2.0 };
        let lora_fp32 = run.lora.as_ref().is_some_and(|l| l.fp32);
        let mut f = Flow {
            b: run.batch as f64,
            a,
            mixed,
            stat: if run.precision == Precision::Bf16 { 2.0 } else { 4.0 },
            lora: run.lora.as_ref(),
            lora_in: if mixed {
                2.0
            } else if lora_fp32 {
                4.0
            } else {
                a
            },
            grad: run.lora.is_none(),
            ckpt: run.checkpointing,
            temb_held: false,
            text_held: false,
        };
        let mut g = Groups::default();
        let (h0, w0) = (run.latent_height.max(1), run.latent_width.max(1));
        let hw = |level: u32| -> f64 {
            let (mut h, mut w) = (h0, w0);
            for _ in 0..level {
                h = h.div_ceil(2);
                w = w.div_ceil(2);
            }
            (h * w) as f64
        };
        let temb = self.time_embed_dim() as f64;
        if f.full() {
            // time_proj's sinusoid (cast to the sample's dtype) → linear_1 → SiLU → linear_2;
            // SDXL's add_embedding likewise on the pooled text and size embeddings.
            let c0 = self.channels[0] as f64;
            g.other += f.b * (c0 + 2.0 * temb) * a;
            if let Some(t) = self.text_time {
                g.other += f.b * (t.input_dim as f64 + 2.0 * temb) * a;
            }
            if mixed {
                let linear_2s = if self.text_time.is_some() { 2.0 } else { 1.0 };
                g.weight_copies += 2.0 * linear_2s * temb * temb;
            }
        }
        let groups = self.norm_num_groups as f64;
        let mid_at = self.mid_index();
        for (i, op) in self.walk().into_iter().enumerate() {
            match op {
                UNetOp::ConvIn { cin, cout, kernel } => {
                    if f.full() {
                        g.other += f.b * cin as f64 * hw(0) * a;
                        if mixed {
                            g.weight_copies += 2.0 * (cout * cin * kernel * kernel) as f64;
                        }
                    }
                }
                UNetOp::Resnet { level, cin, cout } => {
                    // the mid block's first resnet runs outside any checkpoint
                    let checkpointed = f.ckpt && mid_at != Some(i);
                    resnet(&mut f, &mut g, cin as f64 * hw(level), cout as f64 * hw(level), cin, cout, temb, groups, checkpointed);
                }
                UNetOp::Transformer { level, channels, heads, layers } => {
                    self.transformer(&mut f, &mut g, run, hw(level), channels, heads, layers, groups);
                }
                UNetOp::Downsample { level, channels } => {
                    if f.grad || f.full() {
                        g.other += f.b * channels as f64 * hw(level) * a;
                        if mixed && f.full() {
                            g.weight_copies += 2.0 * 9.0 * (channels * channels) as f64;
                        }
                    }
                }
                UNetOp::Upsample { level, channels } => {
                    if f.grad || f.full() {
                        g.other += f.b * channels as f64 * hw(level - 1) * a;
                        if mixed && f.full() {
                            g.weight_copies += 2.0 * 9.0 * (channels * channels) as f64;
                        }
                    }
                }
                UNetOp::ConvOut { cin, cout, kernel } => {
                    if f.grad || f.full() {
                        let x = f.b * cin as f64 * hw(0);
                        g.other += 2.0 * x * f.norm_bytes() + 2.0 * f.b * groups * f.stat + x * f.matmul_in();
                        g.weight_copies += norm_weight_copy(&f, cin as f64) + if mixed && f.full() { 2.0 * (cout * cin * kernel * kernel) as f64 } else { 0.0 };
                    }
                }
            }
        }
        g
    }

    /// Index in [`Self::walk`] of the mid block's first resnet.
    pub(super) fn mid_index(&self) -> Option<usize> {
        if !self.mid_block {
            return None;
        }
        let down: usize = self.layers.iter().zip(&self.down).map(|(&l, k)| l as usize * if *k == LevelKind::CrossAttn { 2 } else { 1 }).sum();
        Some(1 + down + self.channels.len() - 1)
    }

    /// A `Transformer2DModel` of `layers` `BasicTransformerBlock`s over `s` positions.
    #[allow(clippy::too_many_arguments)]
    fn transformer(&self, f: &mut Flow, g: &mut Groups, run: &Run, s: f64, c: u64, heads: u64, layers: u64, groups: f64) {
        let cf = c as f64;
        let n = f.b * s * cf;
        let (a, mixed) = (f.a, f.mixed);
        let x = self.cross_attention_dim as f64;
        let t = run.text_tokens as f64;
        let text = f.b * t * x;
        // GroupNorm, proj_in (a conv saves its input even when frozen; a linear only when trained)
        if f.grad || f.full() {
            g.norms += n * f.norm_bytes() + 2.0 * f.b * groups * f.stat;
            g.weight_copies += norm_weight_copy(f, cf);
            if !self.use_linear_projection || f.full() {
                g.norms += n * f.matmul_in();
                if mixed && f.full() {
                    g.weight_copies += 2.0 * cf * cf;
                }
            }
        }
        if f.ckpt {
            for _ in 0..layers {
                let output_grad = f.full() || f.lora.is_some_and(|l| !l.targets.is_empty());
                if output_grad || f.grad {
                    g.checkpoint += n * a;
                    if !f.text_held {
                        g.checkpoint += text * a;
                        f.text_held = true;
                    }
                }
                f.grad = f.grad || output_grad;
            }
        } else {
            for _ in 0..layers {
                self.block(f, g, s, cf, heads, t);
            }
        }
        // proj_out: a conv saves the block output's contiguous copy; a linear the output itself
        if (f.grad || f.full()) && (!self.use_linear_projection || f.full()) {
            g.norms += n * a;
            if mixed && f.full() {
                g.weight_copies += 2.0 * cf * cf;
            }
        }
    }

    // long: one BasicTransformerBlock op by op (three norms, self- and cross-attention, GEGLU),
    // each op's saved tensors beside it.
    /// One `BasicTransformerBlock`: LayerNorm → self-attention → LayerNorm → cross-attention
    /// on the text → LayerNorm → GEGLU feed-forward, each with its residual.
    fn block(&self, f: &mut Flow, g: &mut Groups, s: f64, c: f64, heads: u64, t: f64) {
        let n = f.b * s * c;
        let (a, mixed) = (f.a, f.mixed);
        let x = self.cross_attention_dim as f64;
        let text = f.b * t * x;
        let dh = c as u64 / heads;
        let flash = a == 2.0 && dh.is_multiple_of(8) && dh <= 256;
        let lse = |q: f64| 4.0 * f.b * heads as f64 * if flash { q } else { (q / 32.0).ceil() * 32.0 };
        let rng = if flash { 24.0 } else { 16.0 };
        let rank = f.lora.map_or(0.0, |l| l.rank as f64);
        let mixed_full = mixed && f.full();
        // LayerNorm: input (fp32 copy under autocast) + fp32 mean and rstd per token
        let layer_norm = |f: &Flow, g: &mut Groups| {
            if f.grad || f.full() {
                g.norms += n * f.norm_bytes() + 2.0 * f.b * s * 4.0;
                g.weight_copies += 2.0 * norm_weight_copy(f, c);
            }
        };
        // A LoRA adapter on a linear of `tokens × fan_in` inputs and `fan_out` outputs whose
        // input needs a gradient (`input_grad`) or not; without a cast the adapter saves the
        // input's own storage, counted once (`held`: already saved by another op).
        let dropout = f.lora.is_some_and(|l| l.dropout);
        let adapter = |f: &Flow, g: &mut Groups, tokens: f64, fan_in: f64, fan_out: f64, input_grad: bool, held: &mut bool| {
            // `lora_dropout` makes a new input for lora_A and keeps its 1-byte mask when the
            // input needs a gradient
            let copy = mixed || f.lora_in != a || dropout;
            if dropout && input_grad {
                g.lora += tokens * fan_in;
            }
            if copy || !*held {
                g.lora += tokens * fan_in * f.lora_in;
            }
            *held = *held || !copy;
            g.lora += tokens * rank * f.lora_in;
            if mixed {
                g.weight_copies += 2.0 * rank * fan_out + if input_grad { 2.0 * rank * fan_in } else { 0.0 };
            }
        };
        // ---- self-attention
        layer_norm(f, g);
        if f.full() {
            // to_q/to_k/to_v read the LayerNorm output: three 16-bit copies under autocast
            g.attention += if mixed { 3.0 * n * 2.0 } else { n * a };
        }
        let mut shared = false;
        let input_grad = f.grad;
        for kind in [LinearKind::Q, LinearKind::K, LinearKind::V] {
            if f.adapted(kind) {
                adapter(f, g, f.b * s, c, c, input_grad, &mut shared);
                f.grad = true;
            }
        }
        if f.grad || f.full() {
            g.attention += 4.0 * n * a + lse(s) + rng;
        }
        if f.adapted(LinearKind::O) {
            // to_out.0 reads the attention output, which the attention kernel saved
            adapter(f, g, f.b * s, c, c, f.grad, &mut true);
            f.grad = true;
        }
        if mixed_full {
            g.weight_copies += 2.0 * 4.0 * c * c;
        }
        // ---- cross-attention: queries from the image, keys and values from the text
        layer_norm(f, g);
        if f.full() {
            g.attention += n * f.matmul_in();
            if !f.text_held {
                g.attention += text * a;
                f.text_held = true;
            }
        }
        if f.adapted(LinearKind::Q) {
            adapter(f, g, f.b * s, c, c, f.grad, &mut false);
        }
        let mut text_held = f.text_held;
        for kind in [LinearKind::K, LinearKind::V] {
            if f.adapted(kind) {
                adapter(f, g, f.b * t, x, c, false, &mut text_held);
                f.grad = true;
            }
        }
        f.text_held = text_held;
        if f.grad || f.full() {
            g.attention += 2.0 * n * a + 2.0 * f.b * t * c * a + lse(s) + rng;
        }
        if f.adapted(LinearKind::O) {
            // to_out.0 reads the attention output, which the attention kernel saved
            adapter(f, g, f.b * s, c, c, f.grad, &mut true);
            f.grad = true;
        }
        if mixed_full {
            // to_q and to_out.0 (to_k and to_v read the text, which needs no gradient)
            g.weight_copies += 2.0 * 2.0 * c * c;
        }
        // ---- GEGLU feed-forward
        layer_norm(f, g);
        if f.full() {
            g.feed_forward += n * f.matmul_in();
        }
        if f.adapted(LinearKind::Up) {
            adapter(f, g, f.b * s, c, 8.0 * c, f.grad, &mut false);
            f.grad = true;
        }
        if f.grad || f.full() {
            g.feed_forward += 8.0 * n * a + 4.0 * n * a;
            if f.full() {
                g.feed_forward += 4.0 * n * a;
            }
        }
        if f.adapted(LinearKind::Down) {
            adapter(f, g, f.b * s, 4.0 * c, c, f.grad, &mut false);
            f.grad = true;
        }
        if mixed_full {
            g.weight_copies += 2.0 * 12.0 * c * c;
        }
    }
}

/// A `ResnetBlock2D` on `x_in` input and `x_out` output elements per sample.
#[allow(clippy::too_many_arguments)]
fn resnet(f: &mut Flow, g: &mut Groups, x_in: f64, x_out: f64, cin: u64, cout: u64, temb: f64, groups: f64, checkpointed: bool) {
    if !(f.grad || f.full()) {
        return;
    }
    let (b, a) = (f.b, f.a);
    let (ci, co) = (cin as f64, cout as f64);
    let mixed_full = f.mixed && f.full();
    if checkpointed {
        g.checkpoint += b * x_in * a;
        if !f.temb_held {
            g.checkpoint += b * temb * a;
            f.temb_held = true;
        }
        return;
    }
    let norm = f.norm_bytes();
    // norm1 (input + stats), SiLU (its input), conv1 (the SiLU output, 16-bit under autocast)
    g.resnets += b * x_in * (2.0 * norm + f.matmul_in()) + 2.0 * b * groups * f.stat;
    // norm2, SiLU, conv2 on the output channels
    g.resnets += b * x_out * (2.0 * norm + f.matmul_in()) + 2.0 * b * groups * f.stat;
    // conv_shortcut reads the block input: the norm's own saved input unless autocast copied it
    if cin != cout && f.mixed {
        g.resnets += b * x_in * a;
    }
    g.weight_copies += norm_weight_copy(f, ci) + norm_weight_copy(f, co);
    if f.full() {
        // SiLU(temb) (temb itself once for the model) → time_emb_proj
        g.resnets += b * temb * a;
        if !f.temb_held {
            g.resnets += b * temb * a;
            f.temb_held = true;
        }
        if mixed_full {
            g.weight_copies += 2.0 * (9.0 * co * ci + 9.0 * co * co + co * temb + if cin != cout { ci * co } else { 0.0 });
        }
    }
}

/// Autocast's fp32 copy of a frozen 16-bit norm weight (LoRA under autocast), saved by the norm.
fn norm_weight_copy(f: &Flow, channels: f64) -> f64 {
    if f.mixed && !f.full() {
        4.0 * channels
    } else {
        0.0
    }
}
