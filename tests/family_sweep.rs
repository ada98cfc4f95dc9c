//! Every decoder-only text family transformers 5.24 builds, from its default configuration
//! (`tests/fixtures/measured/family_sweep.json`, written by `tests/measure/family_sweep.py`):
//! Headroom's parameter count against `sum(p.numel())` of the model transformers builds.
//!
//! Families with a reader must match exactly. Families estimated by the generic decoder must
//! say "approximate" and stay within the error measured when this test was written. Families
//! Headroom cannot model (state-space / linear-attention layers, …) must be refused.
//!
//! `cargo test --test family_sweep -- --nocapture table` prints the whole table.

use headroom::import::hf_config::import_hf_config;
use serde_json::Value;

fn fixture() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/measured/family_sweep.json")).expect("fixture");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// (model_type, transformers' count, Headroom's count and whether it warns "approximate", or the error)
type Row = (String, u64, Result<(u64, bool), String>);

fn rows() -> Vec<Row> {
    let f = fixture();
    let families = f["families"].as_object().expect("families");
    families
        .iter()
        .map(|(ty, e)| {
            let expected = e["param_count"].as_u64().expect("param_count");
            // The sweep measured a wrapper's text model: a vision tower Headroom counts beside
            // it (Qwen2.5-VL) is left out here and checked whole in tests/vlm.rs.
            let text_params = |a: &headroom::model::arch::Architecture| {
                a.param_tensors().iter().filter(|t| t.scope != headroom::model::arch::Scope::Tower).map(|t| t.numel() * a.multiplicity(t.scope)).sum::<f64>()
            };
            let got = import_hf_config(&e["config"]).map(|i| (text_params(&i.arch) as u64, i.warnings.iter().any(|w| w.starts_with("approximate")))).map_err(|e| e.to_string());
            (ty.clone(), expected, got)
        })
        .collect()
}

/// Families estimated approximately (the generic decoder, or a reader that warns), with the
/// absolute error of Headroom's count measured when this table was written, in percent of
/// transformers' count (rounded to 0.001). The error must not grow past it (plus rounding).
const APPROXIMATE: &[(&str, f64)] = &[
    ("afmoe", 0.669),
    ("apertus", 0.000),
    ("apertus1p5_text", 12.829),
    ("aria_text", 0.000),
    ("axk1", 0.207),
    ("axk2", 0.568),
    ("beam", 0.469),
    ("biogpt", 22.319),
    ("bitnet", 0.006),
    ("bloom", 0.001),
    ("deepseek_v32", 0.182),
    ("diffllama", 0.000),
    ("doge", 0.056),
    ("dory", 40.269),
    ("dots3_note", 9.937),
    ("dots3_note_text", 9.937),
    ("flint", 0.000),
    ("gemma4_unified_assistant", 2.357),
    ("gemma4_unified_text", 1.144),
    ("glm_moe_dsa", 0.143),
    ("hrm_text", 52.144),
    ("hy_v4", 3.104),
    ("inkling_text", 0.116),
    ("jais2", 25.570),
    ("jetmoe", 17.455),
    ("laguna", 0.012),
    ("mimo_v2_flash", 0.235),
    ("minimax_m3_vl_text", 0.000),
    ("modernbert-decoder", 0.807),
    ("nanochat", 25.581),
    ("olmo", 0.003),
    ("opt@350m", 19.045),
    ("persimmon", 14.274),
];

/// Families Headroom refuses: recurrent / linear-attention layers it cannot model (Mamba,
/// Mamba-2, Gated DeltaNet and short-convolution hybrids, LFM2-MoE among them, have readers, `import/hybrids.rs`, Zamba2 `import/zamba2.rs`, Zamba `import/zamba.rs`; OLMo-Hybrid among the hybrids; Gemma 4's text model `import/gemma4.rs`) (`hf_config::UNMODELLED`, message names what is missing),
/// or configs without the usual keys and no reader.
const REFUSED_UNMODELLED: &[&str] = &["bailing_hybrid", "kimi_linear", "lfm3", "minimax", "recurrent_gemma", "rwkv", "xlstm"];
/// Configs the sweep shrank into ones transformers 5.25 itself refuses: Gemma 4's
/// `per_layer_config` keeps the overrides of layers 11–29 of the 30-layer default after
/// `shrink` cut `layer_types` to 8 ("`per_layer_config` keys must be integer layer indices in
/// the range [0, 8)"). Refused here naming the key; Gemma 4 is measured in `gemma4.json`.
const REFUSED_BAD_CONFIG: &[&str] = &["gemma4_text", "gemma4_text@moe", "gemma4_text@no_per_layer_input"];
const REFUSED_NO_KEYS: &[&str] = &[
    "blt", "cpmant", "ctrl", "deepseek_v4", "gpt_neox_japanese", "inkling2_loop_text", "inkling2_text", "kolibri1", "lara_mini", "longcat_flash", "openai-gpt", "solar_open",
    "xglm", "zaya",
];

