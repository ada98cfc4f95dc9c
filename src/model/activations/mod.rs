//! Activation memory: the tensors saved for backward by the micro-batches in flight on one
//! GPU, term by term.
//!
//! The per-micro-batch terms come from `transformer.rs` and `resnet.rs`, which mirror what
//! PyTorch autograd saves for the Hugging Face implementations (checked against
//! `tests/fixtures/measured/activations.json`, measured with `saved_tensors_hooks`). This
//! module applies what the parallel layout does to them (Korthikanti et al. 2022, Table 2
//! and §4.2.3):
//! - tensor parallelism divides the attention and MLP internals by t; sequence parallelism
//!   also divides the rest (norm inputs, dropout masks, block inputs);
//! - context parallelism divides every token-proportional term by cp;
//! - pipeline parallelism: stage i of p under 1F1B holds min(p − i, m) micro-batches in
//!   flight (the first stage holds p, so ≈ the activations of all L layers); the interleaved
//!   schedule holds min(2(p − i − 1) + (v − 1)p + 1, m·v) chunks of L/(p·v) layers (Megatron's
//!   warm-up), which on the first stage is Korthikanti's 1 + (p − 1)/(p·v) over 1F1B; GPipe
//!   keeps all m.

mod attention;
mod block;
mod compile;
mod cross_attention;
mod diffusion;
mod gemma4_vision;
mod lora;
mod mixer;
mod mixer_torch;
mod mixer_torch_delta;
mod mixer_torch_scan;
mod mixer_torch_zamba;
mod mllama;
mod mlp;
mod moe_lora;
mod norm;
mod per_layer;
pub mod resnet;
mod shared;
mod term;
mod tower;
pub mod transformer;

use super::arch::{Architecture, Scope};
use super::breakdown::{Component, Lifetime, Span};
use super::layout::Layout;
use super::ledger::Ledger;
use crate::model::inputs::{Checkpointing, PpSchedule, Training};
pub use term::{ActTerm, Place, Split};

/// Per-micro-batch saved tensors of the whole model (every `Block` term is for one block).
#[derive(Clone, Debug, PartialEq)]
pub struct MicroBatch {
    pub terms: Vec<ActTerm>,
    /// Bytes one block keeps under full checkpointing (its input), before TP/SP division.
    pub checkpoint_per_block: f64,
    /// Fraction of the blocks holding each block scope (dense vs MoE blocks, T5's decoder).
    shares: [f64; 6],
    /// Blocks of each scope, at the start of the stack, that save nothing: a hybrid's blocks
    /// before its first attention block when LoRA adapts attention alone without checkpointing
    /// (`LeadBlocks`).
    lead: [f64; 6],
    /// Nothing before the first block needs a gradient ([`entry_without_gradient`]): its
    /// `input_gradient_only` terms are not kept.
    entry_without_gradient: bool,
}

/// Block scopes in the order of `MicroBatch::shares`.
const BLOCK_SCOPES: [Scope; 6] = [Scope::Layer, Scope::DenseMlp, Scope::MoeLayer, Scope::Cross, Scope::Attention, Scope::Mixer];

impl MicroBatch {
    /// Fraction of the blocks that hold a term of this scope.
    fn share(&self, scope: Scope) -> f64 {
        BLOCK_SCOPES.iter().position(|s| *s == scope).map_or(0.0, |i| self.shares[i])
    }

    /// Blocks of this scope at the start of the stack that save nothing.
    fn lead(&self, scope: Scope) -> f64 {
        BLOCK_SCOPES.iter().position(|s| *s == scope).map_or(0.0, |i| self.lead[i])
    }
}

/// A hybrid's blocks before its first attention block, per `BLOCK_SCOPES`, when nothing in them
/// needs a gradient: LoRA adapts attention linears alone and nothing is checkpointed (with
/// checkpointing, transformers' `enable_input_require_grads` makes the embedding's output need a
/// gradient, `modeling_utils.py` 3192–3200).
fn untrained_lead(arch: &Architecture, training: &Training) -> [f64; 6] {
    use crate::model::arch::LinearKind::{K, O, Q, V};
    let attention_only = training.lora.as_ref().is_some_and(|l| !l.targets.is_empty() && l.targets.iter().all(|k| matches!(k, Q | K | V | O)));
    let lead = match arch {
        Architecture::Transformer(t) if attention_only && training.checkpointing == Checkpointing::None => t.hybrid.as_ref().map(|h| h.lead),
        _ => None,
    };
    lead.map_or([0.0; 6], |l| [l.blocks as f64, l.dense as f64, l.moe as f64, 0.0, 0.0, l.mixer as f64])
}

