//! What happens beyond the GPU's memory, and what it costs: by platform mechanism, by the
//! bytes each spilled component moves per step, as a range.
//!
//! Mechanisms (`Platform`):
//! - Linux CUDA, and Windows with the sysmem fallback off: `cudaMalloc` fails and PyTorch
//!   raises `torch.OutOfMemoryError` — nothing spills.
//! - Windows WDDM with the "CUDA Sysmem Fallback Policy" (NVIDIA driver 536.40+, NVIDIA support
//!   article 5490): once VRAM is full, new allocations land in shared system memory. PyTorch's
//!   caching allocator keeps what it got, so what spills is what was allocated last in the
//!   first step: the optimizer states (created lazily by the first `optimizer.step()`,
//!   `torch/optim/adamw.py` `_init_group`), then gradients, then activations; the weights,
//!   loaded first, stay in VRAM. The GPU then reads them over the host link every step.
//! - CUDA managed memory (Unified Memory oversubscription): pages migrate on fault and the
//!   driver evicts the least recently used ("Improving GPU Memory Oversubscription
//!   Performance", NVIDIA developer blog, 2021: up to 100× apart with platform, access
//!   pattern and hints).
//! - Deliberate offload: explicit, prefetched copies of what does not fit.
//! - NVLink-C2C superchips (GH200): the GPU reads CPU memory coherently at ~450 GB/s per
//!   direction (Grace Hopper architecture whitepaper, 2023).
//! - Paged optimizers (bitsandbytes `PagedAdamW`, `PagedAdamW8bit`): their large state buffers
//!   are allocated with `cudaMallocManaged` outside PyTorch's allocator (bitsandbytes@95f9af3
//!   `optim/optimizer.py` `get_state_buffer`, lines 374–390 → `functional.py` `get_paged`,
//!   lines 91–99 → `csrc/pythonInterface.cpp` `cget_managed_ptr`, lines 557–563:
//!   `cudaMallocManaged(&ptr, bytes, cudaMemAttachHost)`), so on any platform the driver evicts them
//!   to host memory when the GPU is full and pages them back for the update, which prefetches
//!   them (`prefetch_state`, optimizer.py 392–400 → `cprefetch` → `cudaMemPrefetchAsync`) — QLoRA (Dettmers et al. 2023) §3,
//!   "Paged Optimizers". A run over capacity by no more than those states spills them instead
//!   of failing; each spilled state byte comes in and goes out once per step.
//!
//! The ceiling (`host_ceiling`): what spills lives in system RAM, which is finite.
//! - WDDM gives "shared GPU memory" at most half of the system RAM: VidMm computes
//!   `TotalSystemMemoryAvailableForGraphics = MAX(TotalSystemMemory / 2, 64MB)` and the
//!   aperture segments' global commit limit ("shared system memory") from it (Microsoft,
//!   Windows driver docs, "Calculating graphics memory").
//! - Managed memory evicts pages to system RAM, deliberate offload and activation offloading
//!   keep page-locked (pinned) host buffers (`cudaHostAlloc`: page-locked memory cannot be
//!   paged out, so it must fit in RAM), and a GH200 spills into the Grace CPU's LPDDR5X: each
//!   is bounded by the RAM, less the operating system's share and what the process already
//!   keeps there. Past the ceiling the run fails (`Outcome::OutOfMemory`, the ceiling named).
//!
//! The price (`price`): how the mechanism reaches the spilled bytes, and which kernels touch
//! them (`touches`).
//! - In place (WDDM sysmem fallback, NVLink-C2C): the fallback's allocations sit in a system
//!   memory aperture segment, pages the GPU reaches through its page table over PCIe
//!   (Microsoft, "Linear aperture-space segments"; "GPU segments"): nothing moves, each kernel
//!   reads the bytes over the link. A matmul can hide a slow operand behind its arithmetic
//!   (roofline: its time is the larger of the FLOPs at the step's rate and the operand's bytes
//!   at the link's bandwidth; a weight element does 2·T FLOPs per pass for T tokens, a saved
//!   activation 2·d in the weight-gradient matmul), a norm, a cast, an elementwise op or the
//!   optimizer's update cannot: its time is the bytes at the link's bandwidth.
//! - Migrated (CUDA managed memory, a paged optimizer's states): a kernel that touches an
//!   evicted page faults and waits for it to migrate; nothing overlaps the fault.
//! - Deliberate offload prefetches whole tensors on a side stream, overlapping all compute.
//!
//! The low end is that. The high end is the mechanisms' worst case: VidMm and the UVM driver
//! evict the least recently used memory, which thrashes on a training step's cyclic working
//! set larger than memory, so every byte touched in a step crosses the link — for managed
//! memory at the page-fault-bound rate of one 64 KiB basic block (the UVM driver's migration
//! unit, Ganguly et al., ISCA 2019 §2) per far fault, at the slow end of the 20–50 µs Zheng
//! et al. measured (HPCA 2016 §2): ≈ 1.3 GB/s. In place, the worst case is also a tiled matmul
//! that reuses nothing from its L2 cache and reads a spilled operand once per 128-wide output
//! tile (`GEMM_TILE`), with no arithmetic hiding it. One published run sits at the managed
//! high end: Llama-3.1-8B q8_0 with 293 MB over an 8 GB card under a `cudaMallocManaged` hook
//! decoded at ~0.2 tok/s, i.e. ≈ 5 s per token for ≈ 8.5 GB of weights, ≈ 1.7 GB/s
//! (S. Lobjoit, "Fitting an LLM Into VRAM That Isn't There", 2026).
//!
//! Hot bytes (read every micro-batch: weights, gradients, activations, buffers) and cold
//! bytes (optimizer states, read once per step) are told apart: a cold spill costs its bytes
//! twice per step, a hot one every micro-batch.

