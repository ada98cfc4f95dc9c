//! Vision-language models against transformers (`tests/measure/vlm.py`,
//! `tests/fixtures/measured/vlm_params.json`): the whole model's parameter count and its split
//! into `vision_tower`, `projector` and `language_model` equal what transformers builds, for
//! the Hub configs of Qwen2.5-VL-7B-Instruct (flat), Gemma 3 4B and LLaVA-1.5-7B and each
//! family's default config (Qwen3-VL's, Qwen3.5's and its MoE's, PaliGemma's, Idefics3's,
//! SmolVLM's, InternVL's and LLaVA-NeXT's included), an InternViT-6B-switched InternVL,
//! SmolVLM2-500M's shapes and Qwen3.5 with an empty `vision_config`.

mod vlm_parts;

use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/vlm_params.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn breakdown(config: &Value) -> headroom::Breakdown {
    let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": config}, "training": {"micro_batch": 1, "seq_len": 512, "precision": "bf16-mixed"}})).expect("scenario");
    estimate(&s)
}

#[test]
fn parts_equal_transformers() {
    let f = fixture();
    let cases = f["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 17);
    for (name, case) in cases {
        let b = breakdown(&case["config"]);
        assert_eq!(b.param_count, case["param_count"].as_u64().unwrap(), "{name}: param_count");
        vlm_parts::assert_parts(&b, &case["param_count_by_part"], name);
    }
}

/// The JSON output names the parts as the contract says; a text model has none.
#[test]
fn breakdown_json_names_the_parts() {
    let f = fixture();
    let b = serde_json::to_value(breakdown(&f["cases"]["gemma3@4b-it"]["config"])).unwrap();
    for key in ["vision_tower", "projector", "language_model"] {
        assert!(b["param_count_by_part"][key].as_u64().is_some_and(|n| n > 0), "{key}");
    }
    let text = serde_json::to_value(estimate(&Scenario::default())).unwrap();
    assert!(text.get("param_count_by_part").is_none());
}

/// Saved activations of tiny VLMs on CPU (`vlm_activations.json`, fp32, one image per
/// sample, one sample per micro-batch but LLaVA's `-b2` cases, transformers' CPU SDPA): the
/// projector's bytes equal Headroom's term, trained tower or frozen; the tower's are within 4%
/// (measured: Gemma 3's and PaliGemma's SigLIP +0.4%, Idefics3's and SmolVLM's +0.5% over
/// 5 and 4 tiles, InternVL's +0.4% and +0.3% (RMSNorm, q/k norms) over 3 tiles, LLaVA's and
/// LLaVA-NeXT's CLIP +0.4% (the pooled class token's norm keeps the whole last hidden state),
/// Qwen3-VL's ViT −0.3% and Qwen2.5-VL's windowed ViT −0.03% (`proj` reads the concatenated
/// per-window SDPA outputs, a copy; the window index is not modelled); a frozen tower saves nothing
/// but Qwen2.5-VL's 128-byte window index. `-- --nocapture` prints the table.
#[test]
fn tower_activations_against_cpu_measurement() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/vlm_activations.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let cases = f["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 24);
    for (name, case) in cases {
        let frozen = case["frozen_tower"].as_bool().unwrap();
        let mut training = json!({"micro_batch": case["micro_batch"], "seq_len": case["text_tokens"], "precision": "fp32", "resolution": case["resolution"]});
        if frozen {
            training["frozen"] = json!({"vision_tower": true});
        }
        let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]}, "training": training})).expect("scenario");
        let b = estimate(&s);
        let term = |n: &str| b.terms.iter().filter(|t| t.name == n).map(|t| t.bytes).sum::<u64>() as f64;
        let tower = ["vision tower blocks", "vision tower patch-embedding input (pixels)", "vision tower pre-norm", "vision tower rotary tables and final norm"]
            .iter()
            .map(|n| term(n))
            .sum::<f64>();
        let projector = term("projector input");
        let (mt, mp) = (case["tower_saved_bytes"].as_f64().unwrap(), case["projector_saved_bytes"].as_f64().unwrap());
        println!("{name:22} tower measured {mt:>9} model {tower:>9}   projector measured {mp:>7} model {projector:>7}");
        assert_eq!(projector, mp, "{name}: projector");
        if frozen {
            assert!(tower == 0.0 && mt <= 128.0, "{name}: frozen tower {mt} measured, {tower} modelled");
        } else {
            assert!((tower / mt - 1.0).abs() <= 0.04, "{name}: tower {tower} vs measured {mt}");
        }
    }
}

