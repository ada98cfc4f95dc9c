//! Model states per GPU: parameters, gradients and optimizer states (with the fp32 master
//! copy), after ZeRO sharding, CPU offload, freezing, LoRA and QLoRA.
//!
//! Byte budgets per trainable parameter (Rajbhandari et al. 2020, "ZeRO", §3.1 and §5;
//! Megatron-LM distributed-optimizer table in memory-formulas.md §A1):
//! - fp32: weight 4, gradient 4, optimizer K (fp32 states).
//! - pure bf16: weight 2, gradient 2, optimizer K at 2 B (torch.optim's `zeros_like(param)`).
//! - autocast (fp16/bf16/fp8-mixed) without ZeRO: the fp32 weights are the master copy:
//!   weight 4, gradient 4, optimizer K; the 16-bit copies autocast makes are transient
//!   (counted under temporary, see `temporary.rs`).
//! - mixed with ZeRO ≥ 1 (DeepSpeed, the ZeRO paper): weight 2, gradient 2, fp32 master 4
//!   + K held with the optimizer states: 16 B/param for Adam, the paper's (2 + 2 + K)Ψ.
//! - mixed with FSDP2 (`fully_shard` with `MixedPrecisionPolicy(param_dtype=bf16)`): the sharded
//!   parameters stay fp32 and are the master copy; bf16 copies exist only gathered
//!   (`temporary.rs`), and the sharded gradients take the sharded parameters' dtype: weight 4,
//!   gradient 4, no separate master, optimizer K — the same 16 B/param for Adam, split
//!   differently (torch 2.15 `fsdp/_fully_shard/_fsdp_param.py` `init_dtype_attrs`, lines
//!   820–830: `orig_dtype` is the sharded parameter's, `sharded_grad_dtype = orig_dtype`;
//!   measured in `tests/fixtures/measured/fsdp.json`).
//!
//! ZeRO-1 divides the optimizer states (with the master copy) by N_d, ZeRO-2 also the
//! gradients, ZeRO-3 also the weights.

use super::arch::{Architecture, ParamTensor, Scope, TpSplit};
use super::breakdown::{Component, Lifetime};
use super::dtype::{nf4_bytes_per_weight, Dtype, F32, HALF};
use super::layout::Layout;
use super::ledger::Ledger;
use super::lora_reach::{quantized, rank_factor};
use super::precision::Precision;
use crate::model::inputs::{LoraBase, MixerKernels, Offload, Optimizer, OptimizerImpl, Training, Zero};

/// bitsandbytes keeps 32-bit state for tensors smaller than this (`min_8bit_size=4096`).
const BNB_MIN_8BIT_SIZE: f64 = 4096.0;
/// bitsandbytes block-wise quantisation block for 8-bit optimizer states: 256 in
/// bitsandbytes 0.50 (`Optimizer2State`, blockwise=True), with one fp32 absmax per block and
/// a 256-entry fp32 quantisation map per state per tensor. Matches the measured
/// `optimizer_states.json` cases to the byte (e.g. 36,318,208 B for llama-tiny).
const BNB_BLOCK: f64 = 256.0;
const BNB_QMAP_BYTES: f64 = 256.0 * F32;

/// Per-element storage of the three model-state parts, before sharding.
#[derive(Clone, Copy, Debug)]
struct Budget {
    weight: f64,
    grad: f64,
    /// fp32 master copy (only with ZeRO under mixed precision).
    master: f64,
    /// Bytes of one optimizer-state element.
    state: f64,
}

/// The run's per-element bytes; `fp32_gradients` ([`Training::fp32_gradients`]) makes a 16-bit
/// run's gradients fp32.
fn budget(precision: Precision, layout: &Layout, fp32_gradients: bool) -> Budget {
    let b = run_budget(precision, layout);
    if fp32_gradients {
        Budget { grad: F32, ..b }
    } else {
        b
    }
}

