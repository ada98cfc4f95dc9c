//! Gemma 4's vision side against transformers 5.25 (`tests/measure/gemma4_vision.py`,
//! `tests/fixtures/measured/gemma4_vision.json`): parameters by part equal
//! `Gemma4ForConditionalGeneration` on the meta device (Gemma4Config with a default
//! Gemma4VisionConfig, the E2B-sized tower's keys, a 1152-wide variant, a tiny one, and the tiny
//! one with an audio tower, which Headroom leaves out and names), the padded patches and soft
//! tokens equal `Gemma4ImageProcessor`'s at ten image sizes for five processor settings, and a
//! tiny tower's saved activations on CPU (fp32, one image of 96 × 96 and of 96 × 48 px: 630 padded
//! patches, 64 and 55 soft tokens) are within 3 % for full fine-tuning, a frozen tower, LoRA on
//! the language model, LoRA on the tower too, each with and without full checkpointing, and at a
//! budget of 1260 padded patches (full, tower LoRA) and in pure bf16 (full, tower LoRA). Measured:
//! 14 cases exact to the byte; the six without checkpointing whose tower trains or carries
//! adapters +0.0014 % to +0.0023 % in fp32 (160 bytes per 630 patches: the logsumexp of two
//! blocks' two heads padded to 32 rows, as CUDA's memory-efficient kernel pads it, which CPU's does
//! not) and −0.022 %, −0.019 % in bf16 (each `Gemma4RMSNorm` also keeps its weight's fp32 copy,
//! `weight.float()`, h or head_dim values, not counted). `-- --nocapture` prints the table.

mod vlm_parts;

use headroom::import::hf_config::import_hf_config;
use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/gemma4_vision.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn breakdown(config: &Value, training: Value) -> Breakdown {
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": config}, "training": training})).expect("scenario");
    estimate(&s)
}

#[test]
fn parts_equal_transformers() {
    let f = fixture();
    let cases = f["params"].as_object().expect("params");
    assert_eq!(cases.len(), 5);
    for (name, case) in cases {
        let b = breakdown(&case["config"], json!({"micro_batch": 1, "seq_len": 512, "precision": "bf16-mixed"}));
        let audio = case["audio_params"].as_u64().unwrap();
        assert_eq!(b.param_count, case["param_count"].as_u64().unwrap() - audio, "{name}: param_count (audio tower left out)");
        vlm_parts::assert_parts(&b, &case["param_count_by_part"], name);
        // The vision tower is counted, not named as dropped; the audio tower is named only when set.
        let warnings = import_hf_config(&case["config"]).expect("import").warnings;
        assert!(warnings[0].contains("vision tower and projector are counted"), "{name}: {warnings:?}");
        assert!(!warnings.iter().any(|w| w.contains("Gemma4VisionModel")), "{name}: {warnings:?}");
        assert_eq!(warnings.iter().any(|w| w.contains("audio tower (Gemma4AudioModel")), audio > 0, "{name}: {warnings:?}");
    }
}

/// The patches the tower reads (the padded budget) and the soft tokens, through the imported
/// tower (`patch_size`, `pooling_kernel_size`, and `default_output_length` as max_soft_tokens).
#[test]
fn patches_and_tokens_equal_the_processor() {
    let f = fixture();
    let cases = f["image_tokens"].as_array().expect("image_tokens");
    let u = |c: &Value, k: &str| c[k].as_u64().unwrap();
    let mut checked = 0;
    for c in cases.iter().filter(|c| c.get("error").is_none()) {
        let (w, h) = (u(c, "width"), u(c, "height"));
        let vision = json!({"patch_size": c["patch_size"], "pooling_kernel_size": c["pooling_kernel_size"], "default_output_length": c["max_soft_tokens"]});
        let config = json!({"model_type": "gemma4", "text_config": {"model_type": "gemma4_text"}, "vision_config": vision});
        let tower = import_hf_config(&config).expect("import").arch.transformer().and_then(|t| t.tower.clone()).expect("tower");
        assert_eq!(tower.tokens(w, h, 1), (u(c, "patches"), u(c, "soft_tokens")), "{w} × {h}: {c}");
        checked += 1;
    }
    assert_eq!(checked, 50);
}

const TOWER: [&str; 5] = [
    "vision tower blocks",
    "vision tower patch-embedding input (pixels)",
    "vision tower rotary tables and final norm",
    "vision tower pooler",
    "vision tower block inputs (full checkpointing)",
];

