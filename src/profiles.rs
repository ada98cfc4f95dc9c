//! Framework profiles: the memory-relevant defaults of the frameworks people train with.
//! Choosing a profile ([`crate::scenario::Scenario::apply_framework`]) sets the switches it
//! decides (precision, attention kernel, loss, checkpointing, optimizer placement, activation
//! offloading, ZeRO stage); every switch stays editable afterwards, and the profile travels in
//! the scenario (URL key `fw`).
//!
//! Each profile cites where its defaults are written. Where a framework's default depends on
//! the recipe, the profile takes the recipe its documentation starts from, named below.

use serde::{Deserialize, Serialize};

use crate::model::inputs::{Attention, Checkpointing, FsdpLoad, Loss, Nf4Quantizer, OptimizerImpl, Zero};
use crate::model::precision::Precision;

/// A training framework whose defaults a scenario starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Framework {
    /// No profile: the switches are as the user set them.
    #[default]
    Custom,
    /// PyTorch + transformers `Trainer` / TRL `SFTTrainer`.
    Transformers,
    /// TRL with `use_liger_kernel=True`.
    TrlLiger,
    /// Unsloth.
    Unsloth,
    /// torchtune single-device and distributed recipes.
    Torchtune,
    /// Lightning LitGPT `litgpt finetune`.
    Litgpt,
    /// torchtitan.
    Torchtitan,
    /// Megatron-Core (Megatron-LM `pretrain_gpt.py`).
    MegatronCore,
    /// DeepSpeed (through the HF Trainer integration).
    Deepspeed,
}

impl Framework {
    pub const ALL: [Framework; 9] = [
        Framework::Custom,
        Framework::Transformers,
        Framework::TrlLiger,
        Framework::Unsloth,
        Framework::Torchtune,
        Framework::Litgpt,
        Framework::Torchtitan,
        Framework::MegatronCore,
        Framework::Deepspeed,
    ];

