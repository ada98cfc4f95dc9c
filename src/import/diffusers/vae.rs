//! A diffusers `vae/config.json` (`_class_name: "AutoencoderKL"`) → an [`AutoencoderKl`].
//! Missing keys take the defaults of `AutoencoderKL.__init__` (diffusers 0.42.1,
//! `models/autoencoders/autoencoder_kl.py` lines 78–98: 3 → 3 channels, one level of 64
//! channels, one layer per block, 4 latent channels, 32 groups, `sample_size` 32,
//! `force_upcast`, `use_quant_conv`, `use_post_quant_conv` and `mid_block_add_attention` all
//! true).

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::vae::AutoencoderKl;

pub fn read(cfg: &Value) -> Result<AutoencoderKl, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let channels = c.uint_list("block_out_channels", &[64])?;
    for (key, block) in [("down_block_types", "DownEncoderBlock2D"), ("up_block_types", "UpDecoderBlock2D")] {
        let names = c.strings(key)?.unwrap_or_else(|| vec![block]);
        if let Some(other) = names.iter().find(|&&s| s != block) {
            return Err(InputError::new(key, format!("expected \"{block}\" for every level, got \"{other}\"")));
        }
        if names.len() != channels.len() {
            return Err(InputError::new(key, format!("has {} entries, but block_out_channels has {}", names.len(), channels.len())));
        }
    }
    let sample_size = match c.get("sample_size") {
        Some(Value::Array(_)) => c.uint_list("sample_size", &[])?[0],
        _ => c.uint("sample_size", 32)?,
    };
    let vae = AutoencoderKl {
        in_channels: c.uint("in_channels", 3)?,
        out_channels: c.uint("out_channels", 3)?,
        latent_channels: c.uint("latent_channels", 4)?,
        layers_per_block: c.uint("layers_per_block", 1)?,
        norm_num_groups: c.uint("norm_num_groups", 32)?,
        sample_size,
        use_quant_conv: c.flag("use_quant_conv", true)?,
        use_post_quant_conv: c.flag("use_post_quant_conv", true)?,
        mid_block_add_attention: c.flag("mid_block_add_attention", true)?,
        force_upcast: c.flag("force_upcast", true)?,
        channels,
    };
    vae.check()?;
    Ok(vae)
}
