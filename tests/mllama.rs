//! Llama 3.2 Vision (`mllama`) against transformers 5.25 (`tests/measure/mllama.py`,
//! `tests/fixtures/measured/mllama.json`): parameters by part equal
//! `MllamaForConditionalGeneration` on the meta device (the class default, a small variant with
//! two tiles and three aspect ratios, and the tiny config); the image processor pads every image
//! to `max_image_tiles` tiles; the KV cache of a forward with images equals transformers'
//! `DynamicCache` (self-attention layers by text length, cross-attention layers by vision tokens
//! only); a tiny model's saved tensors on CPU (fp32, pure bf16, autocast, PEFT LoRA; SDPA) within
//! 3 % by part.

mod vlm_parts;

use headroom::{estimate, Breakdown, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/mllama.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn breakdown(config: &Value, training: Value) -> Breakdown {
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": config}, "training": training})).expect("scenario");
    estimate(&s)
}

fn term(b: &Breakdown, name: &str) -> f64 {
    b.terms.iter().filter(|t| t.name == name).map(|t| t.bytes).sum::<u64>() as f64
}

#[test]
fn parts_equal_transformers() {
    let f = fixture();
    let cases = f["params"].as_object().expect("params");
    assert_eq!(cases.len(), 3);
    for (name, case) in cases {
        let b = breakdown(&case["config"], json!({"micro_batch": 1, "seq_len": 512, "precision": "bf16-mixed"}));
        assert!(!b.warnings.iter().any(|w| w.contains("approximate") || w.contains("the vision tower is not")), "{name}: {:?}", b.warnings);
        assert_eq!(b.param_count, case["param_count"].as_u64().unwrap(), "{name}: param_count");
        vlm_parts::assert_parts(&b, &case["param_count_by_part"], name);
    }
}

/// The processor pads every image to `max_image_tiles` tiles whatever its size, which is why the
/// tower's tokens do not depend on `training.resolution`.
#[test]
fn every_image_is_max_tiles() {
    let f = fixture();
    let cases = f["tiles"].as_array().expect("tiles");
    assert_eq!(cases.len(), 12);
    for c in cases {
        let shape: Vec<u64> = c["pixel_values_shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(shape[2], c["max_image_tiles"].as_u64().unwrap(), "{c}");
    }
    let tiny = &f["params"]["mllama@tiny"]["config"];
    let tower = headroom::import::hf_config::import_hf_config(tiny).expect("import").arch.transformer().and_then(|t| t.tower.clone()).expect("tower");
    // 42-px tiles of 14-px patches: 9 patches and a class token, 4 tiles.
    assert_eq!(tower.tokens(560, 560, 1), (40, 0));
    assert_eq!(tower.tokens(100, 900, 1), (40, 0));
}

/// Inference with images: the self-attention layers cache the text, the cross-attention layers
/// the vision tokens of every image, whatever the text's length.
#[test]
fn kv_cache_equals_transformers_cache() {
    let f = fixture();
    let cases = f["cache"].as_object().expect("cache");
    assert_eq!(cases.len(), 6);
    for (name, case) in cases {
        let b = breakdown(
            &case["config"],
            json!({"micro_batch": 1, "seq_len": case["text_tokens"], "precision": case["precision"], "mode": "inference", "images_per_sample": case["images"]}),
        );
        assert_eq!(term(&b, "KV cache"), case["self_kv_bytes"].as_f64().unwrap(), "{name}: self-attention");
        assert_eq!(term(&b, "KV cache (vision cross-attention)"), case["cross_kv_bytes"].as_f64().unwrap(), "{name}: cross-attention");
    }
}

const TOWER_TERMS: [&str; 5] = [
    "vision tower blocks",
    "vision tower attention mask",
    "vision tower pre- and post-norm",
    "vision tower tile and position embeddings",
    "vision tower patch-embedding input (pixels)",
];
const CACHE_TERM: &str = "cross-attention cache (training forward)";

/// The tiny model's saved tensors on CPU by part: the tower within 3 % (trained; nothing when
/// frozen), the projector exact, the language model (self- and cross-attention layers, the
/// embeddings' ids, the final norm, the head and the loss) within 3 %, the vision-dependent part
/// (two images against one) within 3 %, the training forward's cross-attention cache exact, and
/// under LoRA the trainable count equal to PEFT's.
/// Measured: fp32 and CPU-autocast tower and projector to the byte, language model −12 bytes
/// (the loss's scalars); the second image's bytes in the language model exact (fp32, autocast);
/// pure bf16 tower +0.9 % (3,488 bytes: CPU's bf16 LayerNorm keeps its mean and rstd in bf16, 2
/// bytes × 2 × 872 rows, CUDA's in fp32, which is what is modelled); gradient checkpointing: the
/// tower (trained, or frozen with its input needing a gradient) to the byte, the language model
/// −268 bytes; PEFT LoRA on the language model (all seven kinds, or q and v) +1.4 % and +1.8 %
/// (8,564 bytes, outside the cross-attention layers: the first block's attention norm, which
/// LoRA's first adapters make unnecessary, `lora.rs`), with the vision blocks' linears too the
/// tower to the byte.
/// `-- --nocapture` prints the table.
#[test]
fn activations_against_cpu_measurement() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 13);
    let mut language = std::collections::BTreeMap::new();
    for (name, case) in cases {
        let frozen = case["frozen_tower"].as_bool().unwrap();
        let mut training = json!({"micro_batch": 1, "seq_len": case["text_tokens"], "precision": case["precision"], "images_per_sample": case["images"]});
        // (LoRA freezes every base weight itself; `frozen.vision_tower` would also drop the
        // tower's adapters.)
        if frozen && case["lora_targets"].is_null() {
            training["frozen"] = json!({"vision_tower": true});
        }
        if case["checkpointing"] == "full" {
            training["checkpointing"] = json!("full");
        }
        if !case["lora_targets"].is_null() {
            training["lora"] = json!({"rank": case["lora_rank"], "targets": case["lora_targets"], "vision_tower": case["lora_vision_tower"]});
        }
        let b = breakdown(&case["config"], training);
        let tower: f64 = TOWER_TERMS.iter().map(|n| term(&b, n)).sum();
        let projector = term(&b, "projector input");
        let activations: f64 = b.terms.iter().filter(|t| t.component == headroom::model::breakdown::Component::Activations).map(|t| t.bytes as f64).sum();
        let lm = activations - tower - projector - term(&b, CACHE_TERM);
        let m = |k: &str| case[k].as_f64().unwrap();
        let (mt, mp) = (m("tower_saved_bytes"), m("projector_saved_bytes"));
        let ml = m("cross_layers_saved_bytes") + m("self_layers_saved_bytes") + m("rest_saved_bytes");
        println!("{name:34} tower {mt:>9} model {tower:>9}  projector {mp:>6} model {projector:>6}  language model {ml:>8} model {lm:>8}");
        assert_eq!(projector, mp, "{name}: projector");
        if frozen && case["checkpointing"] == "none" && case["lora_vision_tower"] != true {
            assert_eq!((tower, mt), (0.0, 0.0), "{name}: frozen tower");
        } else {
            assert!((tower / mt - 1.0).abs() <= 0.03, "{name}: tower {tower} vs measured {mt}");
        }
        assert!((lm / ml - 1.0).abs() <= 0.03, "{name}: language model {lm} vs measured {ml}");
        assert_eq!(term(&b, CACHE_TERM), m("training_cache_cross_kv_bytes"), "{name}: training cache");
        if !case["lora_targets"].is_null() {
            // PEFT's adapters on the self- and cross-attention layers' linears and the MLPs.
            assert_eq!(b.trainable_params, case["adapter_params"].as_u64().unwrap(), "{name}: adapter parameters");
        }
        language.insert(name.clone(), (lm, ml));
    }
    for (one, two) in [("mllama@1img-s32-trained", "mllama@2img-s32-trained"), ("mllama@1img-s32-frozen-bf16-mixed", "mllama@2img-s32-frozen-bf16-mixed")] {
        let (one, two) = (language[one], language[two]);
        let (model, measured) = (two.0 - one.0, two.1 - one.1);
        println!("second image: language model measured {measured} model {model}");
        assert!(measured > 0.0 && (model / measured - 1.0).abs() <= 0.03, "second image: {model} vs {measured}");
    }
}

