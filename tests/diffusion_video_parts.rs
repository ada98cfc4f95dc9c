//! The video and Sana pipelines' VAEs (AutoencoderKLCogVideoX, AutoencoderKLHunyuanVideo,
//! AutoencoderKLLTXVideo, AutoencoderDC, Wan 2.2's residual AutoencoderKLWan), their LLM
//! text encoders (LlamaModel, Gemma2Model) and the Wan 2.2 transformers against diffusers
//! 0.42.1 / transformers 5.25: parameter counts of the Hub configs and tiny configs built on
//! the meta device (`tests/measure/diffusion_video_parts.py`,
//! `tests/fixtures/measured/diffusion_video_parts.json`).

use headroom::import::diffusers::{cogvideox_vae, dc_ae, dit, hunyuan_vae, ltx_vae, text_encoder, wan_vae};
use serde_json::{json, Value};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/measured/diffusion_video_parts.json")).unwrap()
}

fn config(entry: &Value) -> Value {
    match &entry["config"] {
        Value::String(path) => serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap(),
        cfg => cfg.clone(),
    }
}

fn read(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("tests/fixtures/diffusers/configs/{path}/config.json")).unwrap()).unwrap()
}

fn count(class: &str, cfg: &Value) -> f64 {
    let sum = |t: Vec<headroom::model::arch::param::ParamTensor>| t.iter().map(|t| t.numel()).sum::<f64>();
    match class {
        "AutoencoderKLCogVideoX" => cogvideox_vae::read(cfg).unwrap().param_count(),
        "AutoencoderKLHunyuanVideo" => hunyuan_vae::read(cfg).unwrap().param_count(),
        "AutoencoderKLLTXVideo" => ltx_vae::read(cfg).unwrap().param_count(),
        "AutoencoderDC" => dc_ae::read(cfg).unwrap().param_count(),
        "AutoencoderKLWan" => wan_vae::read(cfg).unwrap().param_count(),
        "WanTransformer3DModel" => sum(dit::read(cfg).unwrap().param_tensors()),
        "LlamaModel" | "Gemma2Model" | "CLIPTextModel" => text_encoder::read(cfg, None).unwrap().param_count(),
        other => panic!("unexpected class {other}"),
    }
}

#[test]
fn parameter_counts_equal_what_diffusers_and_transformers_build() {
    let f = fixture();
    let counts = f["counts"].as_array().unwrap();
    assert!(counts.iter().filter(|c| c["config"].is_string()).count() >= 12, "every new catalogue part is measured");
    assert!(counts.iter().filter(|c| !c["config"].is_string()).count() >= 8, "the tiny configs are measured");
    for c in counts {
        let cfg = config(c);
        let name = c["name"].as_str().unwrap_or_else(|| c["config"].as_str().unwrap());
        assert_eq!(count(c["class"].as_str().unwrap(), &cfg) as u64, c["params"].as_u64().unwrap(), "{name}");
    }
}

/// The compression each VAE reports is what its pipeline divides by
/// (`vae_scale_factor_spatial` / `_temporal` of each `pipeline_*.py`).
#[test]
fn vaes_compress_as_their_pipelines_say() {
    let cog = cogvideox_vae::read(&read("THUDM--CogVideoX-2b/vae")).unwrap();
    assert_eq!((cog.spatial_factor(), cog.temporal_factor(), cog.latent_channels()), (8, 4, 16));
    let hy = hunyuan_vae::read(&read("hunyuanvideo-community--HunyuanVideo/vae")).unwrap();
    assert_eq!((hy.spatial_factor(), hy.temporal_factor(), hy.latent_channels()), (8, 4, 16));
    // LTX-Video: 32 × 32 × 8 into 128 channels (the paper's 1:192).
    let ltx = ltx_vae::read(&read("Lightricks--LTX-Video/vae")).unwrap();
    assert_eq!((ltx.spatial_factor(), ltx.temporal_factor(), ltx.latent_channels()), (32, 8, 128));
    let dc = dc_ae::read(&read("Efficient-Large-Model--Sana_1600M_1024px_diffusers/vae")).unwrap();
    assert_eq!((dc.spatial_factor(), dc.temporal_factor(), dc.latent_channels()), (32, 1, 32));
    // Wan 2.2's VAE: 16× in space (patch 2 × 8), 4× in time, 48 channels.
    let wan = wan_vae::read(&read("Wan-AI--Wan2.2-TI2V-5B-Diffusers/vae")).unwrap();
    assert_eq!((wan.spatial_factor(), wan.temporal_factor(), wan.latent_channels()), (16, 4, 48));
}

