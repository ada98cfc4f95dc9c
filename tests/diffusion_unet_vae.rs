//! Diffusion UNet and VAEs (AutoencoderKL, Wan 2.1's AutoencoderKLWan) against diffusers
//! 0.42.1: parameter counts of the real catalogue configs and tiny configs built on the meta
//! device; the UNet's saved activations (fake CUDA), no-grad peaks and FLOPs; the VAEs'
//! encode and decode peaks (tiny configs on CPU, the real SDXL and Wan 2.1 VAEs and UNets on
//! fake tensors at their own sizes) (`tests/measure/diffusion_unet_vae.py`,
//! `tests/fixtures/measured/diffusion_unet_vae.json`).

use headroom::import::diffusers::{unet, vae, wan_vae};
use headroom::model::arch::LinearKind;
use headroom::model::diffusion::{LoraRun, Run};
use headroom::model::inputs::Attention;
use headroom::model::precision::Precision;
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
    assert!(counts.iter().filter(|c| c["config"].is_string()).count() >= 10, "every catalogue UNet and VAE is measured");
    for c in counts {
        let cfg = config(c);
        let modelled = match c["class"].as_str().unwrap() {
            "UNet2DConditionModel" => unet::read(&cfg).unwrap().param_count(),
            "AutoencoderKL" => vae::read(&cfg).unwrap().param_count(),
            "AutoencoderKLWan" => wan_vae::read(&cfg).unwrap().param_count(),
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
    // Wan 2.1's VAE: 127 M parameters, 8× in space, 4× in time
    let wan = wan_vae::read(&read("Wan-AI--Wan2.1-T2V-1.3B-Diffusers/vae")).unwrap();
    assert_eq!((wan.param_count(), wan.latent_channels(), wan.spatial_factor(), wan.temporal_factor()), (126_892_531.0, 16, 8, 4));
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
    let werr = |cfg: Value| wan_vae::read(&cfg).unwrap_err().field;
    // Wan 2.2's residual layout is built (tests/diffusion_video_parts.rs); a wrong type is refused.
    assert_eq!(werr(serde_json::json!({"is_residual": "yes"})), "is_residual");
    assert_eq!(werr(serde_json::json!({"patch_size": 0})), "patch_size");
    assert_eq!(werr(serde_json::json!({"temperal_downsample": [true]})), "temperal_downsample");
    assert_eq!(werr(serde_json::json!({"attn_scales": ["half"]})), "attn_scales");
}

fn precision(p: &str) -> Precision {
    match p {
        "fp32" => Precision::Fp32,
        "bf16" => Precision::Bf16,
        "bf16-mixed" => Precision::Bf16Mixed,
        other => panic!("unexpected precision {other}"),
    }
}

fn run_of(case: &Value, (h, w): (u64, u64), spatial: u64) -> Run {
    Run {
        batch: case["batch"].as_u64().unwrap(),
        latent_frames: 1,
        latent_height: h,
        latent_width: w,
        height: h * spatial,
        width: w * spatial,
        frames: 1,
        text_tokens: case["text_tokens"].as_u64().unwrap_or(0),
        precision: precision(case["precision"].as_str().unwrap_or("fp32")),
        checkpointing: case["checkpointing"].as_bool().unwrap_or(false),
        attention: Attention::Sdpa,
        lora: case["lora_rank"].as_u64().map(|rank| LoraRun {
            rank,
            targets: vec![LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O],
            fp32: true,
            dropout: case["lora_dropout"].as_f64().unwrap_or(0.0) > 0.0,
        }),
    }
}

#[test]
fn saved_activations_are_within_one_percent_of_the_measured_training_forward() {
    let f = fixture();
    let cases = f["saved"].as_array().unwrap();
    assert!(cases.len() >= 16, "fp32, bf16, bf16 autocast, each with and without checkpointing, and LoRA, for two UNets");
    assert!(cases.iter().filter(|c| c["config"].is_string()).count() >= 9, "the real SD 1.5, SD 2.1 and SDXL UNets at their own sizes");
    let mut misses = Vec::new();
    for case in cases {
        let model = unet::read(&config(case)).unwrap();
        let latent = &case["latent"];
        let saved = model.saved(&run_of(case, (latent[0].as_u64().unwrap(), latent[1].as_u64().unwrap()), 8));
        let copies: f64 = saved.iter().filter(|s| s.name == "autocast weight copies").map(|s| s.bytes).sum();
        let acts: f64 = saved.iter().filter(|s| s.name != "autocast weight copies").map(|s| s.bytes).sum();
        let label = format!("{} {} ckpt={} lora={}", case["name"], case["precision"], case["checkpointing"], case["lora_rank"]);
        for (what, modelled, measured) in [("saved", acts, case["saved_bytes"].as_f64().unwrap()), ("weight copies", copies, case["param_copy_bytes"].as_f64().unwrap())] {
            let miss = if measured == 0.0 { modelled } else { modelled / measured - 1.0 };
            eprintln!("{label} {what}: modelled {modelled}, measured {measured} ({:+.2} %)", miss * 100.0);
            // the issue asks for 3 %; the model matches these runs to the byte, so 1 % also
            // catches a dropped term in a small case
            if miss.abs() > 0.01 {
                misses.push(format!("{label} {what}: modelled {modelled}, measured {measured} ({:+.2} %)", miss * 100.0));
            }
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn unet_forward_peaks_are_within_two_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let mut misses = Vec::new();
    let cases: Vec<&Value> = f["peaks"].as_array().unwrap().iter().filter(|p| p["part"] == "unet").collect();
    assert!(cases.len() >= 12);
    assert!(cases.iter().filter(|p| p["config"].is_string()).count() >= 6, "the real SD 1.5, SD 2.1 and SDXL UNets at their own sizes");
    for p in cases {
        let model = unet::read(&config(p)).unwrap();
        let mut case = p.clone();
        case["precision"] = Value::from(if p["dtype"] == "float32" { "fp32" } else { "bf16" });
        let latent = &p["latent"];
        let modelled = model.forward_peak(&run_of(&case, (latent[0].as_u64().unwrap(), latent[1].as_u64().unwrap()), 8));
        let measured = p["peak_bytes"].as_f64().unwrap();
        let miss = modelled / measured - 1.0;
        eprintln!("{} {} batch {} latent {latent}: modelled {modelled}, measured {measured} ({:+.1} %)", p["name"], p["dtype"], p["batch"], miss * 100.0);
        // the issue asks for 10 %; these runs match to 0.1 %, so 2 % catches a dropped term
        if miss.abs() > 0.02 {
            misses.push(format!("{} {} batch {}: {:+.1} %", p["name"], p["dtype"], p["batch"], miss * 100.0));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn vae_encode_and_decode_peaks_are_within_two_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let mut misses = Vec::new();
    let cases: Vec<&Value> = f["peaks"].as_array().unwrap().iter().filter(|p| p["part"] == "vae").collect();
    assert!(cases.len() >= 16);
    for p in cases {
        let model = vae::read(&p["config"]).unwrap();
        let s = model.spatial_factor();
        let (h, w) = (p["height"].as_u64().unwrap(), p["width"].as_u64().unwrap());
        let mut case = p.clone();
        case["precision"] = Value::from(if p["dtype"] == "float32" { "fp32" } else { "bf16" });
        let run = run_of(&case, (h / s, w / s), s);
        let mode = p["mode"].as_str().unwrap();
        let tiled = mode == "tiled";
        let (enc, dec) = if mode == "sliced" {
            (model.encode_peak_sliced(&run, false), model.decode_peak_sliced(&run, false))
        } else {
            (model.encode_peak(&run, tiled), model.decode_peak(&run, tiled))
        };
        for (what, modelled, measured) in [("encode", enc, p["encode_peak_bytes"].as_f64().unwrap()), ("decode", dec, p["decode_peak_bytes"].as_f64().unwrap())] {
            let miss = modelled / measured - 1.0;
            let label = format!("{} {} {mode} batch {} {h}x{w} {what}", p["name"], p["dtype"], p["batch"]);
            eprintln!("{label}: modelled {modelled}, measured {measured} ({:+.1} %)", miss * 100.0);
            // the issue asks for 10 %; these runs match to 0.3 %, so 2 % catches a dropped term
            if miss.abs() > 0.02 {
                misses.push(format!("{label}: {:+.1} %", miss * 100.0));
            }
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn unet_forward_flops_are_within_two_percent_of_the_flop_counter() {
    let f = fixture();
    let cases = f["flops"].as_array().unwrap();
    assert!(cases.len() >= 6, "tiny configs and the real SD 1.5, SD 2.1 and SDXL UNets");
    let mut misses = Vec::new();
    for c in cases {
        let model = unet::read(&config(c)).unwrap();
        let latent = &c["latent"];
        let modelled = model.forward_flops(&run_of(c, (latent[0].as_u64().unwrap(), latent[1].as_u64().unwrap()), 8));
        let measured = c["flops"].as_f64().unwrap();
        let miss = modelled / measured - 1.0;
        eprintln!("{} {latent}: modelled {modelled:.4e}, measured {measured:.4e} ({:+.2} %)", c["name"], miss * 100.0);
        if miss.abs() > 0.02 {
            misses.push(format!("{}: {:+.2} %", c["name"], miss * 100.0));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn wan_vae_decode_peaks_are_within_five_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let cases: Vec<&Value> = f["wan_peaks"].as_array().unwrap().iter().filter(|p| p.get("decode_peak_bytes").is_some()).collect();
    assert!(cases.len() >= 20);
    let mut misses = Vec::new();
    for p in cases {
        let model = wan_vae::read(&p["config"]).unwrap();
        let latent = &p["latent"];
        let mut case = p.clone();
        case["precision"] = Value::from(if p["dtype"] == "float32" { "fp32" } else { "bf16" });
        let mut run = run_of(&case, (latent[0].as_u64().unwrap(), latent[1].as_u64().unwrap()), model.spatial_factor());
        run.latent_frames = p["latent_frames"].as_u64().unwrap();
        let modelled = match p["tile"].as_u64() {
            Some(tile) => model.tiled_decode_peak(&run, tile, p["stride"].as_u64().unwrap()),
            None => model.decode_peak(&run, false),
        };
        let measured = p["decode_peak_bytes"].as_f64().unwrap();
        let miss = modelled / measured - 1.0;
        let label = format!("{} {} batch {} frames {} latent {latent} tile {}", p["name"], p["dtype"], p["batch"], p["latent_frames"], p["tile"]);
        eprintln!("{label}: modelled {modelled}, measured {measured} ({:+.1} %)", miss * 100.0);
        // the issue asks for 10 %; these runs match to 2.3 %
        if miss.abs() > 0.05 {
            misses.push(format!("{label}: {:+.1} %", miss * 100.0));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn wan_vae_encode_peaks_are_within_ten_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let cases: Vec<&Value> = f["wan_peaks"].as_array().unwrap().iter().filter(|p| p.get("encode_peak_bytes").is_some()).collect();
    assert!(cases.len() >= 10);
    let mut misses = Vec::new();
    for p in cases {
        let model = wan_vae::read(&p["config"]).unwrap();
        let s = model.spatial_factor();
        let (h, w) = (p["height"].as_u64().unwrap(), p["width"].as_u64().unwrap());
        let mut case = p.clone();
        case["precision"] = Value::from(if p["dtype"] == "float32" { "fp32" } else { "bf16" });
        let mut run = run_of(&case, (h / s, w / s), s);
        run.frames = p["frames"].as_u64().unwrap();
        let modelled = match p["tile"].as_u64() {
            Some(tile) => model.tiled_encode_peak(&run, tile, p["stride"].as_u64().unwrap()),
            None => model.encode_peak(&run, false),
        };
        let measured = p["encode_peak_bytes"].as_f64().unwrap();
        let miss = modelled / measured - 1.0;
        let label = format!("{} {} batch {} frames {} {h}x{w} tile {}", p["name"], p["dtype"], p["batch"], p["frames"], p["tile"]);
        eprintln!("{label}: modelled {modelled}, measured {measured} ({:+.1} %)", miss * 100.0);
        if miss.abs() > 0.10 {
            misses.push(format!("{label}: {:+.1} %", miss * 100.0));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn the_real_vaes_encode_and_decode_within_five_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let cases = f["real_vae_peaks"].as_array().unwrap();
    assert!(cases.len() >= 8, "the SDXL and Wan 2.1 VAEs, fp32 and bf16, plain and tiled");
    let mut misses = Vec::new();
    for p in cases {
        let cfg = config(p);
        let (h, w, frames) = (p["height"].as_u64().unwrap(), p["width"].as_u64().unwrap(), p["frames"].as_u64().unwrap());
        let tiled = p["tiled"].as_bool().unwrap();
        let mut case = p.clone();
        case["precision"] = Value::from(if p["dtype"] == "float32" { "fp32" } else { "bf16" });
        let mut run = run_of(&case, (h / 8, w / 8), 8);
        run.frames = frames;
        let (enc, dec) = if p["class"] == "AutoencoderKLWan" {
            let m = wan_vae::read(&cfg).unwrap();
            run.latent_frames = 1 + (frames - 1) / m.temporal_factor();
            (m.encode_peak(&run, tiled), m.decode_peak(&run, tiled))
        } else {
            let m = vae::read(&cfg).unwrap();
            (m.encode_peak(&run, tiled), m.decode_peak(&run, tiled))
        };
        for (what, modelled, measured) in [("encode", enc, p["encode_peak_bytes"].as_f64().unwrap()), ("decode", dec, p["decode_peak_bytes"].as_f64().unwrap())] {
            let miss = modelled / measured - 1.0;
            let label = format!("{} {} tiled={tiled} {frames}x{h}x{w} {what}", p["class"], p["dtype"]);
            eprintln!("{label}: modelled {modelled}, measured {measured} ({:+.1} %)", miss * 100.0);
            if miss.abs() > 0.05 {
                misses.push(format!("{label}: {:+.1} %", miss * 100.0));
            }
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}