use super::breakdown::{Component, HostCeiling, KernelClass, Outcome, PhaseTotals, PlatformOutcome, SpillCost, SpillReport};
use super::device::{Device, DeviceClass};
use super::inputs::{Checkpointing, Mode, Platform, Runtime, Training};

const GIB: f64 = (1u64 << 30) as f64;
/// Bytes one far fault migrates (the UVM driver's 64 KiB basic block).
const FAULT_BLOCK_BYTES: f64 = 64.0 * 1024.0;
/// Seconds to service one far fault (Zheng et al. 2016: 20–50 µs; the slow end, for the
/// high end of the range).
const FAULT_SECONDS: f64 = 50e-6;
/// The operating system's own share of the RAM: the 4 GB Ubuntu Desktop and Windows 11 state
/// as their minimum system memory (ubuntu.com/download/desktop; Microsoft, "Windows 11
/// specifications and system requirements").
pub const OS_RESERVE_BYTES: f64 = 4.0 * GIB;
/// VidMm's floor on the memory available for graphics (`MAX(TotalSystemMemory / 2, 64MB)`).
const MIN_SHARED_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// The platform Headroom assumes when the user leaves it on `Auto`. GeForce and workstation
/// cards also get every platform side by side (`other_platforms`).
pub fn resolve_platform(platform: Platform, device: &Device) -> Platform {
    match (platform, device.class) {
        (Platform::Auto, DeviceClass::Datacenter) => Platform::Linux,
        (Platform::Auto, DeviceClass::Consumer) => Platform::WindowsFallback,
        (Platform::Auto, DeviceClass::Superchip) => Platform::C2c,
        (p, _) => p,
    }
}

/// System RAM of the usual machine for a device class, bytes, when the scenario does not say:
/// a desktop with 64 GiB for GeForce and workstation cards; 256 GiB per GPU for data-centre
/// GPUs, as DGX H100 and HGX H200 servers hold 2 TB for eight GPUs (DGX H100 user guide;
/// MLCommons inference v4.1, NVIDIA's H200-SXM-141GBx8 system description: "host_memory_capacity":
/// "2 TB"); the Grace CPU's 480 GB of LPDDR5X on a GH200 (NVIDIA Grace Hopper Superchip
/// architecture whitepaper, 2023).
pub fn default_host_memory(device: &Device) -> f64 {
    match device.class {
        DeviceClass::Consumer => 64.0 * GIB,
        DeviceClass::Datacenter => 256.0 * GIB * device.gpus_per_node.max(1) as f64,
        DeviceClass::Superchip => 480.0 * GIB,
    }
}

/// What the process keeps in host memory, and how many processes share the machine's RAM.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostUse {
    /// Processes on the machine sharing its RAM (the GPUs of the node in use, times the jobs
    /// sharing a GPU).
    pub processes: u64,
    /// Bytes kept in host memory on purpose by this process (CPU offload, offloaded activations).
    pub kept: f64,
}

/// The RAM one process can count on: the machine's, less the OS's share, split between the
/// processes on it.
fn ram_per_process(device: &Device, runtime: &Runtime, host: HostUse) -> (f64, f64) {
    let ram = runtime.host_memory_bytes.map_or_else(|| default_host_memory(device), |b| b as f64);
    let n = host.processes.max(1) as f64;
    (ram / n, (ram - OS_RESERVE_BYTES).max(0.0) / n)
}