/// The reader says what it assumes; bad keys name their field; the "approximate" warning is gone.
#[test]
fn reader_names_assumptions_and_bad_keys() {
    let f = fixture();
    let tiny = f["params"]["mllama@tiny"]["config"].clone();
    let warnings = headroom::import::hf_config::import_hf_config(&tiny).expect("import").warnings;
    assert!(warnings.iter().any(|w| w.contains("max_image_tiles")), "{warnings:?}");
    assert!(!warnings.iter().any(|w| w.contains("does not match vision_output_dim")), "{warnings:?}");
    let mut bad = tiny.clone();
    bad["vision_config"]["vision_output_dim"] = json!(100);
    let warnings = headroom::import::hf_config::import_hf_config(&bad).expect("import").warnings;
    assert!(warnings.iter().any(|w| w.contains("does not match vision_output_dim")), "{warnings:?}");
    let mut bad = tiny.clone();
    bad["vision_config"]["max_num_tiles"] = json!(2);
    let e = headroom::import::hf_config::import_hf_config(&bad).expect_err("default ratios need 4 tiles");
    assert_eq!(e.field, "vision_config.max_num_tiles");
    let mut bad = tiny.clone();
    bad["vision_config"]["supported_aspect_ratios"] = json!([[1, 1], [2]]);
    let e = headroom::import::hf_config::import_hf_config(&bad).expect_err("a ratio is a pair");
    assert_eq!(e.field, "vision_config.supported_aspect_ratios");
    // Without a vision_config (or as a text model alone) the cross-attention layers run on no
    // images: the estimate says what it still counts.
    let mut text_only = tiny.clone();
    text_only.as_object_mut().unwrap().remove("vision_config");
    let warnings = headroom::import::hf_config::import_hf_config(&text_only).expect("import").warnings;
    assert!(warnings.iter().any(|w| w.starts_with("approximate: without a vision_config")), "{warnings:?}");
    let warnings = headroom::import::hf_config::import_hf_config(&tiny["text_config"]).expect("import").warnings;
    assert!(warnings.iter().any(|w| w.starts_with("approximate: without a vision_config")), "{warnings:?}");
    let mut bad = tiny;
    bad["text_config"]["cross_attention_layers"] = json!([1, "x"]);
    let e = headroom::import::hf_config::import_hf_config(&bad).expect_err("indices are numbers");
    assert_eq!(e.field, "text_config.cross_attention_layers");
}

/// Full checkpointing's recompute buffer is one block's saved tensors, the largest: here an
/// mllama cross-attention block (the measured layer 3; the self-attention layer 2 is smaller),
/// not a self- and a cross-attention block together as in T5's decoder.
#[test]
fn recompute_buffer_is_the_largest_block() {
    let f = fixture();
    let case = &f["activations"]["mllama@1img-s32-trained"];
    let layer = |i: u32| -> f64 {
        let prefix = format!("model.language_model.layers.{i}");
        let modules = case["by_module"].as_object().expect("by_module");
        modules.iter().filter(|(k, _)| **k == prefix || k.starts_with(&format!("{prefix}."))).map(|(_, v)| v.as_f64().unwrap()).sum()
    };
    let b = breakdown(&case["config"], json!({"micro_batch": 1, "seq_len": case["text_tokens"], "precision": "fp32", "images_per_sample": 1, "checkpointing": "full"}));
    let recompute = b.uncounted_transients.iter().chain(&b.terms).filter(|t| t.name == "recompute buffer").map(|t| t.bytes as f64).fold(0.0, f64::max);
    assert!(layer(3) > layer(2), "{} vs {}", layer(3), layer(2));
    assert_eq!(recompute, layer(3));
}
