//! What Gemma 3n's per-layer inputs, AltUp and LAuReL (`arch/per_layer.rs`) save for backward
//! beyond a Gemma-3 block's norms, attention and MLP.
//!
//! transformers 5.25 `models/gemma3n/modeling_gemma3n.py`, with U = tokens · h:
//! - `Gemma3nTextAltUp.predict` (lines 1003–1028): `router_norm` reads the layer's input, the
//!   n stacked streams (a view: the whole n·U storage is kept), and keeps its output; the
//!   `modality_router` keeps its input (U); `tanh` keeps its n-wide output, which the
//!   `prediction_coefs` linear reads; the matmul keeps the streams (same storage) and the n²
//!   coefficients. `input_layernorm` then reads the predictions, another n·U storage, of which
//!   the block's "attention norm" term counts one U.
//! - `Gemma3nTextAltUp.correct` (lines 1030–1056): `router_norm` on the layer's output (input and
//!   output, 2U), the router's input (U), `tanh` (n), the n correction coefficients (+1: a new
//!   tensor) and the repeated innovation (n·U) kept by the multiply.
//! - `Gemma3nTextDecoderLayer.forward` (lines 1297–1322): the corrected active stream's clone
//!   kept by the `correct_output_scale` multiply (U), `per_layer_input_gate`'s input (U), the
//!   activation's input and output and `per_layer_projection`'s input (p each),
//!   `post_per_layer_input_norm` (a residual norm over h); `Gemma3nTextLaurelBlock` (lines
//!   931–935): `linear_left` reads the norm output q/k/v already keep, `linear_right` its r-wide
//!   output, `post_laurel_norm` a residual norm over h.
//! - `Gemma3nTextMLP._gaussian_topk` (lines 957–973), in the layers `activation_sparsity_pattern`
//!   makes sparse: `std` keeps the gate output and its result, `relu` its output, which the
//!   activation then reads: one gate-wide tensor and one value per token more than a dense
//!   MLP, averaged here over all blocks.
//! - `Gemma3nTextModel.forward` (lines 1682–1740) and `project_per_layer_inputs` (1761–1780):
//!   `per_layer_projection_norm` over L·p per token, the per-layer inputs (L·p per token, one
//!   storage every layer's slice views); each of the n − 1 AltUp projections and unembedding
//!   projections keeps its output twice (squared, then scaled: 2U) and magnitudes (2 values
//!   per token), each side one target magnitude and its mean (2 per token); the unembedding
//!   projections read the last layer's n streams (n·U).
//!
//! Under LoRA (a frozen base, measured for Gemma 4 in `gemma4.json`'s `lora_activations`) the
//! per-layer path keeps only the activation's input per block and the per-layer inputs.
//!
//! Gemma 4 has the per-layer inputs without AltUp or LAuReL (their terms absent, and no
//! corrected-stream clone before the gate: `Gemma4TextDecoderLayer.forward`, lines 1408–1415).
//!
//! Measured in fp32 on CPU (`tests/fixtures/measured/gemma3n.json`, `tests/gemma3n.rs`;
//! `gemma4.json`, `tests/gemma4.rs`).

use super::norm::{linear_inputs, residual_norm};
use super::term::{push, ActTerm, Ctx, Place, Split};
use crate::model::arch::{PerLayerInputs, Scope, TransformerArch};
use crate::model::dtype::F32;

/// AltUp, LAuReL and the per-layer input path, per block.
pub fn per_layer_block_terms(t: &TransformerArch, pl: &PerLayerInputs, c: &Ctx, out: &mut Vec<ActTerm>) {
    let place = Place::Block(Scope::Layer);
    let (h, n, p, r) = (t.hidden as f64, pl.altup_inputs as f64, pl.width as f64, pl.laurel_rank as f64);
    let u = c.r * c.tokens * h;
    let norm = residual_norm(t.norm.kind, c, h);
    // Both router norms: the n input streams (of which the norm keeps the storage) or the
    // layer's output, each norm's output; the statistics as a residual norm's.
    if n > 0.0 {
        // Both router norms: the n input streams (of which the norm keeps the storage) or the
        // layer's output, each norm's output; the statistics as a residual norm's.
        push(out, "AltUp router norms", 2.0 * norm + (n - 1.0) * u, Split::Sequence, place);
        push(out, "AltUp predictions (input norm's stream storage)", (n - 1.0) * u, Split::Sequence, place);
        push(out, "AltUp router inputs", 2.0 * linear_inputs(c, h, 1.0), Split::Sequence, place);
        push(out, "AltUp coefficients", c.r * c.tokens * (3.0 * n + n * n), Split::Sequence, place);
        push(out, "AltUp innovation (repeated n times)", n * u, Split::Sequence, place);
    }
    if r > 0.0 {
        push(out, "LAuReL", norm + linear_inputs(c, r, 1.0), Split::Sequence, place);
    }
    if pl.sparse_layers > 0 {
        let per_sparse_layer = c.x * c.tokens * (t.mlp.ffn as f64 + 1.0);
        push(out, "Gaussian top-k (activation sparsity)", per_sparse_layer * pl.sparse_layers as f64 / t.layers.max(1) as f64, Split::Sequence, place);
    }
    if p > 0.0 {
        // With AltUp, the corrected stream's clone the output scale keeps (U).
        let clone = if n > 0.0 { u } else { 0.0 };
        let path = if c.lora.is_some() {
            // A frozen base (LoRA; PEFT's usual targets do not name these linears): the gate and
            // projection keep no input, and the product keeps only the per-layer input, which
            // carries no gradient from the frozen tables; the activation keeps its input.
            c.x * c.tokens * p
        } else {
            linear_inputs(c, h, 1.0) + 2.0 * c.r * c.tokens * p + linear_inputs(c, p, 1.0)
        };
        push(out, "per-layer input gate", clone + path + norm, Split::Sequence, place);
    }
}

/// The per-layer inputs and AltUp's projections in (`Place::Input`) and out (`Place::Output`).
pub fn per_layer_edge_terms(t: &TransformerArch, pl: &PerLayerInputs, c: &Ctx, out: &mut Vec<ActTerm>) {
    let (h, n) = (t.hidden as f64, pl.altup_inputs as f64);
    let lp = (t.layers * pl.width) as f64;
    let u = c.r * c.tokens * h;
    // The norm over each layer's p-wide slice: input and output L·p per token, statistics per layer.
    let projection_norm = 2.0 * c.r * c.tokens * lp + 2.0 * c.r * c.tokens * t.layers as f64;
    let magnitudes = c.r * c.tokens * (2.0 + 2.0 * (n - 1.0));
    if lp > 0.0 {
        // Without AltUp (Gemma 4) the first block's input norm reads the same embeddings the
        // projection keeps: one storage, counted with the block, unless autocast casts a copy.
        let embeddings = if n == 0.0 && !c.mixed && c.r == F32 { 0.0 } else { linear_inputs(c, h, 1.0) };
        // Under LoRA the tables and the projection are frozen and the embeddings carry no
        // gradient: only the per-layer inputs the blocks' products keep remain.
        let computed = if c.lora.is_some() { 0.0 } else { projection_norm + embeddings };
        push(out, "per-layer inputs", computed + c.r * c.tokens * lp, Split::Sequence, Place::Input);
    }
    if n > 0.0 {
        push(out, "AltUp projections", (n - 1.0) * 2.0 * u + magnitudes, Split::Sequence, Place::Input);
        push(out, "AltUp unembedding projections", n * u + (n - 1.0) * 2.0 * u + magnitudes, Split::Sequence, Place::Output);
    }
}
