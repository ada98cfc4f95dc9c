//! A diffusers `vae/config.json` with `_class_name: "AutoencoderKLHunyuanVideo"` → a
//! [`HunyuanVideoVae`]. Missing keys take the defaults of `AutoencoderKLHunyuanVideo.__init__`
//! (diffusers 0.42.1, `models/autoencoders/autoencoder_kl_hunyuan_video.py` lines 637–660:
//! 3 → 3 channels, 16 latent channels, `block_out_channels` (128, 256, 512, 512), 2 layers
//! per block, 32 groups, spatial ratio 8, temporal ratio 4, mid-block attention).

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::hunyuan_vae::HunyuanVideoVae;

pub fn read(cfg: &Value) -> Result<HunyuanVideoVae, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    let channels = c.uint_list("block_out_channels", &[128, 256, 512, 512])?;
    for (key, block) in [("down_block_types", "HunyuanVideoDownBlock3D"), ("up_block_types", "HunyuanVideoUpBlock3D")] {
        if let Some(names) = c.strings(key)? {
            if let Some(other) = names.iter().find(|&&s| s != block) {
                return Err(InputError::new(key, format!("expected \"{block}\" for every level, got \"{}\"", crate::safe_text::quoted(other))));
            }
            if names.len() != channels.len() {
                return Err(InputError::new(key, format!("has {} entries, but block_out_channels has {}", names.len(), channels.len())));
            }
        }
    }
    let vae = HunyuanVideoVae {
        in_channels: c.uint("in_channels", 3)?,
        out_channels: c.uint("out_channels", 3)?,
        latent_channels: c.uint("latent_channels", 16)?,
        layers_per_block: c.uint("layers_per_block", 2)?,
        norm_num_groups: c.uint("norm_num_groups", 32)?,
        mid_block_add_attention: c.flag("mid_block_add_attention", true)?,
        spatial_compression_ratio: c.uint("spatial_compression_ratio", 8)?,
        temporal_compression_ratio: c.uint("temporal_compression_ratio", 4)?,
        channels,
    };
    vae.check()?;
    Ok(vae)
}
