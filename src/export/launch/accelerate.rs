//! Hugging Face accelerate's config file (`accelerate launch --config_file accelerate.yaml`,
//! read by `accelerate.commands.config.config_args.load_config_from_file`) and the arguments
//! of TRL's SFT script (`trl/scripts/sft.py`: `ScriptArguments`, `SFTConfig` — a
//! `transformers.TrainingArguments` — and `ModelConfig`), as comment lines under it.
//!
//! | field | from |
//! |---|---|
//! | `distributed_type` | one GPU: `NO`; ZeRO off: `MULTI_GPU` (DDP); ZeRO 1–2, or 3 with `parallel.zero3_impl` deepspeed: `DEEPSPEED`; ZeRO 3 with FSDP2: `FSDP` |
//! | `num_processes`, `num_machines` | `parallel.dp`; nodes from the device's GPUs per node |
//! | `mixed_precision` | `training.precision` (bf16-mixed `bf16`, fp16-mixed `fp16`, fp8-mixed `fp8`; fp32 and pure bf16 `no`) |
//! | `deepspeed_config.zero_stage`, `offload_*_device` | `parallel.zero`, `parallel.offload` |
//! | `fsdp_config.fsdp_version: 2`, `fsdp_reshard_after_forward`, `fsdp_offload_params`, `fsdp_activation_checkpointing`, `fsdp_state_dict_type`, `fsdp_cpu_ram_efficient_loading` | FSDP2; `parallel.fsdp_reshard_after_forward`; `parallel.offload`; `training.checkpointing` full; `parallel.full_state_dict_on_save`; `parallel.fsdp_load` tensor (unit, or a sharded checkpoint accelerate cannot read: off) |
//! | `--per_device_train_batch_size`, `--gradient_accumulation_steps`, `--max_length` | `training.micro_batch`, `training.grad_accum`, `training.seq_len` |
//! | `--bf16` / `--fp16`, `--dtype bfloat16` | `training.precision` |
//! | `--gradient_checkpointing` | `training.checkpointing` full (without FSDP, which checkpoints itself) |
//! | `--optim` | `training.optimizer` (`adamw_torch`, `adamw_bnb_8bit`, `paged_adamw_32bit`, `paged_adamw_8bit`, `adafactor`, `lion_32bit`, `sgd`) |
//! | `--use_peft --lora_r --lora_target_modules --lora_dropout`, `--load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant` | `training.lora` |
//! | `--use_liger_kernel`, `--torch_compile` | `training.techniques` |
//!
//! Refused: tensor, pipeline, context and expert parallelism; selective checkpointing
//! (Hugging Face models checkpoint whole blocks); Adam without decoupled weight decay and SGD
//! with momentum (no `--optim` value names them); offloading only the optimizer under FSDP.

use super::shared::{hub_id, machines, refuse, Target};
use crate::error::InputError;
use crate::model::arch::LinearKind;
use crate::model::inputs::{Checkpointing, FsdpLoad, LoraBase, Offload, Optimizer, Zero, Zero3Impl};
use crate::model::precision::Precision;
use crate::scenario::Scenario;

const T: Target = Target::Accelerate;

/// The module names PEFT matches for each adapted linear (Llama-style naming; a mixer's
/// linears under every name the hybrid families give them, `arch/mixer.rs`: PEFT refuses a
/// list only when none of its names is found).
pub fn module_names(kind: LinearKind) -> &'static [&'static str] {
    match kind {
        LinearKind::Q => &["q_proj"],
        LinearKind::K => &["k_proj"],
        LinearKind::V => &["v_proj"],
        LinearKind::O => &["o_proj"],
        LinearKind::Gate => &["gate_proj"],
        LinearKind::Up => &["up_proj"],
        LinearKind::Down => &["down_proj"],
        LinearKind::AddQ => &["add_q_proj"],
        LinearKind::AddK => &["add_k_proj"],
        LinearKind::AddV => &["add_v_proj"],
        LinearKind::AddO => &["to_add_out"],
        LinearKind::MixerIn => &["in_proj", "in_proj_qkvz", "in_proj_qkv", "in_proj_z"],
        LinearKind::MixerGates => &["in_proj_ba", "in_proj_b", "in_proj_a"],
        LinearKind::XProj => &["x_proj"],
        LinearKind::DtProj => &["dt_proj"],
        LinearKind::MixerOut => &["out_proj"],
    }
}

