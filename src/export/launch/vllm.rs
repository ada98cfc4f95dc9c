//! `vllm serve` flags, as vLLM's own argument parser reads them (`vllm/entrypoints/openai/
//! cli_args.py` `make_arg_parser`, `vllm/engine/arg_utils.py` `EngineArgs.add_cli_args`).
//!
//! | flag | from |
//! |---|---|
//! | model | the preset's Hub id (or a pasted config's `_name_or_path`) |
//! | `--tensor-parallel-size`, `--pipeline-parallel-size`, `--data-parallel-size` | `parallel.tp`, `pp`, `dp` |
//! | `--max-model-len` | `training.serving.max_model_len`, else `training.seq_len` (what the plan sized the cache for) |
//! | `--gpu-memory-utilization` | the fraction the plan used (`serving.memory_fraction`: the scenario's, or vLLM's 0.9) |
//! | `--max-num-seqs`, `--max-num-batched-tokens`, `--block-size`, `--enforce-eager` | `training.serving` (only those set) |
//! | `--dtype` | `training.precision` (bf16 / fp16 / fp32) |
//! | `--quantization fp8` / `bitsandbytes` | `training.serving.weights` fp8 / nf4 |
//! | `--kv-cache-dtype fp8` | `training.serving.kv_cache` fp8 |
//!
//! Refused: a plan for another engine's memory, weights that need a pre-quantised checkpoint
//! (int4 GPTQ/AWQ, int8, GGUF, MXFP4 on a model not shipped that way), context or expert
//! parallelism.

use super::shared::{flag, refuse, switch, Target};
use crate::error::InputError;
use crate::model::inputs::{Engine, KvCacheFormat, WeightFormat};
use crate::model::precision::Precision;
use crate::scenario::Scenario;

const T: Target = Target::Vllm;

pub fn args(s: &Scenario) -> Result<Vec<(String, Option<String>)>, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    let sv = &t.serving;
    refuse(sv.engine != Engine::Vllm, T, "training.serving.engine", "serves with its own memory plan: set the engine to vllm so the plan is vLLM's")?;
    refuse(p.cp > 1 || p.ep > 1, T, "parallel", "flags here cover tensor, pipeline and data parallelism only")?;
    let model = super::shared::require_hub_id(s, T)?;
    let report = crate::estimate(s).serving.ok_or_else(|| super::shared::unsupported(T, "training.serving", "plan has no engine report"))?;
    let mut a = vec![(model, None)];
    a.push(flag("--tensor-parallel-size", p.tp.max(1)));
    a.push(flag("--pipeline-parallel-size", p.pp.max(1)));
    a.push(flag("--data-parallel-size", p.dp.max(1)));
    a.push(flag("--max-model-len", sv.max_model_len.unwrap_or(t.seq_len)));
    a.push(flag("--gpu-memory-utilization", report.memory_fraction));
    if let Some(n) = sv.max_num_seqs {
        a.push(flag("--max-num-seqs", n));
    }
    if let Some(n) = sv.max_num_batched_tokens {
        a.push(flag("--max-num-batched-tokens", n));
    }
    if let Some(n) = sv.block_size {
        a.push(flag("--block-size", n));
    }
    if sv.enforce_eager {
        a.push(switch("--enforce-eager"));
    }
    a.push(flag("--dtype", dtype(t.precision)));
    match sv.weights {
        None | Some(WeightFormat::Half) => {}
        Some(WeightFormat::Fp8) => a.push(flag("--quantization", "fp8")),
        Some(WeightFormat::Nf4) => a.push(flag("--quantization", "bitsandbytes")),
        Some(other) => {
            return Err(super::shared::unsupported(
                T,
                "training.serving.weights",
                &format!("reads {other:?} weights from a checkpoint quantised that way, not from this model's Hub id"),
            ))
        }
    }
    if sv.kv_cache == Some(KvCacheFormat::Fp8) {
        a.push(flag("--kv-cache-dtype", "fp8"));
    }
    Ok(a)
}

/// The model dtype flag of the plan's precision.
pub fn dtype(p: Precision) -> &'static str {
    match p {
        Precision::Fp32 => "float32",
        Precision::Fp16Mixed => "float16",
        _ => "bfloat16",
    }
}

pub fn config(s: &Scenario) -> Result<String, InputError> {
    Ok(super::shared::command("vllm serve", &args(s)?))
}
