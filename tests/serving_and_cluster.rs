//! Serving formats and the cluster's links, checked against hand-derived figures: the bytes
//! each quantised format stores per weight (bitsandbytes, GPTQ/AWQ, FP8), an FP8 KV cache,
//! and data-parallel traffic leaving the node (Megatron-Core's rank order).

use headroom::estimate;
use headroom::model::communication::communication;
use headroom::model::Inputs;
use headroom::scenario::{KvCacheFormat, Mode, Scenario, WeightFormat};

/// Llama-3-8B: 32 blocks × (q 4096² + k, v 4096·1024 + o 4096² + 3 × 4096·14336) linear
/// weights; the rest (two 128,256 × 4096 tables, 65 norms) stays 16-bit.
const LINEAR: f64 = 32.0 * (2.0 * 4096.0 * 4096.0 + 2.0 * 4096.0 * 1024.0 + 3.0 * 4096.0 * 14336.0);
const OTHER: f64 = 2.0 * 128_256.0 * 4096.0 + 65.0 * 4096.0;
/// Output rows of those linears (one int8 scale each): q 4096, k 1024, v 1024, o 4096, gate and up 14336, down 4096.
const ROWS: f64 = 32.0 * (4096.0 + 1024.0 + 1024.0 + 4096.0 + 14336.0 + 14336.0 + 4096.0);

fn serving(weights: WeightFormat) -> Scenario {
    let mut s = Scenario::default();
    s.training.mode = Mode::Inference;
    s.training.serving.weights = Some(weights);
    s
}

#[test]
fn linear_count_is_llama3_8b() {
    assert_eq!(LINEAR + OTHER, 8_030_261_248.0);
}

#[test]
fn each_weight_format_stores_its_bytes_per_weight() {
    let cases = [
        (WeightFormat::Half, LINEAR * 2.0),
        // FP8: one byte, a per-tensor scale (negligible, not counted).
        (WeightFormat::Fp8, LINEAR),
        // LLM.int8(): int8 codes plus an fp32 scale per output row (bitsandbytes `SCB`).
        (WeightFormat::Int8, LINEAR + 4.0 * ROWS),
        // GPTQ/AWQ: 4 bits, and per 128 inputs a 16-bit scale and a 4-bit zero.
        (WeightFormat::Int4, LINEAR * (0.5 + 2.5 / 128.0)),
        // NF4 with double quantisation (Dettmers et al. 2023 §3): 0.5 + 1/64 + 4/(64·256).
        (WeightFormat::Nf4, LINEAR * (0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0))),
    ];
    for (format, linear_bytes) in cases {
        let b = estimate(&serving(format));
        let expected = linear_bytes + 2.0 * OTHER;
        assert!((b.parameters as f64 - expected).abs() <= 1.0 + expected * 1e-12, "{format:?}: {} vs {expected}", b.parameters);
    }
}

#[test]
fn nf4_without_double_quantisation_keeps_fp32_absmax() {
    let mut s = serving(WeightFormat::Nf4);
    s.training.serving.double_quant = false;
    let expected = LINEAR * (0.5 + 4.0 / 64.0) + 2.0 * OTHER;
    assert!((estimate(&s).parameters as f64 - expected).abs() <= 1.0);
}

#[test]
fn fp8_kv_cache_is_half_of_bf16() {
    let kv = |format: Option<KvCacheFormat>| {
        let mut s = Scenario::default();
        s.training.mode = Mode::Inference;
        s.training.seq_len = 8192;
        s.training.serving.kv_cache = format;
        estimate(&s).terms.iter().filter(|t| t.name == "KV cache").map(|t| t.bytes).sum::<u64>()
    };
    // 2 · 32 layers · 8 KV heads · 128 · 1 byte = 65,536 B per token.
    assert_eq!(kv(Some(KvCacheFormat::Fp8)), 65_536 * 8192);
    assert_eq!(kv(None), 131_072 * 8192);
}

/// Data-parallel gradients (2(N−1)/N of them, ring all-reduce) cross NVLink inside one node of
/// eight, and each GPU's network link once the group spans two nodes.
#[test]
fn data_parallel_traffic_leaving_the_node_runs_at_network_speed() {
    let seconds = |dp: u64| {
        let mut s = Scenario::default();
        s.parallel.dp = dp;
        let arch = s.model.architecture().unwrap().into_owned();
        let device = s.device.resolve().unwrap();
        let inputs = Inputs { arch: &arch, training: &s.training, parallel: &s.parallel, device: &device, runtime: &s.runtime };
        (communication(&inputs, 8.0e9).data_parallel_seconds, device)
    };
    let (inside, device) = seconds(8);
    let (across, _) = seconds(16);
    // bf16-mixed without ZeRO keeps fp32 gradients (autocast's fp32 parameters): 4 B each.
    let bytes = |n: f64| 2.0 * (n - 1.0) / n * 8.0e9 * 4.0;
    assert!((inside - bytes(8.0) / device.interconnect_bandwidth).abs() < 1e-9);
    assert!((across - bytes(16.0) / device.network_bandwidth).abs() < 1e-9);
    assert_eq!(device.network_bandwidth, 50e9);
}

/// The prefill workspace against MemTracker's peak of real no-grad forwards of tiny configs
/// (tests/measure/prefill_workspace.py): the dense cases within 2 %. The MoE case is in the
/// fixture but not checked: its randomly initialised router sends tokens unevenly, and the
/// model assumes balanced routing (see `prefill_elements_per_token`).
#[test]
fn prefill_workspace_matches_memtracker() {
    let fixture: serde_json::Value = serde_json::from_str(include_str!("fixtures/measured/prefill_workspace.json")).unwrap();
    let mut checked = 0;
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        if case["config"].get("num_local_experts").is_some() {
            continue;
        }
        let mut s = Scenario { model: headroom::scenario::ModelSpec::from_hf_config(case["config"].clone()).unwrap(), ..Scenario::default() };
        s.training.mode = Mode::Inference;
        s.training.micro_batch = case["batch"].as_u64().unwrap();
        s.training.seq_len = case["seq"].as_u64().unwrap();
        let b = estimate(&s);
        let predicted = b.terms.iter().find(|t| t.name == "prefill workspace").unwrap().bytes as f64;
        let measured = case["workspace_bytes"].as_f64().unwrap();
        let error = predicted / measured - 1.0;
        assert!(error.abs() < 0.02, "{name}: predicted {predicted}, measured {measured} ({:+.1} %)", 100.0 * error);
        checked += 1;
    }
    assert_eq!(checked, 4);
}
