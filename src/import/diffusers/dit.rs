//! A diffusers `transformer/config.json` (`_class_name` `FluxTransformer2DModel`,
//! `SD3Transformer2DModel` or `WanTransformer3DModel`) → a [`Dit`]. Missing keys take the
//! defaults of the class `__init__` in diffusers 0.42.1 (`transformer_flux.py` lines 613–626,
//! `transformer_sd3.py` lines 120–137, `transformer_wan.py` lines 572–590); unknown keys
//! (`_diffusers_version`, `sample_size`, `axes_dims_rope`, `eps`, …) do not change a tensor and
//! are ignored.

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::dit::Dit;
use crate::model::diffusion::mmdit::{Flux, QkNorm, Sd3};
use crate::model::diffusion::video::Wan;

/// The diffusion-transformer classes this reader builds.
pub const CLASSES: [&str; 3] = ["FluxTransformer2DModel", "SD3Transformer2DModel", "WanTransformer3DModel"];

/// Whether a config's `_class_name` is one this reader builds.
pub fn reads(cfg: &Value) -> bool {
    cfg.get("_class_name").and_then(Value::as_str).is_some_and(|c| CLASSES.contains(&c))
}

pub fn read(cfg: &Value) -> Result<Dit, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let class = c.text("_class_name", "")?;
    let dit = match class.as_str() {
        "FluxTransformer2DModel" => {
            let in_channels = c.uint("in_channels", 64)?;
            Dit::Flux(Flux {
                patch_size: c.uint("patch_size", 1)?,
                in_channels,
                out_channels: c.uint_or("out_channels", in_channels)?,
                layers: c.uint("num_layers", 19)?,
                single_layers: c.uint("num_single_layers", 38)?,
                heads: c.uint("num_attention_heads", 24)?,
                head_dim: c.uint("attention_head_dim", 128)?,
                joint_attention_dim: c.uint("joint_attention_dim", 4096)?,
                pooled_projection_dim: c.uint("pooled_projection_dim", 768)?,
                guidance_embeds: c.flag("guidance_embeds", false)?,
            })
        }
        "SD3Transformer2DModel" => {
            let in_channels = c.uint("in_channels", 16)?;
            Dit::Sd3(Sd3 {
                patch_size: c.uint("patch_size", 2)?,
                in_channels,
                out_channels: c.uint_or("out_channels", in_channels)?,
                layers: c.uint("num_layers", 18)?,
                heads: c.uint("num_attention_heads", 18)?,
                head_dim: c.uint("attention_head_dim", 64)?,
                joint_attention_dim: c.uint("joint_attention_dim", 4096)?,
                caption_projection_dim: c.uint("caption_projection_dim", 1152)?,
                pooled_projection_dim: c.uint("pooled_projection_dim", 2048)?,
                pos_embed_max_size: c.uint("pos_embed_max_size", 96)?,
                dual_attention_layers: indices(&c, "dual_attention_layers")?,
                qk_norm: match c.get("qk_norm") {
                    None => QkNorm::None,
                    Some(Value::String(s)) if s == "rms_norm" => QkNorm::RmsNorm,
                    Some(Value::String(s)) if s == "layer_norm" => QkNorm::LayerNorm,
                    Some(v) => return Err(InputError::new("qk_norm", format!("expected null, \"rms_norm\" or \"layer_norm\", got {v}"))),
                },
            })
        }
        "WanTransformer3DModel" => {
            let in_channels = c.uint("in_channels", 16)?;
            let patch = c.uint_list("patch_size", &[1, 2, 2])?;
            let patch_size: [u64; 3] =
                patch.try_into().map_err(|p: Vec<u64>| InputError::new("patch_size", format!("must be [frames, height, width], got {} entries", p.len())))?;
            match c.get("qk_norm") {
                None => {}
                Some(Value::String(s)) if s == "rms_norm_across_heads" => {}
                Some(v) => return Err(InputError::new("qk_norm", format!("only \"rms_norm_across_heads\" is built, got {v}"))),
            }
            Dit::Wan(Wan {
                patch_size,
                heads: c.uint("num_attention_heads", 40)?,
                head_dim: c.uint("attention_head_dim", 128)?,
                in_channels,
                out_channels: c.uint_or("out_channels", in_channels)?,
                text_dim: c.uint("text_dim", 4096)?,
                freq_dim: c.uint("freq_dim", 256)?,
                ffn_dim: c.uint("ffn_dim", 13824)?,
                layers: c.uint("num_layers", 40)?,
                cross_attn_norm: c.flag("cross_attn_norm", true)?,
                image_dim: c.optional_uint("image_dim")?,
                added_kv_proj_dim: c.optional_uint("added_kv_proj_dim")?,
                pos_embed_seq_len: c.optional_uint("pos_embed_seq_len")?,
            })
        }
        other => return Err(InputError::new("_class_name", format!("expected one of {}, got \"{other}\"", CLASSES.join(", ")))),
    };
    dit.check()?;
    Ok(dit)
}

/// A list of block indices (`dual_attention_layers`: may be empty, may hold 0); absent → none.
fn indices(c: &Keys, key: &str) -> Result<Vec<u64>, InputError> {
    match c.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= 1024 => {
            items.iter().map(|v| v.as_u64().filter(|&n| n < 1 << 20).ok_or_else(|| InputError::new(key, format!("every entry must be a block index, got {v}")))).collect()
        }
        Some(v) => Err(InputError::new(key, format!("must be a list of block indices, got {v}"))),
    }
}
