//! torchtune: the recipe, its packaged config and the overrides that make it the plan
//! (`tune run [--nproc_per_node N] RECIPE --config CONFIG key=value …`), as torchtune's
//! `TuneRecipeArgumentParser` and `_merge_yaml_and_cli_args` read them (torchtune 0.6,
//! `torchtune/config/_parse.py`, `_utils.py`).
//!
//! | override | from |
//! |---|---|
//! | recipe | `training.lora` (full / LoRA / QLoRA) × one GPU or distributed |
//! | config | the model (Llama 2/3/3.1/3.2, Mistral, Qwen2 presets) and the recipe |
//! | `batch_size`, `gradient_accumulation_steps`, `tokenizer.max_seq_len` | `training.micro_batch`, `training.grad_accum`, `training.seq_len` |
//! | `dtype` | `training.precision` (bf16 or fp32: torchtune has no autocast) |
//! | `enable_activation_checkpointing` | `training.checkpointing` (full or none) |
//! | `enable_activation_offloading`, `optimizer_in_bwd`, `compile` | `training.techniques` |
//! | `optimizer._component_` | `training.optimizer` |
//! | `fsdp_cpu_offload`, `fsdp_reshard_after_forward` | `parallel.offload` (optimizer+params), `parallel.fsdp_reshard_after_forward` |
//! | `tensor_parallel_dim` | `parallel.tp` (configs with a tensor-parallel plan: the 70B full fine-tunes) |
//! | `model.lora_rank`, `model.lora_attn_modules`, `model.apply_lora_to_mlp`, `model.lora_dropout` | `training.lora` |
//!
//! Refused: mixed precision, selective checkpointing, pipeline, context and expert
//! parallelism, data parallelism without ZeRO-3 (the distributed recipes always shard with
//! FSDP2), offloading the optimizer alone, a model without a packaged config, LoRA on part of
//! the MLP (torchtune adapts its three projections together).

use super::shared::{flag, machines, refuse, Target};
use crate::error::InputError;
use crate::import::presets::model_preset;
use crate::model::arch::LinearKind;
use crate::model::inputs::{Checkpointing, LoraBase, Offload, Optimizer, Zero};
use crate::model::precision::Precision;
use crate::scenario::{ModelSpec, Scenario};

const T: Target = Target::Torchtune;

/// torchtune's config directory and size prefix for a catalogue model (its Hub id).
fn model_dir(s: &Scenario) -> Option<(&'static str, &'static str)> {
    let ModelSpec::Preset(id) = &s.model else { return None };
    let hub = model_preset(id)?.id;
    Some(match hub {
        "meta-llama/Meta-Llama-3-8B" | "meta-llama/Meta-Llama-3-8B-Instruct" => ("llama3", "8B"),
        "meta-llama/Meta-Llama-3-70B" | "meta-llama/Meta-Llama-3-70B-Instruct" => ("llama3", "70B"),
        "meta-llama/Llama-3.1-8B" | "meta-llama/Llama-3.1-8B-Instruct" => ("llama3_1", "8B"),
        "meta-llama/Llama-3.1-70B" | "meta-llama/Llama-3.1-70B-Instruct" => ("llama3_1", "70B"),
        "meta-llama/Llama-3.2-1B" | "meta-llama/Llama-3.2-1B-Instruct" => ("llama3_2", "1B"),
        "meta-llama/Llama-3.2-3B" | "meta-llama/Llama-3.2-3B-Instruct" => ("llama3_2", "3B"),
        "meta-llama/Llama-2-7b-hf" => ("llama2", "7B"),
        "meta-llama/Llama-2-13b-hf" => ("llama2", "13B"),
        "mistralai/Mistral-7B-v0.1" => ("mistral", "7B"),
        "Qwen/Qwen2-7B" => ("qwen2", "7B"),
        _ => return None,
    })
}

