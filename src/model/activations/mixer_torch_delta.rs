//! What Gated DeltaNet (Qwen3-Next, Qwen3.5, OLMo-Hybrid) saves for backward on transformers'
//! torch fallback: `causal_conv1d_fn`, `torch_chunk_gated_delta_rule` and the gated RMSNorm,
//! as transformers 5.25 writes them in `models/qwen3_next/modeling_qwen3_next.py` (cited
//! below; `modeling_qwen3_5.py` lines 329–490 and 555–…, and `modeling_olmo_hybrid.py`
//! lines 308–469 and 630–…, are copies with their own projections). Measured on CPU in
//! `tests/fixtures/measured/mixer_torch.json` (`tests/measure/mixer_torch.py`,
//! `tests/mixer_torch.rs`).

use super::term::Ctx;
use crate::model::dtype::{BOOL, F32};

/// The chunk length `torch_chunk_gated_delta_rule` is called with (its default, line 431;
/// the mixers pass none).
const CHUNK: f64 = 64.0;

/// The widths of one Gated DeltaNet mixer: Hk key heads and Hv value heads of dk and dv,
/// and the conv kernel.
pub(super) struct DeltaWidths {
    pub key_heads: f64,
    pub value_heads: f64,
    pub key_dim: f64,
    pub value_dim: f64,
    pub conv: f64,
}

/// The fallback's saved bytes of one Gated DeltaNet block, apart from the input projections'
/// input and `out_proj`'s (Hv·dv; `mixer.rs`).
pub(super) fn gated_delta_net(w: &DeltaWidths, c: &Ctx) -> f64 {
    let (b, s, tok, x) = (c.b, c.s, c.tokens, c.x);
    let (hk, hv, dk, dv) = (w.key_heads, w.value_heads, w.key_dim, w.value_dim);
    let (k, v) = (hk * dk, hv * dv);
    let conv_dim = 2.0 * k + v;
    // `Qwen3NextGatedDeltaNet.forward` (720–856): the conv's input, the concatenated and
    // transposed q·k·v; `causal_conv1d_fn` (339–360) keeps its padded output (s + K − 1) for
    // `silu`; `beta = b.sigmoid()` (768) its output. All in the model's dtype.
    let input_dtype = tok * conv_dim + b * conv_dim * (s + w.conv - 1.0) + tok * hv;
    // `g = -A_log.float().exp() * softplus(a.float() + dt_bias)` (770): exp(A_log) and its
    // negation per head, softplus's input and output (fp32).
    let gate = F32 * (2.0 * hv + 2.0 * tok * hv);
    // `torch_chunk_gated_delta_rule` (424–564). q and k are repeated to the value heads (463)
    // and cast to fp32 (467–470, a copy only where the dtype changes); `l2norm` (418–422) keeps each and its rsqrt per head. An
    // fp32 run without repetition casts nothing: q and k are views of the conv output after
    // silu, which is then kept whole.
    let upcast = x < F32;
    let qk = if upcast || hk != hv { 2.0 * F32 * b * hv * s * dk } else { F32 * tok * conv_dim };
    let rsqrt = 2.0 * b * hv * s;
    // `pad_size` (480): every tensor below is over the padded length s′, in fp32.
    let chunks = (s / CHUNK).ceil();
    let positions = b * hv * chunks * CHUNK;
    // Per padded position and value head: β padded (kept by v·β and k·β), the padded v and k,
    // k·β, the scaled and padded q (kept by q·kᵀ, and by its decay), exp(cum_decay) for k·β's
    // decay and for q's, and the two `solve_triangular` outputs (524–525), new_values (dv)
    // and k_cumdecay (dk).
    let per_position = positions * (1.0 + dv + dk + dk + dk + 1.0 + dv + dk + 1.0);
    // Per chunk, C × C per value head: exp of the pairwise decays (510), k·β·kᵀ and q·kᵀ
    // (kept by the products with it), the UT system (kept by `solve_triangular`) and the
    // intra-chunk attention (kept by the loop's product with v_new).
    let square = b * hv * chunks * CHUNK * CHUNK;
    // The loop over chunks (547–553): the zero initial state (536), v_new per chunk (dv per
    // position). Beyond the first chunk, the states it carries (one per further chunk), the
    // decayed q (542, read against a state that needs a gradient only from the second chunk
    // on) and k (543) with k's decay factor, and the chunk decay (544). With one chunk, k's
    // and the chunk decay feed only the final state, which the function drops (557): autograd
    // frees them when the forward returns; so do, in every run, the last chunk's own update.
    let state = b * hv * dk * dv;
    let further = chunks - 1.0;
    let decays = if chunks > 1.0 { positions + b * hv * chunks } else { 0.0 };
    let scan = if c.mixed {
        // Under autocast every matmul keeps 16-bit copies of its operands, each its own: kᵀ
        // twice, k·β and q for the two C × C products; per chunk the state twice (against
        // k_cumdecay and q), the chunk's intra-chunk attention, v_new twice (once for the last
        // chunk), and beyond the first chunk k_cumdecay's, q's and k's chunks. The fp32
        // tensors the products read are then kept only where an elementwise product keeps
        // them: the exp of the pairwise decays and the UT system, not the C × C products nor
        // the intra-chunk attention, the states only for their decay.
        let copies = positions * 4.0 * dk + 3.0 * square + 2.0 * chunks * state + positions / chunks * (further * 3.0 * dk + (2.0 * chunks - 1.0) * dv);
        F32 * (per_position + 2.0 * square + further * state + decays) + x * copies
    } else {
        let carried = if chunks > 1.0 { positions * 2.0 * dk + further * state } else { 0.0 };
        F32 * (per_position + 5.0 * square + state + positions * dv + decays + carried)
    };
    // `Qwen3NextRMSNormGated.forward` (66–75), per value head of dv: the fp32 core output
    // (the function's `.to(initial_dtype)` output in fp32, its fp32 copy in 16-bit), the rsqrt
    // per head, the normalised tensor in the model dtype (kept by the weight's product unless
    // the weight is frozen), the gate's fp32 copy (in fp32, z's contiguous copy), silu's
    // output, and `weight · normalised`; `out_proj`'s input is `mixer.rs`'s.
    // Under autocast the fp32 weight makes `weight · normalised` fp32.
    let normed = if c.frozen_norms { 0.0 } else { 1.0 };
    let weighted = if c.mixed { F32 } else { x };
    let norm = F32 * tok * (3.0 * v + hv) + x * tok * v * normed + weighted * tok * v;
    // With the base frozen (LoRA), `A_log` wants no gradient: neither exp(A_log) nor
    // softplus's output, which only the product with −exp(A_log) kept (770).
    let frozen = if c.lora.is_some() { F32 * (hv + tok * hv) } else { 0.0 };
    x * input_dtype + gate + qk + F32 * rsqrt + scan + BOOL * CHUNK * CHUNK + norm - frozen
}
