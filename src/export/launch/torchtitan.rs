//! torchtitan's job config (`torchrun … -m torchtitan.train --job.config_file job.toml`), as
//! its `ConfigManager` reads it (torchtitan 0.2, `torchtitan/config/job_config.py`).
//!
//! | key | from |
//! |---|---|
//! | `model.name`, `model.flavor` | Llama 3 / 3.1 8B and 70B presets (`llama3`, `8B` / `70B`) |
//! | `model.converters = ["quantize.linear.float8"]` | `training.precision` fp8-mixed |
//! | `training.local_batch_size`, `global_batch_size`, `seq_len` | micro-batch (× accumulation with a pipeline), micro-batch × accumulation × dp, `training.seq_len` |
//! | `training.dtype`, `mixed_precision_param` | `training.precision` (pure bf16: `bfloat16` everywhere; mixed: fp32 parameters, bf16 compute) |
//! | `training.enable_cpu_offload` | `parallel.offload` optimizer+params (FSDP2's CPU offload) |
//! | `parallelism.data_parallel_shard_degree` / `replicate_degree` | `parallel.dp` with ZeRO-3 (FSDP2) / without ZeRO (DDP) |
//! | `parallelism.fsdp_reshard_after_forward` | `parallel.fsdp_reshard_after_forward` |
//! | `parallelism.tensor_parallel_degree`, `pipeline_parallel_degree`, `context_parallel_degree` | `parallel.tp`, `pp`, `cp` |
//! | `parallelism.pipeline_parallel_schedule`, `pipeline_parallel_microbatch_size`, `pipeline_parallel_layers_per_stage` | `parallel.pp_schedule`, `training.micro_batch`, layers ÷ (pp × virtual stages) |
//! | `activation_checkpoint.mode` | `training.checkpointing` (full or none) |
//! | `optimizer.name`, `optimizer.early_step_in_backward` | `training.optimizer` (Adam, AdamW), `training.techniques.optimizer_in_backward` |
//! | `compile.enable` | `training.techniques.compile` |
//!
//! Refused: other models, ZeRO 1–2 (torchtitan shards fully or replicates), tensor
//! parallelism without sequence parallelism (torchtitan always pairs them), selective
//! checkpointing (torchtitan's per-op and per-layer modes save other tensors than the
//! attention-core recomputation the plan counts), offloading the optimizer alone, activation
//! offloading, LoRA, other optimizers.

use super::shared::{refuse, Target};
use crate::error::InputError;
use crate::import::presets::model_preset;
use crate::model::inputs::{Checkpointing, Offload, Optimizer, PpSchedule, Zero};
use crate::model::precision::Precision;
use crate::scenario::{ModelSpec, Scenario};

const T: Target = Target::Torchtitan;