/// The configs torchtune 0.6.1 packages (`recipes/configs/`), for the models above.
const CONFIGS: &[&str] = &[
    "llama3/8B_full", "llama3/8B_full_single_device", "llama3/8B_lora", "llama3/8B_lora_single_device", "llama3/8B_qlora_single_device", "llama3/70B_full", "llama3/70B_lora",
    "llama3_1/8B_full", "llama3_1/8B_full_single_device", "llama3_1/8B_lora", "llama3_1/8B_lora_single_device", "llama3_1/8B_qlora_single_device", "llama3_1/70B_full",
    "llama3_1/70B_lora", "llama3_2/1B_full", "llama3_2/1B_full_single_device", "llama3_2/1B_lora", "llama3_2/1B_lora_single_device", "llama3_2/1B_qlora_single_device",
    "llama3_2/3B_full", "llama3_2/3B_full_single_device", "llama3_2/3B_lora", "llama3_2/3B_lora_single_device", "llama3_2/3B_qlora_single_device", "llama2/7B_full",
    "llama2/7B_lora", "llama2/7B_lora_single_device", "llama2/7B_qlora", "llama2/7B_qlora_single_device", "llama2/13B_full", "llama2/13B_lora", "llama2/13B_qlora_single_device",
    "mistral/7B_full", "mistral/7B_lora", "mistral/7B_lora_single_device", "mistral/7B_qlora_single_device", "qwen2/7B_full", "qwen2/7B_full_single_device", "qwen2/7B_lora",
    "qwen2/7B_lora_single_device",
];

/// Configs with a `tensor_parallel_plan` (the recipe refuses `tensor_parallel_dim > 1` without one).
const TENSOR_PARALLEL: &[&str] = &["llama3/70B_full", "llama3_1/70B_full"];

/// A torchtune launch: the recipe, its packaged config, and the `key=value` overrides in order
/// (an empty value removes the key: `~key`).
pub struct Plan {
    pub recipe: String,
    pub config: String,
    pub overrides: Vec<(String, String)>,
}

