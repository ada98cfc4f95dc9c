//! Diffusion UNet and VAE against diffusers 0.42.1: parameter counts of the real catalogue
//! configs and tiny configs built on the meta device (`tests/measure/diffusion_unet_vae.py`,
//! `tests/fixtures/measured/diffusion_unet_vae.json`).

use headroom::import::diffusers::{unet, vae};
use serde_json::Value;

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/measured/diffusion_unet_vae.json")).unwrap()
}

fn config(entry: &Value) -> Value {
    match &entry["config"] {
        Value::String(path) => serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(),
        cfg => cfg.clone(),
    }
}

#[test]
fn parameter_counts_equal_what_diffusers_builds() {
    let f = fixture();
    let counts = f["counts"].as_array().unwrap();
    assert!(counts.iter().filter(|c| c["config"].is_string()).count() >= 9, "every catalogue UNet and VAE is measured");
    for c in counts {
        let cfg = config(c);
        let modelled = match c["class"].as_str().unwrap() {
            "UNet2DConditionModel" => unet::read(&cfg).unwrap().param_count(),
            "AutoencoderKL" => vae::read(&cfg).unwrap().param_count(),
            other => panic!("unexpected class {other}"),
        };
        assert_eq!(modelled as u64, c["params"].as_u64().unwrap(), "{}", c["name"].as_str().unwrap_or_else(|| c["config"].as_str().unwrap()));
    }
}

#[test]
fn the_real_configs_count_what_their_model_cards_say() {
    // SD 1.5's UNet 859,520,964; SDXL's 2,567,463,684; the KL VAE 83,653,863 (4 channels).
    let read = |p: &str| serde_json::from_str::<Value>(&std::fs::read_to_string(format!("tests/fixtures/diffusers/configs/{p}/config.json")).unwrap()).unwrap();
    assert_eq!(unet::read(&read("stable-diffusion-v1-5--stable-diffusion-v1-5/unet")).unwrap().param_count(), 859_520_964.0);
    assert_eq!(unet::read(&read("stabilityai--stable-diffusion-xl-base-1.0/unet")).unwrap().param_count(), 2_567_463_684.0);
    let flux = vae::read(&read("black-forest-labs--FLUX.1-dev/vae")).unwrap();
    assert_eq!((flux.latent_channels(), flux.spatial_factor(), flux.temporal_factor()), (16, 8, 1));
}

#[test]
fn bad_configs_name_the_field() {
    let err = |cfg: Value| unet::read(&cfg).unwrap_err().field;
    assert_eq!(err(serde_json::json!({"block_out_channels": [32, 64], "down_block_types": ["DownBlock2D"]})), "down_block_types");
    assert_eq!(err(serde_json::json!({"attention_head_dim": "eight"})), "attention_head_dim");
    assert_eq!(err(serde_json::json!({"block_out_channels": [30, 60, 90, 120]})), "block_out_channels");
    assert_eq!(err(serde_json::json!({"addition_embed_type": "text_time"})), "addition_time_embed_dim");
    assert_eq!(err(serde_json::json!({"class_embed_type": "timestep"})), "class_embed_type");
    assert_eq!(err(serde_json::json!({"up_block_types": ["UpBlock2D", "X", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"]})), "up_block_types");
    let verr = |cfg: Value| vae::read(&cfg).unwrap_err().field;
    assert_eq!(verr(serde_json::json!({"latent_channels": 0})), "latent_channels");
    assert_eq!(verr(serde_json::json!({"block_out_channels": [64, 128]})), "down_block_types");
    assert_eq!(verr(serde_json::json!({"use_quant_conv": "no"})), "use_quant_conv");
}
