//! What LoRA adapters save for backward (Hu et al. 2021), as PEFT's `lora.Linear` runs them
//! (`peft/tuners/lora/layer.py`, `Linear.forward`, lines 1088–1113 in PEFT 0.21.2):
//! `result = base_layer(x)`, then `x = self._cast_input_dtype(x, lora_A.weight.dtype)` and
//! `result + lora_B(lora_A(dropout(x))) * scaling`.
//!
//! - The base linear is frozen: its matmul keeps no input (autograd saves a matmul's input only
//!   for the weight's gradient), so an input nobody else saves is kept only by the adapters.
//! - `lora_A` saves its input. PEFT keeps the adapters in fp32 (`autocast_adapter_dtype=True`
//!   casts 16-bit adapters up) and casts `x` to their dtype (`tuners_utils.py`,
//!   `_cast_input_dtype`, lines 2220–2235): in an fp32 run that is the input itself, shared by
//!   the linears that read it; in a pure bf16 run every adapted linear makes and saves its own
//!   fp32 copy; under autocast every adapted linear saves its own 16-bit copy (autocast's cast of
//!   the fp32 input, or of PEFT's fp32 copy of a 16-bit one).
//! - `lora_dropout > 0` is an `nn.Dropout` per adapted linear: on CUDA `native_dropout` saves a
//!   bool mask of the input, and `lora_A` saves the dropped copy (fp32, or its 16-bit autocast
//!   copy) instead of the shared input. 0 is `nn.Identity`.
//! - `lora_B` saves `lora_A`'s output: r values per token (fp32; 16-bit under autocast).
//! - Adapters kept in the model's 16-bit dtype (`autocast_adapter_dtype=False`; torchtune's and
//!   LitGPT's, `Lora::fp32_adapters`) read the input as it is, shared as in an fp32 run, and
//!   `lora_B` saves a 16-bit `lora_A` output (`lora_dtypes.json`).
//!
//! Measured with PEFT on a tiny Llama (`tests/fixtures/measured/lora.json`,
//! `tests/measure/lora.py`; fake CUDA tensors for the bool masks). The first block's attention
//! norm and its q/k/v dropout masks are not saved when nothing before them needs a gradient
//! (measured: 3 of 4 `input_layernorm`s keep anything; `activations::entry_without_gradient`).

use super::term::{Ctx, LoraCtx};
use crate::model::dtype::{BOOL, F32, HALF};

/// Bytes the adapters of `n` adapted linears save for one input of `width` features; `saved`:
/// the input is saved anyway by another op (SDPA's output, the MLP product in an fp32 run).
pub fn adapter_inputs(c: &Ctx, l: &LoraCtx, width: f64, n: f64, saved: bool) -> f64 {
    if n == 0.0 {
        return 0.0;
    }
    let elements = c.tokens * width;
    // Without autocast, an adapter in the input's own dtype (an fp32 run, or 16-bit adapters on
    // a 16-bit base) reads the input as it is: no copy.
    let same_dtype = !c.mixed && (c.x == F32 || !l.fp32);
    if same_dtype && !l.dropout {
        // The input itself, shared by the linears that read it.
        return if saved { 0.0 } else { c.x * elements };
    }
    // Each adapter's own copy (fp32, 16-bit under autocast or for 16-bit adapters), and a bool
    // mask with dropout.
    let copy = adapter_dtype_bytes(c, l);
    let mask = if l.dropout { BOOL } else { 0.0 };
    n * (copy + mask) * elements
}

/// The bool dropout masks among [`adapter_inputs`]' bytes: `native_dropout` keeps one only for
/// its input's gradient.
pub fn adapter_masks(c: &Ctx, l: &LoraCtx, width: f64, n: f64) -> f64 {
    if l.dropout {
        n * BOOL * c.tokens * width
    } else {
        0.0
    }
}

/// `lora_A`'s outputs, saved by `lora_B`: r per token per adapted module.
pub fn adapter_intermediates(c: &Ctx, l: &LoraCtx, modules: f64) -> f64 {
    modules * adapter_dtype_bytes(c, l) * c.tokens * l.rank
}

/// Bytes of an element the adapters compute in: 16-bit under autocast, fp32 for PEFT's fp32
/// adapters, else the run's activation dtype.
fn adapter_dtype_bytes(c: &Ctx, l: &LoraCtx) -> f64 {
    if c.mixed {
        HALF
    } else if l.fp32 {
        F32
    } else {
        c.x
    }
}
