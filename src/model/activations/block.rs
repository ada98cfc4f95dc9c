//! One transformer block's saved tensors: the norms where the placement puts them, attention
//! (`attention.rs`), a hybrid's mixer (`mixer.rs`), cross-attention (T5), the MLP (`mlp.rs`),
//! dropout masks and the LoRA adapters' intermediates (`lora.rs`). The decoder (`transformer.rs`)
//! and a vision tower (`tower.rs`) both stack it.

use super::attention::{adapted_attention_linears, attention_terms};
use super::lora::adapter_intermediates;
use super::mixer::mixer_terms;
use super::mlp::mlp_terms;
use super::moe_lora::moe_lora_terms;
use super::norm::residual_norm;
use super::per_layer::per_layer_block_terms;
use super::shared::shared_block_terms;
use super::term::{push, push_input_gradient_only, ActTerm, Ctx, Place, Split};
use crate::model::arch::{Placement, Scope, Stack, TransformerArch};
use crate::model::dtype::BOOL;
use crate::model::inputs::Training;

/// One block: norms where the placement puts them, attention, cross-attention (T5), MLP.
pub(super) fn block_terms(t: &TransformerArch, training: &Training, c: &Ctx, out: &mut Vec<ActTerm>) {
    let h = t.hidden as f64;
    let layer = Place::Block(Scope::Layer);
    let norm = residual_norm(t.norm.kind, c, h);
    let placement = t.norm.placement;
    if matches!(placement, Placement::Pre | Placement::Sandwich | Placement::ParallelShared | Placement::ParallelTwo) {
        // A frozen norm (LoRA) keeps its statistics only for its input's gradient.
        if c.frozen_norms {
            push_input_gradient_only(out, "attention norm", norm, Split::Sequence, layer);
        } else {
            push(out, "attention norm", norm, Split::Sequence, layer);
        }
    }
    attention_terms(t, training, c, t.attention_scope(), out);
    if let Some(hy) = &t.hybrid {
        mixer_terms(t, &hy.mixer, training.mixer_kernels, c, out);
        if let Some(shared) = &hy.shared {
            shared_block_terms(t, shared, c, out);
        }
    }
    match placement {
        Placement::Post => push(out, "attention output norm", norm, Split::Sequence, layer),
        Placement::Sandwich | Placement::PostSublayer => push(out, "post-attention norm", norm, Split::Sequence, layer),
        _ => {}
    }
    if t.stack == Stack::EncoderDecoder {
        let cross = Place::Block(Scope::Cross);
        push(out, "cross-attention norm", norm, Split::Sequence, cross);
        attention_terms(t, training, c, Scope::Cross, out);
    }
    let one_sublayer = t.hybrid.as_ref().is_some_and(|hy| hy.one_sublayer);
    match placement {
        // Mamba, Nemotron-H: the block's one norm is before its one sublayer, counted above.
        _ if one_sublayer => {}
        Placement::Pre | Placement::Sandwich => push(out, "MLP norm", norm, Split::Sequence, layer),
        // Both norms read the block input, saved once by the first: the second adds its statistics.
        Placement::ParallelTwo => push(out, "MLP norm", norm - c.r * c.tokens * h, Split::Sequence, layer),
        _ => {}
    }
    let before = out.len();
    mlp_terms(t, c, out);
    if let (Some(moe), Some(l)) = (t.moe.as_ref().filter(|m| m.peft.fused), &c.lora) {
        moe_lora_terms(t, moe, c, l, out);
    }
    if placement == Placement::ParallelShared && !c.mixed {
        // The MLP reads the attention norm's output, already saved for q/k/v.
        out.iter_mut().skip(before).filter(|a| a.name == "MLP inputs" || a.name == "MoE inputs").for_each(|a| a.bytes = 0.0);
    }
    if c.dropout {
        push(out, "MLP dropout mask", BOOL * c.tokens * h, Split::Sequence, layer);
    }
    if let Some(l) = &c.lora {
        let attention = adapted_attention_linears(t, l);
        // A non-gated MLP has no gate linear: its `fc1` is the up projection.
        let (reads, downs) = super::mlp::dense_adapters(t, l);
        let mlp = reads + downs;
        // mllama's cross-attention layers count their own (`cross_attention.rs`).
        let attention_place = if t.vision_cross.is_some() { Place::Block(Scope::Attention) } else { layer };
        push(out, "LoRA adapter intermediates (attention)", adapter_intermediates(c, l, attention), Split::Sequence, attention_place);
        push(out, "LoRA adapter intermediates (MLP)", adapter_intermediates(c, l, mlp), Split::Sequence, Place::Block(Scope::DenseMlp));
    }
    if let Some(pl) = &t.per_layer {
        per_layer_block_terms(t, pl, c, out);
    }
    match placement {
        Placement::Post => push(out, "MLP output norm", norm, Split::Sequence, layer),
        Placement::Sandwich | Placement::PostSublayer => push(out, "post-MLP norm", norm, Split::Sequence, layer),
        _ => {}
    }
}
