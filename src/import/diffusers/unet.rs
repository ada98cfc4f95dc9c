//! A diffusers `unet/config.json` (`_class_name: "UNet2DConditionModel"`) → a [`UNet2D`].
//! Missing keys take the defaults of `UNet2DConditionModel.__init__` (diffusers 0.42.1,
//! `models/unets/unet_2d_condition.py` lines 178–238: 4 → 4 channels, levels
//! `(320, 640, 1280, 1280)` with `CrossAttnDownBlock2D` ×3 + `DownBlock2D`, two layers per
//! block, one transformer layer, `attention_head_dim` 8 (the number of heads, lines 247–258),
//! `cross_attention_dim` 1280, 32 groups, 3×3 `conv_in`/`conv_out`). Options that add modules
//! Headroom does not build (class embeddings, `encoder_hid_proj`, dual cross-attention, GLIGEN,
//! Fourier time embeddings, scale-shift resnets) are refused, naming the key.

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::unet::{LevelKind, TextTime, UNet2D};

const DOWN: [&str; 4] = ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"];
const UP: [&str; 4] = ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"];

pub fn read(cfg: &Value) -> Result<UNet2D, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    for key in
        ["class_embed_type", "num_class_embeds", "encoder_hid_dim_type", "time_cond_proj_dim", "time_embedding_dim", "reverse_transformer_layers_per_block", "num_attention_heads"]
    {
        if c.get(key).is_some() {
            return Err(InputError::new(key, "Headroom builds UNet2DConditionModel without this option (it must be null)"));
        }
    }
    for key in ["dual_cross_attention", "class_embeddings_concat"] {
        if c.flag(key, false)? {
            return Err(InputError::new(key, "Headroom builds UNet2DConditionModel without this option (it must be false)"));
        }
    }
    if c.get("only_cross_attention").is_some_and(|v| v != &Value::Bool(false)) {
        return Err(InputError::new("only_cross_attention", "Headroom builds UNet2DConditionModel with self- and cross-attention only (it must be false)"));
    }
    for (key, want) in [("time_embedding_type", "positional"), ("resnet_time_scale_shift", "default"), ("attention_type", "default")] {
        let got = c.text(key, want)?;
        if got != want {
            return Err(InputError::new(key, format!("only \"{want}\" is supported, got \"{got}\"")));
        }
    }
    let channels = c.uint_list("block_out_channels", &[320, 640, 1280, 1280])?;
    let n = channels.len();
    let down = kinds(&c, "down_block_types", &DOWN, "CrossAttnDownBlock2D", "DownBlock2D")?;
    let up = kinds(&c, "up_block_types", &UP, "CrossAttnUpBlock2D", "UpBlock2D")?;
    let mid_block = match c.get("mid_block_type") {
        None if c.is_null("mid_block_type") => false,
        None => true,
        Some(Value::String(s)) if s == "UNetMidBlock2DCrossAttn" => true,
        Some(v) => return Err(InputError::new("mid_block_type", format!("expected \"UNetMidBlock2DCrossAttn\" or null, got {v}"))),
    };
    if c.is_null("norm_num_groups") {
        return Err(InputError::new("norm_num_groups", "Headroom builds UNet2DConditionModel with GroupNorm (it must be a number)"));
    }
    let text_time = match c.get("addition_embed_type") {
        None => None,
        Some(Value::String(s)) if s == "text_time" => Some(TextTime {
            time_dim: c.optional_uint("addition_time_embed_dim")?.ok_or_else(|| InputError::new("addition_time_embed_dim", "is needed with addition_embed_type \"text_time\""))?,
            input_dim: c
                .optional_uint("projection_class_embeddings_input_dim")?
                .ok_or_else(|| InputError::new("projection_class_embeddings_input_dim", "is needed with addition_embed_type \"text_time\""))?,
        }),
        Some(v) => return Err(InputError::new("addition_embed_type", format!("only \"text_time\" (SDXL) or null is supported, got {v}"))),
    };
    let cross = match c.get("cross_attention_dim") {
        Some(Value::Array(_)) => {
            let dims = c.uint_list("cross_attention_dim", &[])?;
            if dims.windows(2).any(|w| w[0] != w[1]) {
                return Err(InputError::new("cross_attention_dim", "different widths per level are not supported"));
            }
            dims[0]
        }
        _ => c.uint("cross_attention_dim", 1280)?,
    };
    let unet = UNet2D {
        in_channels: c.uint("in_channels", 4)?,
        out_channels: c.uint("out_channels", 4)?,
        down,
        up,
        layers: per_level(&c, "layers_per_block", 2, n)?,
        transformer_layers: per_level(&c, "transformer_layers_per_block", 1, n)?,
        heads: per_level(&c, "attention_head_dim", 8, n)?,
        cross_attention_dim: cross,
        use_linear_projection: c.flag("use_linear_projection", false)?,
        mid_block,
        norm_num_groups: c.uint("norm_num_groups", 32)?,
        conv_in_kernel: c.uint("conv_in_kernel", 3)?,
        conv_out_kernel: c.uint("conv_out_kernel", 3)?,
        text_time,
        channels,
    };
    unet.check()?;
    Ok(unet)
}

/// A key that is one number for every level or a list of one per level.
pub(crate) fn per_level(c: &Keys, key: &str, default: u64, n: usize) -> Result<Vec<u64>, InputError> {
    match c.get(key) {
        Some(Value::Array(_)) => c.uint_list(key, &[]),
        _ => Ok(vec![c.uint(key, default)?; n]),
    }
}

/// `down_block_types` / `up_block_types`: each the cross-attention or the plain block.
fn kinds(c: &Keys, key: &str, default: &[&str], cross: &str, plain: &str) -> Result<Vec<LevelKind>, InputError> {
    let names = c.strings(key)?.unwrap_or_else(|| default.to_vec());
    names
        .iter()
        .map(|&s| match s {
            s if s == cross => Ok(LevelKind::CrossAttn),
            s if s == plain => Ok(LevelKind::Plain),
            s => Err(InputError::new(key, format!("expected \"{cross}\" or \"{plain}\", got \"{s}\""))),
        })
        .collect()
}