/// Whether nothing before the first block needs a gradient, so that it keeps nothing for its
/// input's: a decoder under LoRA (frozen embeddings, a frozen tower and projector) without
/// checkpointing (with it, `enable_input_require_grads` makes the embedding's output need one,
/// `modeling_utils.py` 3192–3200). Measured with PEFT on a tiny Llama (`lora.json`: the first
/// `input_layernorm` keeps nothing, nor do its q/k/v adapters' dropout masks). Hybrids are
/// left to their `LeadBlocks`.
fn entry_without_gradient(arch: &Architecture, training: &Training) -> bool {
    let lora = training.lora.as_ref().is_some_and(|l| !l.vision_tower);
    match arch {
        Architecture::Transformer(t) => lora && training.checkpointing == Checkpointing::None && t.stack == crate::model::arch::Stack::Decoder && t.hybrid.is_none(),
        _ => false,
    }
}

pub fn micro_batch(arch: &Architecture, training: &Training, cp: f64) -> MicroBatch {
    let (terms, checkpoint_per_block) = match arch {
        Architecture::Transformer(t) => transformer::terms(t, training, cp),
        Architecture::Resnet(r) => (resnet::terms(r, training), 0.0),
        Architecture::Diffusion(d) => (diffusion::terms(d, training), 0.0),
    };
    let layers = arch.layers() as f64;
    let shares = BLOCK_SCOPES.map(|scope| arch.blocks(scope) as f64 / layers);
    MicroBatch { terms, checkpoint_per_block, shares, lead: untrained_lead(arch, training), entry_without_gradient: entry_without_gradient(arch, training) }
}

/// Micro-batches whose activations are alive at once on this pipeline stage, counted whole:
/// 1 without a pipeline, min(p − stage, m) under 1F1B and interleaving, m under GPipe.
pub fn in_flight_count(layout: &Layout, grad_accum: u64, schedule: PpSchedule) -> u64 {
    let m = grad_accum.max(1);
    if layout.pp <= 1.0 {
        return 1;
    }
    match schedule {
        PpSchedule::Gpipe => m,
        PpSchedule::OneFOneB | PpSchedule::Interleaved => (layout.pp as u64).saturating_sub(layout.stage).clamp(1, m),
    }
}

/// Micro-batches' worth of activations alive at once on this pipeline stage: the whole count
/// ([`in_flight_count`]) under 1F1B and GPipe; under the interleaved schedule, Megatron-LM's
/// warm-up (`forward_backward_pipelining_with_interleaving`): rank r runs
/// (p − r − 1)·2 + (v − 1)·p warm-up forwards of its model chunks (L/(p·v) layers each),
/// then one more in steady 1F1B, at most all m·v; in units of a stage's L/p layers that is
/// ÷ v. The first stage (m ≥ p) gets p·(1 + (p − 1)/(p·v)) (Korthikanti et al. 2022 §4.2.3).
pub fn in_flight(layout: &Layout, grad_accum: u64, schedule: PpSchedule, virtual_stages: u64) -> f64 {
    let p = layout.pp;
    if schedule == PpSchedule::Interleaved && p > 1.0 {
        let (m, v) = (grad_accum.max(1) as f64, virtual_stages.max(1) as f64);
        let warmup = 2.0 * (p - layout.stage as f64 - 1.0) + (v - 1.0) * p;
        (warmup + 1.0).min(m * v) / v
    } else {
        in_flight_count(layout, grad_accum, schedule) as f64
    }
}

/// Bytes of the largest block's saved tensors for one micro-batch on this GPU (used for the
/// recompute buffer of full checkpointing and for inference workspaces): the common terms,
/// the larger of a dense and an MoE feed-forward, cross-attention where there is one (T5's beside
/// self-attention, mllama's instead of it), and in a hybrid stack the larger of attention and the
/// other mixer (both in Falcon-H1's parallel
/// blocks, where every block has both).
pub fn one_block_bytes(mb: &MicroBatch, layout: &Layout, sp: bool) -> f64 {
    let sum = |scope: Scope| -> f64 {
        if mb.share(scope) == 0.0 {
            return 0.0;
        }
        mb.terms.iter().filter(|t| t.place == Place::Block(scope)).map(|t| divided(t, layout, sp)).sum()
    };
    let mixers =
        if mb.share(Scope::Attention) == 1.0 && mb.share(Scope::Mixer) == 1.0 { sum(Scope::Attention) + sum(Scope::Mixer) } else { sum(Scope::Attention).max(sum(Scope::Mixer)) };
    // Gemma 4's experts run beside the dense MLP in every block: both count.
    let ffn = if mb.share(Scope::DenseMlp) == 1.0 && mb.share(Scope::MoeLayer) == 1.0 {
        sum(Scope::DenseMlp) + sum(Scope::MoeLayer)
    } else {
        sum(Scope::DenseMlp).max(sum(Scope::MoeLayer))
    };
    // mllama's cross-attention layers replace the self-attention of theirs (the two shares make
    // the whole stack); T5's decoder blocks hold both.
    let replaces = mb.share(Scope::Cross) > 0.0 && (mb.share(Scope::Attention) + mb.share(Scope::Cross) - 1.0).abs() < 1e-9;
    let attention = if replaces { mixers.max(sum(Scope::Cross)) } else { mixers + sum(Scope::Cross) };
    sum(Scope::Layer) + ffn + attention
}

