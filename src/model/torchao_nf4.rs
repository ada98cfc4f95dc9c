//! torchao's NF4 quantisation as the caching allocator sees it: the allocations and frees of
//! `to_nf4` (what torchtune's `LoRALinear(quantize_base=True)` calls on its freshly built bf16
//! weight, and what `NF4Tensor.copy_` calls when `load_state_dict` copies a bf16 tensor into an
//! NF4 parameter) and of cloning an NF4 tensor (`aten.clone` = `to_nf4(get_original_weight())`,
//! what `copy.deepcopy` of a module holding one runs). [`super::nf4_load`] replays them.
//!
//! Source: torchao 0.18.0 `torchao/quantization/quantize_/workflows/nf4/nf4_tensor.py`:
//! `from_tensor` (659–729: the 16-entry LUT in the input's dtype, `double_quantize_scalers`, then
//! `convert_to_norm_float_weight`), `double_quantize_scalers` (731–788: a block absmax over 64
//! weights, their mean subtracted, an absmax over 256 of those, `256 / (2 · absmax)`, round,
//! clamp, int8), `convert_to_norm_float_weight` (816–853: the absmax again, the scaled weight,
//! a uint8 index per weight, filled 2^20 weights at a time by comparing each with the 16 NF4
//! values, then packed two to a byte), `get_original_weight` (855–882: each nibble widened to
//! int64, looked up, scaled, and the halves stacked); `clone` (201–203). The same code was in
//! torchao's `dtypes/nf4tensor.py` in August 2024 (pytorch/ao 0ed30902e).
//!
//! The sequences are the CPU's, measured step by step with their addresses
//! (`tests/measure/torchao_nf4_sequence.py` → `torchao_nf4_sequence.json`; equal in every case,
//! `tests/nf4_load_reserve.rs`). The code is plain torch ops, so CUDA runs the same allocations
//! with two exceptions, both small and freed long before the chunk loop where the peak is: the
//! CPU's `mean` reduces through fp32 buffers (4 B per block, and more with its threads), which
//! CUDA's reduction keeps in registers and which are left out here (the test removes them from
//! the measured sequence), and Python scalars become 1–8-byte tensors where the CUDA kernels
//! take host scalars, which are kept (a few bytes each, in the small pool).

use super::allocator::Step;

/// Weights compared with the NF4 table at a time (`CHUNK_SIZE = 1024**2`, nf4_tensor.py 84).
pub const CHUNK: u64 = 1 << 20;

/// A size in terms of the weight count `n`: bytes, `k·n / d`, or `k` bytes per 64-weight
/// block or per 256-block scaler block.
#[derive(Clone, Copy)]
enum Size {
    Bytes(u64),
    N(u64, u64),
    Blocks(u64),
    ScalerBlocks(u64),
}

/// One step of a template: an allocation, or the free of the template's allocation at that
/// index (or, in the tail, of the head's).
#[derive(Clone, Copy)]
enum Tok {
    A(Size),
    F(usize),
}

use Size::{Blocks, Bytes, ScalerBlocks, N};
use Tok::{A, F};

/// `to_nf4` up to its chunk loop: the LUT, `double_quantize_scalers`, then
/// `convert_to_norm_float_weight`'s absmax, scaled weight (43) and index buffer (44).
const HEAD: [Tok; 45] = [
    A(Bytes(32)), // 0: the NF4 table, 16 values in bf16 (kept)
    A(N(2, 1)),   // 1: |w| for the block absmax
    A(Blocks(2)), // 2: the block absmax (values)
    A(Blocks(8)), // 3: its indices (int64)
    F(1),
    F(3),
    A(Bytes(2)),  // 6: the absmax mean (kept: `scaler_mean`)
    A(Blocks(2)), // 7: absmax − mean
    F(2),
    A(Blocks(2)),       // 9: its |·| for the scaler absmax
    A(ScalerBlocks(2)), // 10: the scaler absmax
    A(ScalerBlocks(8)), // 11: its indices
    F(9),
    F(11),
    A(Bytes(8)),
    A(Bytes(2)),
    A(Blocks(2)), // 16: 2 · absmax, expanded to every scaler
    F(15),
    F(14),
    A(Blocks(2)), // 19: 256 / (2 · absmax)
    A(Bytes(8)),
    A(Bytes(2)),
    A(Blocks(2)), // 22: scalers · factor
    F(21),
    F(20),
    F(19),
    F(16),
    A(Blocks(2)), // 27: round
    A(Blocks(2)), // 28: clamp
    F(27),
    A(Blocks(2)), // 30: flatten
    F(28),
    A(Blocks(1)),       // 32: int8 scalers (kept)
    A(ScalerBlocks(2)), // 33: the quantisation factor (kept)
    F(7),
    F(10),
    F(22),
    F(30),
    A(N(2, 1)),   // 38: |w| again, in `convert_to_norm_float_weight`
    A(Blocks(2)), // 39: the block absmax (held to the end)
    A(Blocks(8)),
    F(38),
    F(40),
    A(N(2, 1)), // 43: w / absmax
    A(N(1, 1)), // 44: one uint8 index per weight
];

