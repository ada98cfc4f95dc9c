//! Memory that no tensor of the model owns: the CUDA context and kernel images, cuBLAS /
//! cuBLASLt workspaces, NCCL buffers, and the caching allocator's fragmentation.
//! Every constant is a published measurement or a library default (memory-formulas.md §A6).

use super::breakdown::{Component, Lifetime};
use super::device::Device;
use super::ledger::Ledger;

/// CUDA context with lazy module loading (PyTorch ≥ 2, CUDA ≥ 11.7), measured on an A100:
/// 0.47 GB (`torch.ones(1).cuda()`, pt 2.1.1; stas00/ml-engineering training/performance).
pub const CUDA_CONTEXT: f64 = 0.47e9;

/// cuBLAS workspace per handle: 32 MiB on Hopper and Blackwell, 4096·2 KiB + 16·8 KiB
/// (8,519,680 B) before (PyTorch `aten/src/ATen/cuda/CublasHandlePool.cpp`).
fn cublas_workspace(major: u32) -> f64 {
    if matches!(major, 9 | 10 | 12) {
        32.0 * 1024.0 * 1024.0
    } else {
        4096.0 * 1024.0 * 2.0 + 16.0 * 1024.0 * 8.0
    }
}

/// cuBLASLt workspace: 32 MiB on sm90+, 4 MiB on sm80 cards of ≥ 24 GB, else 1 MiB
/// (PyTorch PR #120925, `CUBLASLT_WORKSPACE_SIZE`).
fn cublaslt_workspace(device: &Device) -> f64 {
    let mib = 1024.0 * 1024.0;
    match device.compute_major {
        m if m >= 9 => 32.0 * mib,
        8 if device.capacity_bytes >= 24e9 => 4.0 * mib,
        _ => mib,
    }
}

/// NCCL communicator set-up on 2 GPUs: NVML used memory went from 0.55 GB to 2.00 GB at
/// the first barrier (ml-engineering `torch-dist-mem-usage.py`).
pub const NCCL_INIT: f64 = 1.45e9;

/// Share of dynamic allocations lost to the caching allocator's rounding and fragmentation:
/// Megatron-LM adds 5% to activations (`theoretical_memory_usage.py`); measured gaps are larger
/// without expandable segments (torchtune #1185: 16.39 vs 10.83 GiB reserved over the training
/// steps, its peaks reset after model init; the load's own reserve is `nf4_load.rs`'s).
const FRAGMENTATION: f64 = 0.05;

/// Add the overhead terms. `dynamic` is the bytes allocated and freed within a step
/// (gradients, activations, temporaries), the part that fragments — unless the allocator runs
/// with `expandable_segments:True`, where one segment per stream grows and shrinks by 2 MiB
/// pages, so a freed block is never stranded inside a segment of the wrong size (PyTorch
/// `c10/cuda/CUDACachingAllocator.cpp`, `ExpandableSegment`; torchtune #1185 measured the
/// reserved peak falling from 16.39 to 10.83 GiB); only the 2 MiB rounding remains, which is
/// not counted.
pub fn overhead(device: &Device, gpus: u64, training: bool, dynamic: f64, expandable_segments: bool, ledger: &mut Ledger) {
    ledger.add(Component::Overhead, "CUDA context", CUDA_CONTEXT, "0.47 GB with lazy module loading (A100, PyTorch 2.1; ml-engineering)", Lifetime::WholeStep);
    let handles = if training { 2.0 } else { 1.0 };
    ledger.add(
        Component::Overhead,
        "cuBLAS and cuBLASLt workspaces",
        handles * cublas_workspace(device.compute_major) + cublaslt_workspace(device),
        "per handle: 32 MiB (sm90+) or 8.125 MiB, two handles in training; cuBLASLt 1/4/32 MiB — PyTorch CublasHandlePool.cpp, PR #120925",
        Lifetime::WholeStep,
    );
    if gpus > 1 {
        ledger.add(
            Component::Overhead,
            "NCCL communicators",
            NCCL_INIT,
            "+1.45 GB at the first collective on 2 GPUs (ml-engineering torch-dist-mem-usage.py)",
            Lifetime::WholeStep,
        );
    }
    if expandable_segments {
        return;
    }
    ledger.add(
        Component::Overhead,
        "allocator fragmentation",
        FRAGMENTATION * dynamic,
        "5% of gradients + activations + temporaries (Megatron-LM's 1.05 activation factor)",
        Lifetime::WholeStep,
    );
}