/// The recipe, its config and the overrides.
pub fn plan(s: &Scenario) -> Result<Plan, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    let (world, _) = machines(s);
    refuse(p.pp > 1, T, "parallel.pp", "recipes have no pipeline parallelism")?;
    refuse(p.cp > 1, T, "parallel.cp", "recipes have no context parallelism")?;
    refuse(p.ep > 1, T, "parallel.ep", "recipes have no expert parallelism")?;
    refuse(world > 1 && p.zero != Zero::Parameters, T, "parallel.zero", "distributed recipes always shard with FSDP2: set ZeRO to 3")?;
    refuse(p.offload == Offload::Optimizer, T, "parallel.offload", "offloads parameters with their optimizer states (fsdp_cpu_offload), not the optimizer alone")?;
    refuse(t.checkpointing == Checkpointing::Selective, T, "training.checkpointing", "checkpoints whole layers: choose full or none")?;
    let dtype = match t.precision {
        Precision::Bf16 => "bf16",
        Precision::Fp32 => "fp32",
        _ => return Err(super::shared::unsupported(T, "training.precision", "trains in one dtype, without autocast: choose bf16 (pure) or fp32")),
    };
    let (dir, size) = model_dir(s).ok_or_else(|| super::shared::unsupported(T, "model", "has no packaged config for this model"))?;
    let distributed = world > 1;
    let (recipe, kind) = match (&t.lora, distributed) {
        (None, false) => ("full_finetune_single_device", "full_single_device"),
        (None, true) => ("full_finetune_distributed", "full"),
        (Some(l), false) if l.base == LoraBase::Nf4 => ("lora_finetune_single_device", "qlora_single_device"),
        (Some(l), true) if l.base == LoraBase::Nf4 => ("lora_finetune_distributed", "qlora"),
        (Some(_), false) => ("lora_finetune_single_device", "lora_single_device"),
        (Some(_), true) => ("lora_finetune_distributed", "lora"),
    };
    let config = format!("{dir}/{size}_{kind}");
    refuse(!CONFIGS.contains(&config.as_str()), T, "model", &format!("packages no config {config}"))?;
    refuse(p.tp > 1 && !TENSOR_PARALLEL.contains(&config.as_str()), T, "parallel.tp", &format!("has a tensor-parallel plan only in {}", TENSOR_PARALLEL.join(", ")))?;
    let mut o: Vec<(String, String)> = vec![];
    let mut set = |k: &str, v: String| o.push((k.to_string(), v));
    set("batch_size", t.micro_batch.to_string());
    set("gradient_accumulation_steps", t.grad_accum.to_string());
    set("tokenizer.max_seq_len", t.seq_len.to_string());
    set("dtype", dtype.into());
    set("enable_activation_checkpointing", py_bool(t.checkpointing == Checkpointing::Full));
    set("enable_activation_offloading", py_bool(t.techniques.activation_offload));
    set("compile", py_bool(t.techniques.compile));
    if t.lora.is_none() {
        set("optimizer_in_bwd", py_bool(t.techniques.optimizer_in_backward));
    } else {
        refuse(t.techniques.optimizer_in_backward, T, "training.techniques.optimizer_in_backward", "runs the optimizer in backward only in the full fine-tuning recipes")?;
    }
    let optimizer = match t.optimizer {
        Optimizer::Adamw => "torch.optim.AdamW",
        Optimizer::Adam => "torch.optim.Adam",
        Optimizer::Adamw8bit => "bitsandbytes.optim.AdamW8bit",
        Optimizer::PagedAdamw => "bitsandbytes.optim.PagedAdamW",
        Optimizer::PagedAdamw8bit => "bitsandbytes.optim.PagedAdamW8bit",
        Optimizer::Sgd => "torch.optim.SGD",
        other => return Err(super::shared::unsupported(T, "training.optimizer", &format!("has no optimizer component set here for {}", crate::labels::optimizer_label(other)))),
    };
    set("optimizer._component_", optimizer.into());
    if !matches!(t.optimizer, Optimizer::Adamw | Optimizer::Adam) || p.tp > 1 {
        // `fused` is a torch.optim Adam(W) argument; the recipe also refuses it with tensor parallelism.
        set("~optimizer.fused", String::new());
    }
    if distributed {
        set("fsdp_cpu_offload", py_bool(p.offload == Offload::OptimizerAndParams));
        set("fsdp_reshard_after_forward", py_bool(p.fsdp_reshard_after_forward));
    } else {
        refuse(p.offload != Offload::None, T, "parallel.offload", "offloads only in the distributed recipes (fsdp_cpu_offload)")?;
    }
    if p.tp > 1 {
        set("tensor_parallel_dim", p.tp.to_string());
    }
    if let Some(l) = &t.lora {
        let attn: Vec<&str> = l
            .targets
            .iter()
            .filter_map(|k| match k {
                LinearKind::Q => Some("q_proj"),
                LinearKind::K => Some("k_proj"),
                LinearKind::V => Some("v_proj"),
                LinearKind::O => Some("output_proj"),
                _ => None,
            })
            .collect();
        let mlp = l.targets.iter().filter(|k| matches!(k, LinearKind::Gate | LinearKind::Up | LinearKind::Down)).count();
        refuse(mlp != 0 && mlp != 3, T, "training.lora.targets", "adapts the MLP's three projections together (apply_lora_to_mlp)")?;
        refuse(l.base == LoraBase::Nf4 && !l.double_quant, T, "training.lora.double_quant", "quantises NF4 scales itself (torchao NF4Tensor): double quantisation is always on")?;
        set("model.lora_rank", l.rank.to_string());
        set("model.lora_attn_modules", format!("[{}]", attn.join(",")));
        set("model.apply_lora_to_mlp", py_bool(mlp == 3));
        set("model.lora_dropout", l.dropout.to_string());
    }
    Ok(Plan { recipe: recipe.to_string(), config, overrides: o })
}

fn py_bool(b: bool) -> String {
    if b { "True" } else { "False" }.into()
}

pub fn config(s: &Scenario) -> Result<String, InputError> {
    let Plan { recipe, config, overrides } = plan(s)?;
    let (world, nodes) = machines(s);
    let mut head = String::from("tune run");
    if world > 1 {
        let per_node = world.div_ceil(nodes);
        if nodes > 1 {
            head.push_str(&format!(" --nnodes {nodes}"));
        }
        head.push_str(&format!(" --nproc_per_node {per_node}"));
    }
    head.push_str(&format!(" {recipe}"));
    let mut args = vec![flag("--config", config)];
    for (k, v) in overrides {
        args.push((super::shared::shell_word(&if v.is_empty() { k } else { format!("{k}={v}") }), None));
    }
    Ok(super::shared::command(&head, &args))
}
