//! A serving engine's startup log beside the plan: the memory lines vLLM, SGLang,
//! text-generation-inference and llama.cpp print while they size their KV cache, read from
//! the pasted log and compared with the engine's report (`model::serving`).
//!
//! Recognised lines (any prefix — timestamps, process ids — is ignored):
//! - vLLM: "Model loading took X GiB" (older: "Loading model weights took X GB"), "Available
//!   KV cache memory: X GiB", "model weights take XGiB; non_torch_memory takes XGiB; PyTorch
//!   activation peak memory takes XGiB; the rest of the memory reserved for KV Cache is XGiB"
//!   (v0.6–v0.8), "GPU KV cache size: N tokens", "# GPU blocks: N", "Maximum concurrency for
//!   L tokens per request: X x";
//! - SGLang: "KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB";
//! - TGI: "Setting max batch total tokens to N";
//! - llama.cpp: "llama_kv_cache: size = X MiB (N cells, …", "CUDA0 model buffer size = X MiB",
//!   "CUDA0 compute buffer size = X MiB".
//!
//! GB in these logs is 2³⁰ bytes (both engines divide by 1 << 30).

use serde::{Deserialize, Serialize};

use crate::model::breakdown::Breakdown;
use crate::model::inputs::Engine;

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;

/// What the engine printed, in bytes and counts; `None` where the log does not say.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineLog {
    pub engine: Option<Engine>,
    pub weights_bytes: Option<u64>,
    pub kv_cache_bytes: Option<u64>,
    pub kv_cache_tokens: Option<u64>,
    pub num_blocks: Option<u64>,
    pub max_concurrency: Option<f64>,
    pub activation_peak_bytes: Option<u64>,
    pub non_torch_bytes: Option<u64>,
    pub compute_buffer_bytes: Option<u64>,
}

/// The number right after `key` in `line` (digits, separators, one decimal point).
fn number_after(line: &str, key: &str) -> Option<f64> {
    let start = line.find(key)? + key.len();
    let rest = line[start..].trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(rest.len());
    rest[..end].replace(',', "").trim_end_matches('.').parse().ok().filter(|v: &f64| v.is_finite())
}

fn bytes(v: f64, unit: f64) -> u64 {
    (v * unit).round() as u64
}

/// Read an engine's startup log; `None` when no line is one of an engine's memory lines.
pub fn parse(text: &str) -> Option<EngineLog> {
    let mut log = EngineLog::default();
    let mut seen = false;
    for line in text.lines().take(1_000_000) {
        let mut hit = |engine: Engine| {
            seen = true;
            log.engine.get_or_insert(engine);
        };
        if let Some(v) = number_after(line, "Model loading took").or_else(|| number_after(line, "Loading model weights took")) {
            hit(Engine::Vllm);
            log.weights_bytes = Some(bytes(v, GIB));
        }
        if let Some(v) = number_after(line, "Available KV cache memory:") {
            hit(Engine::Vllm);
            log.kv_cache_bytes = Some(bytes(v, GIB));
        }
        if let Some(v) = number_after(line, "the rest of the memory reserved for KV Cache is") {
            hit(Engine::Vllm);
            log.kv_cache_bytes = Some(bytes(v, GIB));
        }
        if let Some(v) = number_after(line, "model weights take") {
            log.weights_bytes = Some(bytes(v, GIB));
        }
        if let Some(v) = number_after(line, "non_torch_memory takes") {
            log.non_torch_bytes = Some(bytes(v, GIB));
        }
        if let Some(v) = number_after(line, "PyTorch activation peak memory takes") {
            log.activation_peak_bytes = Some(bytes(v, GIB));
        }
        if let Some(v) = number_after(line, "GPU KV cache size:") {
            hit(Engine::Vllm);
            log.kv_cache_tokens = Some(v as u64);
        }
        if let Some(v) = number_after(line, "# GPU blocks:") {
            hit(Engine::Vllm);
            log.num_blocks = Some(v as u64);
        }
        if line.contains("Maximum concurrency for") {
            if let Some(v) = number_after(line, "tokens per request:") {
                hit(Engine::Vllm);
                log.max_concurrency = Some(v);
            }
        }
        if line.contains("KV Cache is allocated.") {
            hit(Engine::Sglang);
            log.kv_cache_tokens = number_after(line, "#tokens:").map(|v| v as u64);
            let (k, v) = (number_after(line, "K size:"), number_after(line, "V size:"));
            log.kv_cache_bytes = k.zip(v).map(|(k, v)| bytes(k + v, GIB));
        }
        if let Some(v) = number_after(line, "Setting max batch total tokens to") {
            hit(Engine::Tgi);
            log.kv_cache_tokens = Some(v as u64);
        }
        if line.contains("llama_kv_cache") {
            if let Some(v) = number_after(line, "size =") {
                hit(Engine::LlamaCpp);
                log.kv_cache_bytes = Some(bytes(v, MIB));
                log.kv_cache_tokens = number_after(line, "(").map(|c| c as u64);
            }
        }
        if let Some(v) = number_after(line, "model buffer size =") {
            hit(Engine::LlamaCpp);
            log.weights_bytes = Some(bytes(v, MIB));
        }
        if let Some(v) = number_after(line, "compute buffer size =") {
            hit(Engine::LlamaCpp);
            log.compute_buffer_bytes = Some(bytes(v, MIB));
        }
    }
    seen.then_some(log)
}

