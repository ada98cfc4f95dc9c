//! The plan beside the measurement: the `Breakdown`'s total split the way PyTorch and the
//! driver count memory, and one difference (with a sentence) per quantity the run reported.
//!
//! Three nested quantities:
//! - **allocated** (`max_memory_allocated`): bytes of live blocks from PyTorch's caching
//!   allocator — every tensor term of the plan (parameters, gradients, optimizer states,
//!   activations, temporaries) and the **cuBLAS and cuBLASLt workspaces**, which ATen takes from
//!   the caching allocator: `allocateCUDABlasWorkspace(size)` is
//!   `c10::cuda::CUDACachingAllocator::get()->allocate(size)` in
//!   `aten/src/ATen/cuda/CublasHandlePool.cpp`, used for the per-operation cuBLAS workspace
//!   (`getCurrentCUDABlasHandleWithWorkspace`), the cached one with
//!   `TORCH_CUBLAS_WORKSPACE_CACHE=1`, and the cuBLASLt workspace (`getCUDABlasLtWorkspace`,
//!   "cache-owned allocations even when ATen workspace caching is disabled":
//!   `torch/include/ATen/cuda/CUDAContextLight.h`, torch 2.15); `torch._C._cuda_clearCublasWorkspaces()`
//!   hands the cached ones back to the allocator (`torch/_inductor/cudagraph_trees.py`).
//! - **reserved** (`max_memory_reserved`) = allocated + the plan's "allocator fragmentation"
//!   term: cached free blocks, block rounding and split remainders.
//! - **used** (nvidia-smi `memory.used`, `mem_get_info` total − free) = the plan's total:
//!   reserved plus the terms allocated outside the caching allocator: the "CUDA context" (driver, kernel
//!   images) and the "NCCL communicators" (NCCL's own `cudaMalloc`/cuMem buffers).
//!
//! Terms are placed by name (`side_of`), so a renamed or new overhead term falls on the
//! allocated side until it is named here.

use serde::Serialize;

use super::measurement::Measured;
use crate::format::{bytes, Units};
use crate::model::breakdown::{Breakdown, Component};

/// The quantity a difference is about, and the side of the allocator an overhead term is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Category {
    /// Live tensors and workspaces: `max_memory_allocated`.
    #[serde(rename = "allocated")]
    Allocated,
    /// `max_memory_reserved − max_memory_allocated`.
    #[serde(rename = "allocator cache and fragmentation")]
    AllocatorCache,
    /// `used − max_memory_reserved`: memory the process holds outside PyTorch's allocator.
    #[serde(rename = "CUDA context and libraries")]
    ContextAndLibraries,
    /// Device memory in use, when the run reported nothing finer (nvidia-smi alone).
    #[serde(rename = "used")]
    Used,
}

impl Category {
    pub fn label(self) -> &'static str {
        match self {
            Category::Allocated => "allocated",
            Category::AllocatorCache => "allocator cache and fragmentation",
            Category::ContextAndLibraries => "CUDA context and libraries",
            Category::Used => "used",
        }
    }
}

/// Which side of PyTorch's caching allocator an overhead term (by its `Term::name`) is on:
/// `AllocatorCache` for fragmentation, `ContextAndLibraries` for the CUDA context and NCCL,
/// `Allocated` for the rest (the cuBLAS / cuBLASLt workspaces).
pub fn side_of(term_name: &str) -> Category {
    let name = term_name.to_ascii_lowercase();
    if name.contains("fragmentation") {
        Category::AllocatorCache
    } else if name.contains("cuda context") || name.contains("nccl") {
        Category::ContextAndLibraries
    } else {
        Category::Allocated
    }
}

/// One overhead term of the plan and the side it was put on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OverheadSide {
    pub name: String,
    pub bytes: u64,
    pub side: Category,
}

/// The plan's total as PyTorch and the driver would count it, in bytes per GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Predicted {
    /// `total` − fragmentation − CUDA context and NCCL.
    pub allocated_peak: u64,
    /// `allocated_peak` + fragmentation.
    pub reserved_peak: u64,
    /// The plan's total (`Breakdown::total`).
    pub used: u64,
    /// The device capacity the plan assumed.
    pub capacity: u64,
    /// The overhead terms at the peak and where each went.
    pub overhead_terms: Vec<OverheadSide>,
}

