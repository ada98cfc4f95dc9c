//! What one invocation of a shared block (Zamba2, Zamba v1, `arch/shared.rs`) saves for backward
//! beyond the attention core and the MLP, which `attention.rs` and `mlp.rs` count once per
//! invocation (`Scope::Attention` and `Scope::DenseMlp` blocks are the hybrid layers), the
//! q/k/v inputs 2·hidden wide (`TransformerArch::attention_input_width`).
//!
//! transformers 5.25 `modeling_zamba2.py`: `Zamba2AttentionDecoderLayer.forward` (lines
//! 1065–1076) concatenates the hidden state and the embeddings (2·h) into `input_layernorm`,
//! which keeps its input, product and statistics; `pre_ff_layernorm` reads `o_proj`'s output;
//! each adapter pair's second linear keeps the rank-r output of its first (the first reads the
//! norm output q/k/v or `gate_up_proj` already keep, lines 296–298 and 1014);
//! `Zamba2HybridLayer.forward` (line 1181) passes the MLP output through its own `linear`,
//! which keeps it. Measured in `tests/fixtures/measured/zamba2.json` (`tests/zamba2.rs`).

use super::norm::{linear_inputs, residual_norm};
use super::term::{push, ActTerm, Ctx, Place, Split};
use crate::model::arch::{Scope, SharedBlocks, TransformerArch};

/// The shared block's norms, adapters and output linear, per invocation.
pub fn shared_block_terms(t: &TransformerArch, shared: &SharedBlocks, c: &Ctx, out: &mut Vec<ActTerm>) {
    let place = Place::Block(Scope::Attention);
    let h = t.hidden as f64;
    push(out, "shared block input norm (hidden ‖ embeddings)", residual_norm(t.norm.kind, c, 2.0 * h), Split::Sequence, place);
    push(out, "shared block pre-MLP norm", residual_norm(t.norm.kind, c, h), Split::Sequence, place);
    // Under LoRA the adapters and `linear` are frozen base weights: they keep nothing.
    if c.lora.is_some() {
        return;
    }
    let (attention, mlp) = (if shared.attention_adapters { 1.0 } else { 0.0 }, if shared.mlp_adapter { 1.0 } else { 0.0 });
    if attention + mlp > 0.0 {
        push(out, "shared block adapter intermediates", c.x * c.tokens * shared.adapter_rank as f64 * (3.0 * attention + mlp), Split::Sequence, place);
        if c.mixed {
            // Under autocast each adapter's first linear casts the norm output it reads again.
            push(out, "shared block adapter inputs", linear_inputs(c, attention * 3.0 * 2.0 * h + mlp * h, 1.0), Split::Sequence, place);
        }
    }
    push(out, "hybrid layer linear input", linear_inputs(c, h, 1.0), Split::Sequence, place);
}