/// One chunk of `c` weights (`quantize_tensor_nearest`, 884–890): `value − nf4` and its `|·|`
/// (16 per weight, bf16), the min's values and int64 indices, the uint8 copy written into the
/// index buffer. Every allocation is freed within the chunk.
const CHUNK_STEPS: [Tok; 10] = [A(N(32, 1)), A(N(32, 1)), F(0), A(N(2, 1)), A(N(8, 1)), F(3), F(1), A(N(1, 1)), F(4), F(7)];

/// After the loop: two indices packed per byte (`quantized_blocks[::2] << 4 | …[1::2]`, kept),
/// and the head's absmax, index buffer and scaled weight freed. Indices below 100 are the
/// tail's own; `HEAD_REF + i` is the head's step `i`.
const HEAD_REF: usize = 100;
const TAIL: [Tok; 10] = [A(Bytes(8)), A(Bytes(1)), A(N(1, 2)), F(1), F(0), A(N(1, 2)), F(2), F(HEAD_REF + 39), F(HEAD_REF + 44), F(HEAD_REF + 43)];

/// `get_original_weight`: each nibble widened to int64 (5, 12), looked up in the table (14,
/// 15), the scalers dequantised (19), both halves scaled (22, 25) and stacked into the bf16
/// weight (27, which the caller frees).
const DEQUANTISE: [Tok; 35] = [
    A(Bytes(8)),
    A(Bytes(1)),
    A(N(1, 2)),
    F(1),
    F(0),
    A(N(4, 1)),
    F(2),
    A(Bytes(8)),
    A(Bytes(1)),
    A(N(1, 2)),
    F(8),
    F(7),
    A(N(4, 1)),
    F(9),
    A(N(1, 1)),
    A(N(1, 1)),
    A(Blocks(2)),
    A(Blocks(2)),
    F(16),
    A(Blocks(2)),
    F(17),
    A(N(1, 1)),
    A(N(1, 1)),
    F(21),
    A(N(1, 1)),
    A(N(1, 1)),
    F(24),
    A(N(2, 1)),
    F(5),
    F(12),
    F(14),
    F(15),
    F(19),
    F(22),
    F(25),
];

/// The dequantised weight's index in [`DEQUANTISE`].
const DEQUANTISED: usize = 27;

/// Which chunks of the loop to list: all of them, or one chunk of each distinct size (the
/// loop's chunks free everything they allocate, so a repeat finds the same cached blocks and
/// leaves the allocator as it found it: `nf4_load.rs` replays the distinct ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunks {
    All,
    Distinct,
}

fn bytes(s: Size, n: u64) -> u64 {
    match s {
        Bytes(b) => b,
        N(k, d) => (k * n).div_ceil(d),
        Blocks(k) => k * n.div_ceil(64),
        ScalerBlocks(k) => k * n.div_ceil(64 * 256),
    }
}

/// Appends a template for `n` weights; its frees index from `base` (or the head's `head`).
fn push(out: &mut Vec<Step>, template: &[Tok], n: u64, head: usize) {
    let base = out.len();
    for t in template {
        out.push(match *t {
            A(s) => Step::Alloc(bytes(s, n)),
            F(i) if i >= HEAD_REF => Step::Free(head + i - HEAD_REF),
            F(i) => Step::Free(base + i),
        });
    }
}

/// Appends `to_nf4` of `n` weights (the input is the caller's).
fn push_to_nf4(out: &mut Vec<Step>, n: u64, chunks: Chunks) {
    let head = out.len();
    push(out, &HEAD, n, head);
    let (full, rest) = (n / CHUNK, n % CHUNK);
    let repeats = match chunks {
        Chunks::All => full,
        Chunks::Distinct => full.min(1),
    };
    for _ in 0..repeats {
        push(out, &CHUNK_STEPS, CHUNK, head);
    }
    if rest > 0 {
        push(out, &CHUNK_STEPS, rest, head);
    }
    push(out, &TAIL, n, head);
}

/// `to_nf4` of `n` bf16 weights: what it allocates and frees, in order.
pub fn to_nf4_steps(n: u64, chunks: Chunks) -> Vec<Step> {
    let mut out = Vec::new();
    push_to_nf4(&mut out, n, chunks);
    out
}

/// Cloning an NF4 tensor of `n` weights: the dequantised bf16 weight, `to_nf4` of it, and the
/// bf16 weight freed.
pub fn clone_steps(n: u64, chunks: Chunks) -> Vec<Step> {
    let mut out = Vec::new();
    push(&mut out, &DEQUANTISE, n, 0);
    push_to_nf4(&mut out, n, chunks);
    out.push(Step::Free(DEQUANTISED));
    out
}

/// The most bytes `steps` hold at once (allocations as requested, before the allocator's
/// rounding).
pub fn peak_bytes(steps: &[Step]) -> u64 {
    let (mut live, mut peak) = (0u64, 0u64);
    for step in steps {
        match *step {
            Step::Alloc(b) => {
                live += b;
                peak = peak.max(live);
            }
            Step::Free(i) => {
                if let Step::Alloc(b) = steps[i] {
                    live -= b;
                }
            }
        }
    }
    peak
}
