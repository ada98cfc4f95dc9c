//! What quantising a QLoRA base to NF4 while loading (`training.lora.quantize_at_load`) leaves
//! reserved: the load's allocations and frees, replayed through the caching allocator
//! ([`super::allocator`]), give `max_memory_reserved` beside what the load asked for, and the
//! difference is the load phase's "caching allocator's reserve" term.
//!
//! The sequence is bitsandbytes 0.50.2's on CUDA, tensor by tensor in module order (embeddings,
//! then each block's tensors as `param_tensors` lists them, then the final norm and head), as
//! `from_pretrained` moves them to the GPU:
//! - a tensor that is not a 4-bit linear arrives in the 16-bit compute dtype and stays;
//! - a 4-bit linear's weight arrives in 16 bits (`Params4bit._quantize`: `w =
//!   self.data.contiguous().to(device)`, nn/modules.py 381–395) and `quantize_4bit`
//!   (functional.py 884–969) allocates, in order: the kernel's fp32 `absmax`, one per 64 weights,
//!   and the packed uint8 output, n/2 bytes (backends/cuda/ops.py 391–392); the 16-entry fp32
//!   NF4 code (`get_4bit_type`, 936); with double quantisation the fp32 `offset` (`_absmax.mean()`,
//!   939), `_absmax - offset` (940), then `quantize_blockwise` (functional.py 613–) allocates the
//!   nested fp32 absmax, one per 256, and the uint8 absmax (backends/cuda/ops.py 310–311) and
//!   copies its 256-entry fp32 code (`code.to(A.device, copy=True)`); `_absmax - offset` and
//!   `_absmax` are freed (`del _absmax`, 941), and the 16-bit weight when `_quantize` returns
//!   (`self.data = w_4bit`).
//!
//! What each linear keeps is checked against bitsandbytes itself on the CPU
//! (`tests/measure/nf4_load_sequence.py` → `nf4_load_sequence.json`); the CPU backend's own
//! transients differ from the CUDA kernel's and are not replayed.
//!
//! torchtune quantises with torchao instead ([`Nf4Quantizer::Torchao`], sequences in
//! [`super::torchao_nf4`]), in two passes (torchtune bd2a0fc
//! `recipes/lora_finetune_single_device.py` 401–444): the model is built on the GPU in bf16
//! (`with training.set_default_dtype(self._dtype), self._device`), each `LoRALinear`
//! quantising its freshly initialised weight (`to_nf4(linear.weight)`, `modules/peft/lora.py`
//! 82–87) and dropping the bf16 one when its `__init__` returns; then `load_state_dict` copies
//! the checkpoint (on the host: `safe_torch_load`, `training/checkpointing/_utils.py` 229–259)
//! into each NF4 parameter, which moves the bf16 tensor to the GPU, quantises it into a new NF4
//! tensor and copies that one's inner tensors in place (torchao `nf4_tensor.py` `copy_`,
//! 435–465); the 16-bit parameters are copied in place. The adapters (a few MB) are not
//! replayed.

use std::cell::RefCell;

use super::allocator::{run_steps, CachingAllocator, Step};
use super::arch::{Architecture, ParamTensor, Scope, TpSplit};
use super::breakdown::{Component, Lifetime};
use super::inputs::{LoraBase, Nf4Quantizer, Training};
use super::layout::Layout;
use super::ledger::Ledger;
use super::lora_reach::quantized;
use super::torchao_nf4::{to_nf4_steps, Chunks};

/// The steps of quantising one linear of `n` weights (the 16-bit weight is step 0, freed last).
pub fn quantise_steps(n: u64, double_quant: bool) -> Vec<Step> {
    let blocks = n.div_ceil(64);
    let mut steps = vec![Step::Alloc(2 * n), Step::Alloc(4 * blocks), Step::Alloc(n.div_ceil(2)), Step::Alloc(16 * 4)];
    if double_quant {
        steps.extend([Step::Alloc(4), Step::Alloc(4 * blocks), Step::Alloc(4 * blocks.div_ceil(256)), Step::Alloc(blocks), Step::Alloc(256 * 4), Step::Free(5), Step::Free(1)]);
    }
    steps.push(Step::Free(0));
    steps
}

/// The bytes of the allocations a quantisation keeps, largest first.
pub fn kept_bytes(steps: &[Step]) -> Vec<u64> {
    let freed: Vec<usize> = steps.iter().filter_map(|s| if let Step::Free(i) = s { Some(*i) } else { None }).collect();
    let mut kept: Vec<u64> = steps.iter().enumerate().filter(|(i, _)| !freed.contains(i)).filter_map(|(_, s)| if let Step::Alloc(b) = s { Some(*b) } else { None }).collect();
    kept.sort_unstable_by(|a, b| b.cmp(a));
    kept
}