fn run_budget(precision: Precision, layout: &Layout) -> Budget {
    match precision {
        Precision::Fp32 => Budget { weight: F32, grad: F32, master: 0.0, state: F32 },
        Precision::Bf16 => Budget { weight: HALF, grad: HALF, master: 0.0, state: HALF },
        // FSDP2's mixed precision keeps the sharded parameters (and so their gradients) in fp32.
        _ if layout.fsdp2() => Budget { weight: F32, grad: F32, master: 0.0, state: F32 },
        _ if layout.zero > Zero::Off => Budget { weight: HALF, grad: HALF, master: F32, state: F32 },
        _ => Budget { weight: F32, grad: F32, master: 0.0, state: F32 },
    }
}

/// bitsandbytes allocates a paged optimizer's state buffers in managed memory only for
/// tensors of at least 1e5 elements (`Optimizer8bit.get_state_buffer`:
/// `if not self.is_paged or p.numel() < 1e5: return torch.zeros_like(...)`, bitsandbytes
/// `bitsandbytes/optim/optimizer.py` lines 374–390); the 8-bit variant's per-block absmax
/// tensors are ordinary `torch.zeros` (`Optimizer2State.init_state`, lines 528–529). bitsandbytes at
/// commit 95f9af3 (bitsandbytes-foundation/bitsandbytes).
const BNB_PAGED_MIN_NUMEL: f64 = 1e5;

/// Bytes of a paged optimizer's state buffers in managed memory for one copy of a tensor of
/// `numel` elements (0 for a non-paged optimizer).
fn paged_state_bytes(opt: Optimizer, numel: f64) -> f64 {
    match opt {
        _ if !opt.is_paged() || numel < BNB_PAGED_MIN_NUMEL => 0.0,
        // 8-bit states above `min_8bit_size` (4096 < 1e5): one byte per element per state.
        Optimizer::PagedAdamw8bit => 2.0 * numel * Dtype::U8.bytes(),
        _ => 2.0 * numel * F32,
    }
}

/// Optimizer-state bytes for one copy of a trainable tensor.
///
/// Adam/AdamW: exp_avg + exp_avg_sq (Kingma & Ba 2015); SGD momentum and Lion (Chen et al.
/// 2023): one buffer; Adafactor (Shazeer & Stern 2018, §3; transformers'
/// `optimization.Adafactor` with beta1=None): row and column second-moment factors for
/// tensors of 2+ dimensions (`shape[:-1]` and `shape[:-2] + shape[-1:]`), a full second
/// moment for vectors; bitsandbytes AdamW8bit (Dettmers et al. 2022): 1 B per state plus an
/// fp32 absmax per block and a quantisation map per tensor, 32-bit state below
/// `min_8bit_size`.
fn optimizer_state_bytes(opt: Optimizer, t: &ParamTensor, state: f64) -> f64 {
    let n = t.numel();
    // transformers' Adafactor creates its factors with `torch.zeros(shape)` (fp32) whatever
    // the parameter dtype.
    let state = if opt == Optimizer::Adafactor { F32 } else { state };
    match opt {
        Optimizer::Adamw | Optimizer::Adam => 2.0 * n * state,
        Optimizer::Sgd => 0.0,
        Optimizer::SgdMomentum | Optimizer::Lion => n * state,
        // bitsandbytes' 32-bit optimizers keep fp32 states whatever the parameter dtype
        // (`Optimizer2State.init_state`: `if config["optim_bits"] == 32: dtype = torch.float32`,
        // bitsandbytes/optim/optimizer.py lines 495–496); paging changes where they live, not
        // their size (`get_state_buffer`, lines 374–390).
        Optimizer::PagedAdamw => 2.0 * n * F32,
        Optimizer::Adamw8bit | Optimizer::PagedAdamw8bit if n < BNB_MIN_8BIT_SIZE => 2.0 * n * F32,
        Optimizer::Adamw8bit | Optimizer::PagedAdamw8bit => 2.0 * (n * (Dtype::U8.bytes() + F32 / BNB_BLOCK) + BNB_QMAP_BYTES),
        Optimizer::Adafactor => match t.shape() {
            [.., rows, cols] if *rows > 0 && *cols > 0 => (n / *cols as f64 + n / *rows as f64) * state,
            _ => n * state,
        },
    }
}