pub fn config(s: &Scenario) -> Result<String, InputError> {
    let (t, p) = (&s.training, &s.parallel);
    refuse(p.tp > 1, T, "parallel.tp", "config has no tensor parallelism here (use --for megatron or torchtitan)")?;
    refuse(p.pp > 1, T, "parallel.pp", "config has no pipeline parallelism here (use --for megatron or torchtitan)")?;
    refuse(p.cp > 1, T, "parallel.cp", "config has no context parallelism here (use --for megatron or torchtitan)")?;
    refuse(p.ep > 1, T, "parallel.ep", "config has no expert parallelism")?;
    refuse(t.checkpointing == Checkpointing::Selective, T, "training.checkpointing", "checkpoints whole blocks (Hugging Face gradient checkpointing): choose full or none")?;
    let (world, nodes) = machines(s);
    let fsdp = p.zero == Zero::Parameters && p.zero3_impl == Zero3Impl::Fsdp2 && world > 1;
    let deepspeed = world > 1 && !fsdp && p.zero != Zero::Off;
    refuse(
        fsdp && p.offload == Offload::Optimizer,
        T,
        "parallel.offload",
        "FSDP offloads parameters with their optimizer states, not the optimizer alone: choose optimizer+params, or ZeRO-3 through DeepSpeed",
    )?;
    refuse(!fsdp && !deepspeed && p.offload != Offload::None, T, "parallel.offload", "offloads only with ZeRO / FSDP")?;
    let mixed = match t.precision {
        Precision::Bf16Mixed => "bf16",
        Precision::Fp16Mixed => "fp16",
        Precision::Fp8Mixed => "fp8",
        Precision::Fp32 | Precision::Bf16 => "no",
    };
    let distributed = if world == 1 {
        "NO"
    } else if fsdp {
        "FSDP"
    } else if deepspeed {
        "DEEPSPEED"
    } else {
        "MULTI_GPU"
    };
    let mut y = String::from("# accelerate config, from Headroom's plan\ncompute_environment: LOCAL_MACHINE\n");
    // Quoted: YAML 1.1 reads a bare `no` / `NO` as the boolean false (accelerate writes them quoted).
    y.push_str(&format!("distributed_type: '{distributed}'\n"));
    y.push_str(&format!("mixed_precision: '{mixed}'\n"));
    y.push_str(&format!("num_machines: {nodes}\nnum_processes: {world}\nmachine_rank: 0\nmain_training_function: main\nuse_cpu: false\n"));
    if deepspeed {
        let offload_optimizer = if p.offload == Offload::None { "none" } else { "cpu" };
        let offload_param = if p.offload == Offload::OptimizerAndParams { "cpu" } else { "none" };
        y.push_str("deepspeed_config:\n");
        y.push_str(&format!("  zero_stage: {}\n", p.zero.stage()));
        y.push_str(&format!("  gradient_accumulation_steps: {}\n", t.grad_accum));
        y.push_str(&format!("  offload_optimizer_device: {offload_optimizer}\n  offload_param_device: {offload_param}\n"));
        y.push_str(&format!("  zero3_init_flag: {}\n", p.zero == Zero::Parameters));
    }
    if fsdp {
        y.push_str("fsdp_config:\n  fsdp_version: 2\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n");
        y.push_str(&format!("  fsdp_reshard_after_forward: {}\n", p.fsdp_reshard_after_forward));
        y.push_str(&format!("  fsdp_offload_params: {}\n", p.offload == Offload::OptimizerAndParams));
        y.push_str(&format!("  fsdp_activation_checkpointing: {}\n", t.checkpointing == Checkpointing::Full));
        y.push_str(&format!("  fsdp_state_dict_type: {}\n", if p.full_state_dict_on_save { "FULL_STATE_DICT" } else { "SHARDED_STATE_DICT" }));
        // accelerate fills a meta model from rank 0's full state dict one tensor at a time
        // with this on (`fsdp2_load_full_state_dict`), and shards a host model otherwise.
        y.push_str(&format!("  fsdp_cpu_ram_efficient_loading: {}\n", p.fsdp_load == FsdpLoad::Tensor));
    }
    let args = trainer_args(s, fsdp)?;
    y.push_str("# Launch TRL's SFT script with the plan's arguments (dataset and output are yours):\n");
    y.push_str("# accelerate launch --config_file accelerate.yaml -m trl.scripts.sft \\\n");
    let n = args.len();
    for (i, a) in args.iter().enumerate() {
        y.push_str(&format!("#   {a}{}\n", if i + 1 < n { " \\" } else { "" }));
    }
    Ok(y)
}

