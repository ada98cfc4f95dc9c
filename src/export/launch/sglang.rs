//! SGLang's server flags (`python -m sglang.launch_server …`), as its `ServerArgs.add_cli_args`
//! reads them (`sglang/srt/server_args.py`).
//!
//! | flag | from |
//! |---|---|
//! | `--model-path` | the preset's Hub id (or a pasted config's `_name_or_path`) |
//! | `--tp-size`, `--pp-size`, `--dp-size` | `parallel.tp`, `pp`, `dp` |
//! | `--context-length` | `training.serving.max_model_len`, else `training.seq_len` |
//! | `--mem-fraction-static` | the fraction the plan used (`serving.memory_fraction`: the scenario's, or SGLang's default for the GPU) |
//! | `--max-running-requests`, `--chunked-prefill-size`, `--page-size`, `--disable-cuda-graph` | `training.serving` (only those set) |
//! | `--dtype` | `training.precision` |
//! | `--quantization fp8` / `bitsandbytes` | `training.serving.weights` fp8 / nf4 |
//! | `--kv-cache-dtype fp8_e4m3` | `training.serving.kv_cache` fp8 |
//!
//! Refused as for vLLM: another engine's plan, pre-quantised weight formats, context or expert
//! parallelism.

use super::shared::{flag, refuse, switch, Target};
use crate::error::InputError;
use crate::model::inputs::{Engine, KvCacheFormat, WeightFormat};
use crate::scenario::Scenario;

const T: Target = Target::Sglang;

pub fn args(s: &Scenario) -> Result<Vec<(String, Option<String>)>, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    let sv = &t.serving;
    refuse(sv.engine != Engine::Sglang, T, "training.serving.engine", "serves with its own memory plan: set the engine to sglang so the plan is SGLang's")?;
    refuse(p.cp > 1 || p.ep > 1, T, "parallel", "flags here cover tensor, pipeline and data parallelism only")?;
    let model = super::shared::require_hub_id(s, T)?;
    let report = crate::estimate(s).serving.ok_or_else(|| super::shared::unsupported(T, "training.serving", "plan has no engine report"))?;
    let mut a = vec![flag("--model-path", model)];
    a.push(flag("--tp-size", p.tp.max(1)));
    a.push(flag("--pp-size", p.pp.max(1)));
    a.push(flag("--dp-size", p.dp.max(1)));
    a.push(flag("--context-length", sv.max_model_len.unwrap_or(t.seq_len)));
    a.push(flag("--mem-fraction-static", report.memory_fraction));
    if let Some(n) = sv.max_num_seqs {
        a.push(flag("--max-running-requests", n));
    }
    if let Some(n) = sv.max_num_batched_tokens {
        a.push(flag("--chunked-prefill-size", n));
    }
    if let Some(n) = sv.block_size {
        a.push(flag("--page-size", n));
    }
    if sv.enforce_eager {
        a.push(switch("--disable-cuda-graph"));
    }
    a.push(flag("--dtype", super::vllm::dtype(t.precision)));
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
        a.push(flag("--kv-cache-dtype", "fp8_e4m3"));
    }
    Ok(a)
}

pub fn config(s: &Scenario) -> Result<String, InputError> {
    Ok(super::shared::command("python -m sglang.launch_server", &args(s)?))
}