fn divided(term: &ActTerm, layout: &Layout, sp: bool) -> f64 {
    match term.split {
        Split::Tensor => term.bytes / layout.tp,
        Split::Sequence if sp => term.bytes / layout.tp,
        Split::Sequence => term.bytes,
        Split::Experts => term.bytes / (layout.tp * layout.ep),
    }
}

/// Add this stage's activations to the ledger, one term per saved tensor group, and return the
/// bytes activation offloading keeps in host memory instead.
///
/// Activation offloading (torchtune `OffloadActivations`, `training/_activation_offloading.py`;
/// TRL reuses it) copies every tensor saved inside its context to host memory and brings it back
/// in backward: the blocks' and the embeddings' tensors leave the GPU; the output head's input
/// (wrapped in `NoOpManager`, lines 396–418) and the loss's tensors (computed outside the
/// context) stay. Measured with the real code, emulated on CPU, in `techniques.json`.
pub fn add_activations(mb: &MicroBatch, training: &Training, layout: &Layout, sp: bool, flight: f64, ledger: &mut Ledger) -> f64 {
    let offload = training.techniques.activation_offload;
    let mut host = 0.0;
    let mut add = |ledger: &mut Ledger, name: &'static str, bytes: f64, formula: &'static str, span: Span| {
        // The head input and the loss's tensors (the output span) stay on the GPU.
        if offload && span != Span::Output {
            host += bytes;
        } else {
            ledger.add(Component::Activations, name, bytes, formula, Lifetime::Saved(span));
        }
    };
    if flight <= 1.0 {
        // One micro-batch in flight: its output span is freed before its blocks' backward.
        ledger.free_output_before_blocks();
    }
    let layers = layout.layers_on_stage;
    if training.checkpointing == Checkpointing::Full {
        let input = if sp { mb.checkpoint_per_block / layout.tp } else { mb.checkpoint_per_block };
        add(
            ledger,
            "block inputs (full checkpointing)",
            input * layers * flight,
            "one block input per block, r·s·b·h bytes — Korthikanti et al. 2022 Table 2, full recompute row",
            Span::Blocks,
        );
    }
    for term in &mb.terms {
        let bytes = divided(term, layout, sp) * flight;
        match term.place {
            Place::Block(_) if training.checkpointing == Checkpointing::Full => {}
            Place::Block(_) if term.attention_core && training.checkpointing == Checkpointing::Selective => {}
            Place::Block(scope) if term.attention_core => add(
                ledger,
                term.name,
                bytes * layers * mb.share(scope),
                "fp32 softmax output + cast/dropout of b·a·s² per block (eager attention) — Korthikanti 5as²b term",
                Span::Blocks,
            ),
            Place::Block(scope) => {
                let entry = if term.input_gradient_only && mb.entry_without_gradient { 1.0 } else { 0.0 };
                let lead = if layout.first { mb.lead(scope) + entry } else { 0.0 };
                add(ledger, term.name, bytes * (layers * mb.share(scope) - lead).max(0.0), BLOCK_FORMULA, Span::Blocks)
            }
            Place::Input if layout.first => add(ledger, term.name, bytes, EDGE_FORMULA, Span::Input),
            Place::Output if layout.last => add(ledger, term.name, bytes, EDGE_FORMULA, Span::Output),
            _ => {}
        }
    }
    host
}

const BLOCK_FORMULA: &str = "saved per block × blocks on this stage × micro-batches in flight, ÷ t where TP/SP split it (activations/transformer.rs; Korthikanti et al. 2022 §4)";
const EDGE_FORMULA: &str =
    "saved once per micro-batch on the first (inputs) or last (head, loss) pipeline stage × micro-batches in flight (activations/; Korthikanti et al. 2022 §4.3)";
