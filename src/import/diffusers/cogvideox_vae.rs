//! A diffusers `vae/config.json` with `_class_name: "AutoencoderKLCogVideoX"` → a
//! [`CogVideoXVae`]. Missing keys take the defaults of `AutoencoderKLCogVideoX.__init__`
//! (diffusers 0.42.1, `models/autoencoders/autoencoder_kl_cogvideox.py` lines 991–1027:
//! 3 → 3 channels, `block_out_channels` (128, 256, 256, 512), 3 layers per block, 16 latent
//! channels, 32 groups, temporal ratio 4, no quant convs).

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::cogvideox_vae::CogVideoXVae;

pub fn read(cfg: &Value) -> Result<CogVideoXVae, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let channels = c.uint_list("block_out_channels", &[128, 256, 256, 512])?;
    for (key, block) in [("down_block_types", "CogVideoXDownBlock3D"), ("up_block_types", "CogVideoXUpBlock3D")] {
        if let Some(names) = c.strings(key)? {
            if let Some(other) = names.iter().find(|&&s| s != block) {
                return Err(InputError::new(key, format!("expected \"{block}\" for every level, got \"{}\"", crate::safe_text::quoted(other))));
            }
            if names.len() != channels.len() {
                return Err(InputError::new(key, format!("has {} entries, but block_out_channels has {}", names.len(), channels.len())));
            }
        }
    }
    let vae = CogVideoXVae {
        in_channels: c.uint("in_channels", 3)?,
        out_channels: c.uint("out_channels", 3)?,
        latent_channels: c.uint("latent_channels", 16)?,
        layers_per_block: c.uint("layers_per_block", 3)?,
        norm_num_groups: c.uint("norm_num_groups", 32)?,
        temporal_compression_ratio: c.uint("temporal_compression_ratio", 4)?,
        use_quant_conv: c.flag("use_quant_conv", false)?,
        use_post_quant_conv: c.flag("use_post_quant_conv", false)?,
        channels,
    };
    vae.check()?;
    Ok(vae)
}
