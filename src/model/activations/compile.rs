//! What `torch.compile` leaves saved for backward when every block and the loss are compiled
//! with Inductor (torchtune `compile: True`: `training/_compile.py` compiles each decoder layer
//! and `CEWithChunkedOutputLoss.compute_cross_entropy`; torchtitan `apply_compile` compiles each
//! block, and the loss). Embeddings, the final norm and the output projection stay eager.
//!
//! Mechanism: AOTAutograd traces forward and backward as one graph and Inductor's default
//! partitioner, `min_cut_rematerialization_partition` (torch 2.15
//! `torch/_functorch/partitioners.py`), picks the saved set as a minimum cut:
//! - only ops on the allowlist `get_default_op_list().recomputable_ops` may be recomputed in
//!   backward: pointwise ops, casts, views, `sum`/`mean`/`var_mean`/`amax`, `gather`;
//!   `mm`, `addmm`, `bmm` and the SDPA kernels are not (`ban_recompute_not_in_allowlist`);
//! - a value that a non-fusible backward op must read whole (a matmul's input for its weight
//!   gradient, SDPA's q/k/v/output/logsumexp) is never recomputed
//!   (`ban_recompute_materialized_backward`: "recomputing a node in the backwards pass is
//!   never free" when it must be materialized there);
//! - a reduction whose output is 4× smaller than its input is saved, not recomputed
//!   (`ban_recompute_reductions`): a norm's per-row statistics;
//! - of what may be recomputed, the cut saves the fewest bytes; graph inputs and parameters are
//!   always available (parameters are free to save, `treat_parameters_as_free_to_save`);
//! - common subexpressions are merged first (`config.cse`): autocast's identical casts of one
//!   norm output for q, k and v become one.
//!
//! Measured on tiny Llama (GQA, SwiGLU, RMSNorm), Qwen3 (per-head q/k RMSNorm) and GPT-2
//! (LayerNorm, op-by-op `gelu_new`, fused `c_attn`) in fp32, pure bf16 and bf16 autocast,
//! eager against per-block `layer.compile(backend="inductor")` on the CPU with torch 2.15.0
//! (`tests/measure/compile.py` → `tests/fixtures/measured/compile.json`, the partitioner's saved
//! fx nodes listed per case). What changes, per block and micro-batch (x = bytes of a matmul
//! output, r = of the residual stream, R rows of width w):
//! - a block norm keeps its input and its fp32 statistics (RMSNorm: rstd, 4·R; LayerNorm: mean
//!   and rstd, 8·R); its normalised tensor, the fp32 copy of its input and the cast back are
//!   recomputed. The norm output stays saved, as the next linears' input. The first norm of a
//!   block reads the block input (r bytes); a later one reads block input + sublayer output,
//!   rebuilt from the two, so the sublayer output (x bytes) is what is kept — under autocast the
//!   16-bit o_proj output instead of the fp32 sum (measured: llama bf16-mixed);
//! - q/k norms (Qwen3) keep the projection outputs and one rstd per head row;
//! - under autocast the linears reading one norm output share one 16-bit copy (CSE);
//! - the dense MLP keeps its matmul outputs and the down projection's input: gated 3·x per
//!   intermediate feature (gate, up, product; SwiGLU's SiLU output is recomputed), non-gated
//!   2·x (GPT-2's five `gelu_new` tensors become the c_fc output and the c_proj input), ReLU x;
//! - the compiled loss keeps the logits as they come from the output projection (x·T·V) and two
//!   fp32 numbers per row (`amax` and the log of the sum), and recomputes the log-softmax in
//!   backward: 2·T·V instead of 4·T·V in 16-bit runs, the same in fp32.
//!
//! Unchanged: SDPA's q, k, v, output and logsumexp (the kernel is banned from recompute and
//! reads them), the autocast weight copies (materialised for the backward matmuls), and what
//! stays eager. Parts not measured compiled keep their eager terms, taken as an upper bound (in
//! every measured case the compiled cut saved less than eager): eager attention's scores, MoE
//! experts and routers, MLA, dropout masks (random ops are banned from recompute), encoder and
//! encoder-decoder losses, vision models.

