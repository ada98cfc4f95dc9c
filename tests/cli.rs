//! The `headroom` binary as a user runs it: JSON in, Breakdown JSON or Markdown out, and a
//! one-line error naming the field (exit status 2) on bad input.

mod common;
use common::run;



#[test]
fn estimate_prints_breakdown_json() {
    let (code, out, _) = run(&["estimate", "-"], r#"{"model": {"preset": "llama-3-8b"}}"#);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    for key in ["parameters", "gradients", "optimizer_states", "activations", "temporary", "overhead", "total", "param_count", "capacity", "fits", "spill_bytes", "step_time", "warnings"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["param_count"], 8_030_261_248u64);
    assert_eq!(v["fits"], false);
}

#[test]
fn estimate_reads_a_file_and_prints_markdown() {
    let path = std::env::temp_dir().join(format!("headroom-cli-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"model": {"preset": "gpt2"}, "training": {"seq_len": 1024}}"#).expect("write");
    let (code, out, _) = run(&["estimate", path.to_str().expect("utf-8 path"), "--format", "markdown"], "");
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0);
    assert!(out.contains("| **total** |") && out.contains("Fits with"), "{out}");
}

#[test]
fn bad_input_names_the_field_in_one_line() {
    for (input, field) in [
        (r#"{"training": {"micro_batch": "two"}}"#, "training.micro_batch"),
        (r#"{"parallel": {"tp": 3}}"#, "parallel.tp"),
        (r#"{"device": {"preset": "h900"}}"#, "device.preset"),
        (r#"{"model": {"hf_config": {"model_type": "llama", "num_key_value_heads": 7}}}"#, "num_key_value_heads"),
        ("{not json", "key must be a string"),
    ] {
        let (code, out, err) = run(&["estimate"], input);
        assert_eq!(code, 2, "{input}");
        assert!(out.is_empty());
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(field), "{input}: {err}");
    }
}

#[test]
fn hf_config_form_is_accepted() {
    let config = r#"{"model": {"hf_config": {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": true}}}"#;
    let (code, out, err) = run(&["estimate"], config);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["param_count"], 494_032_768u64);
}

#[test]
fn escalate_prints_steps_with_breakdown_fields_and_costs() {
    let (code, out, err) = run(&["escalate", "--gpus", "8"], "{}");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let steps = v["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 6);
    for s in steps {
        for key in ["name", "total", "activations", "fits", "costs"] {
            assert!(s.get(key).is_some(), "step missing {key}: {s}");
        }
    }
    assert_eq!(steps[0]["fits"], false);
    assert!(v["first_fit"].as_u64().is_some());
}

#[test]
fn search_ranks_fitting_layouts() {
    let (code, out, err) = run(&["search", "--gpus", "8", "--top", "3"], r#"{"model": {"preset": "llama-3.2-1b"}}"#);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    for r in results {
        assert_eq!(r["breakdown"]["fits"], true);
        assert!(r["scenario"]["parallel"]["dp"].as_u64().is_some());
        assert!(r["step_seconds"].as_f64().is_some_and(|t| t > 0.0));
    }
    let (code, _, err) = run(&["search"], "{}");
    assert_eq!(code, 2);
    assert!(err.contains("--gpus"));
}

#[test]
fn url_and_decode_round_trip() {
    let (code, link, err) = run(&["url", "--base", "https://example.org/headroom/"], r#"{"model": {"preset": "gpt2"}, "training": {"micro_batch": 8}}"#);
    assert_eq!(code, 0, "{err}");
    let link = link.trim();
    assert_eq!(link, "https://example.org/headroom/?v=1&m=gpt2&b=8");
    let (code, json, err) = run(&["decode", link], "");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("scenario JSON");
    assert_eq!(v["model"]["preset"], "gpt2");
    assert_eq!(v["training"]["micro_batch"], 8);
    let (code, _, err) = run(&["decode", "https://x/?v=1&b=zero"], "");
    assert_eq!(code, 2);
    assert!(err.contains("url.b"), "{err}");
}