/// LTX-Video's VAE file on the Hub is 1,676,798,532 bytes of fp32 (pinned with its sha256 in
/// a stored inference repository): 4 bytes × the modelled count, the 2 × 128 latent
/// statistics buffers and a safetensors header of under 24 KB.
#[test]
fn ltx_vae_matches_its_checkpoint_size() {
    let params = ltx_vae::read(&read("Lightricks--LTX-Video/vae")).unwrap().param_count();
    let file = 1_676_798_532.0;
    let rest = file - 4.0 * (params + 256.0);
    assert!((0.0..24_000.0).contains(&rest), "{rest} bytes left for the header");
}

#[test]
fn bad_configs_name_the_field() {
    let field = |r: Result<(), headroom::error::InputError>| r.unwrap_err().field;
    assert_eq!(field(cogvideox_vae::read(&json!({"block_out_channels": [128, 250]})).map(|_| ())), "norm_num_groups");
    assert_eq!(field(cogvideox_vae::read(&json!({"down_block_types": ["DownEncoderBlock2D"]})).map(|_| ())), "down_block_types");
    assert_eq!(field(hunyuan_vae::read(&json!({"temporal_compression_ratio": 8})).map(|_| ())), "temporal_compression_ratio");
    assert_eq!(field(ltx_vae::read(&json!({"timestep_conditioning": true})).map(|_| ())), "timestep_conditioning");
    assert_eq!(field(ltx_vae::read(&json!({"layers_per_block": [4, 3]})).map(|_| ())), "layers_per_block");
    assert_eq!(field(ltx_vae::read(&json!({"spatio_temporal_scaling": "yes"})).map(|_| ())), "spatio_temporal_scaling");
    assert_eq!(field(dc_ae::read(&json!({"encoder_block_types": ["ResBlock", "Conv"]})).map(|_| ())), "encoder_block_types");
    assert_eq!(field(dc_ae::read(&json!({"decoder_qkv_multiscales": [[5], "x"]})).map(|_| ())), "decoder_qkv_multiscales");
    assert_eq!(field(dc_ae::read(&json!({"attention_head_dim": 48, "encoder_block_types": "EfficientViTBlock"})).map(|_| ())), "attention_head_dim");
    assert_eq!(field(wan_vae::read(&json!({"is_residual": "yes"})).map(|_| ())), "is_residual");
    assert_eq!(field(text_encoder::read(&json!({"architectures": ["LlamaModel"], "num_attention_heads": 0}), None).map(|_| ())), "num_attention_heads");
}

/// The LLM text encoders' no-grad encode (tiny LlamaModel with SDPA, Gemma2Model with its
/// eager soft-capped attention; fp32 and bf16; with and without `output_hidden_states`) within
/// 10 % of the live bytes measured on CPU.
#[test]
fn llm_encode_peaks_match_the_measurement() {
    let f = fixture();
    let peaks = f["encode_peaks"].as_array().unwrap();
    assert_eq!(peaks.len(), 16);
    for p in peaks {
        let t = text_encoder::read(&p["config"], Some(p["tokens"].as_u64().unwrap())).unwrap();
        let bytes = if p["dtype"] == "float32" { 4.0 } else { 2.0 };
        let model = t.decoder_encode_peak(p["batch"].as_u64().unwrap(), bytes, p["hidden_states"].as_bool().unwrap());
        let measured = p["peak_bytes"].as_f64().unwrap();
        let err = model / measured - 1.0;
        assert!(err.abs() < 0.10, "{} {} b{} s{} hs {}: {model} vs {measured} ({:+.1} %)", p["name"], p["dtype"], p["batch"], p["tokens"], p["hidden_states"], 100.0 * err);
    }
}

