//! What a run does, in the model's terms: the training step (batch, sequence, precision,
//! optimizer, checkpointing, attention, fine-tuning) and the parallel layout. The model takes
//! these resolved; `crate::scenario` wraps them with the model and device choice and
//! decodes them from JSON and links.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::arch::param::LinearKind;
use super::precision::Precision;
pub use super::serving_inputs::{Engine, KvCacheFormat, Serving, WeightFormat};

/// Weights update rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    #[default]
    Adamw,
    Adam,
    Sgd,
    SgdMomentum,
    /// bitsandbytes `AdamW8bit`.
    #[serde(rename = "adamw-8bit")]
    Adamw8bit,
    Adafactor,
    Lion,
    /// bitsandbytes `PagedAdamW` (32-bit states in CUDA managed memory).
    #[serde(rename = "paged-adamw")]
    PagedAdamw,
    /// bitsandbytes `PagedAdamW8bit` (8-bit states in CUDA managed memory).
    #[serde(rename = "paged-adamw-8bit")]
    PagedAdamw8bit,
}

impl Optimizer {
    pub const ALL: [Optimizer; 9] = [
        Optimizer::Adamw,
        Optimizer::Adam,
        Optimizer::Sgd,
        Optimizer::SgdMomentum,
        Optimizer::Adamw8bit,
        Optimizer::Adafactor,
        Optimizer::Lion,
        Optimizer::PagedAdamw,
        Optimizer::PagedAdamw8bit,
    ];

    /// bitsandbytes' paged optimizers: their large states live in CUDA managed memory, which
    /// the driver may evict to host memory (`spill.rs`).
    pub fn is_paged(self) -> bool {
        matches!(self, Optimizer::PagedAdamw | Optimizer::PagedAdamw8bit)
    }
}

/// How torch's Adam / AdamW runs its update, which decides the optimizer step's own transient
/// memory (`states::optimizer_step_intermediates`; measured in
/// `tests/fixtures/measured/optimizer_impl.json`, torch 2.15 `torch/optim/adam.py`). Other
/// optimizers (SGD, Lion, Adafactor, bitsandbytes' 8-bit and paged kernels) keep their own
/// update and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OptimizerImpl {
    /// `foreach=True`, torch's default on CUDA (`optimizer.py` `_default_to_fused_or_foreach`
    /// with `use_fused=False`): `_multi_tensor_adam` makes `_foreach_sqrt(exp_avg_sqs)`, one
    /// tensor per parameter of the (device, dtype) group, alive together.
    #[default]
    Foreach,
    /// `foreach=False` (`_single_tensor_adam`): `(exp_avg_sq.sqrt() / bias_correction2_sqrt)`,
    /// two tensors of one parameter at a time.
    ForLoop,
    /// `fused=True` (`torch._fused_adamw_`), DeepSpeed's `FusedAdam` and the Apex / Transformer
    /// Engine `FusedAdam` Megatron-Core steps with: in place, nothing parameter-sized.
    Fused,
}

impl OptimizerImpl {
    pub const ALL: [OptimizerImpl; 3] = [OptimizerImpl::Foreach, OptimizerImpl::ForLoop, OptimizerImpl::Fused];
}

/// Activation checkpointing (recomputation) policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Checkpointing {
    #[default]
    None,
    /// Recompute only the attention core (Korthikanti et al. 2022, §4.2).
    Selective,
    /// Keep only each block's input; recompute the block in backward.
    Full,
}

/// Which implementation of a hybrid's token mixers (Mamba, Mamba-2, Gated DeltaNet, short
/// convolutions) runs: transformers 5.25 calls the fused CUDA kernels (`mamba_ssm`,
/// `causal_conv1d`, `fla` or their hub-kernel builds) when they are installed and its own
/// torch implementation otherwise (`is_fast_path_available`,
/// `use_kernel_func_from_hub_with_fallback` in each `modeling_*.py`), which saves several times
/// more for backward (`activations/mixer_torch.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MixerKernels {
    /// The fused CUDA kernels (`activations/mixer.rs`).
    #[default]
    Fused,
    /// transformers' torch fallback (`activations/mixer_torch.rs`).
    Torch,
}

