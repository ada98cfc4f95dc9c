//! DeepSpeed's JSON config (`deepspeed --num_gpus N train.py --deepspeed ds_config.json`), as
//! `deepspeed.runtime.config.DeepSpeedConfig` reads it (deepspeed/runtime/config.py).
//!
//! | field | from |
//! |---|---|
//! | `train_micro_batch_size_per_gpu` | `training.micro_batch` |
//! | `gradient_accumulation_steps` | `training.grad_accum` |
//! | `train_batch_size` | micro-batch × accumulation × `parallel.dp` (DeepSpeed checks the product) |
//! | `bf16.enabled` / `fp16.enabled` | `training.precision` (bf16-mixed, bf16 → bf16; fp16-mixed → fp16) |
//! | `zero_optimization.stage` | `parallel.zero` |
//! | `zero_optimization.offload_optimizer` / `offload_param` | `parallel.offload` |
//! | `optimizer.type` | `training.optimizer` (Adam, AdamW, Lion; the learning rate is the optimizer's default until the script sets it) |
//!
//! Refused: tensor, pipeline, context or expert parallelism (they need Megatron-DeepSpeed or a
//! `PipelineModule` in the script, not this file), fp8 (Transformer Engine), optimizers
//! DeepSpeed has no type for (SGD, 8-bit and paged AdamW, Adafactor), and LoRA/QLoRA (PEFT wraps
//! the model in the script: use `--for accelerate`). DeepSpeed keeps fp32 master weights in
//! every mode, so `bf16` (pure) is refused too: its memory plan is another one.

use serde_json::{json, Value};

use super::shared::{refuse, Target};
use crate::error::InputError;
use crate::model::inputs::{Offload, Optimizer};
use crate::model::precision::Precision;
use crate::scenario::Scenario;

const T: Target = Target::Deepspeed;

/// The config as a JSON value (`config` prints it).
pub fn value(s: &Scenario) -> Result<Value, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    refuse(p.tp > 1, T, "parallel.tp", "has no tensor parallelism in its config (use --for megatron)")?;
    refuse(p.pp > 1, T, "parallel.pp", "pipelines only a PipelineModule built in the script (use --for megatron or torchtitan)")?;
    refuse(p.cp > 1, T, "parallel.cp", "has no context parallelism in its config (use --for megatron or torchtitan)")?;
    refuse(p.ep > 1, T, "parallel.ep", "expert parallelism needs DeepSpeed-MoE layers in the model")?;
    refuse(t.lora.is_some(), T, "training.lora", "does not add LoRA adapters: PEFT does, in the script (use --for accelerate)")?;
    let precision = match t.precision {
        Precision::Bf16Mixed => json!({ "bf16": { "enabled": true } }),
        Precision::Fp16Mixed => json!({ "fp16": { "enabled": true } }),
        Precision::Fp32 => json!({}),
        Precision::Bf16 => return Err(super::shared::unsupported(T, "training.precision", "keeps fp32 master weights in bf16 mode: choose bf16-mixed")),
        Precision::Fp8Mixed => return Err(super::shared::unsupported(T, "training.precision", "has no fp8 switch (Transformer Engine does: use --for megatron)")),
    };
    let optimizer = match t.optimizer {
        Optimizer::Adamw => "AdamW",
        Optimizer::Adam => "Adam",
        Optimizer::Lion => "Lion",
        other => return Err(super::shared::unsupported(T, "training.optimizer", &format!("has no optimizer type for {}", crate::labels::optimizer_label(other)))),
    };
    let mut zero = json!({ "stage": p.zero.stage() });
    if p.offload != Offload::None {
        refuse(p.zero.stage() < 1, T, "parallel.offload", "offloads the optimizer only with ZeRO (stage ≥ 1)")?;
        zero["offload_optimizer"] = json!({ "device": "cpu", "pin_memory": true });
    }
    if p.offload == Offload::OptimizerAndParams {
        zero["offload_param"] = json!({ "device": "cpu", "pin_memory": true });
    }
    let mut config = json!({
        "train_micro_batch_size_per_gpu": t.micro_batch,
        "gradient_accumulation_steps": t.grad_accum,
        "train_batch_size": t.micro_batch * t.grad_accum * p.dp.max(1),
        "zero_optimization": zero,
        "optimizer": { "type": optimizer, "params": {} },
    });
    if let (Some(c), Some(extra)) = (config.as_object_mut(), precision.as_object()) {
        c.extend(extra.clone());
    }
    Ok(config)
}

pub fn config(s: &Scenario) -> Result<String, InputError> {
    Ok(serde_json::to_string_pretty(&value(s)?).unwrap_or_default() + "\n")
}
