//! Llama 4's vision side against transformers 5.25 (`tests/measure/llama4_vision.py`,
//! `tests/fixtures/measured/llama4_vision.json`): parameters by part equal
//! `Llama4ForConditionalGeneration` on the meta device (the default config, a small one and
//! Llama-4-Scout-17B-16E's shapes as a stored document prints its config: 108,641,793,536, of
//! which the vision tower 850,960,896 and the projector 20,971,520; the document's own total,
//! 109,676,279,296, is one 202,048 × 5,120 embedding more than transformers 5.25 builds), the
//! tiles and image tokens equal `Llama4ImageProcessor`'s at 30 image sizes (tiles of 448 and
//! 336 px, `max_patches` 16 and 4), and a tiny tower's saved activations on CPU (fp32, one image
//! of 1 and of 3 tiles, tower trained and frozen) are within 3 %, the projector's exact.

mod vlm_parts;

use headroom::model::arch::llama4_tiles::llama4_tiles;
use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/llama4_vision.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn breakdown(config: &Value, training: Value) -> headroom::Breakdown {
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": config}, "training": training})).expect("scenario");
    estimate(&s)
}

#[test]
fn parts_equal_transformers() {
    let f = fixture();
    let cases = f["params"].as_object().expect("params");
    assert_eq!(cases.len(), 3);
    for (name, case) in cases {
        let b = breakdown(&case["config"], json!({"micro_batch": 1, "seq_len": 512, "precision": "bf16-mixed"}));
        assert!(!b.warnings.iter().any(|w| w.contains("the vision tower is not")), "{name}: {:?}", b.warnings);
        assert_eq!(b.param_count, case["param_count"].as_u64().unwrap(), "{name}: param_count");
        vlm_parts::assert_parts(&b, &case["param_count_by_part"], name);
    }
}

/// Every size through the imported tower (tiles of the config's `image_size`, the reader's
/// `max_patches` 16), and the grid alone for `max_patches` 4, which config.json cannot set.
#[test]
fn tiles_and_tokens_equal_the_processor() {
    let f = fixture();
    let cases = f["image_tokens"].as_array().expect("image_tokens");
    assert_eq!(cases.len(), 30);
    let u = |c: &Value, k: &str| c[k].as_u64().unwrap();
    for c in cases {
        let (w, h, size, patch, max) = (u(c, "width"), u(c, "height"), u(c, "tile_size"), u(c, "patch_size"), u(c, "max_patches"));
        assert_eq!(llama4_tiles(w, h, size, max), u(c, "tiles"), "{w} × {h}, {size} px tiles, max {max}");
        if max == 16 {
            let config = json!({"model_type": "llama4", "text_config": {"model_type": "llama4_text"}, "vision_config": {"image_size": size, "patch_size": patch}});
            let imported = headroom::import::hf_config::import_hf_config(&config).expect("import");
            let tower = imported.arch.transformer().and_then(|t| t.tower.clone()).expect("tower");
            assert_eq!(tower.sequences(w, h, 1), u(c, "tiles"), "{w} × {h}, {size} px: tiles");
            assert_eq!(tower.tokens(w, h, 1).1, u(c, "image_tokens"), "{w} × {h}, {size} px: image tokens");
        }
    }
}

/// The tiny tower's saved bytes (trained: blocks, pixels, pre- and post-norm, the adapter) within
/// 3 % of CPU's; frozen, nothing; the projector's input exact either way. Measured: +0.28 % for
/// one tile and for three (172,336 against 171,856 bytes; 517,008 against 515,568): the
/// remainder is 240 bytes per block and tile, CUDA's logsumexp padded to 32 rows (17 → 32, four
/// heads, fp32), which CPU's SDPA does not pad. `-- --nocapture` prints the table.
#[test]
fn tower_activations_against_cpu_measurement() {
    let f = fixture();
    let cases = f["activations"].as_object().expect("activations");
    assert_eq!(cases.len(), 4);
    for (name, case) in cases {
        let frozen = case["frozen_tower"].as_bool().unwrap();
        let mut training = json!({"micro_batch": case["micro_batch"], "seq_len": case["text_tokens"], "precision": "fp32", "resolution": case["resolution"]});
        if frozen {
            training["frozen"] = json!({"vision_tower": true});
        }
        let b = breakdown(&case["config"], training);
        let term = |n: &str| b.terms.iter().filter(|t| t.name == n).map(|t| t.bytes).sum::<u64>() as f64;
        let tower: f64 = [
            "vision tower blocks",
            "vision tower patch-embedding input (pixels)",
            "vision tower pre-norm",
            "vision tower rotary tables and final norm",
            "vision tower pixel-shuffle adapter",
        ]
        .iter()
        .map(|n| term(n))
        .sum();
        let projector = term("projector input");
        let (mt, mp) = (case["tower_saved_bytes"].as_f64().unwrap(), case["projector_saved_bytes"].as_f64().unwrap());
        println!("{name:24} tower measured {mt:>8} model {tower:>8}   projector measured {mp:>6} model {projector:>6}");
        assert_eq!(projector, mp, "{name}: projector");
        if frozen {
            assert_eq!(tower, 0.0, "{name}: frozen tower");
            assert_eq!(mt, 0.0, "{name}: frozen tower measured");
        } else {
            assert!((tower / mt - 1.0).abs() <= 0.03, "{name}: tower {tower} vs measured {mt}");
        }
    }
}

/// The reader says what it assumes and when transformers' forward could not run: the class
/// default's widths do not chain (768 · 4 ≠ 5632), the tiny fixture's do; a bad
/// `pixel_shuffle_ratio` names its field.
#[test]
fn reader_names_assumptions_and_bad_keys() {
    let f = fixture();
    let warnings = |config: &Value| headroom::import::hf_config::import_hf_config(config).expect("import").warnings;
    let default = warnings(&f["params"]["llama4@default"]["config"]);
    assert!(default.iter().any(|w| w.contains("max_patches")), "{default:?}");
    assert!(default.iter().any(|w| w.contains("do not chain")), "{default:?}");
    let tiny = warnings(&f["params"]["llama4@tiny"]["config"]);
    assert!(!tiny.iter().any(|w| w.contains("do not chain")), "{tiny:?}");
    let mut bad = f["params"]["llama4@tiny"]["config"].clone();
    bad["vision_config"]["pixel_shuffle_ratio"] = json!(0.3);
    let e = headroom::import::hf_config::import_hf_config(&bad).expect_err("0.3 is not 1 / n");
    assert_eq!(e.field, "vision_config.pixel_shuffle_ratio");
}
