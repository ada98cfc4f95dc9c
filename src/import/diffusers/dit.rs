//! A diffusers `transformer/config.json` (`_class_name` `FluxTransformer2DModel`,
//! `SD3Transformer2DModel`, `WanTransformer3DModel`, `HunyuanVideoTransformer3DModel`,
//! `CogVideoXTransformer3DModel`, `LTXVideoTransformer3DModel`, `SanaTransformer2DModel`,
//! `PixArtTransformer2DModel`) → a
//! [`Dit`]. Missing keys take the defaults of the class `__init__` in diffusers 0.42.1
//! (`transformer_flux.py` lines 613–626, `transformer_sd3.py` lines 120–137,
//! `transformer_wan.py` lines 572–590, `transformer_hunyuan_video.py` lines 904–922,
//! `cogvideox_transformer_3d.py` lines 220–250, `transformer_ltx.py` lines 430–447,
//! `sana_transformer.py` lines 340–364, `pixart_transformer_2d.py` lines 85–125); unknown keys
//! (`_diffusers_version`, `sample_size`, `axes_dims_rope`, `eps`, …) do not change a tensor and
//! are ignored.

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::cogvideox::CogVideoX;
use crate::model::diffusion::dit::Dit;
use crate::model::diffusion::hunyuan_video::HunyuanVideo;
use crate::model::diffusion::ltx_video::LtxVideo;
use crate::model::diffusion::mmdit::Flux;
use crate::model::diffusion::pixart::PixArt;
use crate::model::diffusion::sana::Sana;
use crate::model::diffusion::sd3::{QkNorm, Sd3};
use crate::model::diffusion::video::Wan;

/// The diffusion-transformer classes this reader builds.
pub const CLASSES: [&str; 8] = [
    "FluxTransformer2DModel", "SD3Transformer2DModel", "WanTransformer3DModel", "HunyuanVideoTransformer3DModel", "CogVideoXTransformer3DModel", "LTXVideoTransformer3DModel",
    "SanaTransformer2DModel", "PixArtTransformer2DModel",
];

/// Whether a config's `_class_name` is one this reader builds.
pub fn reads(cfg: &Value) -> bool {
    cfg.get("_class_name").and_then(Value::as_str).is_some_and(|c| CLASSES.contains(&c))
}