impl MixerKernels {
    pub const ALL: [MixerKernels; 2] = [MixerKernels::Fused, MixerKernels::Torch];
}

/// Attention implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Attention {
    /// Materialised s×s scores and probabilities (transformers' "eager").
    Eager,
    /// `torch.nn.functional.scaled_dot_product_attention` on CUDA: flash kernel in 16-bit,
    /// memory-efficient kernel in fp32.
    #[default]
    Sdpa,
    /// FlashAttention-2 (`flash_attention_2`).
    Flash,
}

/// Training or inference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    #[default]
    Train,
    Inference,
}

/// Base-weight format under LoRA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LoraBase {
    /// Frozen base weights in the run's 16-bit dtype.
    #[default]
    Bf16,
    /// QLoRA: 4-bit NormalFloat base weights (Dettmers et al. 2023).
    Nf4,
}

/// The library that quantises a QLoRA base to NF4 while it loads: its allocations decide the
/// load's transients (`model::nf4_load`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Nf4Quantizer {
    /// bitsandbytes' `Params4bit` (transformers, PEFT, TRL, Unsloth, axolotl, LitGPT's
    /// `bnb.nf4`).
    #[default]
    Bitsandbytes,
    /// torchao's `to_nf4` (torchtune's `LoRALinear(quantize_base=True)`); it always quantises
    /// its scalers (double quantisation).
    Torchao,
}

/// LoRA / QLoRA adapters (Hu et al. 2021).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lora {
    pub rank: u64,
    /// Adapted linear layers (default: all seven).
    pub targets: Vec<LinearKind>,
    pub base: LoraBase,
    /// QLoRA double quantisation of the quantisation constants.
    pub double_quant: bool,
    /// PEFT `LoraConfig(lora_dropout=p)`: an `nn.Dropout` on the adapter input of every adapted
    /// linear (`peft/tuners/lora/layer.py`, `Linear.forward`: `lora_B(lora_A(dropout(x)))`), which
    /// saves a mask and the dropped copy per adapted linear. 0: `nn.Identity`, nothing saved.
    /// Left out of the JSON when 0, so links made before it encode as they did.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropout: f64,
    /// QLoRA: the weights left unquantised (embeddings, norms, an untied head) are held in
    /// fp32. PEFT's `prepare_model_for_kbit_training` casts every 16-bit parameter that is not a
    /// `Params4bit` to fp32 (`peft/utils/other.py`, lines 204–209; measured in `lora.json`,
    /// `qlora_cpu`); torchtune builds the model under `set_default_dtype(self._dtype)` and casts
    /// nothing afterwards (`recipes/lora_finetune_single_device.py`, `_setup_model`), so they
    /// stay in the training dtype: `false`. Left out of the JSON when true (the default), so
    /// links made before it encode as they did.
    #[serde(skip_serializing_if = "is_true")]
    pub fp32_unquantised: bool,
    /// The adapters' weights (and so their gradients and optimizer states) in fp32 on a 16-bit
    /// base. PEFT's `get_peft_model(..., autocast_adapter_dtype=True)` (the default) upcasts
    /// float16/bfloat16 adapters to float32 (`peft/tuners/tuners_utils.py`,
    /// `cast_adapter_dtype`, lines 2705–2745 in PEFT 0.21.2), and `lora.Linear` casts each input
    /// to their dtype; torchtune builds its `LoRALinear`s under `set_default_dtype(self._dtype)`
    /// and LitGPT under `fabric.init_module()` with `bf16-true`, so theirs stay in the model
    /// dtype and read the input as it is: `false`. Measured with PEFT both ways in
    /// `lora_dtypes.json`. Matters in a pure 16-bit run only (under autocast every trained
    /// weight is fp32 already). Left out of the JSON when true (the default), so links made
    /// before it encode as they did.
    #[serde(skip_serializing_if = "is_true")]
    pub fp32_adapters: bool,
    /// A 4-bit base is quantised while the model loads, layer by layer from its 16-bit
    /// checkpoint (transformers' bitsandbytes loader, `Params4bit._quantize`; torchtune's
    /// `to_nf4`): each layer's 16-bit weight and its NF4 output exist together for a moment
    /// (`model::load`; measured in `load.json`). `false`: a checkpoint saved already quantised
    /// (a `*-bnb-4bit` repository) is read as it is. Left out of the JSON when true (the
    /// default), so links made before it encode as they did.
    #[serde(skip_serializing_if = "is_true")]
    pub quantize_at_load: bool,
    /// Which library quantises the base at load ([`Nf4Quantizer`]): torchtune's profile sets
    /// torchao, every other bitsandbytes. Left out of the JSON when bitsandbytes (the default),
    /// so links made before it encode as they did.
    #[serde(skip_serializing_if = "is_bitsandbytes")]
    pub quantizer: Nf4Quantizer,
    /// A vision-language model's tower gets adapters too, on its blocks' linears whose kind is
    /// among `targets` (`arch/tower.rs` `tower_linear`: Qwen's `qkv`, `proj`, `gate_proj`,
    /// `up_proj`, `down_proj`; SigLIP's and CLIP's `q_proj`, `k_proj`, `v_proj`, `out_proj`,
    /// `fc1`, `fc2`), as PEFT adapts the modules its `target_modules` name there; the rest of the
    /// tower and the projector stay frozen. `false`: the tower is frozen whole. Left out of the
    /// JSON when false, so links made before it encode as they did.
    #[serde(skip_serializing_if = "is_false")]
    pub vision_tower: bool,
}

