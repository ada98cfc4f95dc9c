//! Hostile and careless input, as issue 26 found it: every way in is bounded (a clear message,
//! the rest kept, a bounded number of problems), user text is made safe where it is shown,
//! and the CLI reads what people give it. Time is not asserted here (see
//! `benches/hostile_input.rs` for the figures); what is asserted is the shape of the answer.

mod common;
use common::run;

use headroom::input_limits::{LINK_PARAMS, PROBLEMS_LISTED};
use headroom::scenario::Scenario;
use headroom::url::decode;

/// A 1 MB link of empty parameters (`?v=1&z&z&…`) gives one summary, not 500,000 messages,
/// and the default scenario.
#[test]
fn a_megabyte_of_bad_parameters_is_one_summary() {
    let query = format!("?v=1{}", "&z".repeat(500_000));
    let (s, errors) = decode(&query);
    assert_eq!(s, Scenario::default());
    assert!(errors.len() <= PROBLEMS_LISTED + 2, "{} problems", errors.len());
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(text.iter().any(|e| e.contains("only its first")), "{text:?}");
    assert!(text.iter().any(|e| e.contains("more problems, not listed one by one")), "{text:?}");
}

/// 200,000 × `zz=1` after real settings: the settings are read, the rest summed up.
#[test]
fn many_unknown_keys_keep_the_settings_before_them() {
    let query = format!("v=1&m=gpt2&b=4{}", "&zz=1".repeat(200_000));
    let (s, errors) = decode(&query);
    assert_eq!(s.training.micro_batch, 4);
    assert_eq!(s.model.label(), "gpt2");
    let last = errors.last().expect("a problem").to_string();
    assert!(last.contains(&format!("the first {LINK_PARAMS} were read")), "{last}");
    assert!(errors.len() <= PROBLEMS_LISTED + 1, "{errors:?}");
}

/// A saved scenario's query of 800,000 parameters (the case that trapped the page) reads as a
/// link does: bounded.
#[test]
fn an_800k_parameter_query_is_bounded() {
    let query = format!("v=1&s=2048{}", "&b=2".repeat(800_000));
    let (s, errors) = decode(&query);
    assert_eq!(s.training.seq_len, 2048);
    assert_eq!(s.training.micro_batch, 2);
    assert!(errors.len() <= PROBLEMS_LISTED + 2, "{errors:?}");
}

#[test]
fn decode_warns_about_unknown_parameters_and_prints_the_scenario() {
    let (code, out, err) = run(&["decode", "http://127.0.0.1:8080/?v=1&m=gpt2&utm_source=x"], "");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: url.utm_source: unknown parameter ignored"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("scenario JSON");
    assert_eq!(v["model"]["preset"], "gpt2");
    // A value that cannot be read is still an error.
    let (code, _, err) = run(&["decode", "?v=1&b=two"], "");
    assert_eq!(code, 2);
    assert!(err.contains("url.b"), "{err}");
}