/// HunyuanVideo's LLM reads 256 + 95 template tokens and keeps every hidden state (it reads
/// layer −3); its pipeline notes what is not modelled of the VAE.
#[test]
fn hunyuanvideo_encodes_its_template_and_keeps_hidden_states() {
    let s: headroom::scenario::Scenario = serde_json::from_value(json!({"model": {"preset": "hunyuanvideo-community/HunyuanVideo"}})).unwrap();
    let arch = s.model.architecture().unwrap();
    let headroom::model::arch::Architecture::Diffusion(d) = arch.as_ref() else { panic!("not a pipeline") };
    let llama = d.text_encoders.iter().find(|t| t.kind.class() == "LlamaModel").unwrap();
    assert_eq!(llama.max_tokens, 351);
    assert_eq!(d.text_tokens, 256);
    assert!(llama.forward_peak(1, 2.0, true) > llama.decoder_encode_peak(1, 2.0, false));
    assert!(s.model.notes().iter().any(|n| n.contains("AutoencoderKLHunyuanVideo") && n.contains("not modelled")), "{:?}", s.model.notes());
}

/// Sana's DC-AE decode (tiny configs: interpolating and pixel-shuffling up-samplers,
/// ResBlocks and EfficientViT blocks; fp32 and bf16; and the real Sana VAE at 512 and 1024
/// pixels in bf16 on fake tensors) within 10 % of the live bytes measured on CPU.
#[test]
fn dc_ae_decode_peaks_match_the_measurement() {
    let f = fixture();
    let peaks: Vec<&Value> = f["dc_ae_peaks"].as_array().unwrap().iter().chain(f["dc_ae_real_peaks"].as_array().unwrap()).collect();
    assert_eq!(peaks.len(), 18);
    let mut worst: f64 = 0.0;
    for p in peaks {
        let vae = dc_ae::read(&config(p)).unwrap();
        let precision = if p["dtype"] == "float32" { headroom::model::precision::Precision::Fp32 } else { headroom::model::precision::Precision::Bf16 };
        let run = headroom::model::diffusion::Run {
            batch: p["batch"].as_u64().unwrap(),
            latent_frames: 1,
            latent_height: p["latent"][0].as_u64().unwrap(),
            latent_width: p["latent"][1].as_u64().unwrap(),
            height: 0,
            width: 0,
            frames: 1,
            text_tokens: 1,
            precision,
            checkpointing: false,
            attention: headroom::model::inputs::Attention::default(),
            lora: None,
        };
        let model = vae.decode_peak(&run, false);
        let measured = p["decode_peak_bytes"].as_f64().unwrap();
        let err = model / measured - 1.0;
        eprintln!("{} {} b{} {:?}: {model} vs {measured} ({:+.1} %)", p.get("name").unwrap_or(&p["config"]), p["dtype"], p["batch"], p["latent"], 100.0 * err);
        worst = worst.max(err.abs());
    }
    assert!(worst < 0.10, "worst {:.1} %", 100.0 * worst);
}

