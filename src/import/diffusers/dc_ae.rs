//! A diffusers `vae/config.json` with `_class_name: "AutoencoderDC"` → a [`DcAe`]. Missing
//! keys take the defaults of `AutoencoderDC.__init__` (diffusers 0.42.1,
//! `models/autoencoders/autoencoder_dc.py` lines 433–455: 3 channels, 32 latent channels,
//! head width 32, `ResBlock` everywhere, widths (128, 256, 512, 512, 1024, 1024), encoder
//! layers (2, 2, 2, 3, 3, 3), decoder layers 3 per level, multiscale kernel 5 on the last
//! three levels, pixel (un)shuffle resampling).

use serde_json::Value;

use super::lists::{counts, nested, per_level};
use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::dc_ae::{DcAe, DcSide};

const WIDTHS: [u64; 6] = [128, 256, 512, 512, 1024, 1024];
const SCALES: [&[u64]; 6] = [&[], &[], &[], &[5], &[5], &[5]];

fn side(c: &Keys, side: &str, layers: &[u64]) -> Result<DcSide, InputError> {
    let channels = c.uint_list(&format!("{side}_block_out_channels"), &WIDTHS)?;
    let key = format!("{side}_block_types");
    let types = per_level(c, &key, "ResBlock", channels.len())?;
    let vit = types
        .iter()
        .map(|t| match t.as_str() {
            "ResBlock" => Ok(false),
            "EfficientViTBlock" => Ok(true),
            other => Err(InputError::new(key.as_str(), format!("\"{}\" is not a DC-AE block (ResBlock, EfficientViTBlock)", crate::safe_text::quoted(other)))),
        })
        .collect::<Result<_, _>>()?;
    Ok(DcSide { layers: counts(c, &format!("{side}_layers_per_block"), layers)?, vit, scales: nested(c, &format!("{side}_qkv_multiscales"), &SCALES)?, channels })
}

pub fn read(cfg: &Value) -> Result<DcAe, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let down = c.text("downsample_block_type", "pixel_unshuffle")?;
    let up = c.text("upsample_block_type", "pixel_shuffle")?;
    if !matches!(down.as_str(), "pixel_unshuffle" | "Conv") {
        return Err(InputError::new("downsample_block_type", "must be \"pixel_unshuffle\" or \"Conv\""));
    }
    if !matches!(up.as_str(), "pixel_shuffle" | "interpolate") {
        return Err(InputError::new("upsample_block_type", "must be \"pixel_shuffle\" or \"interpolate\""));
    }
    let vae = DcAe {
        in_channels: c.uint("in_channels", 3)?,
        latent_channels: c.uint("latent_channels", 32)?,
        attention_head_dim: c.uint("attention_head_dim", 32)?,
        encoder: side(&c, "encoder", &[2, 2, 2, 3, 3, 3])?,
        decoder: side(&c, "decoder", &[3, 3, 3, 3, 3, 3])?,
        pixel_unshuffle: down == "pixel_unshuffle",
        interpolate: up == "interpolate",
        in_shortcut: c.flag("decoder_in_shortcut", true)?,
    };
    vae.check()?;
    Ok(vae)
}
