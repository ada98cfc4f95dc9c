//! Megatron-Core's training arguments (`torchrun … pretrain_gpt.py --flag value …`), as
//! Megatron-LM's `megatron/training/arguments.py` parses them.
//!
//! | flags | from |
//! |---|---|
//! | `--num-layers`, `--hidden-size`, `--ffn-hidden-size`, `--num-attention-heads`, `--group-query-attention --num-query-groups`, `--kv-channels`, `--max-position-embeddings` | the architecture |
//! | `--swiglu`, `--normalization`, `--position-embedding-type rope`, `--untie-embeddings-and-output-weights`, `--disable-bias-linear`, `--add-qkv-bias` | the architecture's parts |
//! | `--num-experts`, `--moe-router-topk`, `--moe-ffn-hidden-size` | its MoE part |
//! | `--micro-batch-size`, `--global-batch-size`, `--seq-length` | `training.micro_batch`, micro-batch × accumulation × dp, `training.seq_len` |
//! | `--tensor-model-parallel-size`, `--sequence-parallel`, `--pipeline-model-parallel-size`, `--num-layers-per-virtual-pipeline-stage`, `--context-parallel-size`, `--expert-model-parallel-size` | `parallel` |
//! | `--use-distributed-optimizer` | `parallel.zero` 1 (Megatron's distributed optimizer shards the optimizer states) |
//! | `--bf16` / `--fp16`, `--fp8-format hybrid` | `training.precision` |
//! | `--recompute-activations` / `--recompute-granularity full --recompute-method uniform --recompute-num-layers 1` | `training.checkpointing` selective / full |
//! | `--optimizer adam` / `sgd` | `training.optimizer` (Megatron's adam decouples weight decay: AdamW) |
//!
//! With tensor or context parallelism on GPUs before Blackwell the command sets
//! `CUDA_DEVICE_MAX_CONNECTIONS=1`, which `validate_args` requires.
//!
//! Refused: ZeRO 2–3 and offloading (Megatron-FSDP's flags are not written here), pure bf16
//! (Megatron keeps fp32 main weights), LoRA, optimizers other than AdamW and SGD, the
//! interleaved schedule without an even split of the layers, and attention parts
//! `pretrain_gpt.py` has no flag for (latent attention, sliding windows, soft-capping, sinks).

use super::shared::{flag, machines, refuse, switch, Target};
use crate::error::InputError;
use crate::model::arch::NormKind;
use crate::model::inputs::{Checkpointing, Offload, Optimizer, PpSchedule, Zero};
use crate::model::precision::Precision;
use crate::scenario::Scenario;

const T: Target = Target::Megatron;