fn is_bitsandbytes(q: &Nf4Quantizer) -> bool {
    *q == Nf4Quantizer::Bitsandbytes
}

fn is_false(x: &bool) -> bool {
    !*x
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_true(x: &bool) -> bool {
    *x
}

impl Default for Lora {
    fn default() -> Self {
        Lora {
            rank: 16,
            targets: LinearKind::ALL.to_vec(),
            base: LoraBase::Bf16,
            double_quant: true,
            dropout: 0.0,
            fp32_unquantised: true,
            fp32_adapters: true,
            quantize_at_load: true,
            quantizer: Nf4Quantizer::Bitsandbytes,
            vision_tower: false,
        }
    }
}

/// Layers whose weights are not trained (partial fine-tuning).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Frozen {
    /// Freeze the input embeddings.
    pub embeddings: bool,
    /// Freeze this many blocks from the bottom.
    pub layers: u64,
    /// Freeze a vision-language model's vision tower (its projector stays trained).
    pub vision_tower: bool,
}

/// What one optimizer step does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Training {
    /// Sequences (or images) per micro-batch per data-parallel rank.
    pub micro_batch: u64,
    /// Tokens per sequence (ignored by vision models).
    pub seq_len: u64,
    /// Micro-batches per optimizer step (also the pipeline's micro-batch count).
    pub grad_accum: u64,
    pub precision: Precision,
    pub optimizer: Optimizer,
    /// Adam / AdamW's implementation: foreach (torch's CUDA default), for-loop or fused.
    pub optimizer_impl: OptimizerImpl,
    /// Gradients accumulated and reduced in fp32 in a 16-bit run: Megatron-Core's contiguous
    /// gradient buffer under `--bf16` (`megatron/training/arguments.py`: unless
    /// `--grad-reduce-in-bf16`, `accumulate_allreduce_grads_in_fp32 = True`, "accumulate and
    /// all-reduce gradients in fp32 for bfloat16 data type"; `param_and_grad_buffer.py` then
    /// makes the buffer `torch.float`): 4 B per gradient instead of 2.
    pub fp32_gradients: bool,
    pub checkpointing: Checkpointing,
    pub attention: Attention,
    /// The token mixers' kernels in a hybrid or state-space model: fused (default) or torch.
    pub mixer_kernels: MixerKernels,
    /// Dropout probability applied everywhere the model has dropout.
    pub dropout: f64,
    /// Input resolution for vision models (default: the model's own).
    pub image_size: Option<u64>,
    /// Image size `[width, height]` in pixels for a vision-language model (default: the
    /// tower's own size, or 448 × 448 for Qwen2.5-VL, which takes any size).
    pub resolution: Option<[u64; 2]>,
    /// Images in each sample of a vision-language model (default 1).
    pub images_per_sample: Option<u64>,
    /// Video frames per visual input (default: none, a still image).
    pub frames: Option<u64>,
    pub mode: Mode,
    pub frozen: Frozen,
    pub lora: Option<Lora>,
    /// Framework techniques that change which tensors exist (loss, optimizer placement, offload).
    pub techniques: Techniques,
    /// How inference stores the weights and the KV cache.
    pub serving: Serving,
    /// A diffusion pipeline's caching, offload and tiling (`model/diffusion/options.rs`).
    #[serde(skip_serializing_if = "super::diffusion::options::DiffusionOptions::is_default")]
    pub diffusion: super::diffusion::options::DiffusionOptions,
}

