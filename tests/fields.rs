//! The field table (`headroom::fields`) against the scenario type, the link codec, the
//! validation and the page: every scalar leaf of a fully populated scenario has exactly one
//! entry; every entry round-trips through a link alone and with every other field changed at
//! once; each range is the one `Scenario::validate` enforces; each choice lists exactly the ids
//! serde reads; each place an error is shown is a control on the page.

use std::collections::BTreeSet;

use headroom::fields::{anchors, field, Ends, Field, Link, Shown, Values, FIELDS};
use headroom::scenario::{DeviceSpec, Lora, ModelSpec, Nf4Quantizer, Scenario, Serving, Techniques};
use headroom::url;
use proptest::prelude::*;
use serde_json::Value;

const MODELS: [&str; 4] = ["gpt2", "meta-llama/Meta-Llama-3-8B", "llama-3.2-1b", "mixtral-8x7b"];
const DEVICES: [&str; 3] = ["a100-80gb", "h100-sxm-80gb", "rtx-4090-24gb"];

/// A scenario with every optional part present and every field its serializer would leave out
/// at its default set otherwise, so its JSON holds every leaf.
fn fully_populated() -> Scenario {
    let mut s = Scenario::default();
    s.training.image_size = Some(224);
    s.training.resolution = Some([448, 448]);
    s.training.images_per_sample = Some(2);
    s.training.frames = Some(8);
    s.training.lora = Some(Lora {
        dropout: 0.1,
        fp32_unquantised: false,
        fp32_adapters: false,
        quantize_at_load: false,
        quantizer: Nf4Quantizer::Torchao,
        vision_tower: true,
        ..Lora::default()
    });
    // `litgpt_modules` is left out of the JSON when false.
    s.training.techniques = Techniques { litgpt_modules: true, ..Techniques::default() };
    s.training.serving = Serving {
        weights: Some(headroom::scenario::WeightFormat::Int8),
        kv_cache: Some(headroom::scenario::KvCacheFormat::Fp8),
        gpu_memory_utilization: Some(0.9),
        mem_fraction_static: Some(0.8),
        max_model_len: Some(4096),
        max_num_seqs: Some(64),
        max_num_batched_tokens: Some(2048),
        block_size: Some(16),
        ..Serving::default()
    };
    s.device = DeviceSpec {
        capacity_bytes: Some(80e9),
        hbm_bandwidth: Some(3e12),
        host_link_bandwidth: Some(6.4e10),
        bf16_tflops: Some(900.0),
        interconnect_bandwidth: Some(4.5e11),
        network_bandwidth: Some(5e10),
        gpus_per_node: Some(8),
        ..DeviceSpec::default()
    };
    s.runtime.host_memory_bytes = Some(256 << 30);
    s.framework = headroom::profiles::Framework::Torchtune;
    s.run.price_per_gpu_hour = Some(2.0);
    s.training.diffusion = headroom::model::diffusion::options::DiffusionOptions {
        cache_latents: true,
        offload: headroom::model::diffusion::options::GenerationOffload::Model,
        guidance: Some(true),
        text_tokens: Some(77),
        ..Default::default()
    };
    s
}

