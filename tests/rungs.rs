//! The ladder's rows (`plan::rungs`) against what their steps do: one row per step in
//! `Step::ALL`'s order with distinct labels; a step changes no field its row does not name;
//! a step whose row says it costs recomputation, communication or a pipeline bubble raises
//! that cost (`StepCosts`) where it changes the scenario.

use std::collections::BTreeMap;

use headroom::fields::field;
use headroom::model::precision::Precision;
use headroom::plan::diffusion_ladder::is_pipeline;
use headroom::plan::escalation::{apply, costs, Step};
use headroom::plan::rungs::{Cost, RUNGS};
use headroom::scenario::{Attention, Engine, Mode, ModelSpec, Scenario};
use headroom::{estimate, Breakdown};
use serde_json::Value;

fn leaves(v: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(map) if prefix != "model" => {
            for (k, child) in map {
                leaves(child, &if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, out);
            }
        }
        _ => {
            out.insert(prefix.to_string(), v.clone());
        }
    }
}

/// The dotted paths whose values differ between `a` and `b`. A path one side leaves out (a
/// section serialised only when it is not its default) differs only if writing the other
/// side's value there changes that side's scenario.
fn changed(a: &Scenario, b: &Scenario) -> Vec<String> {
    let (ja, jb) = (serde_json::to_value(a).expect("json"), serde_json::to_value(b).expect("json"));
    let (mut x, mut y) = (BTreeMap::new(), BTreeMap::new());
    leaves(&ja, "", &mut x);
    leaves(&jb, "", &mut y);
    let same_as_default = |json: &Value, scenario: &Scenario, path: &str, value: &Value| {
        let mut with = json.clone();
        let mut cur = &mut with;
        let keys: Vec<&str> = path.split('.').collect();
        for k in &keys[..keys.len() - 1] {
            let slot = cur.as_object_mut().expect("object").entry(k.to_string()).or_insert_with(|| Value::Object(Default::default()));
            if !slot.is_object() {
                *slot = Value::Object(Default::default());
            }
            cur = slot;
        }
        cur.as_object_mut().expect("object").insert(keys[keys.len() - 1].to_string(), value.clone());
        serde_json::from_value::<Scenario>(with).is_ok_and(|s| s == *scenario)
    };
    let mut paths: Vec<String> = x.keys().chain(y.keys()).cloned().collect();
    paths.sort();
    paths.dedup();
    paths.retain(|k| match (x.get(k), y.get(k)) {
        (Some(u), Some(v)) => u != v,
        (None, Some(v)) => !same_as_default(&ja, a, k, v),
        (Some(u), None) => !same_as_default(&jb, b, k, u),
        (None, None) => false,
    });
    paths
}

fn covered(path: &str, by: &[&str]) -> bool {
    by.iter().any(|c| path == *c || path.starts_with(&format!("{c}.")))
}

/// Scenarios the steps act on, with GPU budgets: the default (Llama 3 8B, bf16, one H100),
/// GPT-2 in fp32 with eager attention, a long-sequence run, vLLM and SGLang servers, and Stable
/// Diffusion 1.5 trained and generating.
fn cases() -> Vec<(Scenario, u64)> {
    let mut fp32 = Scenario { model: ModelSpec::Preset("gpt2".into()), ..Scenario::default() };
    fp32.training.precision = Precision::Fp32;
    fp32.training.attention = Attention::Eager;
    fp32.training.micro_batch = 16;
    let mut long = Scenario::default();
    long.training.seq_len = 32_768;
    long.training.micro_batch = 4;
    let mut serving = Scenario::default();
    serving.training.mode = Mode::Inference;
    serving.training.serving.engine = Engine::Vllm;
    serving.training.micro_batch = 64;
    serving.training.serving.max_num_seqs = Some(64);
    serving.training.serving.max_model_len = Some(8192);
    let mut sglang = serving.clone();
    sglang.training.serving.engine = Engine::Sglang;
    let mut generation = pipeline();
    generation.training.mode = Mode::Inference;
    vec![(Scenario::default(), 1), (Scenario::default(), 8), (fp32.clone(), 1), (fp32, 4), (long, 16), (serving, 2), (sglang, 1), (pipeline(), 1), (generation, 1)]
}