// long: one arm per diffusers class (eight), each reading that class's `__init__` keys with their defaults in the class's order, so each arm can be checked against its source line by line.
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
                out_channels: out_channels(&c, None, in_channels)?,
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
                out_channels: out_channels(&c, Some(16), in_channels)?,
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
                out_channels: out_channels(&c, Some(16), in_channels)?,
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
        "HunyuanVideoTransformer3DModel" => {
            let in_channels = c.uint("in_channels", 16)?;
            let (heads, head_dim) = (c.uint("num_attention_heads", 24)?, c.uint("attention_head_dim", 128)?);
            match c.get("image_condition_type") {
                None => {}
                Some(Value::String(s)) if s == "latent_concat" => {}
                Some(v) => return Err(InputError::new("image_condition_type", format!("only null and \"latent_concat\" are built, got {v}"))),
            }
            Dit::HunyuanVideo(HunyuanVideo {
                in_channels,
                out_channels: out_channels(&c, Some(16), in_channels)?,
                heads,
                head_dim,
                layers: c.uint("num_layers", 20)?,
                single_layers: c.uint("num_single_layers", 40)?,
                refiner_layers: c.count("num_refiner_layers", 2)?,
                mlp_width: ratio(&c, "mlp_ratio", 4.0, heads * head_dim)?,
                patch_size: c.uint("patch_size", 2)?,
                patch_size_t: c.uint("patch_size_t", 1)?,
                qk_norm: match c.get("qk_norm") {
                    None => !c.is_null("qk_norm"),
                    Some(Value::String(s)) if s == "rms_norm" => true,
                    Some(v) => return Err(InputError::new("qk_norm", format!("expected \"rms_norm\" or null, got {v}"))),
                },
                guidance_embeds: c.flag("guidance_embeds", true)?,
                text_embed_dim: c.uint("text_embed_dim", 4096)?,
                pooled_projection_dim: c.uint("pooled_projection_dim", 768)?,
            })
        }
        "CogVideoXTransformer3DModel" => {
            let in_channels = c.uint("in_channels", 16)?;
            let activation = c.text("activation_fn", "gelu-approximate")?;
            if activation != "gelu-approximate" && activation != "gelu" {
                return Err(InputError::new("activation_fn", format!("only \"gelu-approximate\" and \"gelu\" are built, got \"{activation}\"")));
            }
            Dit::CogVideoX(CogVideoX {
                heads: c.uint("num_attention_heads", 30)?,
                head_dim: c.uint("attention_head_dim", 64)?,
                in_channels,
                out_channels: c.uint("out_channels", 16)?,
                time_embed_dim: c.uint("time_embed_dim", 512)?,
                text_embed_dim: c.uint("text_embed_dim", 4096)?,
                layers: c.uint("num_layers", 30)?,
                patch_size: c.uint("patch_size", 2)?,
                patch_size_t: c.optional_uint("patch_size_t")?,
                attention_bias: c.flag("attention_bias", true)?,
                affine: c.flag("norm_elementwise_affine", true)?,
                patch_bias: c.flag("patch_bias", true)?,
                ofs_embed_dim: c.optional_uint("ofs_embed_dim")?,
                rope: c.flag("use_rotary_positional_embeddings", false)?,
            })
        }
        "LTXVideoTransformer3DModel" => {
            let in_channels = c.uint("in_channels", 128)?;
            for (key, only) in [("activation_fn", "gelu-approximate"), ("qk_norm", "rms_norm_across_heads")] {
                let v = c.text(key, only)?;
                if v != only {
                    return Err(InputError::new(key, format!("only \"{only}\" is built, got \"{v}\"")));
                }
            }
            if c.flag("norm_elementwise_affine", false)? {
                return Err(InputError::new("norm_elementwise_affine", "only false (the released models) is built"));
            }
            Dit::LtxVideo(LtxVideo {
                in_channels,
                patch_size: c.uint("patch_size", 1)?,
                out_channels: out_channels(&c, Some(128), in_channels)?,
                heads: c.uint("num_attention_heads", 32)?,
                head_dim: c.uint("attention_head_dim", 64)?,
                cross_attention_dim: c.uint("cross_attention_dim", 2048)?,
                layers: c.uint("num_layers", 28)?,
                caption_channels: c.uint("caption_channels", 4096)?,
                attention_bias: c.flag("attention_bias", true)?,
                attention_out_bias: c.flag("attention_out_bias", true)?,
            })
        }
        "SanaTransformer2DModel" => {
            let in_channels = c.uint("in_channels", 32)?;
            let (heads, head_dim) = (c.uint("num_attention_heads", 70)?, c.uint("attention_head_dim", 32)?);
            Dit::Sana(Sana {
                in_channels,
                out_channels: out_channels(&c, Some(32), in_channels)?,
                heads,
                head_dim,
                layers: c.uint("num_layers", 20)?,
                cross_heads: c.uint("num_cross_attention_heads", 20)?,
                cross_head_dim: c.uint("cross_attention_head_dim", 112)?,
                cross_attention_dim: if c.is_null("cross_attention_dim") { None } else { Some(c.uint("cross_attention_dim", 2240)?) },
                caption_channels: c.uint("caption_channels", 2304)?,
                mlp_width: ratio(&c, "mlp_ratio", 2.5, heads * head_dim)?,
                attention_bias: c.flag("attention_bias", false)?,
                patch_size: c.uint("patch_size", 1)?,
                affine: c.flag("norm_elementwise_affine", false)?,
                guidance_embeds: c.flag("guidance_embeds", false)?,
                qk_norm: match c.get("qk_norm") {
                    None => false,
                    Some(Value::String(s)) if s == "rms_norm_across_heads" => true,
                    Some(v) => return Err(InputError::new("qk_norm", format!("expected null or \"rms_norm_across_heads\", got {v}"))),
                },
            })
        }
        "PixArtTransformer2DModel" => {
            let in_channels = c.uint("in_channels", 4)?;
            for (key, only) in [("norm_type", "ada_norm_single"), ("activation_fn", "gelu-approximate"), ("attention_type", "default")] {
                let v = c.text(key, only)?;
                if v != only {
                    return Err(InputError::new(key, format!("only \"{only}\" is built, got \"{v}\"")));
                }
            }
            if c.flag("norm_elementwise_affine", false)? {
                return Err(InputError::new("norm_elementwise_affine", "only false (the released models) is built"));
            }
            let sample_size = c.uint("sample_size", 128)?;
            Dit::PixArt(PixArt {
                heads: c.uint("num_attention_heads", 16)?,
                head_dim: c.uint("attention_head_dim", 72)?,
                in_channels,
                out_channels: out_channels(&c, Some(8), in_channels)?,
                layers: c.uint("num_layers", 28)?,
                cross_attention_dim: c.uint("cross_attention_dim", 1152)?,
                attention_bias: c.flag("attention_bias", true)?,
                patch_size: c.uint("patch_size", 2)?,
                // `use_additional_conditions: None` means `sample_size == 128`
                additional_conditions: if c.has("use_additional_conditions") { c.flag("use_additional_conditions", false)? } else { sample_size == 128 },
                caption_channels: c.optional_uint("caption_channels")?,
            })
        }
        other => return Err(InputError::new("_class_name", format!("expected one of {}, got \"{other}\"", CLASSES.join(", ")))),
    };
    dit.check()?;
    Ok(dit)
}

/// `out_channels`: absent → the class default (`None`: Flux's, which is `in_channels`); `null`
/// → `in_channels` (every class does `out_channels or in_channels`).
fn out_channels(c: &Keys, default: Option<u64>, in_channels: u64) -> Result<u64, InputError> {
    match default {
        Some(d) if !c.is_null("out_channels") => c.uint("out_channels", d),
        _ => c.uint_or("out_channels", in_channels),
    }
}

/// `int(width × ratio)` for a feed-forward ratio key (Python's truncation).
fn ratio(c: &Keys, key: &str, default: f64, width: u64) -> Result<u64, InputError> {
    let r = c.number(key, default)?;
    if !(r > 0.0 && r <= 64.0) {
        return Err(InputError::new(key, format!("must be between 0 and 64, got {r}")));
    }
    Ok((width as f64 * r) as u64)
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
