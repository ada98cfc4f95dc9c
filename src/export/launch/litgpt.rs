//! LitGPT's command line (`litgpt finetune_full | finetune_lora MODEL --flag value`), as its
//! jsonargparse parser reads it (litgpt 0.5, `litgpt/__main__.py`, `finetune/full.py`,
//! `finetune/lora.py`).
//!
//! | flag | from |
//! |---|---|
//! | command | `training.lora`: `finetune_full` or `finetune_lora` |
//! | `--devices`, `--num_nodes` | `parallel.dp`, the device's GPUs per node |
//! | `--precision` | `training.precision` (`bf16-true`, `bf16-mixed`, `16-mixed`, `32-true`) |
//! | `--quantize bnb.nf4-dq` / `bnb.nf4` | QLoRA, with or without double quantisation |
//! | `--train.micro_batch_size`, `--train.global_batch_size`, `--train.max_seq_length` | `training.micro_batch`, micro-batch × accumulation × dp, `training.seq_len` |
//! | `--optimizer` | `training.optimizer` (a `torch.optim` class) |
//! | `--lora_r`, `--lora_query`/`key`/`value`/`projection`/`mlp`, `--lora_dropout` | `training.lora` |
//!
//! LitGPT fixes the rest of the layout: on one GPU no sharding and no activation
//! checkpointing; on several, FSDP full sharding with every block checkpointed
//! (`FSDPStrategy(activation_checkpointing_policy={Block})`, `parallelize_fn`). A plan that
//! differs (ZeRO other than 3, selective checkpointing, offload, TP/PP/CP/EP, QLoRA on
//! several GPUs, fp8) is refused.

use super::shared::{flag, machines, refuse, Target};
use crate::error::InputError;
use crate::model::arch::LinearKind;
use crate::model::inputs::{Checkpointing, LoraBase, Offload, Optimizer, Zero};
use crate::model::precision::Precision;
use crate::scenario::Scenario;

const T: Target = Target::Litgpt;

pub fn config(s: &Scenario) -> Result<String, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    let (world, nodes) = machines(s);
    refuse(p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1, T, "parallel", "fine-tunes with data parallelism only (tp, pp, cp and ep 1)")?;
    refuse(p.offload != Offload::None, T, "parallel.offload", "does not offload (cpu_offload=False)")?;
    if world > 1 {
        refuse(p.zero != Zero::Parameters, T, "parallel.zero", "shards fully (FSDP) on several GPUs: set ZeRO to 3")?;
        refuse(t.checkpointing != Checkpointing::Full, T, "training.checkpointing", "checkpoints every block on several GPUs: choose full")?;
    } else {
        refuse(t.checkpointing != Checkpointing::None, T, "training.checkpointing", "does not checkpoint on one GPU: choose none")?;
    }
    let model = super::shared::require_hub_id(s, T)?;
    let precision = match t.precision {
        Precision::Bf16 => "bf16-true",
        Precision::Bf16Mixed => "bf16-mixed",
        Precision::Fp16Mixed => "16-mixed",
        Precision::Fp32 => "32-true",
        Precision::Fp8Mixed => return Err(super::shared::unsupported(T, "training.precision", "has no fp8 training precision")),
    };
    let optimizer = match t.optimizer {
        Optimizer::Adamw => "AdamW",
        Optimizer::Adam => "Adam",
        Optimizer::Sgd => "SGD",
        other => return Err(super::shared::unsupported(T, "training.optimizer", &format!("takes a torch.optim class; {} is not one", crate::labels::optimizer_label(other)))),
    };
    let command = if t.lora.is_some() { "finetune_lora" } else { "finetune_full" };
    let per_node = world.div_ceil(nodes);
    let mut a = vec![(model, None), flag("--devices", per_node), flag("--num_nodes", nodes), flag("--precision", precision)];
    if let Some(l) = &t.lora {
        if l.base == LoraBase::Nf4 {
            refuse(world > 1, T, "training.lora.base", "quantises (QLoRA) on one GPU only")?;
            refuse(t.precision.is_mixed(), T, "training.precision", "does not quantise with mixed precision: choose bf16 (pure)")?;
            a.push(flag("--quantize", if l.double_quant { "bnb.nf4-dq" } else { "bnb.nf4" }));
        }
        let has = |k: LinearKind| l.targets.contains(&k);
        let mlp = [LinearKind::Gate, LinearKind::Up, LinearKind::Down].iter().filter(|&&k| has(k)).count();
        refuse(mlp != 0 && mlp != 3, T, "training.lora.targets", "adapts the MLP's projections together (--lora_mlp)")?;
        a.push(flag("--lora_r", l.rank));
        a.push(flag("--lora_query", has(LinearKind::Q)));
        a.push(flag("--lora_key", has(LinearKind::K)));
        a.push(flag("--lora_value", has(LinearKind::V)));
        a.push(flag("--lora_projection", has(LinearKind::O)));
        a.push(flag("--lora_mlp", mlp == 3));
        a.push(flag("--lora_dropout", l.dropout));
    }
    a.push(flag("--train.micro_batch_size", t.micro_batch));
    a.push(flag("--train.global_batch_size", t.micro_batch * t.grad_accum * world));
    a.push(flag("--train.max_seq_length", t.seq_len));
    a.push(flag("--optimizer", optimizer));
    Ok(super::shared::command(&format!("litgpt {command}"), &a))
}