impl Training {
    /// The visual input of one sample, for a vision-language model.
    pub fn visual(&self) -> crate::model::arch::tower::Visual {
        crate::model::arch::tower::Visual { resolution: self.resolution.map(|[w, h]| (w, h)), images: self.images_per_sample.unwrap_or(1), frames: self.frames.unwrap_or(1) }
    }
}

impl Default for Training {
    fn default() -> Self {
        Training {
            micro_batch: 1,
            seq_len: 4096,
            grad_accum: 1,
            precision: Default::default(),
            optimizer: Optimizer::Adamw,
            optimizer_impl: OptimizerImpl::Foreach,
            fp32_gradients: false,
            checkpointing: Checkpointing::None,
            attention: Attention::Sdpa,
            mixer_kernels: MixerKernels::Fused,
            dropout: 0.0,
            image_size: None,
            resolution: None,
            images_per_sample: None,
            frames: None,
            mode: Mode::Train,
            frozen: Frozen::default(),
            lora: None,
            techniques: Techniques::default(),
            serving: Serving::default(),
            diffusion: Default::default(),
        }
    }
}

/// CPU offload (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Offload {
    #[default]
    #[serde(rename = "none")]
    None,
    #[serde(rename = "optimizer")]
    Optimizer,
    #[serde(rename = "optimizer+params")]
    OptimizerAndParams,
}

/// Pipeline schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PpSchedule {
    #[default]
    #[serde(rename = "1f1b")]
    OneFOneB,
    Interleaved,
    Gpipe,
}

/// The parallel layout. World size = dp × tp × pp × cp; expert parallelism runs inside dp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Parallel {
    pub dp: u64,
    pub tp: u64,
    pub pp: u64,
    /// Megatron sequence parallelism (shards the non-TP activations along the sequence).
    pub sp: bool,
    /// Context parallelism (ring attention over sequence chunks).
    pub cp: u64,
    pub ep: u64,
    /// ZeRO stage (`"fsdp"` is accepted as stage 3).
    pub zero: Zero,
    pub offload: Offload,
    pub pp_schedule: PpSchedule,
    /// Model chunks per pipeline rank for the interleaved schedule.
    pub virtual_stages: u64,
    /// Which ZeRO-3 implementation runs stage 3 (its gathered-parameter buffers differ).
    pub zero3_impl: Zero3Impl,
    /// FSDP2 `fully_shard(block, reshard_after_forward=…)` for the transformer blocks: `true`
    /// (the default) frees each block's gathered weights after its forward and gathers them
    /// again in backward; `false` keeps them from forward to backward.
    pub fsdp_reshard_after_forward: bool,
    /// A full (unsharded) state dict is gathered on the GPU when a checkpoint is saved (FSDP
    /// `FULL_STATE_DICT` with `offload_to_cpu=False`; DCP `full_state_dict=True, cpu_offload=False`).
    pub full_state_dict_on_save: bool,
    /// `DistributedDataParallel(gradient_as_bucket_view=…)` (data parallelism without ZeRO):
    /// `false` (DDP's default, and accelerate's `DistributedDataParallelKwargs`, which the
    /// transformers `Trainer` and Lightning keep) gives every parameter its own `.grad` beside the
    /// reducer's flat buckets, which live as long as the model; `true` makes each `.grad` a view
    /// into its bucket, one allocation (torch `nn/parallel/distributed.py`; measured in
    /// `ddp_buckets.json`).
    pub gradient_as_bucket_view: bool,
    /// Which PyTorch FSDP shards a ZeRO-3 layout whose `zero3_impl` is FSDP: 2 (`fully_shard`,
    /// the default) or 1 (`FullyShardedDataParallel`: LitGPT's `FSDPStrategy`, accelerate's
    /// `fsdp_version: 1`, the transformers `Trainer`'s `fsdp` argument). Today it decides the
    /// load phase only: FSDP1 moves each unit to the GPU unsharded and flattens it into one
    /// more copy before sharding it (`model::load`; measured in `load.json`).
    pub fsdp_version: u64,
    /// How FSDP2's weights reach the GPU at load ([`FsdpLoad`]); FSDP1 has its own path.
    pub fsdp_load: FsdpLoad,
}

