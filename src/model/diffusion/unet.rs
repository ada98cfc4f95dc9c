//! `UNet2DConditionModel`, the denoiser of Stable Diffusion 1.x/2.x and SDXL, as diffusers
//! 0.42.1 builds it (`models/unets/unet_2d_condition.py` `UNet2DConditionModel.__init__`,
//! lines 178–560: `conv_in`, the sinusoidal `time_proj` + `TimestepEmbedding`, SDXL's
//! `add_embedding` for `addition_embed_type: "text_time"`, the down blocks, the mid block, the
//! up blocks with one more resnet per level than the down blocks and the skip channels of
//! `CrossAttnUpBlock2D`/`UpBlock2D` (`models/unets/unet_2d_blocks.py`), `conv_norm_out`,
//! `conv_out`).
//!
//! The model is a walk of [`UNetOp`]s in forward order; the parameters, what a training
//! forward saves and the no-grad working set all read the same walk. Its parts:
//! - `ResnetBlock2D` (`models/resnet.py`): GroupNorm → SiLU → 3×3 conv, the time embedding's
//!   SiLU → `time_emb_proj` added, GroupNorm → SiLU → dropout → 3×3 conv, a 1×1
//!   `conv_shortcut` when the channels change, the residual sum.
//! - `Transformer2DModel` (`models/transformers/transformer_2d.py`, continuous input,
//!   `_init_continuous_input` lines 175–210): GroupNorm (eps 1e-6), `proj_in` (1×1 conv, or a
//!   linear with `use_linear_projection`), `transformer_layers_per_block` ×
//!   `BasicTransformerBlock` (`models/attention.py`: LayerNorm → self-attention `attn1`,
//!   LayerNorm → cross-attention `attn2` on the text, LayerNorm → GEGLU feed-forward with 4×
//!   width), `proj_out`, the residual sum. Heads: `attention_head_dim` is the number of heads
//!   (diffusers' naming issue #2011, lines 247–258), each `channels / heads` wide.
//! - `Downsample2D` (3×3 conv, stride 2) and `Upsample2D` (nearest ×2, 3×3 conv).

use serde::{Deserialize, Serialize};

use crate::error::InputError;
use crate::model::arch::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};

/// One down or up level: plain resnets (`DownBlock2D`/`UpBlock2D`) or resnets each followed
/// by a transformer (`CrossAttnDownBlock2D`/`CrossAttnUpBlock2D`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LevelKind {
    Plain,
    CrossAttn,
}

/// SDXL's extra conditioning (`addition_embed_type: "text_time"`): the pooled text
/// embedding and six size/crop numbers, each number sinusoidally embedded to
/// `addition_time_embed_dim`, concatenated and projected by a `TimestepEmbedding`
/// (`_set_add_embedding`, `unet_2d_condition.py`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextTime {
    /// `addition_time_embed_dim` (256 in SDXL).
    pub time_dim: u64,
    /// `projection_class_embeddings_input_dim` (2816 in SDXL: 1280 pooled + 6 × 256).
    pub input_dim: u64,
}

/// A `UNet2DConditionModel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UNet2D {
    pub in_channels: u64,
    pub out_channels: u64,
    /// `block_out_channels`, one per level.
    pub channels: Vec<u64>,
    /// `down_block_types`, one per level.
    pub down: Vec<LevelKind>,
    /// `up_block_types`, one per level, deepest first.
    pub up: Vec<LevelKind>,
    /// `layers_per_block`, per level (the up levels have one more).
    pub layers: Vec<u64>,
    /// `transformer_layers_per_block`, per level.
    pub transformer_layers: Vec<u64>,
    /// Heads per level (`num_attention_heads`, else `attention_head_dim`).
    pub heads: Vec<u64>,
    /// `cross_attention_dim`: the width of the text embeddings.
    pub cross_attention_dim: u64,
    pub use_linear_projection: bool,
    /// `mid_block_type` is `UNetMidBlock2DCrossAttn` (true) or `null`.
    pub mid_block: bool,
    pub norm_num_groups: u64,
    pub conv_in_kernel: u64,
    pub conv_out_kernel: u64,
    #[serde(default)]
    pub text_time: Option<TextTime>,
}

