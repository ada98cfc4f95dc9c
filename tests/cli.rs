//! The `headroom` binary as a user runs it: JSON in, Breakdown JSON or Markdown out, and a
//! one-line error naming the field (exit status 2) on bad input; help for every command, a
//! usage error for a bad option, and shell completions.

mod common;
use common::run;

#[test]
fn estimate_prints_breakdown_json() {
    let (code, out, _) = run(&["estimate", "-"], r#"{"model": {"preset": "llama-3-8b"}}"#);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    for key in
        ["parameters", "gradients", "optimizer_states", "activations", "temporary", "overhead", "total", "param_count", "capacity", "fits", "spill_bytes", "step_time", "warnings"]
    {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["param_count"], 8_030_261_248u64);
    assert_eq!(v["fits"], false);
}

/// `--host-memory GIB` sets `runtime.host_memory_bytes`: Llama-3.2-1B at micro-batch 8 on a
/// 4090 spills 106 GiB under the Windows fallback, past the 32 GiB of shared GPU memory a
/// 64 GiB desktop has, within the 128 GiB of a 256 GiB one; 0 GiB is refused, naming the flag.
#[test]
fn host_memory_flag_moves_the_ceiling() {
    let scenario = r#"{"model": {"preset": "llama-3.2-1b"}, "training": {"micro_batch": 8}, "device": {"preset": "rtx-4090-24gb"}}"#;
    let outcome = |ram: &str| {
        let (code, out, err) = run(&["estimate", "-", "--host-memory", ram], scenario);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
        (v["spill"]["outcome"].as_str().unwrap().to_string(), v["spill"]["message"].as_str().unwrap().to_string())
    };
    let (small, message) = outcome("64");
    assert_eq!(small, "out-of-memory");
    assert!(message.contains("shared GPU memory") && message.contains("32.0 GiB of 64.0 GiB"), "{message}");
    assert_eq!(outcome("256").0, "spills");
    let (code, _, err) = run(&["estimate", "-", "--host-memory", "0"], scenario);
    assert_ne!(code, 0);
    assert!(err.contains("--host-memory"), "{err}");
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
    assert_eq!(steps.len(), 7);
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

/// Every command answers `--help` on stdout with status 0, naming its options.
#[test]
fn every_command_has_help() {
    for (command, options) in [
        ("estimate", &["[FILE]", "--format"][..]),
        ("escalate", &["[FILE]", "--gpus", "--ladder", "zero3"]),
        ("search", &["[FILE]", "--gpus", "--top"]),
        ("url", &["[FILE]", "--base"]),
        ("decode", &["<URL>"]),
        ("presets", &[]),
        ("check", &["[FILE]", "--measured", "--format"]),
        ("completions", &["<SHELL>", "bash", "zsh", "fish"]),
        ("rent", &["[FILE]", "--tokens", "--budget-gpus", "--prices"]),
        ("launch", &["[FILE]", "--for", "torchtune", "megatron", "sglang"]),
    ] {
        for args in [vec![command, "--help"], vec![command, "-h"], vec!["help", command]] {
            let (code, out, err) = run(&args, "");
            assert_eq!(code, 0, "{args:?}: {err}");
            assert!(err.is_empty(), "{args:?}: {err}");
            assert!(out.contains(&format!("Usage: headroom {command}")), "{args:?}: {out}");
            for option in options {
                assert!(out.contains(option), "{args:?} lacks {option}: {out}");
            }
        }
    }
    let (code, out, _) = run(&["--help"], "");
    assert_eq!(code, 0);
    for command in ["estimate", "escalate", "search", "url", "decode", "presets", "check", "completions"] {
        assert!(out.contains(command), "{command}: {out}");
    }
}

/// A bad option is a usage error (status 2, nothing on stdout) that names the option, the
/// bad value and the command's usage; no command at all prints the help, also with status 2.
#[test]
fn bad_options_name_the_option_and_the_usage() {
    for (args, expected) in [
        (&["estimate", "--frobnicate"][..], &["unexpected argument '--frobnicate'", "Usage: headroom estimate"][..]),
        (&["estimate", "--format", "xml"], &["invalid value 'xml' for '--format <FORMAT>'", "json, markdown"]),
        (&["search", "--gpus", "0"], &["invalid value '0' for '--gpus <N>'", "1..=65536"]),
        (&["search", "--gpus", "8", "--top", "many"], &["invalid value 'many' for '--top <K>'"]),
        (&["escalate", "--ladder", "zero2,zero9"], &["invalid value 'zero9' for '--ladder <STEP,…>'", "zero3"]),
        (&["decode"], &["required arguments were not provided", "<URL>"]),
        (&["decode", "a", "b"], &["unexpected argument 'b'"]),
        (&["frobnicate"], &["unrecognized subcommand 'frobnicate'"]),
        (&["completions", "cmd.exe"], &["invalid value 'cmd.exe'", "bash"]),
    ] {
        let (code, out, err) = run(args, "{}");
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        for text in expected {
            assert!(err.contains(text), "{args:?}: expected {text:?} in {err}");
        }
    }
    let (code, out, err) = run(&[], "");
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("Usage: headroom <COMMAND>"), "{err}");
}

/// As with the hand-written parser: `md` for markdown, spaces in the ladder, the last of a
/// repeated option wins, and options may come before the input file.
#[test]
fn option_forms_kept_from_the_hand_written_parser() {
    let (code, out, err) = run(&["estimate", "--format", "md", "-"], r#"{"model": {"preset": "gpt2"}}"#);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| **total** |"), "{out}");
    let (code, out, err) = run(&["escalate", "--ladder", "zero2, zero3", "--gpus", "8", "--gpus", "4"], "{}");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let steps: Vec<_> = v["steps"].as_array().expect("steps").iter().filter_map(|s| s["step"].as_str()).collect();
    assert_eq!(steps, ["zero2", "zero3"]);
    let (code, out, err) = run(&["estimate", "--format", "markdown", "--format", "json"], "{}");
    assert_eq!(code, 0, "{err}");
    assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{out}");
}

/// `completions SHELL` prints a script that knows the commands and their options.
#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_headroom()"),
        ("zsh", "#compdef headroom"),
        ("fish", "complete -c headroom"),
        ("elvish", "edit:completion:arg-completer[headroom]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let (code, out, err) = run(&["completions", shell], "");
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(marker), "{shell}: {}", &out[..out.len().min(300)]);
        for word in ["estimate", "escalate", "measured", "ladder"] {
            assert!(out.contains(word), "{shell} lacks {word}");
        }
    }
}