/// Whether the LoRA adapters are fp32 on a pure 16-bit base ([`crate::model::inputs::Lora::fp32_adapters`]:
/// PEFT's `autocast_adapter_dtype=True`; measured in `lora_dtypes.json`): their weights,
/// gradients and AdamW states then take 4 B per element, not the run's 2.
pub fn adapters_in_fp32(training: &Training) -> bool {
    training.precision == Precision::Bf16 && training.lora.as_ref().is_some_and(|l| l.fp32_adapters)
}

/// Per-element storage of the LoRA adapters: the run's, or fp32 ([`adapters_in_fp32`]).
fn adapter_budget(training: &Training, run: Budget) -> Budget {
    if adapters_in_fp32(training) {
        Budget { weight: F32, grad: F32, master: 0.0, state: F32 }
    } else {
        run
    }
}

/// Whether the output projection's weight is trained, and so gets a gradient: not under LoRA
/// (no adapter targets the head; its base weight is frozen), nor when it is tied to frozen
/// input embeddings. A frozen weight gets none, and its matmul keeps no input for it: the
/// generated `VariableType` code saves `MmBackward0`'s `self_` (the input) only
/// `if (grad_fn->should_compute_output(1))`, i.e. when the weight needs a gradient.
pub fn output_weight_trainable(embedding_tied: bool, training: &Training) -> bool {
    training.lora.is_none() && !(embedding_tied && training.frozen.embeddings)
}

/// Whether this tensor is trained (not frozen, not a LoRA base weight).
fn is_trainable(t: &ParamTensor, training: &Training, layer_fraction_frozen: f64) -> f64 {
    if training.lora.is_some() {
        return 0.0;
    }
    match t.scope {
        Scope::Input if training.frozen.embeddings => 0.0,
        Scope::Tower if training.frozen.vision_tower && !super::arch::tower::is_projector(t) => 0.0,
        // A diffusion pipeline trains its denoiser; the VAE and text encoders stay frozen.
        Scope::Vae | Scope::TextEncoder => 0.0,
        s if s.in_blocks() => 1.0 - layer_fraction_frozen,
        _ => 1.0,
    }
}

/// What `state_bytes` found, for the other parts of the model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StatesSummary {
    /// Trainable parameters of the whole model.
    pub trainable_params: f64,
    /// Elements of trainable tensors on this GPU (unsharded by ZeRO).
    pub trainable_local: f64,
    /// Elements of weights used as matmul operands on this GPU (for autocast copies).
    pub matmul_weights_local: f64,
    /// Elements of one transformer block on this GPU (ZeRO-3 gathers one at a time).
    pub block_params_local: f64,
    /// Of those, the trained ones (they get gradients; LoRA adapters included).
    pub block_trainable_local: f64,
    /// Elements of the largest single input/output tensor on this GPU (embedding, LM head).
    pub largest_edge_tensor_local: f64,
    /// Elements of every tensor outside the blocks on this GPU (embeddings, final norm, head):
    /// FSDP2's root unit.
    pub edge_params_local: f64,
    /// Of those, the trained ones.
    pub edge_trainable_local: f64,
    /// Bytes of the frozen weights on this GPU (unsharded by ZeRO), in their own format (the
    /// compute dtype, NF4 under QLoRA): all of them, one block's, and those outside the blocks.
    pub frozen_bytes_local: f64,
    pub block_frozen_bytes_local: f64,
    pub edge_frozen_bytes_local: f64,
    /// Elements of the largest single tensor on this GPU (DeepSpeed gathers module by module).
    pub largest_tensor_local: f64,
    /// Elements of every parameter on this GPU (unsharded by ZeRO), trained or frozen.
    pub params_local: f64,
    /// Bytes per element of the weights as ZeRO shards them (what a full state dict holds).
    pub weight_bytes: f64,
    /// Bytes of paged optimizer states (bitsandbytes, CUDA managed memory) on this GPU.
    pub paged_state_bytes: f64,
    /// Bytes per element of a gradient.
    pub grad_bytes: f64,
    /// Elements of the largest trainable tensor on this GPU.
    pub largest_trainable_local: f64,
}

