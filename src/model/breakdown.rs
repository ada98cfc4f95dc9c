//! The result of a plan: bytes per component per GPU, each traced to named terms, plus the
//! verdict (fits / spills / out of memory) and the step-time estimate.
//!
//! All sizes are raw bytes; units and rounding belong to the UI and CLI formatters.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The six components every chart and table shows, in stacking order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    Parameters,
    Gradients,
    OptimizerStates,
    Activations,
    Temporary,
    Overhead,
}

impl Component {
    pub const ALL: [Component; 6] = [Component::Parameters, Component::Gradients, Component::OptimizerStates, Component::Activations, Component::Temporary, Component::Overhead];

    /// Label for charts and tables.
    pub fn label(self) -> &'static str {
        match self {
            Component::Parameters => "Parameters",
            Component::Gradients => "Gradients",
            Component::OptimizerStates => "Optimizer states",
            Component::Activations => "Activations",
            Component::Temporary => "Temporary buffers",
            Component::Overhead => "Framework overhead",
        }
    }
}

/// The phases of a run whose live tensors differ: forward + backward (saved activations, loss
/// buffers), the optimizer step (gradients all present, activations freed, the optimizer's own
/// intermediates), and loading the model before the first step (the weights and the load's own
/// transients: FSDP1's unsharded unit, NF4 quantisation's 16-bit copy; `model::load`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    #[default]
    ForwardBackward,
    OptimizerStep,
    Load,
}

impl Phase {
    /// How many phases there are.
    pub const COUNT: usize = Phase::Load as usize + 1;
}

/// When a term is alive during one training step. The breakdown's two phases and its peak are
/// derived from these ([`Lifetime::phase`], `Ledger`), and the timeline draws them in time
/// (`model::timeline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Lifetime {
    /// Allocated before the step and kept after it: weights, optimizer states, gradients that
    /// persist (accumulation, DDP's bucket views, ZeRO, offload), DDP's buckets, the CUDA
    /// context and workspaces; in inference, everything.
    #[default]
    WholeStep,
    /// Saved for backward by each micro-batch in flight: made in forward as it runs through
    /// the [`Span`], freed in backward as it runs back.
    Saved(Span),
    /// From the first forward to the end of the last backward: autocast's weight copies, the
    /// ZeRO buckets, ZeRO-3's gathered weights.
    ForwardBackward,
    /// One moment of forward or backward. Moments follow each other, so a phase counts only
    /// the moment whose transients are the largest (`Ledger`); the others are the breakdown's
    /// `uncounted_transients`.
    Transient(Moment),
    /// Made by backward and freed by `zero_grad(set_to_none=True)` after the step: gradients
    /// nothing keeps. Counted in the optimizer step only: the measured backward peak is
    /// backward's start, before the first gradient (`tests/fixtures/measured/peaks.json`).
    MadeInBackward,
    /// Only during `optimizer.step()`: its own intermediates.
    OptimizerStep,
    /// Only while a checkpoint is saved between steps, after `optimizer.step()` and
    /// `zero_grad()`: the full state dict gathered on the GPU. Counted in the optimizer-step
    /// phase (the phase after backward) instead of that phase's gradients and intermediates
    /// when it is larger than they are (`Ledger`); otherwise it is one of the breakdown's
    /// `uncounted_transients`.
    CheckpointSave,
    /// Only while the model is loaded, before the first step: counted in the load phase alone,
    /// beside the weights and the framework overhead (`Ledger`).
    Load,
}

impl Lifetime {
    /// The phase the term is counted in; `None`: both.
    pub fn phase(self) -> Option<Phase> {
        match self {
            Lifetime::WholeStep => None,
            Lifetime::Saved(_) | Lifetime::ForwardBackward | Lifetime::Transient(_) => Some(Phase::ForwardBackward),
            Lifetime::MadeInBackward | Lifetime::OptimizerStep | Lifetime::CheckpointSave => Some(Phase::OptimizerStep),
            Lifetime::Load => Some(Phase::Load),
        }
    }