/// Under full activation checkpointing a trained tower's blocks keep only their inputs, as
/// transformers' `gradient_checkpointing_enable()` checkpoints them too
/// (`tests/measure/vlm_checkpointing.py` → `vlm_checkpointing.json`: Qwen2.5-VL, LLaVA, Gemma 3,
/// fp32, the checkpoints' held inputs recorded). Qwen's rotary cos and sin reach its blocks as
/// keyword arguments bound in a `functools.partial` (`GradientCheckpointingLayer.__call__`),
/// which the recorder cannot see but which stay alive for backward: the model keeps them, and
/// the comparison leaves them out.
#[test]
fn checkpointed_tower_keeps_its_block_inputs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/vlm_checkpointing.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let cases = f["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 6);
    for (name, case) in cases.iter().filter(|(_, c)| c["checkpointing"] == "full") {
        let training = json!({"micro_batch": 1, "seq_len": case["text_tokens"], "precision": "fp32", "resolution": case["resolution"], "checkpointing": "full"});
        let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]}, "training": training})).expect("scenario");
        let b = estimate(&s);
        let term = |n: &str| b.terms.iter().filter(|t| t.name == n).map(|t| t.bytes).sum::<u64>() as f64;
        assert_eq!(term("vision tower blocks"), 0.0, "{name}");
        let rotary = if name.starts_with("qwen") { term("vision tower rotary tables and final norm") } else { 0.0 };
        let tower =
            ["vision tower block inputs (full checkpointing)", "vision tower patch-embedding input (pixels)", "vision tower pre-norm", "vision tower rotary tables and final norm"]
                .iter()
                .map(|n| term(n))
                .sum::<f64>()
                - rotary;
        let measured = case["tower_saved_bytes"].as_f64().unwrap();
        let unchecked = cases[&name.replace("@full", "@none")]["tower_saved_bytes"].as_f64().unwrap();
        println!("{name:18} tower measured {measured:>8} (without checkpointing {unchecked:>8}) model {tower:>8}");
        assert!((tower / measured - 1.0).abs() <= 0.03, "{name}: tower {tower} vs measured {measured}");
    }
}

/// The visual inputs survive the link: `res=WxH`, `ipi`, `fr`, and the frozen tower in `fz`.
#[test]
fn visual_inputs_round_trip_through_the_link() {
    let mut s = Scenario::default();
    s.training.resolution = Some([1024, 768]);
    s.training.images_per_sample = Some(3);
    s.training.frames = Some(16);
    s.training.frozen.vision_tower = true;
    let query = headroom::url::encode(&s);
    assert!(query.contains("res=1024x768") && query.contains("ipi=3") && query.contains("fr=16") && query.contains("fz=0v"), "{query}");
    let (back, errors) = headroom::url::decode(&query);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back, s);
    let (_, errors) = headroom::url::decode("v=1&res=big");
    assert_eq!(errors[0].field, "url.res");
}

/// Bad visual inputs name their field.
#[test]
fn bad_visual_inputs_name_their_field() {
    let s: Scenario = serde_json::from_value(json!({"training": {"resolution": [0, 512], "images_per_sample": 0}})).expect("scenario");
    let errors = s.validate();
    assert!(errors.iter().any(|e| e.field == "training.resolution"), "{errors:?}");
    assert!(errors.iter().any(|e| e.field == "training.images_per_sample"), "{errors:?}");
}

