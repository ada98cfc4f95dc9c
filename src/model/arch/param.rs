//! A parameter tensor and what the parts say of it: which blocks hold it (`Scope`), how
//! tensor parallelism splits it (`TpSplit`), which linear layer it is (`LinearKind`, for LoRA
//! targets), and the dimension check every part applies to its fields.

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// Which blocks hold a parameter tensor: decides how many copies exist and which pipeline
/// stage holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Before the first block (embeddings, patch projection, ResNet stem): first stage.
    Input,
    /// Once in every block.
    Layer,
    /// Once in every block whose feed-forward is dense (all blocks of a dense model; the
    /// `first_k_dense_replace` blocks of DeepSeek).
    DenseMlp,
    /// Once in every mixture-of-experts block (router, shared experts).
    MoeLayer,
    /// Once per routed expert per mixture-of-experts block.
    Expert,
    /// Once in every block that computes its own keys and values (Gemma 3n: all but the
    /// last `num_kv_shared_layers`, `per_layer.rs`; every block elsewhere).
    KvLayer,
    /// Once in every block of a subset picked by attention kind and by where its keys and
    /// values come from, where blocks differ in shape ([`BlockSubset`]: Gemma 4's
    /// full-attention layers with their own head width, its shared-KV layers' double-wide MLP).
    Subset(BlockSubset),
    /// Once in every decoder block of an encoder-decoder (cross-attention).
    Cross,
    /// Once in every block with attention, in a hybrid stack (`mixer.rs`; a stack without
    /// other mixers keeps its attention in `Layer`).
    Attention,
    /// Once in every block with a non-attention token mixer (Mamba, Mamba-2, Gated
    /// DeltaNet, short conv).
    Mixer,
    /// Once per shared block of a hybrid stack (Zamba2's `num_mem_blocks` attention + MLP
    /// blocks, `shared.rs`), however many hybrid layers invoke them.
    Shared,
    /// Once per adapter set the shared blocks hold (Zamba2: one per slot of
    /// `hybrid_layer_ids` in each block, `SharedBlocks::adapter_sets`).
    SharedAdapter,
    /// A vision-language model's vision tower and projector (`tower.rs`), before the
    /// language model's first block: first stage.
    Tower,
    /// A diffusion pipeline's VAE (`model/diffusion/`), frozen, beside the denoiser: first stage.
    Vae,
    /// A diffusion pipeline's text encoders (`model/diffusion/`), frozen: first stage.
    TextEncoder,
    /// After the last block (final norm, LM head, classifier): last stage.
    Output,
}

impl Scope {
    /// Whether the tensor repeats with the blocks (as opposed to the model's edges).
    pub fn in_blocks(self) -> bool {
        !matches!(self, Scope::Input | Scope::Output | Scope::Tower | Scope::Vae | Scope::TextEncoder)
    }
}

/// Blocks picked by their attention kind and their keys' and values' source; `None` takes
/// both. Counted by `TransformerArch::blocks` from the sliding layers
/// (`AttentionPart::sliding_layers`) and the shared-KV layers (`PerLayerInputs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSubset {
    /// `Some(true)`: full-attention blocks; `Some(false)`: sliding-window blocks.
    pub full: Option<bool>,
    /// `Some(true)`: blocks that compute their own keys and values; `Some(false)`: blocks that
    /// reuse an earlier block's.
    pub own_kv: Option<bool>,
}

/// How tensor parallelism (Megatron-LM, Shoeybi et al. 2019 §3) splits a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpSplit {
    /// Split across TP ranks (column- or row-parallel linear, vocab-parallel embedding).
    Sharded,
    /// Every TP rank holds a full copy (norms, row-parallel biases, positions, router).
    Replicated,
}

/// The linear layers LoRA can adapt, by their usual Hugging Face names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinearKind {
    Q,
    K,
    V,
    O,
    Gate,
    Up,
    Down,
    /// A joint-attention diffusion transformer's text-stream projections (diffusers'
    /// `add_q_proj`, `add_k_proj`, `add_v_proj`, `to_add_out` in Flux and SD3): PEFT's
    /// `to_q` does not match `add_q_proj`, so they are their own targets.
    AddQ,
    AddK,
    AddV,
    AddO,
    /// A non-attention mixer's input projection (`arch/mixer.rs`): Mamba's, Mamba-2's and
    /// LFM2's `in_proj`, Qwen3-Next's `in_proj_qkvz` (Qwen3.5's `in_proj_qkv` and `in_proj_z`).
    MixerIn,
    /// Gated DeltaNet's β and α projection: Qwen3-Next's `in_proj_ba` (Qwen3.5's `in_proj_b`
    /// and `in_proj_a`).
    MixerGates,
    /// Mamba's `x_proj` (Δ, B and C from the conv output).
    XProj,
    /// Mamba's `dt_proj` (Δ's low-rank projection up to d_inner).
    DtProj,
    /// A non-attention mixer's `out_proj` (LFM2's attention names its output projection
    /// `out_proj` too: that one is `O`).
    MixerOut,
}