impl StatesSummary {
    /// Frozen elements (all parameters less the trained ones).
    pub fn frozen_elements(&self) -> f64 {
        (self.params_local - self.trainable_local).max(0.0)
    }

    /// Frozen elements of one block.
    pub fn block_frozen_elements(&self) -> f64 {
        (self.block_params_local - self.block_trainable_local).max(0.0)
    }

    /// Frozen elements outside the blocks.
    pub fn edge_frozen_elements(&self) -> f64 {
        (self.edge_params_local - self.edge_trainable_local).max(0.0)
    }
}

/// The model states of one GPU, before they become ledger terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StateBytes {
    pub summary: StatesSummary,
    /// Bytes kept in host memory by offload.
    pub host: f64,
    trainable_weights: f64,
    frozen_weights: f64,
    gradients: f64,
    /// Optimizer states on the GPU, their paged part included.
    states: f64,
    paged: f64,
    master: f64,
}

// long: parameters, gradients, optimizer states and master weights for each precision × optimizer × ZeRO × LoRA case, sharing one budget and layout; the cases read best side by side.
/// Parameters, gradients and optimizer states of this GPU, and the bytes offload keeps in
/// host memory; `tensors` are `arch.param_tensors()`. They depend on the layout of one
/// pipeline stage, the offload, and of the training step only on its precision, optimizer,
/// freezing and LoRA (`reuse.rs` keys them on those); the terms' lifetimes are
/// [`add_states`]'.
pub fn state_bytes(arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout, offload: Offload) -> StateBytes {
    let precision = training.precision;
    let b = budget(precision, layout, training.fp32_gradients);
    let layers = arch.layers() as f64;
    let frozen_fraction = (training.frozen.layers as f64 / layers).min(1.0);
    let zero = layout.zero;
    let mut summary = StatesSummary { grad_bytes: b.grad, weight_bytes: b.weight, ..Default::default() };
    let mut paged = 0.0;

    let (mut weights, mut grads, mut states, mut master, mut frozen_weights, mut adapters) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let mut adapter_states = 0.0;
    // Adapters on linears whose weight the forward reads directly (`ParamTensor::adapter_idle`).
    let mut idle_adapters = 0.0;
    let lora = training.lora.as_ref();
    let ab = adapter_budget(training, b);
    for t in tensors {
        let copies = layout.copies(arch, t);
        let n = t.numel() * copies;
        let trainable = is_trainable(t, training, frozen_fraction);
        summary.trainable_params += t.numel() * arch.multiplicity(t.scope) * trainable;
        summary.trainable_local += n * trainable;
        if trainable > 0.0 {
            summary.largest_trainable_local = summary.largest_trainable_local.max(t.numel() / layout.tp.max(1.0));
        }
        // Autocast casts the weights of linears and convolutions, not embedding tables.
        if t.is_matmul_weight() || (t.name == "embed_tokens" && layout.tied && layout.last) {
            summary.matmul_weights_local += n;
        }
        summary.params_local += n;
        let split = if t.tp == TpSplit::Sharded { layout.tp } else { 1.0 };
        if copies > 0.0 {
            summary.largest_tensor_local = summary.largest_tensor_local.max(t.numel() / split);
        }
        if t.scope.in_blocks() {
            summary.block_params_local += n / layout.layers_on_stage.max(1.0);
            summary.block_trainable_local += n * trainable / layout.layers_on_stage.max(1.0);
        } else {
            summary.largest_edge_tensor_local = summary.largest_edge_tensor_local.max(n);
            summary.edge_params_local += n;
            summary.edge_trainable_local += n * trainable;
        }
        // Trained part.
        weights += n * trainable * b.weight;
        grads += n * trainable * b.grad;
        master += n * trainable * b.master;
        states += optimizer_state_bytes(training.optimizer, t, b.state) * copies * trainable;
        paged += paged_state_bytes(training.optimizer, t.numel() / split) * copies * trainable;
        // Frozen part: weights only, in the compute dtype (fp32, or 16-bit otherwise).
        let frozen = 1.0 - trainable;
        if frozen > 0.0 {
            let frozen_bytes = match lora {
                Some(l) if l.base == LoraBase::Nf4 && quantized(t, l) => nf4_bytes_per_weight(l.double_quant),
                // QLoRA: PEFT's `prepare_model_for_kbit_training` casts every 16-bit parameter that
                // is not a `Params4bit` to fp32 (`peft/utils/other.py`, lines 204–209): embeddings,
                // norms, the head. Measured in `lora.json` (`qlora_cpu`). torchtune does not
                // (`Lora::fp32_unquantised`).
                Some(l) if l.base == LoraBase::Nf4 && l.fp32_unquantised => F32,
                _ if arch.keeps_fp32(t.scope) => F32,
                _ => precision.activation_bytes() as f64,
            };
            frozen_weights += n * frozen * frozen_bytes;
            summary.frozen_bytes_local += n * frozen * frozen_bytes;
            if t.scope.in_blocks() {
                summary.block_frozen_bytes_local += n * frozen * frozen_bytes / layout.layers_on_stage.max(1.0);
            } else {
                summary.edge_frozen_bytes_local += n * frozen * frozen_bytes;
            }
        }
        if let Some(l) = lora {
            let factor = rank_factor(t, l);
            if factor > 0 {
                let (inp, out) = t.lora_dims.unwrap_or((0, 0));
                // A wrapped fused `gate_up_proj` has rank 2r (`arch/moe_peft.rs`).
                let rank = l.rank * factor;
                // PEFT wraps every module `named_modules()` yields; transformers ties a shared
                // block's parameters, not its modules (Zamba2, `arch/shared.rs`), so every
                // invocation gets its own adapter (`zamba2.json` `lora`).
                let (copies, scope) = match t.scope {
                    Scope::Shared => {
                        let mut per_invocation = t.clone();
                        per_invocation.scope = Scope::Attention;
                        (layout.copies(arch, &per_invocation), Scope::Attention)
                    }
                    scope => (copies, scope),
                };
                let per_copy = rank as f64 * (inp + out) as f64;
                let a = per_copy * copies;
                summary.trainable_params += per_copy * arch.multiplicity(scope);
                summary.params_local += a;
                if t.adapter_idle(training.mixer_kernels == MixerKernels::Torch) {
                    // PEFT makes the adapter (and counts it trainable), but the forward reads
                    // the base weight directly: no gradient reaches it, and torch's optimizers
                    // make no state for a parameter whose `grad` is None (`torch/optim/adam.py`
                    // `_init_group`: `if p.grad is not None`). Its weights only.
                    idle_adapters += a;
                    continue;
                }
                adapters += a;
                let adapter = ParamTensor::new(t.name, &[rank, inp + out], t.scope, t.tp);
                adapter_states += optimizer_state_bytes(training.optimizer, &adapter, ab.state) * copies;
                // PEFT's lora_A (r × in) and lora_B (out × r) are separate tensors.
                paged += (paged_state_bytes(training.optimizer, (rank * inp) as f64) + paged_state_bytes(training.optimizer, (rank * out) as f64)) * copies;
                summary.trainable_local += a;
                if t.scope.in_blocks() {
                    summary.block_params_local += a / layout.layers_on_stage.max(1.0);
                    summary.block_trainable_local += a / layout.layers_on_stage.max(1.0);
                }
            }
        }
    }
    weights += (adapters + idle_adapters) * ab.weight;
    grads += adapters * ab.grad;
    master += adapters * ab.master;
    states += adapter_states;

    // ZeRO sharding over the data-parallel group (dense shard count; experts are already
    // split by EP, whose ZeRO group is dp/ep: a small difference we accept here).
    let n_d = layout.zero_shards();
    let opt_total = states + master;
    let (w_gpu, g_gpu, o_gpu, frozen_gpu) = match zero {
        Zero::Off => (weights, grads, opt_total, frozen_weights),
        Zero::Optimizer => (weights, grads, opt_total / n_d, frozen_weights),
        Zero::Gradients => (weights, grads / n_d, opt_total / n_d, frozen_weights),
        Zero::Parameters => (weights / n_d, grads / n_d, opt_total / n_d, frozen_weights / n_d),
    };

    let mut host = 0.0;
    let (mut w_dev, mut g_dev, mut o_dev) = (w_gpu, g_gpu, o_gpu);
    if offload != Offload::None {
        // ZeRO-Offload (Ren et al. 2021): optimizer states and the fp32 master live on the
        // CPU; with ZeRO the gradient partitions go there too (DeepSpeed
        // estimate_zero2_model_states_mem_needs: GPU keeps 2Ψ).
        host += o_dev;
        o_dev = 0.0;
        if zero > Zero::Off {
            host += g_dev;
            g_dev = 0.0;
        }
    }
    if offload == Offload::OptimizerAndParams {
        // ZeRO-Infinity parameter offload: only gathered layers are on the GPU (temporary).
        host += w_dev;
        w_dev = 0.0;
    }
    let states_dev = if zero > Zero::Off { o_dev * states / opt_total.max(1e-300) } else { o_dev };
    // The paged part of bitsandbytes' states, in CUDA managed memory (spill.rs), sharded as the
    // rest; none on the GPU when the states are offloaded.
    let paged_dev = if o_dev > 0.0 { (if zero > Zero::Off { paged / n_d } else { paged }).min(states_dev) } else { 0.0 };
    summary.paged_state_bytes = paged_dev;
    let master_dev = if zero > Zero::Off { o_dev * master / opt_total.max(1e-300) } else { 0.0 };
    StateBytes { summary, host, trainable_weights: w_dev, frozen_weights: frozen_gpu, gradients: g_dev, states: states_dev, paged: paged_dev, master: master_dev }
}