/// The most `platform` lets this process place in host memory beyond what it keeps there on
/// purpose, and what that limit is: shared GPU memory (WDDM: half of the RAM), the RAM itself
/// (managed memory, a paged optimizer), pinned memory (offload) or the Grace memory (C2C).
pub fn host_ceiling(platform: Platform, device: &Device, runtime: &Runtime, host: HostUse) -> (HostCeiling, f64) {
    let (ram, usable) = ram_per_process(device, runtime, host);
    let left = (usable - host.kept).max(0.0);
    match platform {
        Platform::WindowsFallback => (HostCeiling::SharedGpuMemory, (ram / 2.0).max(MIN_SHARED_BYTES).min(left)),
        Platform::Managed | Platform::Linux => (HostCeiling::HostMemory, left),
        Platform::Offload => (HostCeiling::PinnedMemory, left),
        Platform::C2c => (HostCeiling::GraceMemory, left),
        Platform::WindowsNoFallback | Platform::Auto => (HostCeiling::None, 0.0),
    }
}

/// Memory this process may use: the device, less what others hold, shared by the jobs, and
/// capped by the per-process fraction.
pub fn effective_capacity(device: &Device, runtime: &Runtime) -> f64 {
    let shared = (device.capacity_bytes - runtime.other_processes_bytes as f64).max(0.0) / runtime.jobs.max(1) as f64;
    shared.min(device.capacity_bytes * runtime.memory_fraction.clamp(0.0, 1.0))
}

/// The `set_per_process_memory_fraction` value that gives each job its share (rounded down to
/// a hundredth), when the GPU is shared.
pub fn recommended_fraction(device: &Device, runtime: &Runtime) -> Option<f64> {
    if runtime.jobs <= 1 && runtime.other_processes_bytes == 0 {
        return None;
    }
    let share = (device.capacity_bytes - runtime.other_processes_bytes as f64).max(0.0) / (runtime.jobs.max(1) as f64 * device.capacity_bytes);
    Some((share * 100.0).floor() / 100.0)
}

/// Which operand of a matmul a touch is, for the FLOPs it does per byte (`SpillContext`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Operand {
    Weight,
    Gradient,
    Activation,
}

/// One kind of kernel touching one component's bytes.
#[derive(Clone, Copy, Debug)]
struct Touch {
    what: &'static str,
    kernel: KernelClass,
    hot: bool,
    /// Passes over each byte per step (per token in inference).
    passes: f64,
    operand: Option<Operand>,
}

fn touch(what: &'static str, kernel: KernelClass, hot: bool, passes: f64, operand: Option<Operand>) -> Touch {
    Touch { what, kernel, hot, passes, operand }
}

/// The kernels that touch a component's bytes in one step of `training` (m micro-batches):
/// - weights: in the autocast modes the fp32 weights are read by the cast to 16 bits once per
///   forward (autocast caches the cast for the backward: `torch/amp/autocast_mode.py`,
///   `cache_enabled`), again when checkpointing recomputes; otherwise the forward and the
///   input-gradient matmuls read them (and the recomputed forward); the optimizer reads and
///   writes them once per step;
/// - gradients: written by the weight-gradient matmul, added into (`AccumulateGrad`: read and
///   write) by each further micro-batch, read once by the optimizer;
/// - optimizer states: read and written once by the update (foreach kernels, memory-bound);
/// - activations: each saved tensor of a transformer block is produced by one kernel and read
///   by one in backward, and one of the two is a matmul (a norm's or an activation function's
///   output feeds a projection, whose weight gradient reads it; a projection's output feeds
///   SiLU, softmax or attention, whose backward reads it) — under full checkpointing only
///   the block inputs are saved, written and read by memory-bound kernels;
/// - buffers (logits, loss, buckets) and the allocator's own memory: written and read per
///   micro-batch by memory-bound kernels.
///
/// Decoding reads every weight (matrix–vector products) and the KV cache once per token.
fn touches(c: Component, t: &Training) -> Vec<Touch> {
    use KernelClass::{Matmul, MemoryBound};
    let m = t.grad_accum.max(1) as f64;
    let r = if t.checkpointing == Checkpointing::None { 0.0 } else { 1.0 };
    if t.mode == Mode::Inference {
        return match c {
            Component::Parameters => vec![touch("weights read by the matrix–vector products of each token", Matmul, true, 1.0, Some(Operand::Weight))],
            Component::Overhead => vec![],
            _ => vec![touch("KV cache and buffers read by attention for each token", MemoryBound, true, 1.0, None)],
        };
    }
    match c {
        Component::Parameters if t.precision.is_mixed() => vec![
            touch("weights cast to 16 bits by autocast in each forward", MemoryBound, true, (1.0 + r) * m, None),
            touch("weights updated by the optimizer", MemoryBound, false, 2.0, None),
        ],
        Component::Parameters => vec![
            touch("weights read by the forward and backward matmuls", Matmul, true, (2.0 + r) * m, Some(Operand::Weight)),
            touch("weights updated by the optimizer", MemoryBound, false, 2.0, None),
        ],
        Component::Gradients => {
            let mut v = vec![touch("gradients written by the weight-gradient matmuls", Matmul, true, 1.0, Some(Operand::Gradient))];
            if m > 1.0 {
                v.push(touch("gradients accumulated by the later micro-batches", MemoryBound, true, 2.0 * (m - 1.0), None));
            }
            v.push(touch("gradients read by the optimizer", MemoryBound, false, 1.0, None));
            v
        }
        Component::OptimizerStates => vec![touch("optimizer states read and written by the update", MemoryBound, false, 2.0, None)],
        Component::Activations if t.checkpointing == Checkpointing::Full => {
            vec![touch("block inputs saved in forward, read by the recomputation", MemoryBound, true, 2.0 * m, None)]
        }
        Component::Activations => vec![
            touch("activations read by the weight-gradient matmuls (or written by a projection)", Matmul, true, m, Some(Operand::Activation)),
            touch("activations written by norms and activation functions (or read by their backward)", MemoryBound, true, m, None),
        ],
        Component::Temporary => vec![touch("buffers (logits, loss, buckets) written and read", MemoryBound, true, 2.0 * m, None)],
        Component::Overhead => vec![touch("workspaces and allocator slack", MemoryBound, true, 2.0 * m, None)],
    }
}