/// Stable Diffusion 1.5 (UNet, VAE, CLIP text encoder) from the fixtures' diffusers configs.
fn pipeline() -> Scenario {
    let config = |part: &str| -> Value {
        let path = format!("{}/tests/fixtures/diffusers/configs/stable-diffusion-v1-5--stable-diffusion-v1-5/{part}/config.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("JSON")
    };
    let pipeline = serde_json::json!({
        "model_index": {"_class_name": "StableDiffusionPipeline", "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"], "text_encoder": ["transformers", "CLIPTextModel"], "tokenizer": ["transformers", "CLIPTokenizer"]},
        "unet": config("unet"), "vae": config("vae"), "text_encoder": config("text_encoder"),
    });
    // Prompts encoded every step (cached is the default), so the caching step has work to do.
    serde_json::from_value(serde_json::json!({"model": {"pipeline": pipeline}, "training": {"diffusion": {"cache_text_embeddings": false}}})).expect("pipeline scenario")
}

#[test]
fn one_row_per_step_with_its_own_label() {
    assert_eq!(RUNGS.iter().map(|r| r.step).collect::<Vec<_>>(), Step::ALL);
    for (i, step) in Step::ALL.iter().enumerate() {
        assert_eq!(step.rung().step, *step);
        assert_eq!(*step as usize, i);
        assert!(RUNGS.iter().filter(|r| r.label == step.label()).count() == 1, "{} is the label of two steps", step.label());
    }
    for rung in &RUNGS {
        for path in rung.changes {
            assert!(
                field(path).is_some() || headroom::fields::FIELDS.iter().any(|f| f.path.starts_with(&format!("{path}."))),
                "{:?} names {path}, not a scenario field",
                rung.step
            );
        }
    }
}

/// Every field a step changes is one its row names; each row's fields are changed by its step
/// in at least one case (no stale entry).
#[test]
fn steps_change_only_what_their_row_says() {
    let mut used: std::collections::HashMap<Step, Vec<String>> = std::collections::HashMap::new();
    for (s, gpus) in cases() {
        for step in Step::ALL {
            let (after, note) = apply(step, &s, gpus);
            let paths = changed(&s, &after);
            for path in &paths {
                assert!(covered(path, step.rung().changes), "{step:?} on {} with {gpus} GPUs changed {path} ({note}); its row names {:?}", s.model.label(), step.rung().changes);
            }
            used.entry(step).or_default().extend(paths);
        }
    }
    for rung in &RUNGS {
        let seen = used.get(&rung.step).cloned().unwrap_or_default();
        assert!(!seen.is_empty(), "{:?} changed nothing in any case", rung.step);
    }
}

/// Recomputation, communication and the bubble are measured (`plan::step_costs`): a step
/// whose row names one of them raises it wherever it changes a training scenario.
#[test]
fn measured_costs_rise_where_the_row_says() {
    let mut checked = 0;
    // Serving has no backward pass to recompute in: the training cases only. A diffusion
    // pipeline's step costs do not count recomputation (its checkpointing leaves
    // recompute_fraction at 0): left out, and reported.
    for (s, gpus) in cases().into_iter().filter(|(s, _)| s.training.mode == Mode::Train && !is_pipeline(s)) {
        let before: Breakdown = estimate(&s);
        let cost_before = costs(&s, &before);
        for rung in RUNGS.iter().filter(|r| matches!(r.cost, Cost::Recompute | Cost::Communication | Cost::Bubble)) {
            let (after, _) = apply(rung.step, &s, gpus);
            if after == s {
                continue;
            }
            let c = costs(&after, &estimate(&after));
            let (was, now) = match rung.cost {
                Cost::Recompute => (cost_before.recompute_fraction, c.recompute_fraction),
                Cost::Communication => (cost_before.communication_bytes, c.communication_bytes),
                _ => (cost_before.bubble_fraction, c.bubble_fraction),
            };
            assert!(now > was, "{:?} on {} ({gpus} GPUs): {:?} {was} → {now}", rung.step, s.model.label(), rung.cost);
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked}");
}