/// How an FSDP2 (`fully_shard`) run's weights reach the GPU before the first step, which
/// decides the load phase's transient (`model::load`; measured in `load.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FsdpLoad {
    /// The model is built on the host and `fully_shard` moves each unit's parameters to the
    /// GPU unsharded before cutting this rank's shard (`from_pretrained` and then
    /// `fully_shard`, accelerate's FSDP2 without `cpu_ram_efficient_loading`).
    #[default]
    Unit,
    /// The model is built on the meta device, sharded, and filled from a full state dict one
    /// broadcast tensor at a time (torchtune's `load_from_full_model_state_dict`, accelerate's
    /// `cpu_ram_efficient_loading`).
    Tensor,
    /// Each rank reads its own shards from a sharded checkpoint (torch.distributed.checkpoint:
    /// torchtitan, Megatron's distributed checkpoints): no full tensor on the GPU.
    Sharded,
}

/// The implementation of ZeRO stage 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Zero3Impl {
    /// PyTorch FSDP2 (`fully_shard`), one unit per transformer block (torchtitan, HF accelerate).
    #[default]
    Fsdp2,
    /// DeepSpeed ZeRO stage 3.
    Deepspeed,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            dp: 1,
            tp: 1,
            pp: 1,
            sp: false,
            cp: 1,
            ep: 1,
            zero: Zero::Off,
            offload: Offload::None,
            pp_schedule: PpSchedule::OneFOneB,
            virtual_stages: 1,
            zero3_impl: Zero3Impl::Fsdp2,
            fsdp_reshard_after_forward: true,
            full_state_dict_on_save: false,
            gradient_as_bucket_view: false,
            fsdp_version: 2,
            fsdp_load: FsdpLoad::Unit,
        }
    }
}

impl Parallel {
    /// GPUs in the job.
    pub fn world_size(&self) -> u64 {
        self.dp.max(1).saturating_mul(self.tp.max(1)).saturating_mul(self.pp.max(1)).saturating_mul(self.cp.max(1))
    }
}

/// ZeRO stage (Rajbhandari et al. 2020, §5): what the data-parallel ranks shard.
/// Written as its stage number, 0–3; `"fsdp"` reads as stage 3 (PyTorch FSDP's FULL_SHARD).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Zero {
    /// Plain data parallelism: every rank holds everything.
    #[default]
    Off,
    /// Stage 1: optimizer states sharded.
    Optimizer,
    /// Stage 2: optimizer states and gradients sharded.
    Gradients,
    /// Stage 3 / FSDP: parameters too.
    Parameters,
}

impl Zero {
    pub const ALL: [Zero; 4] = [Zero::Off, Zero::Optimizer, Zero::Gradients, Zero::Parameters];

