//! The dtype of the softmax each decoder family's eager attention saves in a pure bf16 run
//! (`tests/measure/eager_softmax.py` → `tests/fixtures/measured/eager_softmax.json`, transformers'
//! own modelling code under fake tensors): Headroom's rule (fp32 with rotary positions, the
//! model dtype without) where it holds, and the family's measured dtype where it does not
//! (`import::eager_softmax`).

use headroom::import::hf_config::import_hf_config;
use headroom::model::arch::Architecture;
use serde_json::Value;

fn read(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/measured/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).expect("fixture is JSON")
}

/// Every family measured with one softmax dtype and imported by Headroom: the model's eager
/// softmax dtype is the measured one. (Families with two dtypes among the 16 × 16 softmax
/// outputs have 16 experts, whose router softmax has the same shape: left out.)
#[test]
fn every_familys_eager_softmax_dtype_is_the_measured_one() {
    let measured = read("eager_softmax.json");
    let sweep = read("family_sweep.json");
    let (mut checked, mut wrong) = (0, Vec::new());
    for (family, dtypes) in measured["softmax_dtypes"].as_object().expect("softmax_dtypes") {
        let dtypes = dtypes.as_array().expect("dtypes");
        if dtypes.len() != 1 {
            continue;
        }
        let fp32 = dtypes[0] == "float32";
        let Ok(imported) = import_hf_config(&sweep["families"][family]["config"]) else { continue };
        let Architecture::Transformer(t) = &imported.arch else { continue };
        let model = t.attention.eager_softmax_in_fp32(t.attention.rotary_dim > 0);
        checked += 1;
        if model != fp32 {
            wrong.push(format!("{family}: measured {}, model {}", dtypes[0], if model { "float32" } else { "bfloat16" }));
        }
    }
    println!("{checked} families checked");
    assert!(checked >= 100, "{checked}");
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
}