pub fn config(s: &Scenario) -> Result<String, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    let flavor = match &s.model {
        ModelSpec::Preset(id) => match model_preset(id).map(|m| m.id) {
            Some("meta-llama/Meta-Llama-3-8B" | "meta-llama/Llama-3.1-8B") => Some("8B"),
            Some("meta-llama/Meta-Llama-3-70B" | "meta-llama/Llama-3.1-70B") => Some("70B"),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| super::shared::unsupported(T, "model", "has a Llama 3 8B / 70B flavor for this planner's presets; this model is not one"))?;
    refuse(t.lora.is_some(), T, "training.lora", "pre-trains and fully fine-tunes; it has no LoRA")?;
    refuse(p.ep > 1, T, "parallel.ep", "has no experts in Llama 3")?;
    refuse(matches!(p.zero, Zero::Optimizer | Zero::Gradients), T, "parallel.zero", "shards fully (FSDP2, ZeRO-3) or replicates (DDP): choose ZeRO 0 or 3")?;
    refuse(p.tp > 1 && !p.sp, T, "parallel.sp", "always pairs tensor with sequence parallelism: turn sp on")?;
    refuse(
        t.checkpointing == Checkpointing::Selective,
        T,
        "training.checkpointing",
        "has per-op and per-layer selective modes, not the attention-core recomputation planned: choose full or none",
    )?;
    refuse(p.offload == Offload::Optimizer, T, "parallel.offload", "offloads parameters, gradients and optimizer states together (enable_cpu_offload)")?;
    refuse(t.techniques.activation_offload, T, "training.techniques.activation_offload", "does not offload activations")?;
    let optimizer = match t.optimizer {
        Optimizer::Adamw => "AdamW",
        Optimizer::Adam => "Adam",
        other => return Err(super::shared::unsupported(T, "training.optimizer", &format!("builds Adam or AdamW, not {}", crate::labels::optimizer_label(other)))),
    };
    let (dtype, param) = match t.precision {
        Precision::Bf16 => ("bfloat16", "bfloat16"),
        Precision::Fp32 => ("float32", "float32"),
        Precision::Bf16Mixed | Precision::Fp8Mixed => ("float32", "bfloat16"),
        Precision::Fp16Mixed => return Err(super::shared::unsupported(T, "training.precision", "mixes bf16 only: choose bf16-mixed")),
    };
    let dp = p.dp.max(1);
    let (shard, replicate) = if p.zero == Zero::Parameters { (dp, 1) } else { (1, dp) };
    let local = if p.pp > 1 { t.micro_batch * t.grad_accum } else { t.micro_batch };
    let layers = model_preset_layers(s);
    let mut o = String::from("# torchtitan job config, from Headroom's plan\n[job]\ndescription = \"Headroom plan\"\n\n");
    o.push_str(&format!("[model]\nname = \"llama3\"\nflavor = \"{flavor}\"\n"));
    if t.precision == Precision::Fp8Mixed {
        o.push_str("converters = [\"quantize.linear.float8\"]\n");
    }
    o.push_str(&format!(
        "\n[training]\nlocal_batch_size = {local}\nglobal_batch_size = {}\nseq_len = {}\ndtype = \"{dtype}\"\nmixed_precision_param = \"{param}\"\nenable_cpu_offload = {}\n",
        t.micro_batch * t.grad_accum * dp,
        t.seq_len,
        p.offload == Offload::OptimizerAndParams
    ));
    o.push_str(&format!(
        "\n[parallelism]\ndata_parallel_replicate_degree = {replicate}\ndata_parallel_shard_degree = {shard}\nfsdp_reshard_after_forward = \"{}\"\ntensor_parallel_degree = {}\npipeline_parallel_degree = {}\ncontext_parallel_degree = {}\n",
        if p.fsdp_reshard_after_forward { "always" } else { "never" },
        p.tp.max(1),
        p.pp.max(1),
        p.cp.max(1)
    ));
    if p.pp > 1 {
        let (schedule, v) = match p.pp_schedule {
            PpSchedule::OneFOneB => ("1F1B", 1),
            PpSchedule::Interleaved => ("Interleaved1F1B", p.virtual_stages.max(1)),
            PpSchedule::Gpipe => ("GPipe", 1),
        };
        o.push_str(&format!("pipeline_parallel_schedule = \"{schedule}\"\npipeline_parallel_microbatch_size = {}\n", t.micro_batch));
        let stages = p.pp * v;
        refuse(!layers.is_multiple_of(stages), T, "parallel.virtual_stages", &format!("splits {layers} layers evenly: pp × virtual stages ({stages}) must divide them"))?;
        o.push_str(&format!("pipeline_parallel_layers_per_stage = {}\n", layers / stages));
    }
    o.push_str(&format!("\n[activation_checkpoint]\nmode = \"{}\"\n", if t.checkpointing == Checkpointing::Full { "full" } else { "none" }));
    o.push_str(&format!("\n[optimizer]\nname = \"{optimizer}\"\nearly_step_in_backward = {}\n", t.techniques.optimizer_in_backward));
    o.push_str(&format!("\n[compile]\nenable = {}\n", t.techniques.compile));
    Ok(o)
}

fn model_preset_layers(s: &Scenario) -> u64 {
    s.model.architecture().and_then(|a| a.transformer().map(|t| t.layers)).unwrap_or(1)
}
