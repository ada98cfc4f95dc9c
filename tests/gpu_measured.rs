//! Headroom against real GPU peaks: training steps measured on an NVIDIA H200 (torch 2.11,
//! CUDA 13.0, transformers 5.17, PEFT 0.21) by `tests/measure/gpu_peaks.py` and
//! `tests/measure/gpu_hybrid_vlm.py`, and with transformers 5.25 carried there by
//! `tests/measure/gpu_new_families.py` (Gemma 4's class default under LoRA, a Qwen3-MoE cut to
//! 2 layers in pure bf16 and with fp32 master weights under autocast) (fixtures `gpu_peaks.json`,
//! `gpu_hybrid_vlm.json`, `gpu_new_families.json`; each
//! case in a fresh process, the model built from its catalogue config on the GPU, 2 warm-up
//! steps, `reset_peak_memory_stats`, one measured step). The allocated peak is the plan's
//! tensors; the reserved peak adds what the caching allocator keeps.
//!
//! The two hybrid LoRA cases (attention-only adapters, no checkpointing) hold saved tensors only
//! from the first attention layer on (`gpu_peak_owners.json`: 3 of Jamba-Mini's 7 Mamba layers
//! hold theirs at the peak when cut to 8 layers): `LeadBlocks`.

use headroom::measured::{compare, parse_measurement_bytes};
use headroom::{estimate, Scenario};
use serde_json::Value;

fn cases(file: &str) -> Vec<Value> {
    let path = format!("{}/tests/fixtures/measured/{file}", env!("CARGO_MANIFEST_DIR"));
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    assert_eq!(f["device"]["name"], "NVIDIA H200");
    f["cases"].as_array().expect("cases").iter().filter(|c| c.get("measured").is_some()).cloned().collect()
}

/// (allocated, reserved) as measured and as planned, in bytes.
fn pair(case: &Value) -> ((f64, f64), (f64, f64)) {
    let s: Scenario = serde_json::from_value(case["scenario"].clone()).expect("scenario");
    let b = estimate(&s);
    let measured = parse_measurement_bytes(case["measured"].to_string().as_bytes()).expect("measured JSON");
    let c = compare(&measured, &b);
    let m = (case["measured"]["max_memory_allocated"].as_f64().unwrap(), case["measured"]["max_memory_reserved"].as_f64().unwrap());
    ((m.0, m.1), (c.predicted.allocated_peak as f64, c.predicted.reserved_peak as f64))
}

/// The allocated peak within 3 % in every case: text, VLM, hybrid and state-space models, LoRA
/// and full fine-tuning, checkpointed or not, fp32, bf16 and autocast, 256 to 2,048 tokens.
#[test]
fn allocated_peaks_within_three_percent() {
    let mut n = 0;
    for file in ["gpu_peaks.json", "gpu_hybrid_vlm.json", "gpu_new_families.json"] {
        for case in cases(file) {
            let name = case["name"].as_str().unwrap();
            let ((ma, mr), (pa, pr)) = pair(&case);
            println!(
                "{name:42} allocated {:>7.3} vs {:>7.3} GB ({:+5.1} %)  reserved {:>7.3} vs {:>7.3} GB ({:+5.1} %)",
                ma / 1e9,
                pa / 1e9,
                (pa / ma - 1.0) * 100.0,
                mr / 1e9,
                pr / 1e9,
                (pr / mr - 1.0) * 100.0
            );
            assert!((pa / ma - 1.0).abs() <= 0.03, "{name}: planned {pa} vs measured {ma}");
            n += 1;
        }
    }
    assert_eq!(n, 14);
}

/// The reserved peak is never planned above the measured one, and within 20 %: the caching
/// allocator's cache grows over the first steps (Llama-3.2-1B checkpointed: 12.44 GB reserved
/// after the first step, 15.59 GB by the third, as the optimizer states created in the first
/// step's `step()` take the segments the activations leave), which the flat 5 % fragmentation
/// term does not follow.
#[test]
fn reserved_peaks_not_above_the_measured() {
    for file in ["gpu_peaks.json", "gpu_hybrid_vlm.json", "gpu_new_families.json"] {
        for case in cases(file) {
            let name = case["name"].as_str().unwrap();
            let ((_, mr), (_, pr)) = pair(&case);
            assert!(pr <= mr && pr / mr >= 0.8, "{name}: planned reserved {pr} vs measured {mr}");
        }
    }
}
