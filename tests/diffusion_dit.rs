//! Diffusion transformers (Flux, SD3/3.5, Wan 2.1) against diffusers 0.42.1: parameter counts of
//! the real Hub configs built on the meta device (`tests/measure/diffusion_dit.py`,
//! `tests/fixtures/measured/diffusion_dit.json`).

use headroom::import::diffusers::dit::read;
use serde_json::{json, Value};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/measured/diffusion_dit.json")).unwrap()
}

#[test]
fn parameter_counts_equal_what_diffusers_builds() {
    let f = fixture();
    let counts = f["counts"].as_array().unwrap();
    assert!(counts.len() >= 12, "Flux dev/schnell, SD3 medium, SD3.5 medium/large, Wan 1.3B/14B, HunyuanVideo, CogVideoX 2b/5b, LTX-Video, Sana 1600M");
    for c in counts {
        let path = c["config"].as_str().unwrap();
        let cfg: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let dit = read(&cfg).unwrap();
        assert_eq!(dit.param_count() as u64, c["params"].as_u64().unwrap(), "{path}");
    }
}

#[test]
fn tiny_configs_count_as_diffusers_builds_them() {
    // the tiny configs of the saved-activation cases: their counts are in the fixture too
    let f = fixture();
    for c in f["tiny_counts"].as_array().unwrap() {
        let dit = read(&c["config"]).unwrap();
        assert_eq!(dit.param_count() as u64, c["params"].as_u64().unwrap(), "{}", c["name"]);
    }
}

#[test]
fn bad_configs_are_refused_naming_the_field() {
    let e = read(&json!({"_class_name": "FluxTransformer2DModel", "num_layers": "19"})).unwrap_err();
    assert_eq!(e.field, "num_layers");
    let e = read(&json!({"_class_name": "SD3Transformer2DModel", "qk_norm": "l2"})).unwrap_err();
    assert_eq!(e.field, "qk_norm");
    let e = read(&json!({"_class_name": "SD3Transformer2DModel", "dual_attention_layers": [0, -1]})).unwrap_err();
    assert_eq!(e.field, "dual_attention_layers");
    let e = read(&json!({"_class_name": "WanTransformer3DModel", "patch_size": [2, 2]})).unwrap_err();
    assert_eq!(e.field, "patch_size");
    let e = read(&json!({"_class_name": "UNet2DConditionModel"})).unwrap_err();
    assert_eq!(e.field, "_class_name");
}

use headroom::model::arch::LinearKind;
use headroom::model::diffusion::{LoraRun, Run};
use headroom::model::inputs::Attention;
use headroom::model::precision::Precision;

fn run_of(case: &Value) -> Run {
    let latent = case["latent"].as_u64().unwrap();
    let class = case["config"]["_class_name"].as_str().unwrap();
    // the measuring script's targets: train_dreambooth_lora_flux.py's, train_dreambooth_lora_sana.py's
    // (to_q/to_k/to_v), else to_q/to_k/to_v/to_out.0
    let targets = match class {
        "FluxTransformer2DModel" => vec![
            LinearKind::Q,
            LinearKind::K,
            LinearKind::V,
            LinearKind::O,
            LinearKind::AddQ,
            LinearKind::AddK,
            LinearKind::AddV,
            LinearKind::AddO,
            LinearKind::Up,
            LinearKind::Down,
        ],
        "SD3Transformer2DModel" => vec![LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O, LinearKind::AddQ, LinearKind::AddK, LinearKind::AddV, LinearKind::AddO],
        "SanaTransformer2DModel" => vec![LinearKind::Q, LinearKind::K, LinearKind::V],
        _ => vec![LinearKind::Q, LinearKind::K, LinearKind::V, LinearKind::O],
    };
    Run {
        batch: case["batch"].as_u64().unwrap(),
        latent_frames: if class.ends_with("3DModel") { case["frames"].as_u64().unwrap() } else { 1 },
        latent_height: latent,
        latent_width: latent,
        height: latent * 8,
        width: latent * 8,
        frames: 1,
        text_tokens: case["text_tokens"].as_u64().unwrap(),
        precision: match case["precision"].as_str().unwrap() {
            "fp32" => Precision::Fp32,
            "bf16" => Precision::Bf16,
            _ => Precision::Bf16Mixed,
        },
        checkpointing: case["checkpointing"].as_bool().unwrap(),
        attention: Attention::Sdpa,
        lora: case["lora_rank"].as_u64().map(|rank| LoraRun {
            rank,
            targets: targets.clone(),
            fp32: case["lora_fp32"].as_bool().unwrap(),
            dropout: case["lora_dropout"].as_f64().unwrap_or(0.0) > 0.0,
        }),
    }
}