/// Add the model states' terms to `ledger`, each with its lifetime.
pub fn add_states(bytes: &StateBytes, training: &Training, layout: &Layout, offload: Offload, ledger: &mut Ledger) {
    ledger.add(
        Component::Parameters,
        "trainable weights",
        bytes.trainable_weights,
        "n_local × weight bytes (4 fp32/autocast and FSDP2's fp32 shards, 2 bf16 or with DeepSpeed ZeRO) ÷ N_d at ZeRO-3 — ZeRO §3.1; torch _fsdp_param.py",
        Lifetime::WholeStep,
    );
    ledger.add(Component::Parameters, "frozen weights", bytes.frozen_weights, "frozen elements × compute-dtype bytes (NF4: 0.516 B with double quant; QLoRA's other weights fp32 after PEFT's prepare_model_for_kbit_training, the compute dtype in torchtune) — QLoRA §3", Lifetime::WholeStep);
    // With the optimizer step fused into backward each gradient is freed by its own update:
    // none is kept (one tensor's gradient is a backward transient, temporary.rs).
    if !training.techniques.optimizer_in_backward {
        let lifetime = if gradients_persist(training, layout, offload) { Lifetime::WholeStep } else { Lifetime::MadeInBackward };
        ledger.add(Component::Gradients, "gradients", bytes.gradients, "trainable n_local × gradient bytes ÷ N_d at ZeRO-2/3 — ZeRO §3.1", lifetime);
    }
    ledger.add(
        Component::OptimizerStates,
        "optimizer states",
        bytes.states - bytes.paged,
        "K bytes per trainable element (Adam 8, momentum/Lion 4, 8-bit Adam 2, Adafactor factored) ÷ N_d at ZeRO ≥ 1",
        Lifetime::WholeStep,
    );
    ledger.add(
        Component::OptimizerStates,
        "optimizer states (paged: CUDA managed memory)",
        bytes.paged,
        "bitsandbytes PagedAdamW(8bit): the two states of every tensor of ≥ 1e5 elements, allocated with cudaMallocManaged (get_state_buffer → F.get_paged → cget_managed_ptr; bitsandbytes optim/optimizer.py 374–390, csrc/pythonInterface.cpp 557–563)",
        Lifetime::WholeStep,
    );
    ledger.add(Component::OptimizerStates, "fp32 master weights", bytes.master, "4 B per trainable element ÷ N_d (ZeRO §3.1, K = 12 includes them)", Lifetime::WholeStep);
}