/// Every family (and variant) not listed above must be counted exactly, without an
/// "approximate" warning: the families with a reader.
#[test]
fn readers_count_exactly() {
    let mut exact = 0;
    for (ty, expected, got) in rows() {
        if APPROXIMATE.iter().any(|(t, _)| *t == ty)
            || REFUSED_UNMODELLED.contains(&ty.as_str())
            || REFUSED_NO_KEYS.contains(&ty.as_str())
            || REFUSED_BAD_CONFIG.contains(&ty.as_str())
        {
            continue;
        }
        let (n, approx) = got.unwrap_or_else(|e| panic!("{ty}: refused: {e}"));
        assert_eq!(n, expected, "{ty}: Headroom counts {n}, transformers {expected}");
        assert!(!approx, "{ty} is exact but warns that it is approximate");
        exact += 1;
    }
    // The sweep's default configs and variants of every family with a reader.
    assert!(exact >= 115, "only {exact} exact families");
}

#[test]
fn approximate_families_say_so_and_stay_within_their_error() {
    let rows = rows();
    for (ty, bound) in APPROXIMATE {
        let (_, expected, got) = rows.iter().find(|(t, _, _)| t == ty).unwrap_or_else(|| panic!("{ty} is not in the fixture"));
        let (n, approx) = got.clone().unwrap_or_else(|e| panic!("{ty}: refused: {e}"));
        assert!(approx, "{ty}: no \"approximate\" warning");
        let err = ((n as f64 - *expected as f64) / *expected as f64 * 100.0).abs();
        assert!(err <= bound + 0.0005, "{ty}: error {err:.4}% exceeds the {bound}% measured");
    }
}

#[test]
fn unmodelled_families_are_refused_with_what_is_missing() {
    let rows = rows();
    for ty in REFUSED_UNMODELLED {
        let (_, _, got) = rows.iter().find(|(t, _, _)| t == ty).unwrap_or_else(|| panic!("{ty} is not in the fixture"));
        let err = got.clone().err().unwrap_or_else(|| panic!("{ty} was estimated; it must be refused"));
        assert!(err.contains("cannot model"), "{ty}: {err}");
    }
    for ty in REFUSED_BAD_CONFIG {
        let (_, _, got) = rows.iter().find(|(t, _, _)| t == ty).unwrap_or_else(|| panic!("{ty} is not in the fixture"));
        let err = got.clone().err().unwrap_or_else(|| panic!("{ty} was estimated from a config transformers refuses"));
        assert!(err.contains("per_layer_config"), "{ty}: {err}");
    }
    for ty in REFUSED_NO_KEYS {
        let (_, _, got) = rows.iter().find(|(t, _, _)| t == ty).unwrap_or_else(|| panic!("{ty} is not in the fixture"));
        let err = got.clone().err().unwrap_or_else(|| panic!("{ty} is now estimated: move it to APPROXIMATE or give it a reader"));
        assert!(err.contains("not a supported model_type") || err.contains("cannot model"), "{ty}: {err}");
    }
}

/// The fixture holds what the measuring script says: a family per decoder-only model_type,
/// each with a positive count and its config's model_type.
#[test]
fn fixture_is_consistent() {
    let f = fixture();
    assert_eq!(f["transformers"], "5.24.0");
    let families = f["families"].as_object().expect("families");
    assert!(families.len() >= 150, "{} families", families.len());
    for (ty, e) in families {
        assert!(e["param_count"].as_u64().is_some_and(|n| n > 0), "{ty}");
        let base = ty.split('@').next().unwrap_or(ty);
        // transformers builds "gpt-sw3" from a GPT2Config.
        let expected = if base == "gpt-sw3" { "gpt2" } else { base };
        assert_eq!(e["config"]["model_type"], expected, "{ty}");
    }
}

/// The whole table, printed with `--nocapture`, and every row in exactly one class: exact
/// (Headroom's count equals transformers'), approximate (listed in `APPROXIMATE`, warns) or
/// refused (listed in `REFUSED_*`). A row that is none of these ("WRONG": an unlisted family off
/// by any amount, or an unlisted refusal) fails.
#[test]
fn table() {
    let mut wrong = Vec::new();
    for (ty, expected, got) in rows() {
        let listed_approx = APPROXIMATE.iter().any(|(t, _)| *t == ty);
        let listed_refused = REFUSED_UNMODELLED.contains(&ty.as_str()) || REFUSED_NO_KEYS.contains(&ty.as_str()) || REFUSED_BAD_CONFIG.contains(&ty.as_str());
        match got {
            Ok((n, approx)) => {
                let err = (n as f64 - expected as f64) / expected as f64 * 100.0;
                let class = if approx && listed_approx {
                    "approximate"
                } else if n == expected && !approx && !listed_approx && !listed_refused {
                    "exact"
                } else {
                    wrong.push(format!("{ty}: Headroom {n}, transformers {expected} ({err:+.3}%), approximate warning {approx}, listed approximate {listed_approx}, listed refused {listed_refused}"));
                    "WRONG"
                };
                println!("{ty:28} {expected:>16} {n:>16} {err:>9.3}% {class}");
            }
            Err(e) => {
                if !listed_refused {
                    wrong.push(format!("{ty}: refused but not listed as refused: {e}"));
                }
                println!("{ty:28} {expected:>16} {:>16} {:>10} rejected: {}", "-", "-", e.chars().take(120).collect::<String>());
            }
        }
    }
    assert!(wrong.is_empty(), "rows in no class:\n{}", wrong.join("\n"));
}