/// The Trainer / TRL arguments, one `--flag value` per entry.
pub fn trainer_args(s: &Scenario, fsdp: bool) -> Result<Vec<String>, InputError> {
    let t = &s.training;
    let model = hub_id(s).unwrap_or_else(|| "PATH_TO_YOUR_MODEL".into());
    let mut a = vec![format!("--model_name_or_path {model}"), "--dataset_name YOUR_DATASET".into()];
    a.push(format!("--per_device_train_batch_size {}", t.micro_batch));
    a.push(format!("--gradient_accumulation_steps {}", t.grad_accum));
    a.push(format!("--max_length {}", t.seq_len));
    match t.precision {
        Precision::Bf16Mixed => a.push("--bf16 true".into()),
        Precision::Fp16Mixed => a.push("--fp16 true".into()),
        Precision::Bf16 => a.extend(["--bf16 false".into(), "--dtype bfloat16".into()]),
        Precision::Fp32 => a.extend(["--bf16 false".into(), "--dtype float32".into()]),
        Precision::Fp8Mixed => a.push("--bf16 true".into()),
    }
    if t.checkpointing == Checkpointing::Full && !fsdp {
        a.push("--gradient_checkpointing true".into());
    } else {
        a.push("--gradient_checkpointing false".into());
    }
    let optim = match t.optimizer {
        Optimizer::Adamw => "adamw_torch",
        Optimizer::Adamw8bit => "adamw_bnb_8bit",
        Optimizer::PagedAdamw => "paged_adamw_32bit",
        Optimizer::PagedAdamw8bit => "paged_adamw_8bit",
        Optimizer::Adafactor => "adafactor",
        Optimizer::Lion => "lion_32bit",
        Optimizer::Sgd => "sgd",
        Optimizer::Adam | Optimizer::SgdMomentum => {
            return Err(super::shared::unsupported(T, "training.optimizer", &format!("has no --optim value for {}", crate::labels::optimizer_label(t.optimizer))))
        }
    };
    a.push(format!("--optim {optim}"));
    if let Some(lora) = &t.lora {
        a.push("--use_peft true".into());
        a.push(format!("--lora_r {}", lora.rank));
        let modules: Vec<&str> = lora.targets.iter().flat_map(|&k| module_names(k).iter().copied()).collect();
        a.push(format!("--lora_target_modules {}", modules.join(" ")));
        a.push(format!("--lora_dropout {}", lora.dropout));
        if lora.base == LoraBase::Nf4 {
            a.extend(["--load_in_4bit true".into(), "--bnb_4bit_quant_type nf4".into(), format!("--use_bnb_nested_quant {}", lora.double_quant)]);
        }
    }
    if t.techniques.liger_kernels {
        a.push("--use_liger_kernel true".into());
    }
    if t.techniques.compile {
        a.push("--torch_compile true".into());
    }
    Ok(a)
}