/// One number the engine printed beside the plan's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineDifference {
    pub field: String,
    pub measured: f64,
    pub predicted: f64,
    /// `(predicted − measured) / measured`.
    pub relative: f64,
}

/// `headroom check`'s answer for an engine log: `{"measured", "predicted", "differences"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineComparison {
    pub measured: EngineLog,
    pub predicted: Option<crate::model::serving::ServingReport>,
    pub differences: Vec<EngineDifference>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The log's numbers beside the plan's engine report.
pub fn compare_engine(log: &EngineLog, b: &Breakdown) -> EngineComparison {
    let mut notes = Vec::new();
    let Some(report) = b.serving.clone() else {
        notes.push("the scenario plans no serving engine (training.mode \"inference\" with training.serving.engine): nothing to compare".into());
        return EngineComparison { measured: log.clone(), predicted: None, differences: Vec::new(), notes };
    };
    if let Some(engine) = log.engine.filter(|&e| e != report.engine) {
        notes.push(format!("the log is {}'s, the scenario plans {}", crate::enum_id::enum_id(&engine), crate::enum_id::enum_id(&report.engine)));
    }
    let mut differences = Vec::new();
    let mut add = |field: &str, measured: Option<f64>, predicted: f64| {
        if let Some(m) = measured.filter(|&m| m > 0.0) {
            differences.push(EngineDifference { field: field.into(), measured: m, predicted, relative: (predicted - m) / m });
        }
    };
    add("kv_cache_tokens", log.kv_cache_tokens.map(|v| v as f64), report.kv_cache_tokens as f64);
    add("kv_cache_bytes", log.kv_cache_bytes.map(|v| v as f64), report.kv_cache_bytes as f64);
    add("num_blocks", log.num_blocks.map(|v| v as f64), report.num_blocks as f64);
    add("max_concurrency", log.max_concurrency, report.max_concurrency);
    add("weights_bytes", log.weights_bytes.map(|v| v as f64), b.parameters as f64);
    EngineComparison { measured: log.clone(), predicted: Some(report), differences, notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as vLLM PR #13596 and issue #21348, SGLang #21348 and llama.cpp print them.
    #[test]
    fn reads_each_engines_lines() {
        let vllm = "INFO 02-19 23:56:55 kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens\nINFO 02-19 23:56:55 kv_cache_utils.py:527] Maximum concurrency for 2,048 tokens per request: 997.08x\n(VllmWorker) INFO [gpu_worker.py] Available KV cache memory: 8.11 GiB\nINFO gpu_model_runner.py:848] Loading model weights took 67.7229 GB\n";
        let log = parse(vllm).unwrap();
        assert_eq!(log.engine, Some(Engine::Vllm));
        assert_eq!(log.kv_cache_tokens, Some(2_042_016));
        assert_eq!(log.max_concurrency, Some(997.08));
        assert_eq!(log.kv_cache_bytes, Some((8.11 * GIB).round() as u64));
        assert_eq!(log.weights_bytes, Some((67.7229 * GIB).round() as u64));
        let sglang = parse("[2025-07-22 TP0] KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB").unwrap();
        assert_eq!((sglang.engine, sglang.kv_cache_tokens), (Some(Engine::Sglang), Some(367_404)));
        assert_eq!(sglang.kv_cache_bytes, Some((16.46 * GIB).round() as u64));
        let old = parse("INFO worker.py:267] model weights take 21.21GiB; non_torch_memory takes 0.20GiB; PyTorch activation peak memory takes 0.37GiB; the rest of the memory reserved for KV Cache is 1.57GiB.").unwrap();
        assert_eq!(old.non_torch_bytes, Some((0.20 * GIB).round() as u64));
        assert_eq!(old.activation_peak_bytes, Some((0.37 * GIB).round() as u64));
        assert_eq!(old.kv_cache_bytes, Some((1.57 * GIB).round() as u64));
        let cpp = parse("llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  512.00 MiB\nllama_context:      CUDA0 compute buffer size =   258.50 MiB").unwrap();
        assert_eq!((cpp.engine, cpp.kv_cache_tokens), (Some(Engine::LlamaCpp), Some(8192)));
        assert_eq!(cpp.compute_buffer_bytes, Some((258.5 * MIB) as u64));
        assert_eq!(parse("hello\nworld"), None);
    }
}
