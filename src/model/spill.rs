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
//! Cost: each component moves a known number of its bytes per step (`traffic_factor`). The
//! low end streams the spilled components' traffic at the link's bandwidth with the most-used
//! bytes kept resident; the high end is the migrating mechanisms' worst case, an LRU that
//! thrashes on a cyclic working set larger than memory, so every byte touched in a step
//! crosses the link — for managed memory at the page-fault-bound rate of one 64 KiB basic
//! block (the UVM driver's migration unit, Ganguly et al., ISCA 2019 §2) per far fault, at
//! the slow end of the 20–50 µs Zheng et al. measured (HPCA 2016 §2): ≈ 1.3 GB/s. One published
//! run sits there: Llama-3.1-8B q8_0 with 293 MB over an 8 GB card under a
//! `cudaMallocManaged` hook decoded at ~0.2 tok/s, i.e. ≈ 5 s per token for ≈ 8.5 GB of
//! weights, ≈ 1.7 GB/s (S. Lobjoit, "Fitting an LLM Into VRAM That Isn't There", 2026).

use super::breakdown::{Component, Outcome, PhaseTotals, SpillReport};
use super::device::{Device, DeviceClass};
use super::inputs::{Checkpointing, Mode, Platform, Runtime, Training};

/// Bytes one far fault migrates (the UVM driver's 64 KiB basic block).
const FAULT_BLOCK_BYTES: f64 = 64.0 * 1024.0;
/// Seconds to service one far fault (Zheng et al. 2016: 20–50 µs; the slow end, for the
/// high end of the range).
const FAULT_SECONDS: f64 = 50e-6;

