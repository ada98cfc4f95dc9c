//! Diffusion pipelines through the scenario contract: `{"model": {"hf_config": CONFIG}}` with
//! one diffusers component or a pipeline's text-encoder config, `{"model": {"pipeline": …}}`
//! with a whole pipeline; what a training step keeps on the GPU as the caching switches
//! change; generation's offload modes; bad input named by its field.

use headroom::{estimate, Scenario};
use serde_json::{json, Value};

fn config(path: &str) -> Value {
    let full = format!("{}/tests/fixtures/diffusers/configs/{path}/config.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))).expect("JSON")
}

fn scenario(model: Value, training: Value) -> Scenario {
    serde_json::from_value(json!({"model": model, "training": training})).expect("scenario")
}

/// A pipeline's text-encoder config counts only what its class builds: the T5 encoder of
/// Flux (no decoder, no LM head), not the T5 encoder-decoder its `model_type` names.
#[test]
fn a_text_encoder_config_counts_only_its_class() {
    let b = estimate(&scenario(json!({"hf_config": config("black-forest-labs--FLUX.1-dev/text_encoder_2")}), json!({})));
    assert_eq!(b.param_count, 4_762_310_656);
    let clip_g = estimate(&scenario(json!({"hf_config": config("stabilityai--stable-diffusion-xl-base-1.0/text_encoder_2")}), json!({})));
    assert_eq!(clip_g.param_count, 694_659_840);
}

/// A frozen text encoder alone trains nothing: its weights are all the step holds.
#[test]
fn a_lone_text_encoder_is_frozen() {
    let b = estimate(&scenario(json!({"hf_config": config("black-forest-labs--FLUX.1-dev/text_encoder_2")}), json!({"precision": "bf16-mixed"})));
    assert_eq!(b.trainable_params, 0);
}

/// An unknown diffusers class is refused, naming `_class_name` and the classes read.
#[test]
fn an_unknown_component_class_is_named() {
    let raw = json!({"model": {"hf_config": {"_class_name": "NoSuchModel2D", "_diffusers_version": "0.30.0"}}});
    let err = Scenario::from_json(&raw.to_string()).unwrap_err().to_string();
    assert!(err.contains("hf_config._class_name") && err.contains("NoSuchModel2D") && err.contains("CLIPTextModel"), "{err}");
}

/// A pipeline whose `model_index.json` lists a component without its config is refused,
/// naming the component.
#[test]
fn a_pipeline_without_a_listed_config_is_named() {
    let raw = json!({"model": {"pipeline": {"model_index": {"_class_name": "FluxPipeline", "text_encoder": ["transformers", "CLIPTextModel"]}}}});
    let err = Scenario::from_json(&raw.to_string()).unwrap_err().to_string();
    assert!(err.contains("pipeline.text_encoder") && err.contains("missing"), "{err}");
}

/// A pipeline round-trips through the scenario JSON and the link.
#[test]
fn a_pipeline_round_trips_through_json_and_links() {
    let pipeline = json!({
        "model_index": {"_class_name": "StableDiffusionPipeline", "text_encoder": ["transformers", "CLIPTextModel"], "tokenizer": ["transformers", "CLIPTokenizer"]},
        "text_encoder": config("stable-diffusion-v1-5--stable-diffusion-v1-5/text_encoder"),
    });
    let s = scenario(json!({"pipeline": pipeline}), json!({"diffusion": {"cache_latents": true, "vae_tiling": true}}));
    let again: Scenario = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(again, s);
    let (decoded, errors) = headroom::url::decode(&headroom::url::encode(&s));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(decoded, s, "the pipeline and its diffusion options survive the link");
    assert_eq!(estimate(&decoded).param_count, 123_060_480);
}

/// Prompt embeddings cached (the scripts' default): the text encoders are not on the GPU;
/// encoded every step they are, in the run's 16-bit dtype.
#[test]
fn cached_embeddings_take_the_text_encoders_off_the_gpu() {
    let model = json!({"hf_config": config("black-forest-labs--FLUX.1-dev/text_encoder_2")});
    let cached = estimate(&scenario(model.clone(), json!({"precision": "bf16-mixed", "diffusion": {"cache_text_embeddings": true}})));
    let encoded = estimate(&scenario(model, json!({"precision": "bf16-mixed", "diffusion": {"cache_text_embeddings": false}})));
    assert_eq!(cached.parameters, 0);
    assert_eq!(encoded.parameters, 4_762_310_656 * 2);
}

/// Every catalogue pipeline counts what diffusers and transformers build from its component
/// configs: the sum of their meta-device counts (`diffusion_unet_vae.json`,
/// `diffusion_dit.json`, `diffusion_text_encoders.json`, `diffusion_video_parts.json`),
/// matched by the config's content;
/// a component Headroom does not build yet is named in the preset's notes instead.
#[test]
fn catalogue_pipelines_count_their_components() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut measured: Vec<(Value, u64)> = Vec::new();
    for fixture in ["diffusion_unet_vae", "diffusion_dit", "diffusion_text_encoders", "diffusion_video_parts"] {
        let f: Value = serde_json::from_str(&std::fs::read_to_string(format!("{root}/tests/fixtures/measured/{fixture}.json")).unwrap()).unwrap();
        for c in f["counts"].as_array().unwrap() {
            // A Hub config is named by its path; a tiny one is inline.
            let cfg = match &c["config"] {
                Value::String(path) => serde_json::from_str(&std::fs::read_to_string(format!("{root}/{path}")).unwrap()).unwrap(),
                inline => inline.clone(),
            };
            measured.push((cfg, c["params"].as_u64().unwrap()));
        }
    }
    let mut pipelines = 0;
    for entry in std::fs::read_dir(format!("{root}/src/import/catalogue")).unwrap() {
        let file: Value = serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        let Some(pipeline) = file.get("pipeline") else { continue };
        pipelines += 1;
        let id = file["_headroom"]["id"].as_str().unwrap();
        let mut want = 0;
        for (name, cfg) in pipeline.as_object().unwrap().iter().filter(|(k, _)| *k != "model_index") {
            let params = measured.iter().find(|(m, _)| m == cfg).unwrap_or_else(|| panic!("{id}: {name}'s config is not measured")).1;
            want += params;
        }
        let s: Scenario = serde_json::from_value(json!({"model": {"preset": id}})).unwrap();
        assert_eq!(estimate(&s).param_count, want, "{id}");
    }
    assert_eq!(pipelines, 17);
}