/// Every new catalogue pipeline plans generation and LoRA training with finite terms; Sana's
/// generation has a VAE decode term, the video VAEs whose workspace is not measured have none
/// (their notes say so), and Wan 2.2 A14B's generation holds both experts.
#[test]
fn new_catalogue_pipelines_plan_generation_and_training() {
    let ids = [
        "THUDM/CogVideoX-2b",
        "THUDM/CogVideoX-5b",
        "Lightricks/LTX-Video",
        "hunyuanvideo-community/HunyuanVideo",
        "Efficient-Large-Model/Sana_1600M_1024px_diffusers",
        "Wan-AI/Wan2.2-TI2V-5B-Diffusers",
        "Wan-AI/Wan2.2-T2V-A14B-Diffusers",
    ];
    let term = |b: &headroom::model::breakdown::Breakdown, name: &str| b.terms.iter().find(|t| t.name == name).map_or(0, |t| t.bytes);
    for id in ids {
        let run = |training: Value| {
            let s: headroom::scenario::Scenario = serde_json::from_value(json!({"model": {"preset": id}, "training": training})).unwrap();
            (headroom::scenario::estimate(&s), s.model.notes().to_vec())
        };
        let (generate, notes) = run(json!({"mode": "inference", "precision": "bf16"}));
        let (train, _) = run(json!({"precision": "bf16-mixed", "lora": {"rank": 16}, "checkpointing": "full"}));
        eprintln!(
            "{id}: generation {:.2} GiB (decode {:.2} GiB), LoRA step {:.2} GiB",
            generate.total as f64 / 1073741824.0,
            term(&generate, "VAE decode") as f64 / 1073741824.0,
            train.total as f64 / 1073741824.0
        );
        assert!(generate.total > generate.parameters && train.total > train.parameters, "{id}");
        let measured = !notes.iter().any(|n| n.contains("decode workspace is not modelled") || n.contains("encode and decode workspace is not modelled"));
        assert_eq!(term(&generate, "VAE decode") > 0, measured, "{id}: {notes:?}");
    }
    let (a14b, _) = {
        let s: headroom::scenario::Scenario =
            serde_json::from_value(json!({"model": {"preset": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}, "training": {"mode": "inference", "precision": "bf16"}})).unwrap();
        (headroom::scenario::estimate(&s), ())
    };
    assert_eq!(term(&a14b, "denoiser weights"), 2 * 14_288_491_584 * 2, "both experts resident");
}

/// LTX-Video's VAE decode (the tiny 0.9.0 layout, fp32 and bf16, 1 to 5 latent frames; the
/// real VAE at 480 × 704 pixels, 9 and 17 frames, in bf16 on fake tensors) within 10 % of the
/// live bytes measured on CPU.
#[test]
fn ltx_vae_decode_peaks_match_the_measurement() {
    let f = fixture();
    let peaks: Vec<&Value> = f["ltx_vae_peaks"].as_array().unwrap().iter().chain(f["ltx_real_peaks"].as_array().unwrap()).collect();
    assert_eq!(peaks.len(), 10);
    let mut worst: f64 = 0.0;
    for p in peaks {
        let vae = ltx_vae::read(&config(p)).unwrap();
        let precision = if p["dtype"] == "float32" { headroom::model::precision::Precision::Fp32 } else { headroom::model::precision::Precision::Bf16 };
        let run = headroom::model::diffusion::Run {
            batch: p["batch"].as_u64().unwrap(),
            latent_frames: p["latent"][0].as_u64().unwrap(),
            latent_height: p["latent"][1].as_u64().unwrap(),
            latent_width: p["latent"][2].as_u64().unwrap(),
            height: 0,
            width: 0,
            frames: 1,
            text_tokens: 1,
            precision,
            checkpointing: false,
            attention: headroom::model::inputs::Attention::default(),
            lora: None,
        };
        let model = vae.decode_peak(&run, false);
        let measured = p["decode_peak_bytes"].as_f64().unwrap();
        let err = model / measured - 1.0;
        eprintln!("ltx {} b{} {:?}: {model} vs {measured} ({:+.1} %)", p["dtype"], p["batch"], p["latent"], 100.0 * err);
        worst = worst.max(err.abs());
    }
    assert!(worst < 0.10, "worst {:.1} %", 100.0 * worst);
}

/// A VAE pasted alone says which of its workspaces is not modelled yet, as a pipeline holding
/// it does; a measured one says nothing.
#[test]
fn a_lone_unmeasured_vae_says_so() {
    let notes = |path: &str| {
        let s: headroom::Scenario = serde_json::from_value(json!({"model": {"hf_config": read(path)}})).expect("scenario");
        s.model.notes().to_vec()
    };
    let cog = notes("THUDM--CogVideoX-2b/vae");
    assert!(cog.iter().any(|n| n.contains("AutoencoderKLCogVideoX") && n.contains("not modelled")), "{cog:?}");
    let ltx = notes("Lightricks--LTX-Video/vae");
    assert!(ltx.iter().any(|n| n.contains("encode workspace")) && !ltx.iter().any(|n| n.contains("decode")), "{ltx:?}");
}