/// Whether gradients stay allocated through forward and backward: micro-batches accumulate
/// into them, DDP with `gradient_as_bucket_view=True` makes them views of its buckets (which
/// live as long as the model), ZeRO and offload keep partitions. Otherwise
/// `zero_grad(set_to_none=True)` frees them before the next forward (PyTorch ≥ 2.0 default) —
/// DDP's default included: its own buckets stay (`temporary.rs`, "DDP gradient buckets"), the
/// `.grad`s go (measured in `ddp_buckets.json`: one parameter size alive before the forward,
/// two after backward). FSDP2 keeps no partition of its own: each block's
/// reduce-scatter output becomes the sharded parameter's `.grad` in its post-backward
/// (`_fsdp_collectives.py` `foreach_reduce`), which `zero_grad` frees — measured in `fsdp.json`
/// (no sharded gradient in the forward phase without accumulation).
fn gradients_persist(training: &Training, layout: &Layout, offload: Offload) -> bool {
    if layout.fsdp2() {
        return training.grad_accum > 1 || offload != Offload::None;
    }
    training.grad_accum > 1 || (layout.ddp() && layout.bucket_view) || layout.zero > Zero::Off || offload != Offload::None
}

/// Intermediates `optimizer.step()` allocates, by Adam / AdamW's implementation
/// ([`OptimizerImpl`]), in the states' dtype (torch 2.15 `torch/optim/adam.py`; measured on the
/// CPU with the allocator's events in `tests/fixtures/measured/optimizer_impl.json`, and as the
/// optimizer-phase peak in `peaks.json`):
/// - foreach: `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)` (`_multi_tensor_adam`,
///   lines 761–770), a tensor per parameter, all alive until the group's `addcdiv_`: the
///   trainable elements × state bytes (one group: every parameter of one device and dtype);
/// - for-loop: `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`
///   (`_single_tensor_adam`, line 545): the square root and the quotient of one parameter, so
///   twice the largest trainable tensor (the previous parameter's `denom`, still held by the
///   loop variable, can add a third where equal-sized tensors follow each other: +3.1 % on the
///   small-vocabulary case of the fixture, which the model does not count);
/// - fused: `torch._fused_adamw_` updates in place (`_fused_adam`, line 878): nothing.
///
/// Under FSDP2 torch's AdamW runs on the local shards, so each list is shard-sized (`fsdp.json`).
/// DeepSpeed's optimizers (ZeRO) and bitsandbytes' kernels update in place; offloaded steps run
/// on the CPU.
pub fn optimizer_step_intermediates(summary: &StatesSummary, training: &Training, layout: &Layout, offload: Offload) -> f64 {
    let adam = matches!(training.optimizer, Optimizer::Adam | Optimizer::Adamw);
    let shards = if layout.fsdp2() {
        layout.zero_shards()
    } else if layout.zero == Zero::Off {
        1.0
    } else {
        return 0.0;
    };
    if !adam || offload != Offload::None {
        return 0.0;
    }
    let state = if adapters_in_fp32(training) { F32 } else { training.precision.optimizer_state_bytes() as f64 };
    match training.optimizer_impl {
        OptimizerImpl::Foreach => summary.trainable_local / shards * state,
        OptimizerImpl::ForLoop => 2.0 * summary.largest_trainable_local / shards * state,
        OptimizerImpl::Fused => 0.0,
    }
}