/// Times a component's bytes cross memory per step (training) or per generated token
/// (inference): the sum of its `touches`.
pub fn traffic_factor(c: Component, training: &Training) -> f64 {
    touches(c, training).iter().map(|t| t.passes).sum()
}

/// Which components leave the GPU first under `platform`.
fn spill_order(platform: Platform, training: &Training) -> Vec<Component> {
    use Component::*;
    match platform {
        // The caching allocator keeps the blocks it got (with the fallback `cudaMalloc` never
        // fails, so it never frees its cache to retry), and the driver puts new allocations in
        // system memory once VRAM is full: what spills is what the first step allocated last —
        // the optimizer states (`_init_group` at the first `optimizer.step()`), the gradients
        // (first backward), the loss buffers and the forward's activations; the weights,
        // loaded first, stay.
        Platform::WindowsFallback if training.mode == Mode::Train => {
            vec![OptimizerStates, Gradients, Temporary, Activations, Parameters, Overhead]
        }
        Platform::WindowsFallback => vec![Activations, Temporary, Parameters, Overhead],
        // Migrating or explicit placement keeps the most-used bytes resident.
        _ => {
            let mut order = vec![OptimizerStates, Gradients, Parameters, Activations, Temporary];
            order.sort_by(|a, b| traffic_factor(*a, training).total_cmp(&traffic_factor(*b, training)));
            order.push(Overhead);
            order
        }
    }
}

fn gib(b: f64) -> String {
    format!("{:.1} GiB", b / GIB)
}

/// The ceiling in words, with its size.
fn ceiling_words(ceiling: HostCeiling, bytes: f64, ram: f64) -> String {
    match ceiling {
        HostCeiling::SharedGpuMemory => format!("shared GPU memory, which Windows caps at half of the system RAM: {} of {}", gib(bytes), gib(ram)),
        HostCeiling::HostMemory => format!("host memory: {} of the {} of system RAM left after the OS and what the process keeps there", gib(bytes), gib(ram)),
        HostCeiling::PinnedMemory => format!("pinned host memory: {} of the {} of system RAM left after the OS and what the process keeps there", gib(bytes), gib(ram)),
        HostCeiling::GraceMemory => format!("the Grace CPU's memory: {} of {}", gib(bytes), gib(ram)),
        HostCeiling::None => "no host memory".to_string(),
    }
}