/// The estimate's JSON carries `limits` (issue 20's contract), and the limits hold when fed
/// back: the estimate at the largest micro-batch fits and one more does not; the longest
/// sequence likewise; a vision model answers with `max_image_size` instead.
#[test]
fn estimate_json_has_limits_that_hold_when_fed_back() {
    let scenario = r#"{"model": {"preset": "gpt2"}, "training": {"seq_len": 1024}, "device": {"preset": "rtx-4090-24gb"}}"#;
    let (code, out, err) = run(&["estimate", "-"], scenario);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let limits = &v["limits"];
    for key in ["max_micro_batch", "max_seq_len", "min_gpus"] {
        assert!(limits[key].is_u64(), "{key}: {limits}");
    }
    assert!(limits.get("max_image_size").is_none());
    assert_eq!(limits["min_gpus"], 1);
    let fits = |training: &str| {
        let input = format!(r#"{{"model": {{"preset": "gpt2"}}, "training": {training}, "device": {{"preset": "rtx-4090-24gb"}}}}"#);
        let (_, out, _) = run(&["estimate", "-"], &input);
        serde_json::from_str::<serde_json::Value>(&out).expect("JSON")["fits"].as_bool().expect("fits")
    };
    let m = limits["max_micro_batch"].as_u64().expect("a number");
    assert!(fits(&format!(r#"{{"seq_len": 1024, "micro_batch": {m}}}"#)));
    assert!(!fits(&format!(r#"{{"seq_len": 1024, "micro_batch": {}}}"#, m + 1)));
    let n = limits["max_seq_len"].as_u64().expect("a number");
    assert!(fits(&format!(r#"{{"seq_len": {n}}}"#)));
    assert!(!fits(&format!(r#"{{"seq_len": {}}}"#, n + 1)));

    let (_, out, _) = run(&["estimate", "-"], r#"{"model": {"preset": "vit-base-16"}, "device": {"preset": "t4-16gb"}}"#);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["limits"]["max_image_size"].is_u64() && v["limits"].get("max_seq_len").is_none(), "{}", v["limits"]);
    // Nothing fits up to 4,096 GPUs: null.
    let (_, out, _) = run(&["estimate", "-"], r#"{"model": {"preset": "meta-llama/Llama-3.1-405B"}, "training": {"seq_len": 1048576}, "device": {"preset": "t4-16gb"}}"#);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["limits"]["min_gpus"].is_null(), "{}", v["limits"]);
    assert!(v["limits"]["max_micro_batch"].is_null());
}

/// The Markdown estimate lists the limits, one unit system throughout.
#[test]
fn estimate_markdown_lists_the_limits() {
    let (code, out, _) = run(
        &["estimate", "--format", "markdown", "-"],
        r#"{"model": {"preset": "gpt2"}, "training": {"seq_len": 1024, "micro_batch": 64}, "device": {"preset": "rtx-4090-24gb"}}"#,
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("**Limits**")
            && out.contains("- Largest micro-batch: ")
            && out.contains("- Longest sequence: ")
            && out.contains("- Fewest GeForce RTX 4090: 1 · Smaller micro-batch (micro-batch 64 → "),
        "{out}"
    );
    assert!(!out.contains(" GB") && out.contains(" GiB"), "{out}");
}