    /// Whether a term of `component` with this lifetime is alive during `phase`: a whole-step
    /// term in the load phase only when it is a weight or framework overhead (gradients,
    /// optimizer states and DDP's buckets are made by the first step).
    pub fn alive_in(self, component: Component, phase: Phase) -> bool {
        match (self.phase(), phase) {
            (None, Phase::Load) => matches!(component, Component::Parameters | Component::Overhead),
            (None, _) => true,
            (Some(p), _) => p == phase,
        }
    }
}

/// Where in the model a saved tensor is made (and, in backward, freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Span {
    /// Before the first block: input ids, rotary tables, embedding outputs (a ResNet's
    /// whole network, which has no blocks here).
    Input,
    /// Block by block, in proportion to the blocks done.
    Blocks,
    /// After the last block: final norm, head input, the loss's log-softmax.
    Output,
}

/// The moment of forward or backward a transient buffer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    /// End of forward: the logits and the loss's fp32 upcast.
    LossForward,
    /// Start of backward: the loss's gradient buffers.
    LossBackward,
    /// The output projection's backward (the chunked loss's logit and weight gradients).
    HeadBackward,
    /// Each block's backward: the block recomputed (activation checkpointing).
    Recompute,
    /// Each block's backward: the softmax gradients (eager attention).
    SoftmaxBackward,
    /// Each block's backward: its offloaded activations brought back.
    Reload,
    /// Each parameter's update fused into backward: its gradient and update.
    ParameterUpdate,
    /// Each 4-bit linear's matmul in a block's forward or backward: its weight dequantised.
    Dequantize,
    /// Each block's backward with nothing else of its own: FSDP's gathered weights, unsharded
    /// gradients and reduce-scatter buffers (recorded with every other per-block moment too,
    /// since they are alive during each of them).
    BlockBackward,
    /// A diffusion pipeline's VAE encoding the batch's images (no gradients).
    VaeEncode,
    /// A diffusion pipeline's text encoders encoding the prompts (no gradients).
    TextEncode,
    /// One denoiser call of generation (no gradients).
    Denoise,
    /// The VAE decoding the final latents (no gradients).
    VaeDecode,
}

impl Moment {
    /// How many moments there are (the ledger sums each on the stack).
    pub const COUNT: usize = Moment::VaeDecode as usize + 1;

    /// Whether the moment recurs in every block's backward (rather than once at the head).
    pub fn in_blocks(self) -> bool {
        matches!(self, Moment::Recompute | Moment::SoftmaxBackward | Moment::Reload | Moment::ParameterUpdate | Moment::Dequantize | Moment::BlockBackward)
    }
}

/// One named contribution to a component, with the formula it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Term {
    pub component: Component,
    pub name: Cow<'static, str>,
    pub bytes: u64,
    /// The formula and its source, for tooltips and the docs.
    pub formula: Cow<'static, str>,
    /// When the term is alive during the step.
    #[serde(default)]
    pub lifetime: Lifetime,
}

impl Term {
    /// The phase this term is counted in; `None`: the whole step.
    pub fn phase(&self) -> Option<Phase> {
        self.lifetime.phase()
    }

    /// Whether the term is alive during `phase`.
    pub fn alive_in(&self, phase: Phase) -> bool {
        self.lifetime.alive_in(self.component, phase)
    }
}

/// The six components as they stand during one phase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PhaseTotals {
    pub parameters: u64,
    pub gradients: u64,
    pub optimizer_states: u64,
    pub activations: u64,
    pub temporary: u64,
    pub overhead: u64,
    pub total: u64,
}

impl PhaseTotals {
    /// Bytes of one component in this phase.
    pub fn component(&self, c: Component) -> u64 {
        match c {
            Component::Parameters => self.parameters,
            Component::Gradients => self.gradients,
            Component::OptimizerStates => self.optimizer_states,
            Component::Activations => self.activations,
            Component::Temporary => self.temporary,
            Component::Overhead => self.overhead,
        }
    }
}

/// What happens to a run on its device and platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    #[default]
    Fits,
    /// Runs, with part of its memory in system memory (sysmem fallback, managed memory,
    /// offload, NVLink-C2C).
    Spills,
    /// `torch.OutOfMemoryError`: the platform does not spill, or a per-process cap is hit.
    OutOfMemory,
}