impl LinearKind {
    pub const ALL: [LinearKind; 16] = [
        LinearKind::Q,
        LinearKind::K,
        LinearKind::V,
        LinearKind::O,
        LinearKind::Gate,
        LinearKind::Up,
        LinearKind::Down,
        LinearKind::AddQ,
        LinearKind::AddK,
        LinearKind::AddV,
        LinearKind::AddO,
        LinearKind::MixerIn,
        LinearKind::MixerGates,
        LinearKind::XProj,
        LinearKind::DtProj,
        LinearKind::MixerOut,
    ];

    /// The kinds of a non-attention mixer's linears.
    pub const MIXER: [LinearKind; 5] = [LinearKind::MixerIn, LinearKind::MixerGates, LinearKind::XProj, LinearKind::DtProj, LinearKind::MixerOut];
}

/// How PEFT 0.21's LoRA reaches a tensor (`model::lora_reach` decides, for a run's targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PeftReach {
    /// An `nn.Linear` adapted (`lora.Linear`) when one of its kinds is among the targets.
    #[default]
    Module,
    /// An `nn.Linear` no kind names (Qwen's `shared_expert_gate`, Llama 4's and PhiMoE's
    /// routers): only `target_modules="all-linear"` reaches it.
    AllLinearModule,
    /// A parameter PEFT wraps with `lora.ParamWrapper` after its transformers v4 → v5 config
    /// conversion (`arch/moe_peft.rs`): rank × `rank_factor` per expert; `all_linear_only`
    /// for the router's `gate.weight`, which only "all-linear" names.
    Wrapped { rank_factor: u64, all_linear_only: bool },
    /// Never adapted: fused expert parameters PEFT does not convert, or a linear whose name
    /// the conversion moves to `target_parameters` (the shared experts' and dense layers'
    /// `gate_proj`/`up_proj`/`down_proj` of the Qwen2-MoE pattern).
    Unreached,
}

/// Which training paths read a linear's weight directly, bypassing the module (and so any
/// LoRA adapter on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bypass {
    Never,
    /// The fused CUDA kernels take the weight as an argument; transformers' torch fallback
    /// calls the module.
    FusedKernels,
    /// Every path.
    Always,
}

/// One parameter tensor of the model (or one per block / per expert, see `scope`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamTensor {
    pub name: &'static str,
    /// Shape as PyTorch stores it (Linear weights are `[out, in]`), in the first `ndim`
    /// entries (a fixed array: building the tensor list allocates nothing per tensor).
    shape: [u64; 4],
    ndim: usize,
    pub scope: Scope,
    pub tp: TpSplit,
    /// Set for the matrices of linear layers (LoRA / QLoRA targets). A fused linear
    /// (GPT-2's `c_attn`, Phi-3's `qkv_proj`) carries every kind it stands for.
    pub linear: Option<&'static [LinearKind]>,
    /// For a LoRA target: `(in_features, out_features)` of the whole linear.
    pub lora_dims: Option<(u64, u64)>,
    /// Where the forward reads this linear's weight directly instead of calling the module, so
    /// a LoRA adapter PEFT puts on it never runs: its parameters exist, but it saves nothing
    /// and gets no gradient (Mamba's `x_proj` and `out_proj` in `mamba_inner_fn` and
    /// Mamba-2's `out_proj` in the fused SSD kernel, on the fused kernels only; Mamba's and
    /// Jamba's `dt_proj` on either path: `arch/mixer.rs`).
    pub adapter_bypassed: Bypass,
    /// An embedding lookup table (read by index, never cast by autocast).
    pub table: bool,
    /// How PEFT's LoRA reaches it ([`PeftReach`]).
    pub peft: PeftReach,
}

