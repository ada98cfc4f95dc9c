//! What a diffusion training step's backward holds beyond the tensors its forward saved:
//! under gradient checkpointing, the block being recomputed. Non-reentrant
//! `torch.utils.checkpoint` (diffusers' `enable_gradient_checkpointing`) reruns a block's
//! forward with saving on when backward reaches it, then runs its backward and frees what it
//! saved; the largest block's is alive at once (`torch/utils/checkpoint.py`,
//! `_checkpoint_without_reentrant_generator`: the recomputation is triggered by the first
//! unpack in backward). Each denoiser's own walk gives the largest block
//! ([`Denoiser::recompute_peak`](super::pipeline::Denoiser::recompute_peak)).

use super::pipeline::DiffusionArch;
use crate::model::breakdown::{Component, Lifetime, Moment};
use crate::model::inputs::{Checkpointing, Training};
use crate::model::ledger::Ledger;

const RECOMPUTE: &str =
    "what the largest checkpointed block saves again when backward recomputes it (torch.utils.checkpoint, non-reentrant), from the denoiser's own op-by-op walk";

/// Add a training step's diffusion transients: the frozen parts' encodes when their outputs
/// are not cached (`encodes.rs`; `saved`: the bytes of activations the step saves) and the
/// recomputed block.
pub fn add_step_transients(d: &DiffusionArch, training: &Training, saved: f64, ledger: &mut Ledger) {
    super::encodes::add_encodes(d, training, saved, ledger);
    add_recompute(d, training, ledger);
}

/// Add the recomputed block of one micro-batch (nothing without checkpointing).
fn add_recompute(d: &DiffusionArch, training: &Training, ledger: &mut Ledger) {
    let Some(denoiser) = &d.denoiser else { return };
    if training.checkpointing == Checkpointing::None {
        return;
    }
    let bytes = denoiser.recompute_peak(&d.run(training, training.micro_batch));
    if bytes > 0.0 {
        ledger.add(Component::Temporary, "recomputed block (checkpointing)", bytes, RECOMPUTE, Lifetime::Transient(Moment::Recompute));
    }
}