use super::term::{ActTerm, Ctx, Place};
use crate::model::arch::{Activation, MlpPart, NormKind, Placement, QkNorm, Stack, TransformerArch};
use crate::model::dtype::{F32, HALF, INT64};

/// A norm under compile over `rows` rows of `width`: its input (`input_bytes` per element) and
/// its fp32 per-row statistics.
fn norm_kept(kind: NormKind, rows: f64, width: f64, input_bytes: f64) -> f64 {
    let stats = match kind {
        // mean and rstd (`native_layer_norm`'s saved outputs, and the decomposed `var_mean`).
        NormKind::Layernorm | NormKind::CohereLayernorm => 2.0 * F32,
        // rsqrt of the mean square.
        _ => F32,
    };
    input_bytes * rows * width + stats * rows
}

/// Bytes per token and intermediate feature of a dense MLP under compile.
fn mlp_kept(mlp: &MlpPart, c: &Ctx) -> f64 {
    match (mlp.activation, mlp.gated) {
        (Activation::Relu, false) => c.x,
        // gate and up outputs (or the fused gate_up output) and the product.
        (_, true) | (Activation::SwigluClamped, _) => 3.0 * c.x,
        // the up projection's output and the activation's output.
        (_, false) => 2.0 * c.x,
    }
}

/// Rewrite the eager terms of one micro-batch as the compiled blocks (and, with `loss`, the
/// compiled loss) keep them.
pub(super) fn apply(t: &TransformerArch, c: &Ctx, loss: bool, terms: &mut [ActTerm]) {
    let h = t.hidden as f64;
    let tok = c.tokens;
    let kind = t.norm.kind;
    for term in terms.iter_mut() {
        match (term.place, term.name) {
            // The first norm of the block reads the block input, a graph input that stays saved.
            (Place::Block(_), "attention norm") => term.bytes = norm_kept(kind, tok, h, c.r),
            // Both parallel norms read the block input, already kept: only the statistics.
            (Place::Block(_), "MLP norm") if t.norm.placement == Placement::ParallelTwo => term.bytes = norm_kept(kind, tok, h, 0.0),
            // Later norms read block input + sublayer output: the sublayer output is kept.
            (Place::Block(_), "MLP norm" | "post-attention norm" | "attention output norm" | "cross-attention norm" | "post-MLP norm" | "MLP output norm") => {
                term.bytes = norm_kept(kind, tok, h, c.x)
            }
            (Place::Block(_), "q/k norms") => {
                let a = &t.attention;
                let d = a.head_dim as f64;
                let (heads, kv_heads) = (a.heads as f64, a.kv_heads as f64);
                term.bytes = match a.qk_norm {
                    QkNorm::None => term.bytes,
                    QkNorm::PerHead | QkNorm::PerHeadWeights => norm_kept(kind, tok * heads, d, c.x) + norm_kept(kind, tok * kv_heads, d, c.x),
                    QkNorm::Full => norm_kept(kind, tok, heads * d, c.x) + norm_kept(kind, tok, kv_heads * d, c.x),
                };
            }
            // Autocast's casts of one norm output, one per linear, are one after CSE.
            (Place::Block(_), "q/k/v projection inputs") if c.mixed => term.bytes = HALF * tok * t.attention_input_width() as f64,
            (Place::Block(_), "MLP inputs") if c.mixed => {
                // ParallelShared: the same cast as the q/k/v projections', merged with it.
                term.bytes = if t.norm.placement == Placement::ParallelShared { 0.0 } else { HALF * tok * h }
            }
            (Place::Block(_), "MLP intermediates") => term.bytes = mlp_kept(&t.mlp, c) * tok * t.mlp.ffn as f64,
            (Place::Output, "fp32 log-softmax of the logits") if loss && t.stack == Stack::Decoder => {
                term.name = "logits kept by the compiled loss";
                term.bytes = c.x * tok * t.vocab as f64 + INT64 * tok + 2.0 * F32 * tok;
            }
            _ => {}
        }
    }
}
