//! The serving ladder: what an inference scenario can change to fit, or to hold more
//! sequences at once — an 8-bit KV cache, FP8 then 4-bit weights, a larger share of the GPU
//! for the engine, fewer sequences, a shorter context, and tensor parallelism over more GPUs
//! (`escalation.rs`'s own step). Training fixes (checkpointing, optimizer states, ZeRO) do
//! nothing for a forward pass without gradients, so an inference scenario is never offered
//! them. Each step's note says what it changed and the concurrency it buys.

use super::step::Step;
use crate::format;
use crate::model::inputs::{Engine, KvCacheFormat, WeightFormat};
use crate::scenario::Scenario;

/// The serving fixes, least intrusive first: a cache in FP8 and FP8 weights cost little
/// accuracy (vLLM docs, "Quantized KV Cache", "FP8 W8A8"); a larger fraction leaves less to
/// other processes; fewer sequences or a shorter context serve less; more GPUs cost money;
/// 4-bit weights cost the most accuracy.
pub const SERVING_LADDER: [Step; 7] =
    [Step::Fp8KvCache, Step::Fp8Weights, Step::HigherMemoryFraction, Step::FewerSequences, Step::ShorterContext, Step::TensorParallel, Step::Int4Weights];

/// The largest fraction the ladder gives an engine: 5 % stays for the CUDA context, other
/// processes and what the engine does not profile.
const MAX_FRACTION: f64 = 0.95;

/// Apply a serving step (any of [`SERVING_LADDER`] but tensor parallelism).
pub fn apply(step: Step, s: &Scenario) -> (Scenario, String) {
    let mut n = s.clone();
    let serving = &mut n.training.serving;
    let note = match step {
        Step::Fp8KvCache if serving.kv_cache == Some(KvCacheFormat::Fp8) => "the KV cache is already FP8".to_string(),
        Step::Fp8KvCache => {
            serving.kv_cache = Some(KvCacheFormat::Fp8);
            "KV cache in FP8 (vLLM --kv-cache-dtype fp8): half the bytes per token".into()
        }
        Step::Fp8Weights => match serving.weights {
            None | Some(WeightFormat::Half) => {
                serving.weights = Some(WeightFormat::Fp8);
                "linear weights in FP8: half of bf16".into()
            }
            Some(w) => format!("weights are already {}", crate::enum_id::enum_id(&w)),
        },
        Step::Int4Weights => match serving.weights {
            None | Some(WeightFormat::Half | WeightFormat::Fp8 | WeightFormat::Int8) => {
                serving.weights = Some(WeightFormat::Int4);
                "linear weights in 4 bits with a scale per 128 (AWQ / GPTQ checkpoints)".into()
            }
            Some(w) => format!("weights are already {}", crate::enum_id::enum_id(&w)),
        },
        Step::HigherMemoryFraction => higher_fraction(s, &mut n),
        Step::FewerSequences => {
            let (batch, seqs) = (s.training.micro_batch, s.training.serving.max_num_seqs);
            if batch <= 1 && seqs.is_none_or(|m| m <= 1) {
                "already one sequence at a time".into()
            } else {
                n.training.micro_batch = (batch / 2).max(1);
                if let Some(m) = seqs {
                    n.training.serving.max_num_seqs = Some((m / 2).max(1));
                }
                format!("{} → {} sequences at once", batch, n.training.micro_batch)
            }
        }
        Step::ShorterContext => {
            let context = s.training.serving.max_model_len.unwrap_or(s.training.seq_len);
            if context <= 256 {
                format!("{context} tokens is already short")
            } else {
                let shorter = context / 2;
                n.training.seq_len = n.training.seq_len.min(shorter);
                if s.training.serving.max_model_len.is_some() {
                    n.training.serving.max_model_len = Some(shorter);
                }
                format!("context {} → {} tokens", format::thousands(context), format::thousands(shorter))
            }
        }
        _ => return (n, String::new()),
    };
    let bought = concurrency(&n).map_or(String::new(), |c| format!("; {c}"));
    (n, format!("{note}{bought}"))
}

/// vLLM's `--gpu-memory-utilization` or SGLang's `--mem-fraction-static` raised to 0.95; TGI's
/// `--cuda-memory-fraction` to 1.
fn higher_fraction(s: &Scenario, n: &mut Scenario) -> String {
    let serving = &mut n.training.serving;
    match serving.engine {
        Engine::Vllm => {
            let now = serving.gpu_memory_utilization.unwrap_or(crate::model::serving::VLLM_DEFAULT_UTILIZATION);
            if now >= MAX_FRACTION {
                format!("--gpu-memory-utilization is already {now}")
            } else {
                serving.gpu_memory_utilization = Some(MAX_FRACTION);
                format!("--gpu-memory-utilization {now} → {MAX_FRACTION}")
            }
        }
        Engine::Sglang => {
            let now = crate::estimate(s).serving.map_or(0.0, |r| r.memory_fraction);
            if now >= MAX_FRACTION {
                format!("--mem-fraction-static is already {now}")
            } else {
                serving.mem_fraction_static = Some(MAX_FRACTION);
                format!("--mem-fraction-static {now} → {MAX_FRACTION}")
            }
        }
        Engine::Tgi if serving.gpu_memory_utilization.is_some_and(|f| f < 1.0) => {
            serving.gpu_memory_utilization = None;
            "--cuda-memory-fraction back to 1".into()
        }
        engine => format!("{} takes the memory it needs: no fraction to raise", crate::enum_id::enum_id(&engine)),
    }
}

/// "holds 12.3 sequences of 8,192 tokens at once" for an engine that starts.
fn concurrency(s: &Scenario) -> Option<String> {
    let r = crate::estimate(s).serving?;
    r.starts().then(|| format!("holds {:.1} sequences of {} tokens at once", r.max_concurrency, format::thousands(r.max_model_len)))
}