/// Where a run that needs `at_peak.total` bytes stands on this device and platform; `paged`
/// bytes of it are a paged optimizer's states in CUDA managed memory; `host` is what the
/// process keeps in RAM and how many share it.
pub fn spill_report(at_peak: &PhaseTotals, device: &Device, runtime: &Runtime, training: &Training, paged: f64, host: HostUse) -> SpillReport {
    let platform = resolve_platform(runtime.platform, device);
    let capacity = effective_capacity(device, runtime);
    let over = (at_peak.total as f64 - capacity).max(0.0);
    let capped = runtime.memory_fraction < 1.0 && at_peak.total as f64 > device.capacity_bytes * runtime.memory_fraction;
    let oom_platform = matches!(platform, Platform::Linux | Platform::WindowsNoFallback);
    // On Linux the managed states still leave where PyTorch's own allocations would fail: the
    // driver evicts them (only them: everything else is cudaMalloc'd by PyTorch's allocator).
    // Not on Windows, whose WDDM driver reports no concurrent managed access (bitsandbytes'
    // `cprefetch` checks `cudaDevAttrConcurrentManagedAccess`) and does not oversubscribe
    // managed memory (CUDA C++ Programming Guide, "Unified Memory on Windows").
    let paged_only = platform == Platform::Linux && paged > 0.0;
    let (ram, usable) = ram_per_process(device, runtime, host);
    let (ceiling, limit) = host_ceiling(platform, device, runtime, host);
    let gpu_oom = capped || (oom_platform && !(paged_only && over <= paged));
    let past_ceiling = host.kept > usable || (over > 0.0 && !gpu_oom && over > limit);
    let (outcome, message) = if host.kept > usable {
        let words = format!("pinned host memory: {} of system RAM after the OS", gib(usable));
        (Outcome::OutOfMemory, format!("Out of host memory: the offloaded tensors need {} of {words}", gib(host.kept)))
    } else if over == 0.0 {
        (Outcome::Fits, String::new())
    } else if gpu_oom {
        let why = match platform {
            _ if capped => "the per-process memory fraction caps the allocator",
            Platform::WindowsNoFallback => "Windows with the sysmem fallback off: torch.OutOfMemoryError",
            _ => "Linux CUDA: cudaMalloc fails and PyTorch raises torch.OutOfMemoryError",
        };
        (Outcome::OutOfMemory, format!("Out of memory: {} over the GPU's {} ({why})", gib(over), gib(capacity)))
    } else if over > limit {
        (Outcome::OutOfMemory, format!("Out of memory: {} would spill, past the ceiling of {}", gib(over), ceiling_words(ceiling, limit, ram)))
    } else {
        (Outcome::Spills, format!("Spills {} into {}", gib(over), ceiling_words(ceiling, limit, ram)))
    };
    let mut report = SpillReport {
        platform,
        outcome,
        capacity_bytes: capacity.max(0.0) as u64,
        capped: capped && outcome == Outcome::OutOfMemory,
        recommended_memory_fraction: recommended_fraction(device, runtime),
        host_memory_bytes: ram as u64,
        host_ceiling_bytes: limit as u64,
        ceiling,
        host_kept_bytes: host.kept as u64,
        message,
        past_ceiling,
        link_bandwidth: device.host_link_bandwidth.max(1.0),
        ..SpillReport::default()
    };
    if outcome != Outcome::Spills {
        return report;
    }
    if paged_only {
        report.by_component.push((Component::OptimizerStates, over as u64));
        // The low end: the update's prefetches stream at the link's bandwidth; the high end:
        // migrated on demand, one 64 KiB block per far fault (as `Platform::Managed`).
        report.thrash_bandwidth = report.link_bandwidth.min(FAULT_BLOCK_BYTES / FAULT_SECONDS);
        return report;
    }
    let mut left = over;
    for c in spill_order(platform, training) {
        let take = left.min(at_peak.component(c) as f64);
        if take > 0.0 {
            report.by_component.push((c, take as u64));
            left -= take;
        }
    }
    report.thrash_bandwidth = match platform {
        Platform::Managed => report.link_bandwidth.min(FAULT_BLOCK_BYTES / FAULT_SECONDS),
        _ => report.link_bandwidth,
    };
    report
}

/// What a step does with the bytes it touches, for pricing a spill (`step_time.rs` makes it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpillContext {
    /// The step's (or a decoded token's) time with everything in device memory, seconds.
    pub base_seconds: f64,
    /// FLOP/s the step runs at (peak × the assumed utilisation).
    pub flops_per_second: f64,
    /// FLOPs a matmul does per byte of a weight per pass: 2·T for T tokens of a micro-batch
    /// on this GPU, over the width of the weight the matmul reads.
    pub weight_flops_per_byte: f64,
    /// The same for a gradient written by the weight-gradient matmul.
    pub gradient_flops_per_byte: f64,
    /// FLOPs per byte of a saved activation in the matmul that touches it: 2·d for a block
    /// of width d (on this GPU) over the activation's width; 0 where unknown.
    pub activation_flops_per_byte: f64,
    /// Times a tiled matmul reads each element of a weight when nothing is reused from the L2
    /// cache: once per output tile along the tokens, ⌈T / 128⌉ (`GEMM_TILE`).
    pub weight_rereads: f64,
    /// The same for a saved activation read by the weight-gradient matmul: ⌈d / 128⌉.
    pub activation_rereads: f64,
}

/// Output tile side of a tiled matmul: CUTLASS's threadblock tile `GemmShape<128, 128, …>`
/// (NVIDIA/cutlass, `media/docs/efficient_gemm.md`, "Hierarchical Structure": each threadblock
/// loads the operand tiles it needs from global memory; "Threadblock Rasterization" only makes
/// it *likely* that threadblocks running together share them in L2).
pub const GEMM_TILE: f64 = 128.0;