/// One tensor of `n` local elements arriving: kept in 16 bits, or quantised by bitsandbytes
/// (the 16-bit weight is its step 0) or by torchao (the bf16 weight beside it, freed after).
fn load_one(a: &mut CachingAllocator, n: u64, linear: bool, quant: &Quant) {
    if !linear {
        a.malloc(2 * n);
        return;
    }
    match quant {
        Quant::Bitsandbytes { double_quant } => {
            run_steps(a, &quantise_steps(n, *double_quant));
        }
        Quant::Torchao => {
            let weight = a.malloc(2 * n);
            run_steps(a, &to_nf4_steps(n, Chunks::Distinct));
            a.free(weight);
        }
    }
}

/// torchao's second pass for one NF4 linear: the checkpoint's bf16 tensor moved to the GPU,
/// quantised into a new NF4 tensor (the bf16 copy freed as `from_tensor` returns), whose inner
/// tensors are copied into the parameter's and freed.
fn reload_one(a: &mut CachingAllocator, n: u64) {
    let moved = a.malloc(2 * n);
    let fresh = run_steps(a, &to_nf4_steps(n, Chunks::Distinct));
    a.free(moved);
    fresh.into_iter().for_each(|h| a.free(h));
}

/// The quantiser and its setting, as the replay needs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quant {
    Bitsandbytes { double_quant: bool },
    Torchao,
}

/// What the replay depends on: each tensor's local elements, whether it is quantised, its
/// instances on this rank and where it loads (0 before the blocks, 1 in them, 2 after); the
/// stage's blocks; the quantiser; expandable segments.
type Key = (Vec<(u64, bool, u64, u8)>, u64, Quant, bool);

/// A replay's key and the quantised tensors it may run.
type Budgeted = (Key, u64);

/// Replays kept: a plan search re-estimates one model many times with other batch sizes,
/// which leave the load unchanged, and goes back and forth between a few layouts and their
/// pipeline stages (the limits of a DeepSeek-V3 QLoRA plan replay 9 loads 88 times: one kept
/// replay missed 79 of them, each ~0.2 s).
const KEPT: usize = 16;

thread_local! {
    /// The latest replays' keys and `(peak reserved, peak requested)`, most recent first.
    static RECENT: RefCell<Vec<(Budgeted, (u64, u64))>> = const { RefCell::new(Vec::new()) };
}

/// The load's `(peak reserved, peak requested)` bytes; `None` without a 4-bit base quantised
/// at load.
pub fn replay(arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout, expandable_segments: bool) -> Option<(u64, u64)> {
    replay_within(arch, tensors, training, layout, expandable_segments, MAX_QUANTISED)
}

/// [`replay`] running at most `budget` quantised tensors (the rest extrapolated).
pub fn replay_within(arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout, expandable_segments: bool, budget: u64) -> Option<(u64, u64)> {
    let lora = training.lora.as_ref().filter(|l| l.base == LoraBase::Nf4 && l.quantize_at_load)?;
    let tp = layout.tp.max(1.0);
    let place = |t: &ParamTensor| {
        if t.scope.in_blocks() {
            1
        } else if t.scope == Scope::Output {
            2
        } else {
            0
        }
    };
    let list = tensors
        .iter()
        .map(|t| {
            let split = if t.tp == TpSplit::Sharded { tp } else { 1.0 };
            // Instances on this rank (copies count a TP shard as a fraction).
            let count = (layout.copies(arch, t) * split * 1e6).round() as u64;
            ((t.numel() / split).ceil() as u64, quantized(t, lora), count, place(t))
        })
        .collect();
    let quant = match lora.quantizer {
        Nf4Quantizer::Bitsandbytes => Quant::Bitsandbytes { double_quant: lora.double_quant },
        Nf4Quantizer::Torchao => Quant::Torchao,
    };
    let key: Key = (list, layout.layers_on_stage.round().max(1.0) as u64, quant, expandable_segments);
    let key = (key, budget);
    let value = RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        let entry = match recent.iter().position(|(k, _)| *k == key) {
            Some(i) => recent.remove(i),
            None => {
                let value = run(&key.0, budget);
                (key, value)
            }
        };
        let value = entry.1;
        recent.insert(0, entry);
        recent.truncate(KEPT);
        value
    });
    Some(value)
}

/// Quantised tensors a replay runs at most. A stage with more (a mixture of experts: DeepSeek-V3
/// quantises 256 experts' three linears in each of 58 blocks) replays its first blocks and
/// extends their trend to the rest ([`extrapolated`]); replaying every one took 0.6 s
/// (bitsandbytes) and 5.3 s (torchao) natively for DeepSeek-V3, per layout a search tries.
pub const MAX_QUANTISED: u64 = 4_000;