/// One quantity, measured against predicted; `difference` = measured − predicted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub category: Category,
    pub measured: u64,
    pub predicted: u64,
    pub difference: i64,
    pub sentence: String,
}

/// The measurement, the prediction and their differences (only for what was measured).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    pub measured: Measured,
    pub predicted: Predicted,
    pub differences: Vec<Difference>,
    /// Caveats about this pair (mismatched device, readings that do not nest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The plan's peak split as PyTorch and the driver count it: the allocator cache and the
/// CUDA context and libraries taken off the total, each overhead term on its side.
pub fn predicted(b: &Breakdown) -> Predicted {
    let overhead_terms: Vec<OverheadSide> = b
        .terms
        .iter()
        .filter(|t| t.component == Component::Overhead && t.alive_in(b.phases.peak_phase))
        .map(|t| OverheadSide { name: t.name.to_string(), bytes: t.bytes, side: side_of(&t.name) })
        .collect();
    let mut p = Predicted { allocated_peak: 0, reserved_peak: 0, used: b.total, capacity: b.capacity, overhead_terms };
    p.reserved_peak = p.used.saturating_sub(p.overhead_on(Category::ContextAndLibraries));
    p.allocated_peak = p.reserved_peak.saturating_sub(p.overhead_on(Category::AllocatorCache));
    p
}

impl Predicted {
    /// The overhead at the peak that goes to one side (the allocator cache, or the CUDA
    /// context and libraries).
    pub fn overhead_on(&self, side: Category) -> u64 {
        self.overhead_terms.iter().filter(|t| t.side == side).fold(0u64, |a, t| a.saturating_add(t.bytes))
    }
}

/// Split the plan's peak like the measurement ([`predicted`]) and compare what the run reported.
pub fn compare(measured: &Measured, b: &Breakdown) -> Comparison {
    let predicted = predicted(b);
    let (allocated, used) = (predicted.allocated_peak, predicted.used);
    let (cache, outside) = (predicted.overhead_on(Category::AllocatorCache), predicted.overhead_on(Category::ContextAndLibraries));
    let outside_names: Vec<String> = predicted.overhead_terms.iter().filter(|t| t.side == Category::ContextAndLibraries).map(|t| t.name.clone()).collect();

    let mut notes = Vec::new();
    let mut differences = Vec::new();
    let m = measured;
    if let Some(a) = m.allocated_peak {
        differences.push(difference(Category::Allocated, a, allocated, allocated_sentence(a, allocated)));
    }
    match (m.allocated_peak, m.reserved_peak) {
        (Some(a), Some(r)) if r >= a => differences.push(difference(Category::AllocatorCache, r - a, cache, cache_sentence(r - a, cache, m.non_releasable_peak))),
        (Some(_), Some(_)) => notes.push("the reserved peak is below the allocated peak, which PyTorch never reports (reserved memory always holds the allocated blocks): check the numbers; the allocator cache is left out".into()),
        _ => {}
    }
    match (m.reserved_peak, m.used) {
        (Some(r), Some(u)) if u >= r => differences.push(difference(Category::ContextAndLibraries, u - r, outside, context_sentence(u - r, outside, &outside_names))),
        (Some(_), Some(_)) => notes.push("used memory is below the reserved peak: it was read before the peak or after torch.cuda.empty_cache(); the CUDA context and libraries are left out (read it right after the step)".into()),
        (None, Some(u)) => differences.push(difference(Category::Used, u, used, used_sentence(u, used, m.total))),
        _ => {}
    }
    if let Some(t) = m.total {
        let (t, c) = (t as f64, b.capacity as f64);
        if c > 0.0 && (t - c).abs() / c > 0.03 {
            notes.push(format!(
                "the measured GPU has {} in all; the plan assumes {} for this process: another device, or a memory fraction or shared GPU in the scenario",
                bytes(t as u64, Units::Gib),
                bytes(b.capacity, Units::Gib)
            ));
        }
    }
    if b.gpus > 1 {
        notes.push(format!(
            "the plan is per GPU of a {}-GPU job (pipeline stage {}): compare it with that GPU's numbers, and expect NCCL's buffers only where communicators were set up",
            b.gpus, b.stage
        ));
    }
    Comparison { measured: measured.clone(), predicted, differences, notes }
}