/// Seconds a spill adds per step (or per token), `[low, high]`; fills the report's `costs`,
/// hot and cold bytes and the thrash traffic (every byte `at_peak` touches).
pub fn price(report: &mut SpillReport, at_peak: &PhaseTotals, training: &Training, ctx: &SpillContext) -> [f64; 2] {
    report.costs.clear();
    report.hot_bytes = 0;
    report.cold_bytes = 0;
    if report.outcome != Outcome::Spills {
        return [0.0, 0.0];
    }
    let bw = report.link_bandwidth.max(1.0);
    let in_place = matches!(report.platform, Platform::WindowsFallback | Platform::C2c);
    let (mut low, mut stream, mut worst) = (0.0, 0.0, 0.0);
    for &(c, bytes) in &report.by_component {
        let ts = touches(c, training);
        if ts.iter().any(|t| t.hot) {
            report.hot_bytes += bytes;
        } else {
            report.cold_bytes += bytes;
        }
        for t in ts {
            let link_bytes = bytes as f64 * t.passes;
            let flops_per_byte = match t.operand {
                Some(Operand::Weight) => ctx.weight_flops_per_byte,
                Some(Operand::Gradient) => ctx.gradient_flops_per_byte,
                Some(Operand::Activation) => ctx.activation_flops_per_byte,
                None => 0.0,
            };
            let overlap = if in_place && t.kernel == KernelClass::Matmul { link_bytes * flops_per_byte / ctx.flops_per_second.max(1.0) } else { 0.0 };
            let seconds = link_bytes / bw;
            // In place, a matmul without L2 reuse reads a spilled operand once per output tile.
            let rereads = match t.operand {
                Some(Operand::Weight) if in_place => ctx.weight_rereads.max(1.0),
                Some(Operand::Activation) if in_place => ctx.activation_rereads.max(1.0),
                _ => 1.0,
            };
            let added = [(seconds - overlap).max(0.0), seconds * rereads];
            low += added[0];
            stream += seconds;
            worst += added[1];
            report.costs.push(SpillCost {
                component: c,
                touched_by: t.what.to_string(),
                kernel: t.kernel,
                hot: t.hot,
                spilled_bytes: bytes,
                passes: t.passes,
                link_bytes,
                overlap_seconds: overlap,
                added_seconds: added,
            });
        }
    }
    report.traffic_bytes = report.costs.iter().map(|c| c.link_bytes).sum();
    // On Linux only a paged optimizer's managed states spill, and they thrash alone.
    report.thrash_traffic_bytes =
        if report.platform == Platform::Linux { report.traffic_bytes } else { Component::ALL.iter().map(|&c| at_peak.component(c) as f64 * traffic_factor(c, training)).sum() };
    let thrash = report.thrash_traffic_bytes / report.thrash_bandwidth.max(1.0);
    match report.platform {
        // Prefetched on a side stream: only what exceeds the compute is exposed.
        Platform::Offload => [(stream - ctx.base_seconds).max(0.0), stream],
        // In place over NVLink-C2C: coherent, no eviction; the high end hides nothing and
        // reuses nothing.
        Platform::C2c => [low, worst],
        // Migrated on fault (managed memory, paged states): nothing overlaps a fault.
        Platform::Managed | Platform::Linux => [stream, thrash.max(stream)],
        // In place; the high end is the worse of no reuse and VidMm paging the working set
        // in and out (LRU thrash).
        _ => [low, thrash.max(worst)],
    }
}