/// One module of the forward walk, at its level (spatial size ÷ 2^level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UNetOp {
    /// `conv_in`: `in_channels` → `channels[0]`.
    ConvIn { cin: u64, cout: u64, kernel: u64 },
    /// A `ResnetBlock2D` (`cin` includes a concatenated skip on the way up).
    Resnet { level: u32, cin: u64, cout: u64 },
    /// A `Transformer2DModel` of `layers` blocks over `channels` with `heads` heads.
    Transformer { level: u32, channels: u64, heads: u64, layers: u64 },
    /// `Downsample2D`: stride-2 conv at `level` (its output is at `level + 1`).
    Downsample { level: u32, channels: u64 },
    /// `Upsample2D`: nearest ×2 from `level` then conv at `level - 1`.
    Upsample { level: u32, channels: u64 },
    /// `conv_norm_out` → SiLU → `conv_out`.
    ConvOut { cin: u64, cout: u64, kernel: u64 },
}

impl UNet2D {
    pub fn check(&self) -> Result<(), InputError> {
        check_dim("in_channels", self.in_channels)?;
        check_dim("out_channels", self.out_channels)?;
        check_dim("cross_attention_dim", self.cross_attention_dim)?;
        check_dim("norm_num_groups", self.norm_num_groups)?;
        let n = self.channels.len();
        if n == 0 {
            return Err(InputError::new("block_out_channels", "needs at least one level"));
        }
        for (field, len) in [
            ("down_block_types", self.down.len()),
            ("up_block_types", self.up.len()),
            ("layers_per_block", self.layers.len()),
            ("transformer_layers_per_block", self.transformer_layers.len()),
            ("attention_head_dim", self.heads.len()),
        ] {
            if len != n {
                return Err(InputError::new(field, format!("has {len} entries, but block_out_channels has {n}")));
            }
        }
        super::check_blocks("block_out_channels", n as u64)?;
        for &l in &self.layers {
            super::check_blocks("layers_per_block", l)?;
        }
        for &l in &self.transformer_layers {
            super::check_blocks("transformer_layers_per_block", l)?;
        }
        for &c in &self.channels {
            check_dim("block_out_channels", c)?;
            if !c.is_multiple_of(self.norm_num_groups) {
                return Err(InputError::new("block_out_channels", format!("{c} channels do not split into norm_num_groups = {} groups", self.norm_num_groups)));
            }
        }
        for (i, &h) in self.heads.iter().enumerate() {
            check_dim("attention_head_dim", h)?;
            let c = self.channels[i];
            if !c.is_multiple_of(h) {
                return Err(InputError::new("attention_head_dim", format!("{c} channels do not split into {h} heads")));
            }
        }
        for k in [self.conv_in_kernel, self.conv_out_kernel] {
            if k % 2 == 0 || k > 15 {
                return Err(InputError::new("conv_in_kernel", format!("kernel sizes must be odd and at most 15, got {k}")));
            }
        }
        if let Some(t) = self.text_time {
            check_dim("addition_time_embed_dim", t.time_dim)?;
            check_dim("projection_class_embeddings_input_dim", t.input_dim)?;
        }
        Ok(())
    }

    /// Channels of the latent it takes.
    pub fn in_channels(&self) -> u64 {
        self.in_channels
    }

    /// A UNet works on latent pixels: no patches.
    pub fn patch_size(&self) -> u64 {
        1
    }

    /// The width of the text embeddings it attends to.
    pub fn text_width(&self) -> u64 {
        self.cross_attention_dim
    }

    /// Levels below the input resolution (the latent must divide by 2^this).
    pub fn downsamplings(&self) -> u32 {
        self.channels.len() as u32 - 1
    }

    /// `time_embed_dim`: 4 × `block_out_channels[0]` (`_set_time_proj`, positional).
    pub fn time_embed_dim(&self) -> u64 {
        4 * self.channels[0]
    }