/// The platform Headroom assumes when the user leaves it on `Auto`.
pub fn resolve_platform(platform: Platform, device: &Device) -> Platform {
    match (platform, device.class) {
        (Platform::Auto, DeviceClass::Datacenter) => Platform::Linux,
        (Platform::Auto, DeviceClass::Consumer) => Platform::WindowsFallback,
        (Platform::Auto, DeviceClass::Superchip) => Platform::C2c,
        (p, _) => p,
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

/// Times a component's bytes cross memory per step (training) or per generated token
/// (inference): weights are read in forward and backward (and again when checkpointing
/// recomputes) for every micro-batch, then read and written by the optimizer; gradients are
/// written (accumulated) per micro-batch and read by the optimizer; optimizer states are read
/// and written once; activations and buffers are written in forward and read in backward.
/// Decoding reads every weight and the KV cache once per token.
pub fn traffic_factor(c: Component, training: &Training) -> f64 {
    let m = training.grad_accum.max(1) as f64;
    let recompute = if training.checkpointing == Checkpointing::None { 0.0 } else { 1.0 };
    match (training.mode, c) {
        (_, Component::Overhead) => 0.0,
        (Mode::Inference, _) => 1.0,
        (Mode::Train, Component::Parameters) => (2.0 + recompute) * m + 2.0,
        (Mode::Train, Component::Gradients) => 2.0 * m + 1.0,
        (Mode::Train, Component::OptimizerStates) => 2.0,
        (Mode::Train, Component::Activations | Component::Temporary) => 2.0 * m,
    }
}

/// Which components leave the GPU first under `platform`.
fn spill_order(platform: Platform, training: &Training) -> Vec<Component> {
    use Component::*;
    match platform {
        // Allocation order reversed: the last allocations of the first step land in system memory.
        Platform::WindowsFallback if training.mode == Mode::Train => {
            vec![OptimizerStates, Gradients, Temporary, Activations, Parameters]
        }
        Platform::WindowsFallback => vec![Activations, Temporary, Parameters],
        // Migrating or explicit placement keeps the most-used bytes resident.
        _ => {
            let mut order = vec![OptimizerStates, Gradients, Parameters, Activations, Temporary];
            order.sort_by(|a, b| traffic_factor(*a, training).total_cmp(&traffic_factor(*b, training)));
            order
        }
    }
}

/// Where a run that needs `at_peak.total` bytes stands on this device and platform; `paged`
/// bytes of it are a paged optimizer's states in CUDA managed memory.
pub fn spill_report(at_peak: &PhaseTotals, device: &Device, runtime: &Runtime, training: &Training, paged: f64) -> SpillReport {
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
    let outcome = if over == 0.0 {
        Outcome::Fits
    } else if capped || (oom_platform && !(paged_only && over <= paged)) {
        Outcome::OutOfMemory
    } else {
        Outcome::Spills
    };
    let mut report = SpillReport {
        platform,
        outcome,
        capacity_bytes: capacity.max(0.0) as u64,
        capped: capped && outcome == Outcome::OutOfMemory,
        recommended_memory_fraction: recommended_fraction(device, runtime),
        ..SpillReport::default()
    };
    if outcome != Outcome::Spills {
        return report;
    }
    if paged_only {
        report.by_component.push((Component::OptimizerStates, over as u64));
        report.traffic_bytes = over * traffic_factor(Component::OptimizerStates, training);
        report.thrash_traffic_bytes = report.traffic_bytes;
        report.link_bandwidth = device.host_link_bandwidth.max(1.0);
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
            report.traffic_bytes += take * traffic_factor(c, training);
            left -= take;
        }
    }
    // What could not be placed anywhere spills with the weights' traffic (the overhead).
    report.traffic_bytes += left * traffic_factor(Component::Parameters, training);
    report.thrash_traffic_bytes = Component::ALL.iter().map(|&c| at_peak.component(c) as f64 * traffic_factor(c, training)).sum();
    report.link_bandwidth = device.host_link_bandwidth.max(1.0);
    report.thrash_bandwidth = match platform {
        Platform::Managed => report.link_bandwidth.min(FAULT_BLOCK_BYTES / FAULT_SECONDS),
        _ => report.link_bandwidth,
    };
    report
}

/// Extra seconds per step (or per token) the spill costs: `[low, high]`. Deliberate offload
/// overlaps its prefetches with `compute_seconds`; the others stall.
pub fn spill_seconds(report: &SpillReport, compute_seconds: f64) -> [f64; 2] {
    if report.outcome != Outcome::Spills {
        return [0.0, 0.0];
    }
    let stream = report.traffic_bytes / report.link_bandwidth;
    match report.platform {
        Platform::Offload => [(stream - compute_seconds).max(0.0), stream],
        _ => [stream, (report.thrash_traffic_bytes / report.thrash_bandwidth).max(stream)],
    }
}

#[cfg(test)]
mod tests {
    use super::super::device::device_preset;
    use super::*;

    const GIB: f64 = (1u64 << 30) as f64;

    fn totals(parameters: f64, optimizer_states: f64, activations: f64) -> PhaseTotals {
        let mut t = PhaseTotals { parameters: parameters as u64, optimizer_states: optimizer_states as u64, activations: activations as u64, ..PhaseTotals::default() };
        t.total = t.parameters + t.optimizer_states + t.activations;
        t
    }

    /// A data-centre GPU on Linux runs out of memory; a GeForce card on Windows spills the
    /// optimizer states first, which cross the link twice per step (read and write).
    #[test]
    fn platform_decides_oom_or_spill_and_what_spills() {
        let training = Training::default();
        let need = totals(16.0 * GIB, 32.0 * GIB, 10.0 * GIB);
        let h100 = device_preset("h100-sxm-80gb").unwrap();
        assert_eq!(spill_report(&need, &h100, &Runtime::default(), &training, 0.0).outcome, Outcome::Fits);
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let r = spill_report(&need, &rtx, &Runtime::default(), &training, 0.0);
        assert_eq!((r.platform, r.outcome), (Platform::WindowsFallback, Outcome::Spills));
        let over = need.total as f64 - rtx.capacity_bytes;
        assert_eq!(r.by_component, vec![(Component::OptimizerStates, 32 * (1 << 30)), (Component::Activations, (over - 32.0 * GIB) as u64)]);
        let linux = Runtime { platform: Platform::Linux, ..Runtime::default() };
        assert_eq!(spill_report(&need, &rtx, &linux, &training, 0.0).outcome, Outcome::OutOfMemory);
    }

    /// 1 GiB of optimizer state spilled on a 4090 (PCIe 4.0, 32 GB/s per direction): 2 GiB
    /// cross the link per step, 2·2³⁰ / 32e9 = 67.1 ms. The thrash bound moves every byte the
    /// step touches: the weights 4 times (forward, backward, optimizer read and write), the
    /// states twice, the activations twice.
    #[test]
    fn one_gib_of_optimizer_state_on_a_4090() {
        let training = Training::default();
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let need = totals(rtx.capacity_bytes - 4.0 * GIB, 1.0 * GIB + 0.0, 4.0 * GIB);
        let r = spill_report(&need, &rtx, &Runtime::default(), &training, 0.0);
        assert_eq!(r.by_component, vec![(Component::OptimizerStates, 1 << 30)]);
        let [low, high] = spill_seconds(&r, 1.0);
        assert!((low - 2.0 * GIB / 32e9).abs() < 1e-9, "{low}");
        let touched = 4.0 * (rtx.capacity_bytes - 4.0 * GIB) + 2.0 * GIB + 2.0 * 4.0 * GIB;
        assert!((high - touched / 32e9).abs() < 1e-6, "{high}");
    }

    /// Managed memory thrashes at the fault-bound rate: 64 KiB per 50 µs = 1.31 GB/s.
    #[test]
    fn managed_memory_high_end_is_fault_bound() {
        let training = Training::default();
        let rtx = device_preset("rtx-4090-24gb").unwrap();
        let need = totals(20.0 * GIB, 10.0 * GIB, 0.0);
        let r = spill_report(&need, &rtx, &Runtime { platform: Platform::Managed, ..Runtime::default() }, &training, 0.0);
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
        assert_eq!(spill_report(&totals(50.0 * GIB, 0.0, 0.0), &h100, &capped, &Training::default(), 0.0).outcome, Outcome::OutOfMemory);
    }
}