/// The same run under each platform a GeForce or workstation card may run under (Linux,
/// Windows with the fallback on, off), when the scenario leaves the platform on `auto`.
#[allow(clippy::too_many_arguments)] // the estimate's own inputs, passed through
pub fn other_platforms(at_peak: &PhaseTotals, device: &Device, runtime: &Runtime, training: &Training, paged: f64, host: HostUse, ctx: &SpillContext) -> Vec<PlatformOutcome> {
    if runtime.platform != Platform::Auto || device.class != DeviceClass::Consumer {
        return Vec::new();
    }
    [Platform::Linux, Platform::WindowsFallback, Platform::WindowsNoFallback]
        .into_iter()
        .map(|platform| {
            let rt = Runtime { platform, ..runtime.clone() };
            let mut r = spill_report(at_peak, device, &rt, training, paged, host);
            let [low, high] = price(&mut r, at_peak, training, ctx);
            let ratio = |x: f64| if ctx.base_seconds > 0.0 { (ctx.base_seconds + x) / ctx.base_seconds } else { 1.0 };
            let spill_bytes = if r.outcome == Outcome::Spills { (at_peak.total as f64 - r.capacity_bytes as f64).max(0.0) as u64 } else { 0 };
            PlatformOutcome { platform, outcome: r.outcome, spill_bytes, slowdown_range: [ratio(low), ratio(high)], message: r.message }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::device::device_preset;
    use super::*;

    fn totals(parameters: f64, optimizer_states: f64, activations: f64) -> PhaseTotals {
        let mut t = PhaseTotals { parameters: parameters as u64, optimizer_states: optimizer_states as u64, activations: activations as u64, ..PhaseTotals::default() };
        t.total = t.parameters + t.optimizer_states + t.activations;
        t
    }

    fn one() -> HostUse {
        HostUse { processes: 1, kept: 0.0 }
    }

    /// A context where nothing hides: no FLOPs per byte.
    fn bare(base_seconds: f64) -> SpillContext {
        SpillContext { base_seconds, flops_per_second: 1e12, ..SpillContext::default() }
    }

    /// A data-centre GPU on Linux runs out of memory; a GeForce card on Windows spills the
    /// optimizer states first, which cross the link twice per step (read and write).
    #[test]
    fn platform_decides_oom_or_spill_and_what_spills() {
        let training = Training::default();
        let need = totals(16.0 * GIB, 32.0 * GIB, 10.0 * GIB);
        let h100 = device_preset("h100-sxm-80gb").unwrap();
        assert_eq!(spill_report(&need, &h100, &Runtime::default(), &training, 0.0, one()).outcome, Outcome::Fits);
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        // 34 GiB over: past the 32 GiB of shared GPU memory a 64 GiB desktop has, within 128 GiB's.
        assert_eq!(spill_report(&need, &rtx, &Runtime::default(), &training, 0.0, one()).outcome, Outcome::OutOfMemory);
        let big = Runtime { host_memory_bytes: Some(128 << 30), ..Runtime::default() };
        let r = spill_report(&need, &rtx, &big, &training, 0.0, one());
        assert_eq!((r.platform, r.outcome), (Platform::WindowsFallback, Outcome::Spills));
        let over = need.total as f64 - rtx.capacity_bytes;
        assert_eq!(r.by_component, vec![(Component::OptimizerStates, 32 * (1 << 30)), (Component::Activations, (over - 32.0 * GIB) as u64)]);
        let linux = Runtime { platform: Platform::Linux, ..Runtime::default() };
        assert_eq!(spill_report(&need, &rtx, &linux, &training, 0.0, one()).outcome, Outcome::OutOfMemory);
    }

    /// 1 GiB of optimizer state spilled on a 4090 (PCIe 4.0, 32 GB/s per direction): 2 GiB
    /// cross the link per step, 2·2³⁰ / 32e9 = 67.1 ms, all of it memory-bound (the update).
    /// The thrash bound moves every byte the step touches: the fp32 weights 3 times (the
    /// autocast cast in forward, the optimizer's read and write), the states twice, the
    /// activations twice.
    #[test]
    fn one_gib_of_optimizer_state_on_a_4090() {
        let training = Training::default();
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let need = totals(rtx.capacity_bytes - 4.0 * GIB, 1.0 * GIB, 4.0 * GIB);
        let mut r = spill_report(&need, &rtx, &Runtime::default(), &training, 0.0, one());
        assert_eq!(r.by_component, vec![(Component::OptimizerStates, 1 << 30)]);
        let [low, high] = price(&mut r, &need, &training, &bare(1.0));
        assert!((low - 2.0 * GIB / 32e9).abs() < 1e-9, "{low}");
        assert_eq!((r.hot_bytes, r.cold_bytes), (0, 1 << 30));
        let touched = 3.0 * need.parameters as f64 + 2.0 * GIB + 2.0 * 4.0 * GIB;
        assert!((high - touched / 32e9).abs() < 1e-6, "{high}");
    }

    /// Managed memory thrashes at the fault-bound rate: 64 KiB per 50 µs = 1.31 GB/s.
    #[test]
    fn managed_memory_high_end_is_fault_bound() {
        let training = Training::default();
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let need = totals(20.0 * GIB, 10.0 * GIB, 0.0);
        let r = spill_report(&need, &rtx, &Runtime { platform: Platform::Managed, ..Runtime::default() }, &training, 0.0, one());
        assert!((r.thrash_bandwidth - 65536.0 / 50e-6).abs() < 1.0);
    }

    /// Two jobs on an 80 GB GPU with 2 GiB used by the desktop: each gets half of the rest,
    /// and the per-process fraction to set is floor(100·(C − 2 GiB)/(2C))/100.
    #[test]
    fn shared_gpu_capacity_and_fraction() {
        let h100 = device_preset("h100-sxm-80gb").unwrap();
        let rt = Runtime { jobs: 2, other_processes_bytes: 2 << 30, ..Runtime::default() };
        assert_eq!(effective_capacity(&h100, &rt), (h100.capacity_bytes - 2.0 * GIB) / 2.0);
        let f = recommended_fraction(&h100, &rt).unwrap();
        assert_eq!(f, ((h100.capacity_bytes - 2.0 * GIB) / (2.0 * h100.capacity_bytes) * 100.0).floor() / 100.0);
        // Over a fraction cap the allocator raises OOM even on a platform that could spill.
        let capped = Runtime { memory_fraction: 0.5, platform: Platform::WindowsFallback, ..Runtime::default() };
        assert_eq!(spill_report(&totals(50.0 * GIB, 0.0, 0.0), &h100, &capped, &Training::default(), 0.0, one()).outcome, Outcome::OutOfMemory);
    }

    /// The ceilings: with 64 GiB of RAM, Windows' shared GPU memory is 32 GiB, managed memory
    /// and pinned buffers get 64 − 4 (the OS) = 60 GiB less what the process keeps there. A
    /// 4090 needing 24 GiB + 32 GiB spills under the fallback; 24 + 33 does not (past 32 GiB).
    #[test]
    fn ceilings_follow_the_ram() {
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let rt = Runtime { host_memory_bytes: Some(64 << 30), ..Runtime::default() };
        assert_eq!(host_ceiling(Platform::WindowsFallback, &rtx, &rt, one()), (HostCeiling::SharedGpuMemory, 32.0 * GIB));
        assert_eq!(host_ceiling(Platform::Managed, &rtx, &rt, one()), (HostCeiling::HostMemory, 60.0 * GIB));
        assert_eq!(host_ceiling(Platform::Offload, &rtx, &rt, HostUse { processes: 1, kept: 10.0 * GIB }), (HostCeiling::PinnedMemory, 50.0 * GIB));
        let training = Training::default();
        let at = |over: f64| spill_report(&totals(rtx.capacity_bytes, 0.0, over), &rtx, &rt, &training, 0.0, one());
        assert_eq!(at(32.0 * GIB).outcome, Outcome::Spills);
        let past = at(33.0 * GIB);
        assert_eq!(past.outcome, Outcome::OutOfMemory);
        assert!(past.message.contains("shared GPU memory") && past.message.contains("32.0 GiB of 64.0 GiB"), "{}", past.message);
        // Offloaded tensors that do not fit in RAM fail even when the GPU has room.
        let offload = spill_report(&totals(1.0 * GIB, 0.0, 0.0), &rtx, &rt, &training, 0.0, HostUse { processes: 1, kept: 61.0 * GIB });
        assert_eq!(offload.outcome, Outcome::OutOfMemory);
        assert!(offload.message.contains("pinned host memory"), "{}", offload.message);
    }

    /// In place, a matmul hides its spilled operand behind its FLOPs: 1 GiB of bf16 weights
    /// read 2 times per step by matmuls doing 2·4096 FLOPs per element (4096 FLOPs per byte)
    /// at 66 TFLOP/s take 2·2³⁰·4096/66e12 = 133 ms, more than the 67 ms the link needs: nothing
    /// is added at the low end; managed memory (migrated on fault) adds the whole 67 ms.
    #[test]
    fn a_matmul_hides_a_slow_operand_in_place_only() {
        let training = Training { precision: crate::model::precision::Precision::Bf16, ..Training::default() };
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let need = totals(rtx.capacity_bytes + GIB, 0.0, 0.0);
        let ctx = SpillContext { base_seconds: 1.0, flops_per_second: 66e12, weight_flops_per_byte: 4096.0, ..SpillContext::default() };
        let mut windows = spill_report(&need, &rtx, &Runtime::default(), &training, 0.0, one());
        assert_eq!(windows.by_component, vec![(Component::Parameters, 1 << 30)]);
        price(&mut windows, &need, &training, &ctx);
        let matmul = &windows.costs[0];
        assert_eq!((matmul.kernel, matmul.passes), (KernelClass::Matmul, 2.0));
        assert!((matmul.overlap_seconds - 2.0 * GIB * 4096.0 / 66e12).abs() < 1e-9);
        assert_eq!(matmul.added_seconds[0], 0.0);
        let mut managed = spill_report(&need, &rtx, &Runtime { platform: Platform::Managed, ..Runtime::default() }, &training, 0.0, one());
        let [low, _] = price(&mut managed, &need, &training, &ctx);
        assert!((low - 4.0 * GIB / 32e9).abs() < 1e-9, "{low}"); // 2 matmul passes + 2 optimizer passes
    }
}