    /// The stage number, 0–3.
    pub fn stage(self) -> u8 {
        self as u8
    }

    /// The stage with this number, if it is 0–3.
    pub fn from_stage(stage: u64) -> Option<Zero> {
        Zero::ALL.get(usize::try_from(stage).ok()?).copied()
    }
}

impl std::fmt::Display for Zero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.stage())
    }
}

impl Serialize for Zero {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.stage())
    }
}

impl<'de> Deserialize<'de> for Zero {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => n.as_u64().and_then(Zero::from_stage).ok_or_else(|| de::Error::custom(format!("ZeRO stage must be 0, 1, 2, 3 or \"fsdp\", got {n}"))),
            Value::String(s) if s == "fsdp" => Ok(Zero::Parameters),
            other => Err(de::Error::custom(format!("ZeRO stage must be 0, 1, 2, 3 or \"fsdp\", got {other}"))),
        }
    }
}

/// What happens when a run needs more memory than the GPU has: the operating system and
/// driver, or a deliberate choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    /// Decided by the GPU: Linux CUDA for data-centre GPUs, Windows with the sysmem fallback
    /// for GeForce cards, NVLink-C2C for superchips.
    #[default]
    Auto,
    /// Linux (or WSL) CUDA: `cudaMalloc` fails, PyTorch raises `torch.OutOfMemoryError`.
    Linux,
    /// Windows WDDM with the driver's "CUDA Sysmem Fallback Policy" on (driver 536.40 and
    /// later): allocations beyond VRAM land in shared system memory.
    WindowsFallback,
    /// Windows with the fallback policy set to "Prefer No Sysmem Fallback": out of memory.
    WindowsNoFallback,
    /// CUDA managed memory (Unified Memory) oversubscription, e.g. a `cudaMallocManaged`
    /// allocator: pages migrate on demand and are evicted when the GPU is full.
    Managed,
    /// Deliberate offload of what does not fit (Accelerate `device_map="auto"`, Unsloth,
    /// DeepSpeed offload): explicit, prefetched copies over the host link.
    Offload,
    /// Grace-Hopper / Grace-Blackwell: CPU memory reached over NVLink-C2C, coherently.
    C2c,
}

impl Platform {
    pub const ALL: [Platform; 7] = [Platform::Auto, Platform::Linux, Platform::WindowsFallback, Platform::WindowsNoFallback, Platform::Managed, Platform::Offload, Platform::C2c];
}

/// How the GPU is shared: a per-process cap, memory others already use, several jobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Runtime {
    pub platform: Platform,
    /// `torch.cuda.set_per_process_memory_fraction`: the caching allocator refuses to go
    /// beyond this share of the GPU (1 = no cap).
    pub memory_fraction: f64,
    /// Bytes other processes already hold on this GPU (the desktop, another job).
    pub other_processes_bytes: u64,
    /// Identical jobs sharing this GPU (or MIG slice).
    pub jobs: u64,
    /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: no fragmentation counted.
    pub expandable_segments: bool,
    /// System RAM of the machine (the node), bytes; `None`: the device class's usual machine
    /// (`spill::default_host_memory`). It bounds what can spill or be offloaded to the host
    /// (`spill::host_ceiling`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_memory_bytes: Option<u64>,
}

impl Default for Runtime {
    fn default() -> Self {
        Runtime { platform: Platform::Auto, memory_fraction: 1.0, other_processes_bytes: 0, jobs: 1, expandable_segments: false, host_memory_bytes: None }
    }
}