/// The formula of [`optimizer_step_intermediates`] for the implementation chosen.
pub fn optimizer_step_formula(training: &Training) -> &'static str {
    match training.optimizer_impl {
        OptimizerImpl::Foreach => "foreach Adam/AdamW builds a parameter-sized list (_foreach_sqrt of the second moments) during optimizer.step(): trainable elements × state bytes — torch/optim/adam.py _multi_tensor_adam; measured in optimizer_impl.json and peaks.json",
        OptimizerImpl::ForLoop => "for-loop Adam/AdamW makes sqrt(exp_avg_sq) / bias_correction of one parameter at a time: 2 × largest trainable tensor × state bytes — torch/optim/adam.py _single_tensor_adam; measured in optimizer_impl.json",
        OptimizerImpl::Fused => "fused Adam/AdamW (torch fused=True, DeepSpeed FusedAdam, Apex/TE FusedAdam) updates in place: nothing parameter-sized — measured in optimizer_impl.json",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::arch::{AttentionPart, MlpPart, TransformerArch};
    use crate::model::inputs::{Parallel, Zero};

    /// The ZeRO paper's Figure 1 example: Ψ = 7.5B, K = 12, N_d = 64:
    /// 120 GB → 31.4 GB (P_os) → 16.6 GB (P_os+g) → 1.9 GB (P_os+g+p).
    #[test]
    fn zero_paper_figure_one() {
        // A dense stack of exactly 7.5e9 parameters: 75 layers of 1e8 each in one Linear.
        let arch = Architecture::Transformer(TransformerArch {
            hidden: 10_000,
            layers: 75,
            vocab: 1,
            attention: AttentionPart { heads: 1, kv_heads: 1, head_dim: 2_500, ..AttentionPart::default() },
            mlp: MlpPart { ffn: 0, ..MlpPart::default() },
            ..TransformerArch::default()
        });
        let training = Training { precision: Precision::Fp16Mixed, ..Training::default() };
        let psi = arch.param_count();
        let expected = [(Zero::Optimizer, 2.0 * psi + 2.0 * psi + 12.0 * psi / 64.0), (Zero::Gradients, 2.0 * psi + 14.0 * psi / 64.0), (Zero::Parameters, 16.0 * psi / 64.0)];
        for (zero, want) in expected {
            let parallel = Parallel { dp: 64, zero, ..Parallel::default() };
            let layout = Layout::new(&arch, &parallel, 0);
            let mut ledger = Ledger::default();
            let bytes = state_bytes(&arch, &arch.param_tensors(), &training, &layout, Offload::None);
            add_states(&bytes, &training, &layout, Offload::None, &mut ledger);
            let got = ledger.tally().total();
            assert!((got - want).abs() / want < 1e-9, "zero {zero}: {got} vs {want}");
        }
        // And the paper's rounded figures, with Ψ within 0.1% of 7.5B.
        assert!((psi - 7.5e9).abs() / 7.5e9 < 1e-3, "{psi}");
    }
}