// long: one Megatron flag after another, each traced to the scenario field it comes from.
pub fn args(s: &Scenario) -> Result<Vec<(String, Option<String>)>, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    let arch = s.model.architecture().ok_or_else(|| super::shared::unsupported(T, "model", "needs a known model"))?;
    let m = arch.transformer().ok_or_else(|| super::shared::unsupported(T, "model", "pretrain_gpt.py builds transformers only"))?;
    let a = &m.attention;
    refuse(
        a.latent.is_some() || a.sliding_window > 0 || a.softcap || a.sinks,
        T,
        "model",
        "pretrain_gpt.py has no flags for this model's attention (latent, sliding window, soft-cap or sinks)",
    )?;
    refuse(t.lora.is_some(), T, "training.lora", "has no LoRA in pretrain_gpt.py")?;
    refuse(
        matches!(p.zero, Zero::Gradients | Zero::Parameters),
        T,
        "parallel.zero",
        "shards optimizer states (--use-distributed-optimizer); gradient and parameter sharding (Megatron-FSDP) is not written here: choose ZeRO 0 or 1",
    )?;
    refuse(p.offload != Offload::None, T, "parallel.offload", "optimizer offload is not written here")?;
    refuse(t.techniques.activation_offload, T, "training.techniques.activation_offload", "activation offloading is not written here")?;
    let mut v = vec![
        flag("--num-layers", m.layers),
        flag("--hidden-size", m.hidden),
        flag("--ffn-hidden-size", m.mlp.ffn),
        flag("--num-attention-heads", a.heads),
        flag("--kv-channels", a.head_dim),
    ];
    if a.kv_heads != a.heads {
        v.push(switch("--group-query-attention"));
        v.push(flag("--num-query-groups", a.kv_heads));
    }
    v.push(flag("--max-position-embeddings", m.embedding.max_positions.max(t.seq_len)));
    if m.mlp.gated {
        v.push(switch("--swiglu"));
    }
    v.push(flag("--normalization", if m.norm.kind == NormKind::Rmsnorm { "RMSNorm" } else { "LayerNorm" }));
    if a.rotary_dim > 0 {
        v.push(flag("--position-embedding-type", "rope"));
    }
    if !m.embedding.tied {
        v.push(switch("--untie-embeddings-and-output-weights"));
    }
    if !m.mlp.bias && !a.out_bias {
        v.push(switch("--disable-bias-linear"));
    }
    if a.qkv_bias {
        v.push(switch("--add-qkv-bias"));
    }
    if let Some(moe) = &m.moe {
        v.push(flag("--num-experts", moe.experts));
        v.push(flag("--moe-router-topk", moe.top_k));
        v.push(flag("--moe-ffn-hidden-size", moe.expert_ffn));
    }
    v.push(flag("--micro-batch-size", t.micro_batch));
    v.push(flag("--global-batch-size", t.micro_batch * t.grad_accum * p.dp.max(1)));
    v.push(flag("--seq-length", t.seq_len));
    v.push(flag("--tensor-model-parallel-size", p.tp.max(1)));
    if p.sp && p.tp > 1 {
        v.push(switch("--sequence-parallel"));
    }
    v.push(flag("--pipeline-model-parallel-size", p.pp.max(1)));
    if p.pp > 1 && p.pp_schedule == PpSchedule::Interleaved && p.virtual_stages > 1 {
        let stages = p.pp * p.virtual_stages;
        refuse(!m.layers.is_multiple_of(stages), T, "parallel.virtual_stages", &format!("splits {} layers evenly over pp × virtual stages ({stages})", m.layers))?;
        v.push(flag("--num-layers-per-virtual-pipeline-stage", m.layers / stages));
    }
    refuse(p.pp > 1 && p.pp_schedule == PpSchedule::Gpipe, T, "parallel.pp_schedule", "schedules 1F1B or interleaved 1F1B, not GPipe")?;
    v.push(flag("--context-parallel-size", p.cp.max(1)));
    if p.ep > 1 {
        v.push(flag("--expert-model-parallel-size", p.ep));
    }
    if p.zero == Zero::Optimizer {
        v.push(switch("--use-distributed-optimizer"));
    }
    match t.precision {
        Precision::Bf16Mixed => v.push(switch("--bf16")),
        Precision::Fp16Mixed => v.push(switch("--fp16")),
        Precision::Fp8Mixed => {
            v.push(switch("--bf16"));
            v.push(flag("--fp8-format", "hybrid"));
        }
        Precision::Fp32 => {}
        Precision::Bf16 => return Err(super::shared::unsupported(T, "training.precision", "keeps fp32 main weights: choose bf16-mixed")),
    }
    match t.checkpointing {
        Checkpointing::None => {}
        Checkpointing::Selective => v.push(switch("--recompute-activations")),
        Checkpointing::Full => {
            v.push(flag("--recompute-granularity", "full"));
            v.push(flag("--recompute-method", "uniform"));
            v.push(flag("--recompute-num-layers", 1));
        }
    }
    let optimizer = match t.optimizer {
        Optimizer::Adamw => "adam",
        Optimizer::Sgd => "sgd",
        other => return Err(super::shared::unsupported(T, "training.optimizer", &format!("builds adam (AdamW) or sgd, not {}", crate::labels::optimizer_label(other)))),
    };
    v.push(flag("--optimizer", optimizer));
    Ok(v)
}

pub fn config(s: &Scenario) -> Result<String, InputError> {
    let v = args(s)?;
    let (world, nodes) = machines(s);
    // validate_args asserts this with tensor or context parallelism before Blackwell: one
    // hardware queue keeps the communication kernels in issue order behind the compute.
    let device = s.device.resolve_or_default().0;
    let env = if (s.parallel.tp > 1 || s.parallel.cp > 1) && device.compute_major < 10 { "CUDA_DEVICE_MAX_CONNECTIONS=1 " } else { "" };
    Ok(super::shared::command(&format!("{env}torchrun --nnodes {nodes} --nproc_per_node {} pretrain_gpt.py", world.div_ceil(nodes)), &v))
}
