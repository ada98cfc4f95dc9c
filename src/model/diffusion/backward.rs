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
    "what the checkpointed block being recomputed saves again (torch.utils.checkpoint, non-reentrant), alive at the backward's peak, from the denoiser's own op-by-op walk";
const GRADIENTS: &str =
    "at the backward's peak: activation gradients in flight, parameter gradients made so far (set_to_none zero_grad), the MSE loss's fp32 prediction, target and gradient, minus the saved tensors already freed; from walking the denoiser's recorded forward back as autograd's engine does (backward_walk.rs)";

/// Add a training step's diffusion transients: the frozen parts' encodes when their outputs
/// are not cached (`encodes.rs`; `saved`: the bytes of activations the step saves) and the
/// backward's working set.
pub fn add_step_transients(d: &DiffusionArch, training: &Training, saved: f64, ledger: &mut Ledger) {
    super::encodes::add_encodes(d, training, saved, ledger);
    add_backward(d, training, ledger);
}

/// Add what one micro-batch's backward holds at its peak beyond the saved tensors: the
/// recomputed block under checkpointing, the gradients in flight.
fn add_backward(d: &DiffusionArch, training: &Training, ledger: &mut Ledger) {
    let Some(denoiser) = &d.denoiser else { return };
    let walk = denoiser.backward(&d.run(training, training.micro_batch));
    let moment = if training.checkpointing == Checkpointing::None { Moment::BlockBackward } else { Moment::Recompute };
    let recomputed = walk.recomputed.min(walk.beyond_saved);
    ledger.add(Component::Temporary, "recomputed block (checkpointing)", recomputed, RECOMPUTE, Lifetime::Transient(moment));
    ledger.add(Component::Temporary, "backward: gradients in flight", walk.beyond_saved - recomputed, GRADIENTS, Lifetime::Transient(moment));
}