/// The dotted paths of the leaves of `v`: scalars and arrays; `model` is one leaf (a preset,
/// an architecture or a pasted config, each read by its own decoder).
fn leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) if prefix != "model" => {
            for (k, child) in map {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaves(child, &path, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

#[test]
fn every_leaf_has_exactly_one_entry() {
    let s = fully_populated();
    let json = serde_json::to_value(&s).expect("serialise");
    let mut found = Vec::new();
    leaves(&json, "", &mut found);
    assert!(!found.iter().any(|p| p.starts_with("model.")), "{found:?}");
    let table: Vec<&str> = FIELDS.iter().map(|f| f.path).collect();
    let unique: BTreeSet<&str> = table.iter().copied().collect();
    assert_eq!(unique.len(), table.len(), "a path is in the table twice");
    let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    let missing: Vec<_> = found.difference(&unique).collect();
    let extra: Vec<_> = unique.difference(&found).collect();
    assert!(missing.is_empty() && extra.is_empty(), "leaves without an entry: {missing:?}; entries without a leaf: {extra:?}");
    // A key names one field, except a key read by hand for several (`lora`, `fz`).
    let mut keys = BTreeSet::new();
    for f in FIELDS.iter().filter(|f| !matches!(f.link, Link::Own(_))) {
        assert!(keys.insert(f.link.key()), "key {} is used twice", f.link.key());
    }
    for f in FIELDS.iter().filter(|f| matches!(f.link, Link::Own(_))) {
        assert!(!keys.contains(f.link.key()), "key {} is both a scalar and read by hand", f.link.key());
    }
}

/// Sets `path` in `json`, creating the objects on the way.
fn set(json: &mut Value, path: &str, value: Value) {
    let mut cur = json;
    let keys: Vec<&str> = path.split('.').collect();
    for k in &keys[..keys.len() - 1] {
        let obj = cur.as_object_mut().expect("object");
        let slot = obj.entry(k.to_string()).or_insert_with(|| Value::Object(Default::default()));
        if !slot.is_object() {
            *slot = Value::Object(Default::default());
        }
        cur = slot;
    }
    cur.as_object_mut().expect("object").insert(keys[keys.len() - 1].to_string(), value);
}

/// An id as the scenario JSON writes it: a number for the ZeRO stage, a string otherwise.
fn id_value(id: &str) -> Value {
    id.parse::<u64>().map_or_else(|_| Value::String(id.into()), Value::from)
}

/// The `k`-th value of a field's accepted values (any `k`: it wraps around).
fn sample(f: &Field, k: u64) -> Value {
    match f.values {
        Values::Count { min, max } => Value::from(min + k % (max - min).saturating_add(1).max(1)),
        Values::Real { min, max, .. } => Value::from(min + (max - min) * ((k % 997) + 1) as f64 / 999.0),
        Values::Switch => Value::Bool(k % 2 == 1),
        Values::Choice(ids) => id_value(ids[(k % ids.len() as u64) as usize]),
        Values::List(ids) => {
            let bits = k % ((1 << ids.len()) - 1) + 1;
            Value::Array(ids.iter().enumerate().filter(|(i, _)| bits >> i & 1 == 1).map(|(_, id)| id_value(id)).collect())
        }
        Values::Pair { min, max } => Value::from(vec![min + k % (max - min + 1), min + (k / 7) % (max - min + 1)]),
        Values::Catalogue if f.path == "model" => serde_json::json!({ "preset": MODELS[(k % MODELS.len() as u64) as usize] }),
        Values::Catalogue => Value::from(DEVICES[(k % DEVICES.len() as u64) as usize]),
    }
}

fn default_json() -> Value {
    serde_json::to_value(Scenario::default()).expect("serialise")
}

fn through_a_link(s: &Scenario) -> Result<(), String> {
    let query = url::encode(s);
    let (back, errors) = url::decode(&query);
    if !errors.is_empty() {
        return Err(format!("{query}: {errors:?}"));
    }
    if back != *s {
        return Err(format!("{query} decodes to another scenario:\n{back:?}\n!=\n{s:?}"));
    }
    Ok(())
}

/// Each field alone, changed from its default, comes back from its link; a field whose only
/// value is its default (the version: a link is always written in the current one) is named.
#[test]
fn every_field_round_trips_through_a_link() {
    let mut fixed = Vec::new();
    for f in FIELDS {
        let changed = (0..64).find_map(|k| {
            let mut json = default_json();
            set(&mut json, f.path, sample(f, k));
            serde_json::from_value::<Scenario>(json).ok().filter(|s| *s != Scenario::default())
        });
        match changed {
            Some(s) => through_a_link(&s).unwrap_or_else(|e| panic!("{}: {e}", f.path)),
            None => fixed.push(f.path),
        }
    }
    assert_eq!(fixed, ["version"]);
}

/// The errors `validate` reports on `path` when it holds `value`.
fn errors_at(path: &str, value: Value) -> usize {
    let mut json = default_json();
    set(&mut json, path, value);
    let s: Scenario = serde_json::from_value(json).unwrap_or_else(|e| panic!("{path}: {e}"));
    s.validate().iter().filter(|e| e.field == path).count()
}

/// The table's ranges are the ones validation enforces: the ends it accepts are accepted, one
/// step beyond them is refused (the upper end is checked alone only where no model or device
/// bounds it further).
#[test]
fn ranges_are_the_ones_validate_enforces() {
    let mut checked = 0;
    for f in FIELDS {
        let p = f.path;
        match f.values {
            Values::Count { min, max } => {
                assert_eq!(errors_at(p, Value::from(min)), 0, "{p} = {min}");
                if min > 0 {
                    assert!(errors_at(p, Value::from(min - 1)) > 0, "{p} = {} passes", min - 1);
                }
                if f.bound.is_none() {
                    assert_eq!(errors_at(p, Value::from(max)), 0, "{p} = {max}");
                }
                if max < u64::MAX {
                    assert!(errors_at(p, Value::from(max + 1)) > 0, "{p} = {} passes", max + 1);
                }
                checked += 1;
            }
            Values::Pair { min, max } => {
                assert_eq!(errors_at(p, Value::from(vec![min, max])), 0, "{p}");
                assert!(errors_at(p, Value::from(vec![min - 1, max])) > 0 && errors_at(p, Value::from(vec![min, max + 1])) > 0, "{p}");
                checked += 1;
            }
            Values::Real { min, max, ends } => {
                let step = (max - min) * 1e-3;
                let (low_ok, high_ok) = match ends {
                    Ends::Both => (true, true),
                    Ends::AboveMin => (false, true),
                    Ends::BelowMax => (true, false),
                };
                assert_eq!(errors_at(p, Value::from(min)) == 0, low_ok, "{p} = {min}");
                assert_eq!(errors_at(p, Value::from(max)) == 0, high_ok, "{p} = {max}");
                assert_eq!(errors_at(p, Value::from((min + max) / 2.0)), 0, "{p}");
                assert!(errors_at(p, Value::from(min - step)) > 0 && errors_at(p, Value::from(max + step)) > 0, "{p}: beyond the ends passes");
                checked += 1;
            }
            _ => {}
        }
    }
    assert!(checked > 30, "{checked}");
}

/// Every id of a choice is read by serde, and the ids are all it reads (its "expected one of"
/// list, where serde writes one).
#[test]
fn choices_are_the_ids_serde_reads() {
    for f in FIELDS {
        let (ids, list) = match f.values {
            Values::Choice(ids) => (ids, false),
            Values::List(ids) => (ids, true),
            _ => continue,
        };
        let wrap = |v: Value| if list { Value::Array(vec![v]) } else { v };
        for id in ids {
            let mut json = default_json();
            set(&mut json, f.path, wrap(id_value(id)));
            assert!(serde_json::from_value::<Scenario>(json).is_ok(), "{}: {id}", f.path);
        }
        let mut json = default_json();
        set(&mut json, f.path, wrap(Value::from("no-such-id")));
        let message = serde_json::from_value::<Scenario>(json).expect_err(f.path).to_string();
        if let Some((_, expected)) = message.split_once("expected one of ") {
            let known: BTreeSet<&str> = expected.split('`').skip(1).step_by(2).collect();
            assert_eq!(known, ids.iter().copied().collect(), "{}", f.path);
        }
    }
}

/// String literals of the page's source that look like scenario paths.
fn paths_named_by_the_page() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src/ui") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read");
                for literal in text.split('"').skip(1).step_by(2) {
                    let section = literal.split('.').next().unwrap_or("");
                    let dotted = literal.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
                    if dotted
                        && ["training", "parallel", "runtime", "run", "device", "model", "framework"].contains(&section)
                        && (literal.contains('.') || field(literal).is_some() || anchors().contains(&literal))
                    {
                        found.insert(literal.to_string());
                    }
                }
            }
        }
    }
    found
}