/// `(peak reserved, peak requested)` of the load, replayed whole when its quantised tensors fit
/// in `budget`, else [`extrapolated`].
fn run(key: &Key, budget: u64) -> (u64, u64) {
    let (list, layers, _, _) = key;
    let quantised = |place: u8| list.iter().filter(|t| t.1 && t.3 == place).map(|t| (t.2 as f64 / 1e6).round() as u64).sum::<u64>();
    let (edges, per_block) = (quantised(0) + quantised(2), quantised(1).div_ceil((*layers).max(1)));
    if edges + per_block * layers <= budget {
        return peaks(&replay_blocks(key, *layers));
    }
    let blocks = (budget.saturating_sub(edges) / per_block.max(1)).clamp(2, *layers);
    extrapolated(key, blocks)
}

/// The first `blocks` of the stage replayed, and half as many: each peak extended linearly in
/// the number of blocks to the stage's (the blocks are alike, so each adds about the same
/// allocations and leaves about the same cached blocks; checked against whole replays in
/// `tests/nf4_load_reserve.rs`).
fn extrapolated(key: &Key, blocks: u64) -> (u64, u64) {
    let half = (blocks / 2).max(1);
    let (far, near) = (peaks(&replay_blocks(key, blocks)), peaks(&replay_blocks(key, half)));
    let extend = |at_far: u64, at_near: u64| {
        let per_block = at_far.saturating_sub(at_near) as f64 / (blocks - half).max(1) as f64;
        at_far + (per_block * (key.1 - blocks) as f64).round() as u64
    };
    let requested = extend(far.1, near.1);
    let reserve = extend(far.0 - far.1, near.0 - near.1);
    (requested + reserve, requested)
}

fn peaks(a: &CachingAllocator) -> (u64, u64) {
    (a.peak_reserved, a.peak_requested)
}

/// The load with the stage's first `blocks` blocks (and both edges): the edges before the
/// blocks, each block's share of the block tensors (all of them in a dense stack; MoE and
/// hybrid kinds spread evenly over the stage's blocks), then the edges after; torchao's
/// checkpoint pass follows in the same order.
fn replay_blocks(key: &Key, blocks: u64) -> CachingAllocator {
    let (_, _, quant, expandable) = key;
    let mut a = CachingAllocator::new(*expandable);
    in_load_order(key, blocks, |n, linear| load_one(&mut a, n, linear, quant));
    if *quant == Quant::Torchao {
        in_load_order(key, blocks, |n, linear| {
            if linear {
                reload_one(&mut a, n)
            }
        });
    }
    a
}

/// Calls `each(local elements, quantised)` for every tensor instance in load order, the
/// blocks after the first `blocks` left out.
fn in_load_order(key: &Key, blocks: u64, mut each: impl FnMut(u64, bool)) {
    let (list, layers, _, _) = key;
    let instances = |count: u64| (count as f64 / 1e6).round() as u64;
    for &(n, linear, count, _) in list.iter().filter(|t| t.3 == 0) {
        (0..instances(count)).for_each(|_| each(n, linear));
    }
    for b in 0..blocks.min(*layers) {
        for &(n, linear, count, _) in list.iter().filter(|t| t.3 == 1) {
            let per = count as f64 / 1e6 / *layers as f64;
            let here = ((b + 1) as f64 * per).floor() - (b as f64 * per).floor();
            (0..here as u64).for_each(|_| each(n, linear));
        }
    }
    for &(n, linear, count, _) in list.iter().filter(|t| t.3 == 2) {
        (0..instances(count)).for_each(|_| each(n, linear));
    }
}

const RESERVE_FORMULA: &str = "max_memory_reserved − the load's own peak: bitsandbytes' quantise-at-load sequence (16-bit weight, fp32 absmax, packed uint8, statistics; the 16-bit weight freed) replayed tensor by tensor through PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp: 512 B rounding, 2 MiB small and 20 MiB medium segments, larger ones rounded to 2 MiB, best fit, split above 1 MiB, freed blocks cached) — src/model/allocator.rs, nf4_load.rs";

const EXPANDABLE_FORMULA: &str = "max_memory_reserved − the load's own peak under expandable_segments:True: the same replay with one segment per pool grown by 20 MiB pages (2 MiB for the small pool) — src/model/allocator.rs, nf4_load.rs";

/// Adds the load's reserve above its allocations (none without quantise-at-load).
pub fn load_reserve(arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout, expandable_segments: bool, ledger: &mut Ledger) {
    let Some((reserved, requested)) = replay(arch, tensors, training, layout, expandable_segments) else {
        return;
    };
    let formula = if expandable_segments { EXPANDABLE_FORMULA } else { RESERVE_FORMULA };
    let reserve = reserved.saturating_sub(requested) as f64;
    ledger.add(Component::Overhead, "caching allocator's reserve at load (NF4 quantisation)", reserve, formula, Lifetime::Load);
}
