//! What a diffusion training step holds beyond the tensors its forward saved: the most its
//! backward (or, with a frozen LoRA base, its forward) has alive at once. A diffusion
//! denoiser has no logits, so its step peaks inside backward (or, for LoRA, at the end of its
//! forward), not at the loss: each denoiser's forward is recorded op by op and walked back as
//! autograd's engine runs it (`backward_walk.rs`: activation gradients in flight, parameter
//! gradients made so far, the saved tensors each node releases, the MSE loss's tensors), and
//! under gradient checkpointing the block being recomputed with its own forward's working set
//! (`forward_live.rs`). Measured against whole steps of tiny denoisers in
//! `tests/diffusion_steps.rs`.

use super::pipeline::DiffusionArch;
use crate::model::breakdown::{Component, Lifetime, Moment};
use crate::model::inputs::{Checkpointing, Training};
use crate::model::ledger::Ledger;

const RECOMPUTE: &str =
    "what the checkpointed block being recomputed saves again (torch.utils.checkpoint, non-reentrant), alive at the backward's peak, from the denoiser's own op-by-op walk";
const GRADIENTS: &str =
    "at the step's peak beyond the saved tensors: activation gradients in flight, parameter gradients made so far (zero_grad(set_to_none=True)), the MSE loss's fp32 prediction, target and gradient, less the saved tensors already released; or, when larger, the forward's unsaved intermediates (a frozen LoRA base saves little); from walking the denoiser's recorded forward back as autograd's engine does (backward_walk.rs, forward_live.rs)";

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
    // one moment: the walk's peak, of which the recomputed block is a part
    let moment = if training.checkpointing == Checkpointing::None { Moment::BlockBackward } else { Moment::Recompute };
    let recomputed = walk.recomputed.min(walk.beyond_saved);
    ledger.add(Component::Temporary, "recomputed block (checkpointing)", recomputed, RECOMPUTE, Lifetime::Transient(moment));
    ledger.add(Component::Temporary, "gradients in flight and unsaved intermediates", walk.beyond_saved - recomputed, GRADIENTS, Lifetime::Transient(moment));
}
