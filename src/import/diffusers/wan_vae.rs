//! A diffusers `vae/config.json` with `_class_name: "AutoencoderKLWan"` → a [`WanVae`].
//! Missing keys take the defaults of `AutoencoderKLWan.__init__` (diffusers 0.42.1,
//! `models/autoencoders/autoencoder_kl_wan.py` lines 980–1030: `base_dim` 96, `z_dim` 16,
//! `dim_mult` [1, 2, 4, 4], `num_res_blocks` 2, no attention scales, `temperal_downsample`
//! [false, true, true], 3 → 3 channels, `is_residual` false, no `patch_size`). Wan 2.2's
//! TI2V-5B VAE sets `is_residual`, `patch_size` 2 and 12 → 12 channels.

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::wan_vae::WanVae;

pub fn read(cfg: &Value) -> Result<WanVae, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let dim_mult = c.uint_list("dim_mult", &[1, 2, 4, 4])?;
    let temporal_downsample = match c.get("temperal_downsample") {
        None => vec![false, true, true],
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_bool().ok_or_else(|| InputError::new("temperal_downsample", format!("every entry must be true or false, got {v}"))))
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(InputError::new("temperal_downsample", format!("must be a list of true/false, got {v}"))),
    };
    let attn_levels = match c.get("attn_scales") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let scales: Vec<f64> =
                items.iter().map(|v| v.as_f64().ok_or_else(|| InputError::new("attn_scales", format!("every entry must be a number, got {v}")))).collect::<Result<_, _>>()?;
            (0..dim_mult.len()).map(|i| scales.contains(&(0.5_f64).powi(i as i32))).collect()
        }
        Some(v) => return Err(InputError::new("attn_scales", format!("must be a list of numbers, got {v}"))),
    };
    let base_dim = c.uint("base_dim", 96)?;
    let vae = WanVae {
        in_channels: c.uint("in_channels", 3)?,
        out_channels: c.uint("out_channels", 3)?,
        base_dim,
        decoder_base_dim: c.uint_or("decoder_base_dim", base_dim)?,
        z_dim: c.uint("z_dim", 16)?,
        num_res_blocks: c.uint("num_res_blocks", 2)?,
        dim_mult,
        temporal_downsample,
        attn_levels,
        is_residual: c.flag("is_residual", false)?,
        patch_size: if c.is_null("patch_size") { 1 } else { c.uint("patch_size", 1)? },
    };
    vae.check()?;
    Ok(vae)
}
