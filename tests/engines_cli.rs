//! The serving contract on the command line: `escalate` offers an inference scenario serving
//! fixes only, `check` reads an engine's startup log beside the plan, the link carries the
//! engine's settings, and bad settings are refused naming the field.

mod common;

use common::run;

const SEVENTY_B: &str = r#"{"model":{"preset":"meta-llama/Llama-3.1-70B"},"training":{"mode":"inference","micro_batch":32,"seq_len":8192,"serving":{"engine":"vllm"}},"device":{"preset":"h100-sxm-80gb"}}"#;

#[test]
fn escalate_lists_only_serving_steps_for_inference() {
    let (code, out, err) = run(&["escalate", "-", "--gpus", "2"], SEVENTY_B);
    assert_eq!(code, 0, "{err}");
    let e: serde_json::Value = serde_json::from_str(&out).unwrap();
    let steps: Vec<&str> = e["steps"].as_array().unwrap().iter().skip(1).map(|s| s["step"].as_str().unwrap()).collect();
    let serving = ["fp8-kv-cache", "fp8-weights", "higher-memory-fraction", "fewer-sequences", "shorter-context", "tensor-parallel", "int4-weights"];
    assert_eq!(steps, serving);
    // The plan that fits names what it buys.
    assert!(e["plan"]["result"]["fits"].as_bool().unwrap());
    assert!(e["steps"][1]["note"].as_str().unwrap().contains("FP8"));
}

#[test]
fn check_reads_a_vllm_startup_log() {
    let dir = std::env::temp_dir().join(format!("headroom-engine-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("vllm.log");
    std::fs::write(&log, "INFO kv_cache_utils.py:524] GPU KV cache size: 210,000 tokens\nINFO Maximum concurrency for 8,192 tokens per request: 25.63x\n").unwrap();
    let scenario = SEVENTY_B.replace(r#""engine":"vllm""#, r#""engine":"vllm","weights":"fp8""#).replace(r#""device""#, r#""parallel":{"tp":2},"device""#);
    let (code, out, err) = run(&["check", "-", "--measured", log.to_str().unwrap()], &scenario);
    assert_eq!(code, 0, "{err}");
    let c: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(c["measured"]["kv_cache_tokens"], 210_000);
    let tokens = c["differences"].as_array().unwrap().iter().find(|d| d["field"] == "kv_cache_tokens").unwrap();
    assert!(tokens["relative"].as_f64().unwrap().abs() < 0.05, "{tokens}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_link_carries_the_engine_settings() {
    let s = r#"{"model":{"preset":"meta-llama/Llama-3.1-8B"},"training":{"mode":"inference","serving":{"engine":"sglang","mem_fraction_static":0.8,"max_model_len":4096,"max_num_seqs":64,"max_num_batched_tokens":2048,"enforce_eager":true,"block_size":16}}}"#;
    let (code, url, err) = run(&["url", "-"], s);
    assert_eq!(code, 0, "{err}");
    assert!(url.contains("eng=sglang") && url.contains("mfs=0.8") && url.contains("mml=4096"), "{url}");
    let (code, out, err) = run(&["decode", url.trim()], "");
    assert_eq!(code, 0, "{err}");
    let back: serde_json::Value = serde_json::from_str(&out).unwrap();
    let serving = &back["training"]["serving"];
    assert_eq!(serving["engine"], "sglang");
    assert_eq!(serving["mem_fraction_static"], 0.8);
    assert_eq!(serving["max_num_seqs"], 64);
    assert_eq!(serving["enforce_eager"], true);
    assert_eq!(serving["block_size"], 16);
}

#[test]
fn bad_engine_settings_name_the_field() {
    for (json, field) in [
        (r#"{"model":{"preset":"gpt2"},"training":{"mode":"inference","serving":{"engine":"vllm","gpu_memory_utilization":1.5}}}"#, "training.serving.gpu_memory_utilization"),
        (r#"{"model":{"preset":"gpt2"},"training":{"mode":"inference","serving":{"engine":"vllm","max_num_seqs":0}}}"#, "training.serving.max_num_seqs"),
        (r#"{"model":{"preset":"gpt2"},"training":{"mode":"inference","serving":{"engine":"vllm","max_model_len":4096}}}"#, "training.serving.max_model_len"),
        (r#"{"model":{"preset":"gpt2"},"training":{"mode":"inference","serving":{"engine":"vllm","mem_fraction_static":0}}}"#, "training.serving.mem_fraction_static"),
        (r#"{"model":{"preset":"gpt2"},"training":{"mode":"inference","serving":{"engine":"vllm2"}}}"#, "training.serving.engine"),
    ] {
        let (code, out, err) = run(&["estimate", "-"], json);
        assert_eq!(code, 2, "{json}: {out}");
        assert!(err.contains(field) && err.lines().count() == 1, "{json}: {err}");
    }
}