/// Beyond the GPU's memory: the platform's mechanism, what spills, and the bytes it moves
/// (`spill.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct SpillReport {
    /// The platform as resolved for this device (`auto` decided).
    pub platform: crate::model::inputs::Platform,
    pub outcome: Outcome,
    /// Memory this process may use (the device, less other processes, shared by the jobs,
    /// capped by the per-process fraction).
    pub capacity_bytes: u64,
    /// Spilled bytes per component, in the order the mechanism spills them.
    pub by_component: Vec<(Component, u64)>,
    /// Bytes the spilled components move over the host link per step (per token in inference).
    pub traffic_bytes: f64,
    /// Bytes every access moves when a migrating mechanism thrashes (the high end).
    pub thrash_traffic_bytes: f64,
    /// Host-link bandwidth per direction, bytes/s.
    pub link_bandwidth: f64,
    /// Effective bandwidth of the thrashing case (page-fault-bound for managed memory).
    pub thrash_bandwidth: f64,
    /// `torch.cuda.set_per_process_memory_fraction` value giving each job its share, when shared.
    pub recommended_memory_fraction: Option<f64>,
    /// Out of memory because the per-process fraction caps the allocator.
    pub capped: bool,
    /// System RAM this GPU's process can count on: the machine's, shared by the GPUs on it.
    #[serde(default)]
    pub host_memory_bytes: u64,
    /// The most the platform lets this process place in host memory (spilled, offloaded,
    /// pinned), and what that limit is (`spill::host_ceiling`).
    #[serde(default)]
    pub host_ceiling_bytes: u64,
    #[serde(default)]
    pub ceiling: HostCeiling,
    /// Bytes the process keeps in host memory on purpose (CPU offload, offloaded activations).
    #[serde(default)]
    pub host_kept_bytes: u64,
    /// What the outcome is and why, in one sentence (names the ceiling when it is exceeded).
    #[serde(default)]
    pub message: String,
    /// Out of memory because host memory is short (past the ceiling, or the offloaded tensors
    /// do not fit in RAM), not because the platform does not spill.
    #[serde(default)]
    pub past_ceiling: bool,
    /// Spilled bytes read every micro-batch (weights, gradients, activations, buffers)…
    #[serde(default)]
    pub hot_bytes: u64,
    /// …and read once per step (optimizer states).
    #[serde(default)]
    pub cold_bytes: u64,
    /// The price of the spill, per component and kernel class that touches it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<SpillCost>,
    /// The same run on each platform the card may run under (GeForce and workstation cards
    /// on `auto`: Linux, Windows with the sysmem fallback on and off), empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_platform: Vec<PlatformOutcome>,
}

/// The limit on host memory that applies to a platform (`spill::host_ceiling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum HostCeiling {
    /// Nothing is placed in host memory beyond what is offloaded on purpose.
    #[default]
    None,
    /// Windows' shared GPU memory: half of the system RAM (WDDM).
    SharedGpuMemory,
    /// System RAM less the operating system's share and what the process keeps there.
    HostMemory,
    /// Page-locked (pinned) host memory for deliberate offload.
    PinnedMemory,
    /// The Grace CPU's memory on an NVLink-C2C superchip.
    GraceMemory,
}

/// How a kernel reaches spilled bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelClass {
    /// A matmul operand or output: its arithmetic can hide a slow operand (roofline).
    Matmul,
    /// Elementwise, norm, cast, softmax, optimizer update: time is bytes over bandwidth.
    MemoryBound,
}

/// One line of a spill's price: one component's spilled bytes as one kernel class touches them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpillCost {
    pub component: Component,
    /// The kernels, in words ("weights read by the forward and backward matmuls").
    pub touched_by: String,
    pub kernel: KernelClass,
    /// Read every micro-batch (hot) or once per step (cold).
    pub hot: bool,
    /// This component's spilled bytes.
    pub spilled_bytes: u64,
    /// Times these kernels pass over each spilled byte per step (per token in inference).
    pub passes: f64,
    /// Bytes over the host link per step: `spilled_bytes × passes`.
    pub link_bytes: f64,
    /// Compute time of these kernels on the spilled bytes, which can hide the link time when
    /// the mechanism reads the bytes in place, seconds.
    pub overlap_seconds: f64,
    /// Seconds added per step: `[low, high]` (`spill::price`).
    pub added_seconds: [f64; 2],
}