fn difference(category: Category, measured: u64, predicted: u64, sentence: String) -> Difference {
    let d = measured as i128 - predicted as i128;
    Difference { category, measured, predicted, difference: d.clamp(i64::MIN as i128, i64::MAX as i128) as i64, sentence }
}

fn gib(n: u64) -> String {
    bytes(n, Units::Gib)
}

/// "measured X, predicted Y: Z (P%) more than predicted"
fn versus(measured: u64, predicted: u64) -> String {
    let d = measured as f64 - predicted as f64;
    let gap = if measured == predicted {
        "exactly as predicted".to_string()
    } else {
        let pct = if predicted > 0 { format!(" ({:.1}%)", d.abs() / predicted as f64 * 100.0) } else { String::new() };
        format!("{}{pct} {} than predicted", gib(measured.abs_diff(predicted)), if d > 0.0 { "more" } else { "less" })
    };
    format!("measured {}, predicted {}: {gap}", gib(measured), gib(predicted))
}

fn relative(measured: u64, predicted: u64) -> f64 {
    if predicted == 0 {
        if measured == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (measured as f64 - predicted as f64) / predicted as f64
    }
}

fn allocated_sentence(m: u64, p: u64) -> String {
    let r = relative(m, p);
    let hint = if r > 0.10 {
        " The run holds tensors the scenario does not: check micro-batch, sequence length, precision and attention kernel against the scenario, and look for extra buffers (EMA weights, a second model, cached batches, logits kept for logging)."
    } else if r < -0.10 {
        " The run holds fewer tensors than the scenario: check micro-batch, sequence length, checkpointing and precision; the peak of the step may also have been missed (measure a whole step after a warm-up)."
    } else {
        " Within 10%."
    };
    format!("Allocated peak (max_memory_allocated: tensors and cuBLAS workspaces), {}.{hint}", versus(m, p))
}

fn cache_sentence(m: u64, p: u64, non_releasable: Option<u64>) -> String {
    let mut s = format!(
        "Allocator cache and fragmentation (max_memory_reserved − max_memory_allocated: free cached blocks, rounding, split blocks), {}; the plan allows 5% of gradients, activations and temporaries.",
        versus(m, p)
    );
    if let Some(n) = non_releasable {
        s.push_str(&format!(" Non-releasable memory peaked at {}.", gib(n)));
    }
    if relative(m, p) > 1.0 && m > (256 << 20) {
        s.push_str(" PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True usually shrinks this gap.");
    }
    s
}

fn context_sentence(m: u64, p: u64, names: &[String]) -> String {
    let made_of = if names.is_empty() { "nothing outside the allocator".to_string() } else { names.join(" + ") };
    format!(
        "CUDA context and libraries (used − max_memory_reserved: the driver context, kernel images, NCCL and other libraries' own allocations, and any other process on the GPU), {}; the plan counts {made_of}.",
        versus(m, p)
    )
}

fn used_sentence(m: u64, p: u64, total: Option<u64>) -> String {
    let of = total.map(|t| format!(" of {}", gib(t))).unwrap_or_default();
    format!(
        "Device memory used{of} (every process, at the moment of reading), {}. A reading after the step still holds the allocator's cache, so it is close to the peak; torch.cuda.max_memory_allocated() and max_memory_reserved() split it further.",
        versus(m, p)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_terms_fall_on_their_side() {
        assert_eq!(side_of("CUDA context"), Category::ContextAndLibraries);
        assert_eq!(side_of("NCCL communicators"), Category::ContextAndLibraries);
        assert_eq!(side_of("allocator fragmentation"), Category::AllocatorCache);
        assert_eq!(side_of("cuBLAS and cuBLASLt workspaces"), Category::Allocated);
    }

    #[test]
    fn versus_reads_both_ways() {
        assert!(versus(110 << 30, 100 << 30).ends_with("10.0 GiB (10.0%) more than predicted"), "{}", versus(110 << 30, 100 << 30));
        assert!(versus(90 << 30, 100 << 30).contains("less than predicted"));
        assert!(versus(5, 5).ends_with("exactly as predicted"));
        assert!(versus(5, 0).ends_with("5 B more than predicted"));
    }
}