fn label(c: &Value) -> String {
    format!("{} {} ckpt={} lora={} fp32={} dropout={} b={}", c["name"], c["precision"], c["checkpointing"], c["lora_rank"], c["lora_fp32"], c["lora_dropout"], c["batch"])
}

#[test]
fn saved_activations_are_within_three_percent_of_the_measured_forward() {
    let f = fixture();
    let mut misses = Vec::new();
    let mut checked = 0;
    for c in f["saved"].as_array().unwrap() {
        let dit = read(&c["config"]).unwrap();
        let saved = dit.saved(&run_of(c));
        checked += 1;
        let copies: f64 = saved.iter().filter(|s| s.name == "weight copies").map(|s| s.bytes).sum();
        let acts: f64 = saved.iter().filter(|s| s.name != "weight copies").map(|s| s.bytes).sum();
        let (m_acts, m_copies) = (c["saved_bytes"].as_f64().unwrap(), c["param_copy_bytes"].as_f64().unwrap());
        let miss = acts / m_acts - 1.0;
        println!("{}: saved {acts} vs {m_acts} ({:+.2} %), copies {copies} vs {m_copies}", label(c), miss * 100.0);
        if miss.abs() > 0.03 {
            misses.push(format!("{}: saved {acts} vs measured {m_acts} ({:+.2} %)", label(c), miss * 100.0));
        }
        if (copies - m_copies).abs() > 0.03 * m_copies.max(1.0) + 4096.0 {
            misses.push(format!("{}: weight copies {copies} vs measured {m_copies}", label(c)));
        }
    }
    assert_eq!(checked, f["saved"].as_array().unwrap().len(), "every measured case is modelled");
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn forward_peaks_are_within_ten_percent_of_the_measured_live_bytes() {
    let f = fixture();
    let mut misses = Vec::new();
    for p in f["peaks"].as_array().unwrap() {
        let mut case = p.clone();
        case["checkpointing"] = json!(false);
        case["lora_rank"] = Value::Null;
        let dit = read(&p["config"]).unwrap();
        let modelled = dit.forward_peak(&run_of(&case));
        let measured = p["peak_bytes"].as_f64().unwrap();
        let miss = modelled / measured - 1.0;
        println!("{} {} b={}: peak {modelled} vs {measured} ({:+.2} %)", p["name"], p["precision"], p["batch"], miss * 100.0);
        if miss.abs() > 0.10 {
            misses.push(format!("{} {} b={}: modelled {modelled}, measured {measured} ({:+.1} %)", p["name"], p["precision"], p["batch"], miss * 100.0));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn forward_flops_equal_torch_flop_counter() {
    let f = fixture();
    for p in f["flops"].as_array().unwrap() {
        let mut case = p.clone();
        case["checkpointing"] = json!(false);
        case["lora_rank"] = Value::Null;
        let dit = read(&p["config"]).unwrap();
        let modelled = dit.forward_flops(&run_of(&case));
        let measured = p["flops"].as_f64().unwrap();
        println!("{} b={}: flops {modelled} vs {measured}", p["name"], p["batch"]);
        assert!((modelled / measured - 1.0).abs() < 0.01, "{} b={}: modelled {modelled}, FlopCounterMode {measured}", p["name"], p["batch"]);
    }
}

#[test]
fn image_tokens_follow_each_pipeline_packing() {
    let cfg =
        |path: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(format!("tests/fixtures/diffusers/configs/{path}/transformer/config.json")).unwrap()).unwrap() };
    let mut run = run_of(&json!({"latent": 128, "config": {"_class_name": "FluxTransformer2DModel"}, "batch": 1, "text_tokens": 512,
        "precision": "bf16", "checkpointing": false, "lora_rank": null, "lora_fp32": false, "lora_dropout": 0.0, "frames": 1}));
    // 1024 px: Flux packs the 128 × 128 latent in 2 × 2 (4096 tokens), SD3 patches it in 2 × 2 too
    assert_eq!(read(&cfg("black-forest-labs--FLUX.1-dev")).unwrap().image_tokens(&run), 4096);
    assert_eq!(read(&cfg("stabilityai--stable-diffusion-3.5-large")).unwrap().image_tokens(&run), 4096);
    // Wan 2.1 at 480 × 832, 81 frames: a 21 × 60 × 104 latent in (1, 2, 2) patches, the
    // 32,760-token sequence `wan/text2video.py` computes (`seq_len`) and Wan-based code sizes
    // its caches for (`GLOBAL_KV_CACHE_SIZE = 32760`, stored file id 67279894380)
    run.latent_frames = 21;
    run.latent_height = 60;
    run.latent_width = 104;
    assert_eq!(read(&cfg("Wan-AI--Wan2.1-T2V-14B-Diffusers")).unwrap().image_tokens(&run), 32760);
}