    /// The name the menu shows.
    pub fn label(self) -> &'static str {
        match self {
            Framework::Custom => "none (set each switch)",
            Framework::Transformers => "PyTorch + transformers (Trainer / TRL)",
            Framework::TrlLiger => "TRL + Liger kernels",
            Framework::Unsloth => "Unsloth",
            Framework::Torchtune => "torchtune",
            Framework::Litgpt => "LitGPT",
            Framework::Torchtitan => "torchtitan",
            Framework::MegatronCore => "Megatron-Core",
            Framework::Deepspeed => "DeepSpeed (ZeRO-2)",
        }
    }

    /// The defaults this framework decides, or `None` for [`Framework::Custom`].
    // long: one row per framework, each with the source comment its defaults come from; split, the sources would part from their rows.
    pub fn defaults(self) -> Option<Defaults> {
        let base = Defaults {
            precision: Precision::Bf16Mixed,
            attention: Attention::Sdpa,
            loss: Loss::Standard,
            checkpointing: Checkpointing::None,
            optimizer_in_backward: false,
            activation_offload: false,
            liger_kernels: false,
            compile_model: false,
            litgpt_modules: false,
            zero: None,
            qlora_fp32_unquantised: true,
            // transformers 5 `TrainingArguments.optim` defaults to "adamw_torch_fused" with
            // torch ≥ 2.8 (`training_args.py`, lines 805–815 in 5.25.0), which
            // `_get_adamw_torch` turns into `torch.optim.AdamW(fused=True)`
            // (`trainer_optimizer.py`, lines 202–209).
            optimizer_impl: OptimizerImpl::Fused,
            // PEFT's `autocast_adapter_dtype=True` (`Lora::fp32_adapters`).
            fp32_adapters: true,
            // transformers' bitsandbytes loader (`Params4bit`), which PEFT, TRL, Unsloth and
            // LitGPT's `--quantize bnb.nf4` (`litgpt/utils.py`, `bnb.nn.Linear4bit`) use.
            nf4_quantizer: Nf4Quantizer::Bitsandbytes,
            // Plain DDP keeps its default `gradient_as_bucket_view=False`: accelerate's
            // `DistributedDataParallelKwargs` (accelerate 1.16.0 `utils/dataclasses.py`, line
            // 169), which the transformers `Trainer` does not set, and Lightning's
            // `DDPStrategy` (no DDP kwargs of its own). The other profiles shard (FSDP2,
            // ZeRO, Megatron's distributed optimizer), where the setting does not apply.
            gradient_as_bucket_view: false,
            fp32_gradients: false,
            // accelerate's `FullyShardedDataParallelPlugin` takes `fsdp_version` from
            // `FSDP_VERSION`, "1" when unset (accelerate 1.16.0 `utils/dataclasses.py`, line
            // 1710): the transformers `Trainer`'s `fsdp` runs FSDP1 unless told otherwise.
            fsdp_version: 1,
            // A model loaded with `from_pretrained` lives on the host until it is sharded
            // (accelerate's `cpu_ram_efficient_loading` is off unless
            // `FSDP_CPU_RAM_EFFICIENT_LOADING` is set: accelerate 1.16.0 `utils/dataclasses.py`,
            // lines 1850–1853).
            fsdp_load: FsdpLoad::Unit,
        };
        Some(match self {
            Framework::Custom => return None,
            // transformers `TrainingArguments`: `bf16=True` runs `torch.autocast` over fp32
            // parameters, `gradient_checkpointing=False`; models load with
            // `attn_implementation="sdpa"`; the loss is `ForCausalLMLoss`, logits upcast to fp32
            // (`loss/loss_utils.py`).
            // Its `torch_compile=True` reaches accelerate's `prepare_model`, which compiles the
            // whole model, `torch.compile(model)` (accelerate 1.16 `accelerator.py` 2040–2045;
            // the Trainer builds the `TorchDynamoPlugin`, `trainer.py` 792–802 in 5.25.0).
            Framework::Transformers => Defaults { compile_model: true, ..base },
            // TRL `SFTConfig(use_liger_kernel=True)` applies `_apply_liger_kernel_to_instance`,
            // whose `apply_liger_kernel_to_*` defaults are `rope=True, rms_norm=True, swiglu=True,
            // fused_linear_cross_entropy=True` (liger_kernel `transformers/monkey_patch.py`, e.g.
            // `apply_liger_kernel_to_llama`, lines 221–285 at ead96b6): fused linear cross-entropy
            // replaces the head and loss, and Liger's norm, SwiGLU and RoPE Functions the eager ones.
            // `SFTTrainer` is a transformers `Trainer`: the whole model compiled, as above.
            Framework::TrlLiger => Defaults { loss: Loss::FusedLinear, liger_kernels: true, compile_model: true, ..base },
            // Unsloth `FastLanguageModel.get_peft_model(use_gradient_checkpointing="unsloth")`
            // offloads each checkpointed block input to host memory; its fused cross-entropy
            // never builds the fp32 logits; FlashAttention-2/xformers kernels. Its QLoRA casts
            // nothing frozen to fp32 (`Lora::fp32_unquantised`): outside full fine-tuning
            // `prepare_model_for_training` makes only `lora_A`/`lora_B` (and DoRA magnitudes)
            // trainable and casts only trainable parameters (unslothai/unsloth-zoo
            // `unsloth_zoo/training_utils.py`, lines 376–421 at ce232d6); the frozen embeddings,
            // head and norms keep their loaded 16-bit dtype (Unsloth's Qwen2.5-VL-7B notebook holds
            // 6.07 GiB after `get_peft_model`, where fp32 ones alone would be 4.1 GiB more,
            // `tests/fixtures/published/multimodal_hybrid.json`).
            Framework::Unsloth => Defaults {
                attention: Attention::Flash,
                loss: Loss::FusedLinear,
                checkpointing: Checkpointing::Full,
                activation_offload: true,
                qlora_fp32_unquantised: false,
                ..base
            },
            // torchtune `recipes/configs/llama3_1/8B_full_single_device.yaml`: `dtype: bf16`
            // (bf16 parameters and optimizer states, no fp32 master),
            // `loss: CEWithChunkedOutputLoss` (8 chunks), `enable_activation_checkpointing: True`,
            // `optimizer_in_bwd: True`, `enable_activation_offloading: False`. Its QLoRA builds
            // the model in that dtype and casts nothing to fp32 (`Lora::fp32_unquantised`), its
            // LoRA adapters included (`Lora::fp32_adapters`).
            // Its recipe configs build `torch.optim.AdamW` with `fused: True`
            // (`recipes/configs/llama3_1/8B_lora_single_device.yaml`, `8B_full.yaml`).
            // Its distributed recipes shard with FSDP2 `fully_shard` (`training.shard_model`) a
            // model built on the meta device, then fill it with
            // `training.load_from_full_model_state_dict` (`set_model_state_dict` with
            // `broadcast_from_rank0=True`: one tensor at a time, `FsdpLoad::Tensor`).
            Framework::Torchtune => Defaults {
                fsdp_version: 2,
                fsdp_load: FsdpLoad::Tensor,
                precision: Precision::Bf16,
                loss: Loss::Chunked,
                checkpointing: Checkpointing::Full,
                optimizer_in_backward: true,
                qlora_fp32_unquantised: false,
                fp32_adapters: false,
                // `LoRALinear(quantize_base=True)` quantises with torchao's `to_nf4`
                // (`torchtune/modules/peft/lora.py`, lines 15 and 82–87 at bd2a0fc).
                nf4_quantizer: Nf4Quantizer::Torchao,
                ..base
            },
            // LitGPT `litgpt finetune_full`: `--precision bf16-true` (pure bf16), the model's
            // `lm_head_chunk_size=128` with `chunked_cross_entropy` (`litgpt/utils.py`).
            // `finetune/full.py` and `finetune/lora.py` call
            // `instantiate_torch_optimizer(optimizer, model.parameters())` with no `fused`
            // (`litgpt/utils.py`), so `torch.optim.AdamW` takes torch's foreach default on CUDA
            // (only `pretrain.py` passes `fused=fabric.device.type == "cuda"`).
            // Its adapters are built with the model under `fabric.init_module()` in the run's
            // dtype (`Lora::fp32_adapters`).
            // The loss runs on the chunks as they are, in bf16 (`Loss::ChunkedNoUpcast`).
            // Its `FSDPStrategy` is Lightning Fabric's, which wraps `FullyShardedDataParallel`
            // (FSDP1).
            Framework::Litgpt => {
                Defaults { precision: Precision::Bf16, loss: Loss::ChunkedNoUpcast, optimizer_impl: OptimizerImpl::Foreach, fp32_adapters: false, litgpt_modules: true, ..base }
            }
            // torchtitan `train_configs/llama3_8b.toml`: FSDP2 (`data_parallel_shard_degree = -1`),
            // `mixed_precision_param = "bfloat16"`, `[activation_checkpoint] mode = "selective"`.
            // `[optimizer] implementation` defaults to "fused" (`torchtitan/config/job_config.py`,
            // `Optimizer.implementation: Literal["for-loop", "foreach", "fused"] = "fused"`).
            // It builds the model on the meta device and reads each rank's shards with
            // torch.distributed.checkpoint (`torchtitan/components/checkpoint.py`, `dcp.load`;
            // Hugging Face weights through DCP's `HuggingFaceStorageReader`): `FsdpLoad::Sharded`.
            Framework::Torchtitan => Defaults { checkpointing: Checkpointing::Selective, zero: Some(Zero::Parameters), fsdp_version: 2, fsdp_load: FsdpLoad::Sharded, ..base },
            // Megatron-Core GPT examples: `--bf16` with fp32 main parameters and gradients,
            // `--use-distributed-optimizer` (optimizer states sharded over data parallel:
            // ZeRO-1), Transformer Engine's fused (flash) attention, no recomputation by default;
            // the optimizer is Transformer Engine's (or Apex's) `FusedAdam`
            // (`megatron/core/optimizer/__init__.py`: `from transformer_engine.pytorch.optimizers
            // import FusedAdam as Adam`), fused.
            // Its gradient buffer is fp32 under `--bf16` (`Training::fp32_gradients`).
            Framework::MegatronCore => Defaults { attention: Attention::Flash, zero: Some(Zero::Optimizer), fp32_gradients: true, fsdp_version: 2, ..base },
            // The HF Trainer DeepSpeed integration's `ds_config_zero2.json` example: stage 2,
            // `bf16.enabled: auto`; an `"AdamW"` optimizer block becomes DeepSpeed's `FusedAdam`
            // without offload (`deepspeed/runtime/engine.py`, `_configure_basic_optimizer`).
            Framework::Deepspeed => Defaults { zero: Some(Zero::Gradients), ..base },
        })
    }
}