/// Where the table shows an error is a control the page has, and every path the page names
/// is in the table: a control added without its entry, or a typo, fails here.
#[test]
fn errors_are_shown_where_the_page_has_controls() {
    let named = paths_named_by_the_page();
    for anchor in anchors() {
        assert!(named.contains(anchor), "the table shows errors under {anchor}, which no control of src/ui names");
    }
    for path in &named {
        let known = anchors().contains(&path.as_str()) || field(path).is_some();
        assert!(known, "src/ui names {path}, which is not in the field table");
        if let Some(f) = field(path) {
            assert!(f.shown != Shown::Listed, "src/ui has a control for {path}, which the table lists above the chart");
        }
    }
}

/// A scenario with every field of the table set to its `k`-th value (an optional one left out
/// when `k` says so), if that is a scenario.
fn with_every_field(ks: &[u64]) -> Option<Scenario> {
    let mut json = default_json();
    for (f, &k) in FIELDS.iter().zip(ks) {
        if f.optional && k % 5 == 0 {
            continue;
        }
        set(&mut json, f.path, sample(f, k));
    }
    serde_json::from_value::<Scenario>(json).ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every field of the table changed at once (techniques, runtime, serving, the adapters,
    /// the device's figures included) comes back from the link.
    #[test]
    fn every_field_at_once_round_trips(ks in proptest::collection::vec(any::<u64>(), FIELDS.len())) {
        let s = with_every_field(&ks).expect("every sampled value is one the scenario reads");
        prop_assert!(matches!(s.model, ModelSpec::Preset(_)));
        if let Err(e) = through_a_link(&s) {
            prop_assert!(false, "{}", e);
        }
    }
}