    /// The modules of one forward, in order (`UNet2DConditionModel.forward`, the blocks'
    /// `__init__` for their channels: `get_down_block`/`get_up_block` in `unet_2d_blocks.py`).
    pub fn walk(&self) -> Vec<UNetOp> {
        let n = self.channels.len();
        let mut ops = vec![UNetOp::ConvIn { cin: self.in_channels, cout: self.channels[0], kernel: self.conv_in_kernel }];
        let mut prev = self.channels[0];
        for i in 0..n {
            let (level, c) = (i as u32, self.channels[i]);
            for l in 0..self.layers[i] {
                ops.push(UNetOp::Resnet { level, cin: if l == 0 { prev } else { c }, cout: c });
                if self.down[i] == LevelKind::CrossAttn {
                    ops.push(UNetOp::Transformer { level, channels: c, heads: self.heads[i], layers: self.transformer_layers[i] });
                }
            }
            if i + 1 < n {
                ops.push(UNetOp::Downsample { level, channels: c });
            }
            prev = c;
        }
        let deepest = (n - 1) as u32;
        if self.mid_block {
            let c = self.channels[n - 1];
            ops.push(UNetOp::Resnet { level: deepest, cin: c, cout: c });
            ops.push(UNetOp::Transformer { level: deepest, channels: c, heads: self.heads[n - 1], layers: self.transformer_layers[n - 1] });
            ops.push(UNetOp::Resnet { level: deepest, cin: c, cout: c });
        }
        // Up level i works at level n-1-i on reversed channels; its last resnet takes the
        // skip of the level above's input (`res_skip_channels`, CrossAttnUpBlock2D.__init__).
        let mut prev_out = self.channels[n - 1];
        for i in 0..n {
            let level = (n - 1 - i) as u32;
            let out = self.channels[n - 1 - i];
            let input = self.channels[(n - 1).saturating_sub(i + 1)];
            let layers = self.layers[n - 1 - i] + 1;
            for l in 0..layers {
                let skip = if l == layers - 1 { input } else { out };
                let cin = if l == 0 { prev_out } else { out };
                ops.push(UNetOp::Resnet { level, cin: cin + skip, cout: out });
                if self.up[i] == LevelKind::CrossAttn {
                    ops.push(UNetOp::Transformer { level, channels: out, heads: self.heads[n - 1 - i], layers: self.transformer_layers[n - 1 - i] });
                }
            }
            if i + 1 < n {
                ops.push(UNetOp::Upsample { level, channels: out });
            }
            prev_out = out;
        }
        ops.push(UNetOp::ConvOut { cin: self.channels[0], cout: self.out_channels, kernel: self.conv_out_kernel });
        ops
    }