impl ParamTensor {
    /// A tensor of up to four dimensions (extra dimensions are ignored).
    pub fn new(name: &'static str, dims: &[u64], scope: Scope, tp: TpSplit) -> Self {
        let mut shape = [1; 4];
        let ndim = dims.len().min(4);
        shape[..ndim].copy_from_slice(&dims[..ndim]);
        ParamTensor { name, shape, ndim, scope, tp, linear: None, lora_dims: None, adapter_bypassed: Bypass::Never, table: false, peft: PeftReach::Module }
    }

    /// The weight `[out, in]` of a linear layer that LoRA may adapt.
    pub fn linear(name: &'static str, kinds: &'static [LinearKind], out: u64, inp: u64, scope: Scope) -> Self {
        ParamTensor { linear: Some(kinds), lora_dims: Some((inp, out)), ..ParamTensor::new(name, &[out, inp], scope, TpSplit::Sharded) }
    }

    /// A linear of a vision tower's blocks, a LoRA target when `Lora::vision_tower` is set, by the
    /// kind of the language model's linear it corresponds to; replicated under tensor
    /// parallelism, as the tower is.
    pub fn tower_linear(name: &'static str, kinds: &'static [LinearKind], out: u64, inp: u64) -> Self {
        ParamTensor { tp: TpSplit::Replicated, ..ParamTensor::linear(name, kinds, out, inp, Scope::Tower) }
    }

    /// How PEFT reaches this tensor, an adapter of `(in, out)` features per copy when it does
    /// (a router's `[experts, hidden]` weight is `(hidden, experts)`).
    pub fn peft_target(self, reach: PeftReach, inp: u64, out: u64) -> Self {
        ParamTensor { peft: reach, lora_dims: Some((inp, out)), ..self }
    }

    /// This linear's weight read directly by the forward on `on` (`adapter_bypassed`).
    pub fn bypassed(self, on: Bypass) -> Self {
        ParamTensor { adapter_bypassed: on, ..self }
    }

    /// Whether a LoRA adapter on this linear never runs, on the torch fallback of a hybrid's
    /// mixers (`torch_kernels`) or on the fused kernels.
    pub fn adapter_idle(&self, torch_kernels: bool) -> bool {
        match self.adapter_bypassed {
            Bypass::Never => false,
            Bypass::FusedKernels => !torch_kernels,
            Bypass::Always => true,
        }
    }

    /// A bias or norm vector of `n` elements.
    pub fn vector(name: &'static str, n: u64, scope: Scope, tp: TpSplit) -> Self {
        ParamTensor::new(name, &[n], scope, tp)
    }

    /// An embedding table `[rows, width]`.
    pub fn table(name: &'static str, rows: u64, width: u64, scope: Scope, tp: TpSplit) -> Self {
        ParamTensor { table: true, ..ParamTensor::new(name, &[rows, width], scope, tp) }
    }

    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[u64] {
        &self.shape[..self.ndim]
    }

    /// Elements in one copy.
    pub fn numel(&self) -> f64 {
        self.shape().iter().map(|&d| d as f64).product()
    }

    /// A linear that weight formats quantise (QLoRA's NF4, serving's int8/int4/fp8/GGUF):
    /// the language model's, not a vision tower's, which keeps the model's 16-bit dtype here as
    /// it did before its linears were LoRA targets (not measured).
    pub fn is_quantized_linear(&self) -> bool {
        self.linear.is_some() && self.scope != Scope::Tower
    }

    /// A routed expert's share of transformers 5's fused 3-D expert parameters (an
    /// `nn.Parameter`, not an `nn.Linear`: `moe_peft.rs`).
    pub fn is_fused_expert(&self) -> bool {
        self.scope == Scope::Expert && self.peft != PeftReach::Module
    }

    /// Whether autocast casts this tensor for a matmul or convolution (every weight matrix
    /// except embedding tables).
    pub fn is_matmul_weight(&self) -> bool {
        self.ndim >= 2 && !self.table
    }
}

/// Upper bound on any one dimension of an architecture given in our own fields.
pub const MAX_DIM: u64 = 1 << 24;

/// `Ok` when `v` is a usable dimension, else an error naming `field`.
pub fn check_dim(field: &str, v: u64) -> Result<(), InputError> {
    if v == 0 || v > MAX_DIM {
        Err(InputError::new(field, format!("must be between 1 and {MAX_DIM}, got {v}")))
    } else {
        Ok(())
    }
}
