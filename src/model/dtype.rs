//! Bytes per element of every dtype Headroom counts, in one table. Every width in the model
//! (precision modes, optimizer states, saved tensors, caches) is one of these.

/// A tensor element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F32,
    Bf16,
    F16,
    /// FP8 (E4M3 / E5M2).
    Fp8,
    /// bitsandbytes' 8-bit optimizer state codes.
    U8,
    Int64,
    Bool,
    /// 4-bit NormalFloat (QLoRA), two per byte.
    Nf4,
}

impl Dtype {
    /// Bytes per element.
    pub const fn bytes(self) -> f64 {
        match self {
            Dtype::F32 => 4.0,
            Dtype::Bf16 | Dtype::F16 => 2.0,
            Dtype::Fp8 | Dtype::U8 | Dtype::Bool => 1.0,
            Dtype::Int64 => 8.0,
            Dtype::Nf4 => 0.5,
        }
    }
}

/// fp32: statistics, upcasts, master weights, Adam states.
pub const F32: f64 = Dtype::F32.bytes();
/// 16-bit (bf16 / fp16): autocast copies, pure-bf16 tensors.
pub const HALF: f64 = Dtype::Bf16.bytes();
/// int64: indices (top-k, embedding ids, relative-position buckets, max indices).
pub const INT64: f64 = Dtype::Int64.bytes();
/// bool: dropout masks.
pub const BOOL: f64 = Dtype::Bool.bytes();

/// QLoRA NF4 storage per weight: 4 bits + an fp32 absmax per 64 weights, or with double
/// quantisation an 8-bit absmax per 64 plus an fp32 constant per 256 blocks
/// (Dettmers et al. 2023, §3: 0.5 + 0.0625 B, or 0.5 + 0.0159 B).
pub fn nf4_bytes_per_weight(double_quant: bool) -> f64 {
    if double_quant {
        Dtype::Nf4.bytes() + Dtype::U8.bytes() / 64.0 + F32 / (64.0 * 256.0)
    } else {
        Dtype::Nf4.bytes() + F32 / 64.0
    }
}