    /// Every parameter tensor, in [`Scope::Layer`] (a diffusion denoiser reports one block:
    /// the whole model is listed once).
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let s = Scope::Layer;
        let r = TpSplit::Replicated;
        let (c0, temb) = (self.channels[0], self.time_embed_dim());
        let mut out = vec![
            ParamTensor::new("unet time embedding linear_1", &[temb, c0], s, r),
            ParamTensor::vector("unet time embedding bias", temb, s, r),
            ParamTensor::new("unet time embedding linear_2", &[temb, temb], s, r),
            ParamTensor::vector("unet time embedding bias", temb, s, r),
        ];
        if let Some(t) = self.text_time {
            out.push(ParamTensor::new("unet add embedding linear_1", &[temb, t.input_dim], s, r));
            out.push(ParamTensor::vector("unet add embedding bias", temb, s, r));
            out.push(ParamTensor::new("unet add embedding linear_2", &[temb, temb], s, r));
            out.push(ParamTensor::vector("unet add embedding bias", temb, s, r));
        }
        for op in self.walk() {
            match op {
                UNetOp::ConvIn { cin, cout, kernel } => conv(&mut out, "unet conv_in", cin, cout, kernel, s),
                UNetOp::Resnet { cin, cout, .. } => resnet_params(&mut out, cin, cout, Some(temb), s),
                UNetOp::Transformer { channels, layers, .. } => self.transformer_params(&mut out, channels, layers),
                UNetOp::Downsample { channels, .. } => conv(&mut out, "unet downsampler conv", channels, channels, 3, s),
                UNetOp::Upsample { channels, .. } => conv(&mut out, "unet upsampler conv", channels, channels, 3, s),
                UNetOp::ConvOut { cin, cout, kernel } => {
                    out.push(ParamTensor::new("unet conv_norm_out", &[2, cin], s, r));
                    conv(&mut out, "unet conv_out", cin, cout, kernel, s);
                }
            }
        }
        out
    }

    /// Parameters, as `sum(p.numel())` over the module.
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(ParamTensor::numel).sum()
    }

    /// A `Transformer2DModel`'s tensors: `c` channels in and out, `inner = c` wide inside.
    fn transformer_params(&self, out: &mut Vec<ParamTensor>, c: u64, layers: u64) {
        let (s, r, x) = (Scope::Layer, TpSplit::Replicated, self.cross_attention_dim);
        out.push(ParamTensor::new("unet transformer group norm", &[2, c], s, r));
        if self.use_linear_projection {
            out.push(ParamTensor::new("unet transformer proj_in", &[c, c], s, r));
            out.push(ParamTensor::new("unet transformer proj_out", &[c, c], s, r));
        } else {
            out.push(ParamTensor::new("unet transformer proj_in", &[c, c, 1, 1], s, r));
            out.push(ParamTensor::new("unet transformer proj_out", &[c, c, 1, 1], s, r));
        }
        out.push(ParamTensor::new("unet transformer proj biases", &[2, c], s, r));
        for _ in 0..layers {
            out.push(ParamTensor::new("unet transformer layer norms", &[6, c], s, r));
            out.push(ParamTensor::linear("unet attn1 to_q", &[LinearKind::Q], c, c, s));
            out.push(ParamTensor::linear("unet attn1 to_k", &[LinearKind::K], c, c, s));
            out.push(ParamTensor::linear("unet attn1 to_v", &[LinearKind::V], c, c, s));
            out.push(ParamTensor::linear("unet attn1 to_out.0", &[LinearKind::O], c, c, s));
            out.push(ParamTensor::vector("unet attn1 to_out.0 bias", c, s, r));
            out.push(ParamTensor::linear("unet attn2 to_q", &[LinearKind::Q], c, c, s));
            out.push(ParamTensor::linear("unet attn2 to_k", &[LinearKind::K], c, x, s));
            out.push(ParamTensor::linear("unet attn2 to_v", &[LinearKind::V], c, x, s));
            out.push(ParamTensor::linear("unet attn2 to_out.0", &[LinearKind::O], c, c, s));
            out.push(ParamTensor::vector("unet attn2 to_out.0 bias", c, s, r));
            out.push(ParamTensor::linear("unet ff.net.0.proj", &[LinearKind::Up], 8 * c, c, s));
            out.push(ParamTensor::vector("unet ff.net.0.proj bias", 8 * c, s, r));
            out.push(ParamTensor::linear("unet ff.net.2", &[LinearKind::Down], c, 4 * c, s));
            out.push(ParamTensor::vector("unet ff.net.2 bias", c, s, r));
        }
    }
}

/// A conv's weight `[cout, cin, k, k]` and bias.
pub(crate) fn conv(out: &mut Vec<ParamTensor>, name: &'static str, cin: u64, cout: u64, k: u64, s: Scope) {
    out.push(ParamTensor::new(name, &[cout, cin, k, k], s, TpSplit::Replicated));
    out.push(ParamTensor::vector(name, cout, s, TpSplit::Replicated));
}

/// A `ResnetBlock2D`'s tensors (`models/resnet.py` `ResnetBlock2D.__init__`): two GroupNorms,
/// two 3×3 convs, `time_emb_proj` when it takes a time embedding (the UNet's; the VAE's
/// have none), a 1×1 `conv_shortcut` when `cin != cout`.
pub(crate) fn resnet_params(out: &mut Vec<ParamTensor>, cin: u64, cout: u64, temb: Option<u64>, s: Scope) {
    let r = TpSplit::Replicated;
    out.push(ParamTensor::new("resnet norm1", &[2, cin], s, r));
    conv(out, "resnet conv1", cin, cout, 3, s);
    if let Some(t) = temb {
        out.push(ParamTensor::new("resnet time_emb_proj", &[cout, t], s, r));
        out.push(ParamTensor::vector("resnet time_emb_proj bias", cout, s, r));
    }
    out.push(ParamTensor::new("resnet norm2", &[2, cout], s, r));
    conv(out, "resnet conv2", cout, cout, 3, s);
    if cin != cout {
        conv(out, "resnet conv_shortcut", cin, cout, 1, s);
    }
}