/// The outcome of the same run under one platform.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlatformOutcome {
    pub platform: crate::model::inputs::Platform,
    pub outcome: Outcome,
    pub spill_bytes: u64,
    /// `[low, high]` slowdown of the step (or token); `[1, 1]` unless it spills.
    pub slowdown_range: [f64; 2],
    pub message: String,
}

/// The phases of a run; the breakdown's components are those of `peak_phase`.
///
/// With one GPU, no accumulation and `zero_grad(set_to_none=True)`, gradients do not exist
/// during forward and backward; activations are gone by the optimizer step, which allocates
/// its own intermediates (foreach Adam: one parameter-sized tensor list). Checked against
/// MemTracker measurements in `tests/fixtures/measured/peaks.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PhasePeaks {
    pub forward_backward: PhaseTotals,
    pub optimizer_step: PhaseTotals,
    /// Loading the model: the weights, the framework overhead and the load's transients
    /// ([`Lifetime::Load`]); all zero in inference.
    #[serde(default)]
    pub load: PhaseTotals,
    pub peak_phase: Phase,
}

impl PhasePeaks {
    /// The totals of the phase that peaks.
    pub fn at_peak(&self) -> &PhaseTotals {
        self.get(self.peak_phase)
    }

    /// The totals of one phase.
    pub fn get(&self, phase: Phase) -> &PhaseTotals {
        match phase {
            Phase::ForwardBackward => &self.forward_backward,
            Phase::OptimizerStep => &self.optimizer_step,
            Phase::Load => &self.load,
        }
    }
}

/// The shape of one training step on the GPU the breakdown is for: what the timeline
/// (`model::timeline`) needs besides the terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StepShape {
    /// Blocks on this pipeline stage (the saved tensors of `Span::Blocks` are spread over them).
    pub layers: u64,
    /// Index of the stage's first block in the model (0-based).
    pub first_layer: u64,
    /// Blocks in the whole model.
    pub model_layers: u64,
    /// Micro-batches per optimizer step (gradient accumulation, the pipeline's micro-batches).
    pub micro_batches: u64,
    /// Micro-batches whose saved tensors are alive at once on this stage: 1 without a
    /// pipeline, min(p − stage, m) under 1F1B and interleaving, m under GPipe
    /// (`activations::in_flight_count`).
    pub in_flight: u64,
    /// Pipeline stages.
    pub stages: u64,
}

/// Estimated time of one optimizer step on the worst GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct StepTime {
    /// Compute-bound time with everything in device memory, seconds.
    pub seconds: f64,
    /// The same step with the spilled bytes crossing the host link, seconds (the low end of
    /// `slowdown_range`).
    pub seconds_with_spill: f64,
    /// `seconds_with_spill / seconds`.
    pub slowdown: f64,
    /// Slowdown from spilling, `[streaming at the link's bandwidth, thrashing]` (`spill.rs`).
    pub slowdown_range: [f64; 2],
    /// Inference: time to generate one token for the batch (reading every weight and the KV
    /// cache once, or the FLOPs if slower), seconds; 0 in training.
    pub decode_seconds_per_token: f64,
    /// Inference: time to process the prompt (time to first token), seconds; 0 in training.
    pub prefill_seconds: f64,
    /// FLOPs one GPU executes per step (including recomputation).
    pub flops_per_gpu: f64,
    /// Fraction of peak throughput assumed (model FLOPs utilisation).
    pub utilisation: f64,
    /// Tokens (or images) the whole job processes per second without spill.
    pub tokens_per_second: f64,
}

/// A vision-language model's parameters by part; the three add up to `param_count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PartCounts {
    pub vision_tower: u64,
    pub projector: u64,
    pub language_model: u64,
}