/// Tiles and language-model tokens per image of the tiling families
/// (`tests/measure/vlm_image_tokens.py`, `vlm_image_tokens.json`: transformers' own image
/// processors on random images of 18 sizes, 224 px to 4000 × 100): Idefics3 (364-px tiles,
/// longest edge 1456), SmolVLM (512-px tiles, longest edge 2048), InternVL (448-px tiles,
/// 12 at most, a thumbnail) and LLaVA-NeXT (336-px CLIP, the default pinpoints; the tokens
/// from `pack_image_features` itself: base patches, unpadded grid features, newlines), every
/// size exact.
#[test]
fn tiles_and_image_tokens_follow_the_processors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/vlm_image_tokens.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let mut checked = 0;
    for family in ["idefics3", "smolvlm", "internvl", "llava_next"] {
        let case = &f["cases"][family];
        let mut config = case["config"].clone();
        config["text_config"] = json!({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 512});
        let imported = headroom::import::hf_config::import_hf_config(&config).unwrap_or_else(|e| panic!("{family}: {e}"));
        let tower = imported.arch.transformer().and_then(|t| t.tower.clone()).unwrap_or_else(|| panic!("{family}: no tower"));
        for row in case["sizes"].as_array().expect("sizes") {
            let (w, h) = (row["resolution"][0].as_u64().unwrap(), row["resolution"][1].as_u64().unwrap());
            assert_eq!(tower.sequences(w, h, 1), row["tiles"].as_u64().unwrap(), "{family} {w} × {h}: tiles");
            assert_eq!(tower.tokens(w, h, 1).1, row["image_tokens"].as_u64().unwrap(), "{family} {w} × {h}: image tokens");
            checked += 1;
        }
    }
    assert_eq!(checked, 72);
}

/// The new readers' bad keys name their field; what a config cannot say (the processor's
/// tile limits) is said in a warning.
#[test]
fn tiling_readers_name_bad_keys_and_assumptions() {
    let text = json!({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 512});
    let import = |config: Value| headroom::import::hf_config::import_hf_config(&config);
    let field = |config: Value| import(config).err().map(|e| e.field).unwrap_or_default();
    assert_eq!(field(json!({"model_type": "internvl", "downsample_ratio": 0.3, "text_config": text, "vision_config": {}})), "downsample_ratio");
    assert_eq!(field(json!({"model_type": "internvl", "text_config": text, "vision_config": {"norm_type": "batch_norm"}})), "vision_config.norm_type");
    assert_eq!(field(json!({"model_type": "internvl", "vision_feature_select_strategy": "full", "text_config": text, "vision_config": {}})), "vision_feature_select_strategy");
    assert_eq!(field(json!({"model_type": "internvl", "text_config": text, "vision_config": {"image_size": [448, 224]}})), "vision_config.image_size");
    assert_eq!(field(json!({"model_type": "llava_next", "image_grid_pinpoints": [[336]], "text_config": text, "vision_config": {}})), "image_grid_pinpoints");
    assert_eq!(field(json!({"model_type": "llava_next", "vision_feature_select_strategy": "full", "text_config": text, "vision_config": {}})), "vision_feature_select_strategy");
    assert_eq!(field(json!({"model_type": "smolvlm", "text_config": text, "vision_config": {"size": {"longest_edge": 0}}})), "vision_config.size.longest_edge");
    let warnings = |config: Value| import(config).expect("config").warnings.join("\n");
    assert!(warnings(json!({"model_type": "internvl", "text_config": text, "vision_config": {}})).contains("max_patches"));
    let smol = warnings(json!({"model_type": "smolvlm", "text_config": text, "vision_config": {}}));
    assert!(smol.contains("size.longest_edge not set") && smol.contains("does not divide"), "{smol}");
    assert!(warnings(json!({"model_type": "llava_next", "text_config": text, "vision_config": {}})).contains("image_grid_pinpoints"));
}