/// The tower's saved bytes within 3 % of CPU's, the projector's exact. A frozen tower saves nothing
/// without checkpointing and its blocks' inputs with it.
#[test]
fn tower_activations_against_cpu_measurement() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 20);
    for (name, case) in cases {
        let mode = case["mode"].as_str().unwrap();
        let mut training = json!({"micro_batch": case["micro_batch"], "seq_len": case["text_tokens"], "precision": case["precision"], "resolution": case["resolution"],
                                  "checkpointing": case["checkpointing"]});
        match mode {
            "frozen" => training["frozen"] = json!({"vision_tower": true}),
            "lora" => training["lora"] = json!({"rank": case["lora_rank"], "targets": ["q", "k", "v", "o", "gate", "up", "down"]}),
            "lora-tower" => training["lora"] = json!({"rank": case["lora_rank"], "targets": ["q", "k", "v", "o", "gate", "up", "down"], "vision_tower": true}),
            _ => {}
        }
        let b = breakdown(&case["config"], training);
        let term = |n: &str| b.terms.iter().filter(|t| t.name == n).map(|t| t.bytes).sum::<u64>() as f64;
        let tower = TOWER.iter().map(|n| term(n)).sum::<f64>() + term("vision tower block inputs (frozen, full checkpointing)");
        let projector = term("projector input");
        let (mt, mp) = (case["tower_saved_bytes"].as_f64().unwrap(), case["projector_saved_bytes"].as_f64().unwrap());
        let error = if mt > 0.0 { 100.0 * (tower / mt - 1.0) } else { 0.0 };
        println!("{name:34} tower measured {mt:>9} model {tower:>9} ({error:+.4} %)   projector measured {mp:>6} model {projector:>6}");
        assert_eq!(projector, mp, "{name}: projector");
        if mt == 0.0 {
            assert_eq!(tower, 0.0, "{name}: tower");
        } else {
            assert!(error.abs() <= 3.0, "{name}: tower {tower} vs measured {mt}");
        }
    }
}

/// A value the image processor refuses names its field.
#[test]
fn reader_refuses_unsupported_soft_tokens() {
    let config = json!({"model_type": "gemma4", "text_config": {"model_type": "gemma4_text"}, "vision_config": {"default_output_length": 100}});
    let e = import_hf_config(&config).expect_err("100 is not a supported max_soft_tokens");
    assert_eq!(e.field, "vision_config.default_output_length");
    let plain = json!({"model_type": "gemma4", "text_config": {"model_type": "gemma4_text"}, "vision_config": {}});
    let warnings = import_hf_config(&plain).expect("import").warnings;
    assert!(warnings.iter().any(|w| w.contains("max_soft_tokens, 280")), "{warnings:?}");
}

/// PEFT refuses plain target names on Gemma 4's tower (`Gemma4ClippableLinear` wraps the
/// `nn.Linear`) and "all-linear" adapts the tower's linears and its patch embedder (the fixture's
/// `peft_targets`): the plan says so for a named list and for every kind.
#[test]
fn lora_notes_say_what_peft_does_with_the_tower() {
    let f = fixture();
    assert!(f["peft_targets"]["plain_names"].as_str().unwrap().contains("Gemma4ClippableLinear"));
    assert!(f["peft_targets"]["all_linear_tower_names"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().ends_with("input_proj")));
    let config = &f["params"]["gemma4@tiny"]["config"];
    let notes = |targets: Value| breakdown(config, json!({"micro_batch": 1, "seq_len": 64, "precision": "bf16-mixed", "lora": {"rank": 8, "targets": targets}})).warnings;
    let named = notes(json!(["q", "v"]));
    assert!(named.iter().any(|w| w.contains("refuses a target_modules name")), "{named:?}");
    // Every kind: PEFT's "all-linear".
    let all = notes(json!(["q", "k", "v", "o", "gate", "up", "down", "add-q", "add-k", "add-v", "add-o", "mixer-in", "mixer-gates", "x-proj", "dt-proj", "mixer-out"]));
    assert!(all.iter().any(|w| w.contains("\"all-linear\" adapts the tower's linears")), "{all:?}");
}

/// A video's frames are read at `Gemma4VideoProcessor`'s budget, 70 soft tokens (630 padded
/// patches) each, whatever the image budget: a 768 × 768 frame is resized by
/// √(630 · 256 / 768²) = 0.523 to 401.6 px, rounded down to 8 cells of 48 px, 384: 24² / 9 = 64
/// soft tokens; as an image at 280 it stays 768 px, 48² / 9 = 256.
#[test]
fn video_frames_use_the_video_budget() {
    let config = json!({"model_type": "gemma4", "text_config": {"model_type": "gemma4_text"}, "vision_config": {"default_output_length": 280}});
    let tower = import_hf_config(&config).expect("import").arch.transformer().and_then(|t| t.tower.clone()).expect("tower");
    assert_eq!(tower.tokens(768, 768, 1), (2520, 256));
    assert_eq!(tower.tokens(768, 768, 8), (8 * 630, 8 * 64));
}