/// How the loss is computed from the last hidden states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Loss {
    /// The full logits, upcast to fp32 (transformers' `ForCausalLMLoss`).
    #[default]
    Standard,
    /// Logits and cross-entropy in `loss_chunks` chunks of tokens (torchtune
    /// `CEWithChunkedOutputLoss`).
    Chunked,
    /// Output projection and cross-entropy fused, never materialising the logits (Liger
    /// `LigerFusedLinearCrossEntropyLoss`, Apple's Cut Cross-Entropy).
    FusedLinear,
    /// Logits in chunks of tokens and cross-entropy on each chunk in the logits' own dtype, no
    /// fp32 upcast: LitGPT's `model(input_ids, lm_head_chunk_size=128)` then
    /// `chunked_cross_entropy` (`litgpt/utils.py`, `F.cross_entropy` on each chunk as it is),
    /// whose `log_softmax` saves a 16-bit output in a pure 16-bit run (measured in
    /// `litgpt_lora.json`); under autocast `log_softmax` runs in fp32 all the same.
    ChunkedNoUpcast,
}

/// Framework techniques that change memory (issue: the frameworks' memory techniques).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Techniques {
    pub loss: Loss,
    /// Chunks of the chunked cross-entropy (torchtune's default: 8).
    pub loss_chunks: u64,
    /// Each parameter's optimizer step runs in backward as soon as its gradient is ready,
    /// and the gradient is freed (`register_post_accumulate_grad_hook`; torchtune
    /// `optimizer_in_bwd`). Not with gradient accumulation.
    pub optimizer_in_backward: bool,
    /// Saved activations copied to host memory in forward and back in backward (torchtune /
    /// TRL `OffloadActivations`).
    pub activation_offload: bool,
    /// Liger kernels beyond the loss (`apply_liger_kernel_to_*`, TRL `use_liger_kernel=True`):
    /// the residual norms, the gated MLP's activation and RoPE run as Liger's autograd Functions,
    /// which save less than the eager Hugging Face code (`activations/norm.rs`, `mlp.rs`).
    pub liger_kernels: bool,
    /// `torch.compile` (Inductor) on every block and on the loss, as torchtune (`compile: True`)
    /// and torchtitan compile them: the partitioner recomputes elementwise intermediates in
    /// backward instead of saving them (`activations/compile.rs`).
    pub compile: bool,
    /// With `compile`: whether the loss is inside the compiled region (torchtitan; torchtune's
    /// `compile_loss` where its return value is used). `false`: only the blocks are compiled and
    /// the loss runs eager, as torchtune's full single-device recipe does (it drops
    /// `compile_loss`'s return value, `recipes/full_finetune_single_device.py`), and as
    /// `model.model.layers[i].compile()` leaves it: the eager loss terms with the compiled
    /// blocks' (each measured in `compile.json`).
    pub compile_loss: bool,
    /// With `compile`: the whole model is one compiled region (`torch.compile(model)`, as
    /// accelerate's `prepare_model` compiles it for the transformers `Trainer`'s
    /// `torch_compile=True`: accelerate 1.16 `accelerator.py` 2040–2045), embeddings, blocks,
    /// head and loss together, so the loss is compiled whatever `compile_loss` says. Its output
    /// returns the logits beside the loss, and autograd hands the compiled backward a zero
    /// gradient for them (`temporary.rs`, measured in `compile_whole.json`).
    pub compile_model: bool,
    /// The model runs LitGPT's own modules (`litgpt/model.py`, `litgpt/lora.py`, LitGPT
    /// 0.5.13), set by the LitGPT profile: its attention repeats k and v to every query head
    /// before SDPA in training (`CausalSelfAttention.forward`, `repeat_interleave`, lines
    /// 536–539), its rotary cos/sin are buffers sliced per forward (no activation), and its
    /// fused `LoRAQKVLinear` scatters the update of the adapted q/k/v parts into a zero tensor
    /// of the whole QKV width (`zero_pad`, lines 288–326), which keeps the update and an int64
    /// index when not all three are adapted. Measured in `litgpt_lora.json`. Left out of the
    /// JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub litgpt_modules: bool,
}

impl Default for Techniques {
    fn default() -> Self {
        Techniques {
            loss: Loss::Standard,
            loss_chunks: 8,
            optimizer_in_backward: false,
            activation_offload: false,
            liger_kernels: false,
            compile: false,
            compile_loss: true,
            compile_model: false,
            litgpt_modules: false,
        }
    }
}