/// A frozen tower keeps tensors when the run checkpoints: `gradient_checkpointing_enable()`
/// calls `enable_input_require_grads()`, which hooks the tower's patch embedding too, so the
/// frozen tower runs under autograd (`tests/measure/vlm_frozen_checkpointing.py` →
/// `vlm_frozen_checkpointing.json`: the ten tiny VLMs, fp32, PEFT LoRA r 4 on the language
/// model, every other weight frozen; a checkpoint's held inputs counted when one needs a
/// gradient). Without checkpointing nothing on the vision side is saved. Qwen's rotary tables
/// stay in the checkpoints' bound keyword arguments, which the recorder cannot see (as in
/// `checkpointed_tower_keeps_its_block_inputs`): left out of the comparison.
#[test]
fn frozen_tower_keeps_block_inputs_when_the_run_checkpoints() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/vlm_frozen_checkpointing.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let cases = f["cases"].as_object().expect("cases");
    assert_eq!(cases.len(), 22);
    let names = [
        "vision tower block inputs (frozen, full checkpointing)",
        "vision tower rotary tables and final norm",
        "vision tower window indices",
        "vision tower pre-norm",
        "projector input",
    ];
    for (name, case) in cases {
        let training = json!({"micro_batch": 1, "seq_len": case["text_tokens"], "precision": "fp32", "resolution": case["resolution"],
                              "checkpointing": case["checkpointing"], "lora": {"rank": case["lora_rank"], "dropout": 0.0}});
        let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]}, "training": training})).expect("scenario");
        let b = estimate(&s);
        let term = |n: &str| b.terms.iter().filter(|t| t.name == n).map(|t| t.bytes).sum::<u64>() as f64;
        let rotary = if name.starts_with("qwen") { term("vision tower rotary tables and final norm") } else { 0.0 };
        let model = names.iter().map(|n| term(n)).sum::<f64>() - rotary;
        let measured = case["tower_saved_bytes"].as_f64().unwrap() + case["projector_saved_bytes"].as_f64().unwrap();
        println!("{name:20} hooked {:?} measured {measured:>8} model {model:>8}", case["hooked_embeddings"]);
        if case["checkpointing"] == "none" {
            assert_eq!((measured, model), (0.0, 0.0), "{name}");
        } else {
            assert!(measured > 0.0 && (model / measured - 1.0).abs() <= 0.03, "{name}: model {model} vs measured {measured}");
        }
    }
}

/// Qwen3.5, a Gated DeltaNet + attention language model behind Qwen3-VL's tower without
/// DeepStack (`vlm_activations.json` `qwen3_5@…`): the whole model's saved bytes with its image
/// tokens in the language model's sequence, on transformers' torch fallback of the delta rule
/// (`mixer_kernels: "torch"`, what the CPU runs), tower trained and frozen, within 3 %
/// (measured: −1.1 % and −1.7 %, both short by about 24 KB on the attention block's q/k norms;
/// not traced further).
#[test]
fn qwen3_5_whole_model_with_its_image_tokens() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/vlm_activations.json");
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    for name in ["qwen3_5@trained", "qwen3_5@frozen"] {
        let case = &f["cases"][name];
        let mut training = json!({"micro_batch": 1, "seq_len": case["text_tokens"], "precision": "fp32", "resolution": case["resolution"], "mixer_kernels": "torch"});
        if case["frozen_tower"] == true {
            training["frozen"] = json!({"vision_tower": true});
        }
        let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": case["config"]}, "training": training})).expect("scenario");
        let b = estimate(&s);
        let model: f64 = b.terms.iter().filter(|t| format!("{:?}", t.lifetime).starts_with("Saved")).map(|t| t.bytes as f64).sum();
        // What the forward leaves held: the delta rule's last state update (one chunk here) is
        // saved by a branch the forward drops, and freed with it.
        let measured = case["model_saved_bytes"].as_f64().unwrap() - case["model_unreachable_bytes"].as_f64().unwrap();
        println!("{name:16} model {model:>9} measured {measured:>9} ({:+.2} %)", 100.0 * (model / measured - 1.0));
        assert!((model / measured - 1.0).abs() <= 0.03, "{name}: model {model} vs measured {measured}");
    }
}
