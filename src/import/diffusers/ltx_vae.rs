//! A diffusers `vae/config.json` with `_class_name: "AutoencoderKLLTXVideo"` → an
//! [`LtxVideoVae`]. Missing keys take the defaults of `AutoencoderKLLTXVideo.__init__`
//! (diffusers 0.42.1, `models/autoencoders/autoencoder_kl_ltx.py` lines 1077–1106: 3 → 3
//! channels, 128 latent channels, widths (128, 256, 512, 512) on both sides, layers
//! (4, 3, 3, 3, 4), scaling (true, true, true, false), patch 4 × 1). The later releases'
//! decoder options (timestep conditioning, injected noise, residual or factor up-sampling)
//! and the 0.9.5 encoder blocks are refused, naming the key: their layout is not built.

use serde_json::Value;

use super::lists::bools;
use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::diffusion::ltx_vae::LtxVideoVae;

pub fn read(cfg: &Value) -> Result<LtxVideoVae, InputError> {
    let map = cfg.as_object().ok_or_else(|| InputError::new("", "expected a JSON object"))?;
    let c = Keys::new(map);
    const LATER: &str = "LTX-Video 0.9.1+'s VAE layout is not built yet (0.9.0's is)";
    if c.flag("timestep_conditioning", false)? {
        return Err(InputError::new("timestep_conditioning", LATER));
    }
    if bools(&c, "decoder_inject_noise", &[])?.contains(&true) {
        return Err(InputError::new("decoder_inject_noise", LATER));
    }
    if bools(&c, "upsample_residual", &[])?.contains(&true) {
        return Err(InputError::new("upsample_residual", LATER));
    }
    if c.uint_list("upsample_factor", &[1])?.iter().any(|&f| f != 1) {
        return Err(InputError::new("upsample_factor", LATER));
    }
    if let Some(names) = c.strings("down_block_types")? {
        if let Some(other) = names.iter().find(|&&s| s != "LTXVideoDownBlock3D") {
            return Err(InputError::new("down_block_types", format!("\"{}\" is not built yet (LTXVideoDownBlock3D is)", crate::safe_text::quoted(other))));
        }
    }
    let widths = [128, 256, 512, 512];
    let layers = [4, 3, 3, 3, 4];
    let scaling = [true, true, true, false];
    let vae = LtxVideoVae {
        in_channels: c.uint("in_channels", 3)?,
        out_channels: c.uint("out_channels", 3)?,
        latent_channels: c.uint("latent_channels", 128)?,
        channels: c.uint_list("block_out_channels", &widths)?,
        decoder_channels: c.uint_list("decoder_block_out_channels", &widths)?,
        layers: c.uint_list("layers_per_block", &layers)?,
        decoder_layers: c.uint_list("decoder_layers_per_block", &layers)?,
        scaling: bools(&c, "spatio_temporal_scaling", &scaling)?,
        decoder_scaling: bools(&c, "decoder_spatio_temporal_scaling", &scaling)?,
        patch_size: c.uint("patch_size", 4)?,
        patch_size_t: c.uint("patch_size_t", 1)?,
    };
    vae.check()?;
    Ok(vae)
}