/// Per-GPU memory of a scenario, in bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Breakdown {
    pub parameters: u64,
    pub gradients: u64,
    pub optimizer_states: u64,
    /// Tensors saved for backward by the micro-batches in flight (KV cache in inference);
    /// 0 when the peak is the optimizer step.
    pub activations: u64,
    /// Transient buffers at the peak: logits and loss, communication buckets, recompute.
    pub temporary: u64,
    /// CUDA context, cuBLAS / NCCL workspaces, allocator fragmentation.
    pub overhead: u64,
    /// Predicted peak: the sum of the six components, as they stand in the peak phase.
    pub total: u64,
    /// Parameters of the whole model.
    pub param_count: u64,
    /// A vision-language model's parameters by part (`vision_tower`, `projector`,
    /// `language_model`); absent for other models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_count_by_part: Option<PartCounts>,
    /// Parameters that receive gradients (under LoRA, every adapter PEFT makes, as its
    /// `print_trainable_parameters` counts them: also those on a linear the forward bypasses,
    /// `ParamTensor::adapter_bypassed`).
    pub trainable_params: u64,
    /// Device memory available to the process (after sharing and a per-process cap).
    pub capacity: u64,
    pub fits: bool,
    /// `total - capacity` when it does not fit, else 0.
    pub spill_bytes: u64,
    /// Bytes kept in host memory by CPU offload, per GPU.
    pub host_bytes: u64,
    /// GPUs in the job.
    pub gpus: u64,
    /// Pipeline stage these numbers are for (the one with the largest total).
    pub stage: u64,
    pub step_time: StepTime,
    /// What happens beyond the GPU's memory on this platform.
    pub spill: SpillReport,
    /// Both phases of the step (inference has only `forward_backward`).
    pub phases: PhasePeaks,
    /// The terms the phases count.
    pub terms: Vec<Term>,
    /// Transients of the moments the phases do not count, because another moment's are
    /// larger ([`Lifetime::Transient`]); the timeline draws each at its moment. Also the
    /// checkpoint save's full state dict when the optimizer step's own terms are larger, or
    /// those terms when the save is larger ([`Lifetime::CheckpointSave`]); and the output
    /// span's saved tensors when the counted moment is in the blocks' backward, by which time
    /// they are freed (`ledger.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncounted_transients: Vec<Term>,
    /// The shape of the training step, for the timeline; `None` in inference. Serialised as
    /// `step_shape`: the escalation ladder flattens a breakdown beside its own `step`.
    #[serde(default, rename = "step_shape", skip_serializing_if = "Option::is_none")]
    pub step: Option<StepShape>,
    /// A serving engine's plan as it prints it (KV-cache tokens, blocks, concurrency); `None`
    /// in training and for a transformers `generate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<super::serving::report::ServingReport>,
    pub warnings: Vec<String>,
}

/// The numbers of a breakdown without its named terms and warnings (`model::totals`): what
/// a search needs of most of the layouts it tries.
#[derive(Clone, Debug, PartialEq)]
pub struct Totals {
    pub trainable_params: u64,
    pub host_bytes: u64,
    pub stage: u64,
    pub step_time: StepTime,
    pub spill: SpillReport,
    pub phases: PhasePeaks,
    /// The serving engine's report, when one is chosen.
    pub serving: Option<super::serving::report::ServingReport>,
}

impl Totals {
    /// [`Breakdown::total`]: the peak phase's sum.
    pub fn total(&self) -> u64 {
        self.phases.at_peak().total
    }

    /// [`Breakdown::capacity`].
    pub fn capacity(&self) -> u64 {
        self.spill.capacity_bytes
    }

    /// [`Breakdown::fits`].
    pub fn fits(&self) -> bool {
        self.total() <= self.capacity() && self.serving.as_ref().is_none_or(|r| r.starts())
    }
}

impl Breakdown {
    /// Bytes of one component (as it stands in the peak phase, which the six fields copy).
    pub fn component(&self, c: Component) -> u64 {
        self.phases.at_peak().component(c)
    }
}