/// SDXL's pipeline decodes with its `force_upcast` VAE in fp32 when it runs in fp16
/// (`needs_upcasting`), not in bf16: the VAE's weights double and its decode is fp32's.
#[test]
fn sdxl_in_fp16_upcasts_its_vae() {
    let term = |precision: &str, name: &str| {
        let s: Scenario = serde_json::from_value(json!({
            "model": {"preset": "stabilityai/stable-diffusion-xl-base-1.0"},
            "training": {"mode": "inference", "precision": precision, "micro_batch": 1},
        }))
        .unwrap();
        estimate(&s).terms.iter().find(|t| t.name == name).map_or(0, |t| t.bytes)
    };
    let (weights_fp16, weights_bf16) = (term("fp16-mixed", "VAE weights"), term("bf16", "VAE weights"));
    assert_eq!(weights_fp16, 2 * weights_bf16, "fp32 VAE weights under fp16");
    assert_eq!(weights_bf16, 83_653_863 * 2);
    assert!(term("fp16-mixed", "VAE decode") > term("bf16", "VAE decode"));
    // FLUX.1 has a force_upcast VAE too, but its pipeline never upcasts it.
    let flux = |precision: &str| {
        let s: Scenario = serde_json::from_value(json!({"model": {"preset": "black-forest-labs/FLUX.1-dev"}, "training": {"mode": "inference", "precision": precision}})).unwrap();
        estimate(&s).terms.iter().find(|t| t.name == "VAE weights").map_or(0, |t| t.bytes)
    };
    assert_eq!(flux("fp16-mixed"), flux("bf16"));
}

/// A hostile layer count is refused before any tensor list is built, naming the field (the
/// 2²⁴ every dimension may reach would list hundreds of millions of tensors).
#[test]
fn a_huge_block_count_is_refused_by_name() {
    for (config, field) in [
        (json!({"_class_name": "FluxTransformer2DModel", "num_layers": 16_777_216}), "hf_config.num_layers"),
        (json!({"_class_name": "UNet2DConditionModel", "layers_per_block": 100_000}), "hf_config.layers_per_block"),
        (json!({"architectures": ["T5EncoderModel"], "num_layers": 16_777_216}), "hf_config.num_hidden_layers"),
    ] {
        let err = Scenario::from_json(&json!({"model": {"hf_config": config}}).to_string()).unwrap_err().to_string();
        assert!(err.contains(field) && err.contains("at most 1024 blocks"), "{err}");
    }
}

/// diffusers' SDXL training scripts keep the pipeline's own VAE (`force_upcast`) in fp32 in a
/// 16-bit run and cast a replacement VAE such as the fp16-fix to the weight dtype; the SD 1.5
/// scripts cast theirs. The VAE is on the GPU while latents are not cached.
#[test]
fn sdxl_training_keeps_its_own_vae_in_fp32() {
    const SDXL_VAE: u64 = 83_653_863;
    let frozen = |model: Value, precision: &str, cache: bool| {
        let s = scenario(model, json!({"precision": precision, "micro_batch": 1, "lora": {"rank": 16}, "diffusion": {"cache_latents": cache}}));
        estimate(&s).terms.iter().find(|t| t.name == "frozen weights").map_or(0, |t| t.bytes)
    };
    let vae_bytes = |model: Value, precision: &str| frozen(model.clone(), precision, false) - frozen(model, precision, true);
    let sdxl = json!({"preset": "stabilityai/stable-diffusion-xl-base-1.0"});
    assert_eq!(vae_bytes(sdxl.clone(), "bf16"), 4 * SDXL_VAE);
    assert_eq!(vae_bytes(sdxl.clone(), "fp16-mixed"), 4 * SDXL_VAE);
    assert_eq!(vae_bytes(sdxl, "fp32"), 4 * SDXL_VAE);
    // The same pipeline with the fp16-fix VAE (`force_upcast: false`) in its place.
    let path = format!("{}/src/import/catalogue/stabilityai--stable-diffusion-xl-base-1.0.json", env!("CARGO_MANIFEST_DIR"));
    let mut pipeline: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    pipeline["pipeline"]["vae"] = config("madebyollin--sdxl-vae-fp16-fix/vae");
    assert_eq!(vae_bytes(json!({"pipeline": pipeline["pipeline"]}), "bf16"), 2 * SDXL_VAE);
    // SD 1.5's scripts cast the VAE to the weight dtype.
    let sd15 = json!({"preset": "stable-diffusion-v1-5/stable-diffusion-v1-5"});
    assert_eq!(vae_bytes(sd15, "bf16"), 2 * SDXL_VAE);
}