#[test]
fn control_characters_never_reach_the_terminal_raw() {
    let (code, _, err) = run(&["estimate", "-"], "{\"model\": {\"preset\": \"a\\u001b[31mred\\u0007\\nsecond line\"}}");
    assert_eq!(code, 2);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains("a\\u{1b}[31mred\\u{7}\\u{a}second line"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let (code, _, err) = run(&["decode", "?v=1&m=%1B%5B2J%07"], "");
    assert_eq!(code, 2);
    assert!(!err.contains('\u{1b}') && err.contains("\\u{1b}[2J"), "{err:?}");
}

#[test]
fn a_megabyte_preset_id_gives_a_short_line() {
    let scenario = format!("{{\"model\": {{\"preset\": \"{}\"}}}}", "x".repeat(1 << 20));
    let (code, _, err) = run(&["estimate", "-"], &scenario);
    assert_eq!(code, 2);
    assert!(err.len() < 300, "{} bytes: {}", err.len(), &err[..200]);
    assert!(err.starts_with("error: model: unknown model preset \"xxx"), "{err}");
}

#[test]
fn huge_numbers_are_echoed_short() {
    let (code, _, err) = run(&["estimate", "-"], r#"{"training": {"dropout": 1e308}}"#);
    assert_eq!(code, 2);
    assert_eq!(err.trim(), "error: training.dropout: must be a probability in [0, 1), got 1e308");
}

/// 0.9999999999999999 is below 1 and read exactly (serde_json's `float_roundtrip`), so it is
/// a probability.
#[test]
fn a_probability_just_below_one_is_one() {
    let (code, _, err) = run(&["estimate", "-"], r#"{"training": {"lora": {"dropout": 0.9999999999999999}}}"#);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["estimate", "-"], r#"{"training": {"lora": {"dropout": 1.0}}}"#);
    assert_eq!(code, 2);
    assert!(err.contains("got 1"), "{err}");
}

#[test]
fn a_bare_config_json_is_recognised_and_planned_on_request() {
    let config = r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}"#;
    let (code, out, err) = run(&["estimate", "-"], config);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("is a Hugging Face or diffusers config.json") && err.contains("--hf-config"), "{err}");
    let (code, out, err) = run(&["estimate", "--hf-config", "-"], config);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("breakdown JSON");
    assert!(v["param_count"].as_u64().unwrap() > 1_000_000_000, "{}", v["param_count"]);
}

/// A 50 MB scenario file is refused from its size, before it is read.
#[test]
fn a_huge_scenario_file_is_refused_before_reading() {
    let path = std::env::temp_dir().join(format!("headroom-huge-{}.json", std::process::id()));
    let file = std::fs::File::create(&path).expect("create");
    file.set_len(50 << 20).expect("sparse 50 MB file");
    let (code, _, err) = run(&["estimate", path.to_str().unwrap()], "");
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 2);
    assert!(err.contains("a scenario of 50 MiB is larger than the 2 MiB Headroom reads"), "{err}");
    // And from stdin, where there is no size to ask: read up to the limit, then refused.
    let big = format!("{{\"a\": \"{}\"}}", "x".repeat(3 << 20));
    let (code, _, err) = run(&["estimate", "-"], &big);
    assert_eq!(code, 2);
    assert!(err.contains("stdin: a scenario of more than"), "{err}");
}

/// A scenario whose pasted config is too big for a link gets a message, not a 66 MB link.
#[test]
fn url_refuses_a_link_that_would_not_read_back() {
    let layers: Vec<String> = (0..4000).map(|i| format!("\"note_{i}\": \"{}\"", "y".repeat(40))).collect();
    let scenario = format!(
        "{{\"model\": {{\"hf_config\": {{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_layer\": 2, \"n_head\": 2, \"vocab_size\": 1000, \"n_positions\": 128, {}}}}}}}",
        layers.join(", ")
    );
    let (code, out, err) = run(&["url", "-"], &scenario);
    assert_eq!(code, 2, "{}", &out[..out.len().min(200)]);
    assert!(err.contains("share the scenario JSON instead"), "{err}");
}

/// A pasted config's `model_type` with an escape sequence and a right-to-left override
/// reaches the Markdown title escaped, on one line.
#[test]
fn markdown_titles_carry_no_control_characters() {
    let scenario = r#"{"model": {"hf_config": {"model_type": "\u202e\u001b[2Jevil\nline", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000}}}"#;
    let (code, out, err) = run(&["estimate", "-", "--format", "markdown"], scenario);
    assert_eq!(code, 0, "{err}");
    let title = out.lines().next().unwrap_or_default();
    assert!(title.contains("\\u{202e}\\u{1b}[2Jevil\\u{a}line"), "{title}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{202e}'), "{out}");
}

/// A price list for `rent` is bounded like every other file: a 50 MB one is refused by its size.
#[test]
fn a_huge_price_list_is_refused_before_reading() {
    let path = std::env::temp_dir().join(format!("headroom-prices-{}.json", std::process::id()));
    std::fs::File::create(&path).expect("create").set_len(50 << 20).expect("sparse 50 MB file");
    let (code, _, err) = run(&["rent", "-", "--budget-gpus", "2", "--prices", path.to_str().unwrap()], r#"{"model": {"preset": "gpt2"}}"#);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 2);
    assert!(err.contains("a price list of 50 MiB is larger than the 1 MiB Headroom reads"), "{err}");
}