/// The switches a profile sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Defaults {
    pub precision: Precision,
    pub attention: Attention,
    pub loss: Loss,
    pub checkpointing: Checkpointing,
    pub optimizer_in_backward: bool,
    pub activation_offload: bool,
    /// Liger's norm, SwiGLU and RoPE kernels (`Techniques::liger_kernels`).
    pub liger_kernels: bool,
    /// With `torch.compile` on, the whole model compiled (`Techniques::compile_model`).
    pub compile_model: bool,
    /// LitGPT's own modules (`Techniques::litgpt_modules`).
    pub litgpt_modules: bool,
    /// ZeRO stage or FSDP, where the framework decides it (otherwise the layout's own).
    pub zero: Option<Zero>,
    /// QLoRA's unquantised weights in fp32 (`Lora::fp32_unquantised`): PEFT's
    /// `prepare_model_for_kbit_training`, which every profile but torchtune's goes through.
    pub qlora_fp32_unquantised: bool,
    /// Adam / AdamW's implementation (`Training::optimizer_impl`).
    pub optimizer_impl: OptimizerImpl,
    /// LoRA adapters in fp32 on a 16-bit base (`Lora::fp32_adapters`): PEFT's.
    pub fp32_adapters: bool,
    /// The library quantising a QLoRA base at load (`Lora::quantizer`).
    pub nf4_quantizer: Nf4Quantizer,
    /// DDP's `gradient_as_bucket_view` (`Parallel::gradient_as_bucket_view`).
    pub gradient_as_bucket_view: bool,
    /// Gradients in fp32 in a 16-bit run (`Training::fp32_gradients`): Megatron-Core's.
    pub fp32_gradients: bool,
    /// FSDP1 or FSDP2 under a ZeRO-3 FSDP layout (`Parallel::fsdp_version`).
    pub fsdp_version: u64,
    /// How FSDP2's weights reach the GPU (`Parallel::fsdp_load`).
    pub fsdp_load: FsdpLoad,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn torchtune_and_unsloth_keep_qloras_unquantised_weights_in_the_training_dtype() {
        for framework in Framework::ALL {
            let mut s = Scenario::default();
            s.training.lora = Some(crate::scenario::Lora::default());
            s.apply_framework(framework);
            let expected = !matches!(framework, Framework::Torchtune | Framework::Unsloth);
            assert_eq!(s.training.lora.map(|l| l.fp32_unquantised), Some(expected), "{framework:?}");
        }
    }

    #[test]
    fn torchtune_profile_sets_its_recipe_switches() {
        let mut s = Scenario::default();
        s.apply_framework(Framework::Torchtune);
        assert_eq!(s.framework, Framework::Torchtune);
        assert_eq!(s.training.precision, Precision::Bf16);
        assert_eq!(s.training.techniques.loss, Loss::Chunked);
        assert_eq!(s.training.checkpointing, Checkpointing::Full);
        assert!(s.training.techniques.optimizer_in_backward);
    }

    #[test]
    fn trl_liger_profile_turns_on_the_liger_kernels() {
        let mut s = Scenario::default();
        s.apply_framework(Framework::TrlLiger);
        assert_eq!(s.training.techniques.loss, Loss::FusedLinear);
        assert!(s.training.techniques.liger_kernels);
        s.apply_framework(Framework::Transformers);
        assert!(!s.training.techniques.liger_kernels);
    }

    /// The Trainer compiles the whole model (accelerate's `torch.compile(model)`); torchtune
    /// compiles its blocks (and loss) one by one.
    #[test]
    fn the_trainer_profiles_compile_the_whole_model() {
        let mut s = Scenario::default();
        for (framework, whole) in [(Framework::Transformers, true), (Framework::TrlLiger, true), (Framework::Torchtune, false), (Framework::Torchtitan, false)] {
            s.apply_framework(framework);
            assert_eq!(s.training.techniques.compile_model, whole, "{framework:?}");
        }
    }

    #[test]
    fn no_optimizer_in_backward_with_accumulation() {
        let mut s = Scenario::default();
        s.training.grad_accum = 4;
        s.apply_framework(Framework::Torchtune);
        assert!(!s.training.techniques.optimizer_in_backward);
        assert!(s.validate().is_empty(), "{:?}", s.validate());
    }

    #[test]
    fn custom_changes_nothing_but_the_name() {
        let mut s = Scenario::default();
        s.training.precision = Precision::Fp32;
        s.apply_framework(Framework::Custom);
        assert_eq!(s.training.precision, Precision::Fp32);
    }

    #[test]
    fn every_profile_travels_in_the_link_and_keeps_its_switches() {
        for f in Framework::ALL {
            let mut s = Scenario::default();
            s.apply_framework(f);
            let (back, errors) = crate::url::decode(&crate::url::encode(&s));
            assert!(errors.is_empty(), "{f:?}: {errors:?}");
            assert_eq!(back, s, "{f:?}");
            assert!(s.validate().is_empty(), "{f:?}: {:?}", s.validate());
        }
    }
}
