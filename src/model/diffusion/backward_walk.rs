//! A diffusion denoiser's backward, walked op by op over the graph its simulated forward
//! recorded ([`Tape`](super::autograd::Tape)): what is alive at each node's backward, and the
//! most at once.
//!
//! The walk follows PyTorch's autograd engine (`torch/csrc/autograd/engine.cpp`):
//! - order: one device's ready queue runs the ready node with the highest sequence number
//!   first (`CompareNodeTaskTime`), and a node is ready once every node that consumed its
//!   outputs has run; so a single-stream graph runs in exactly the reverse of its creation
//!   order, which is the order the forward recorded its ops;
//! - a node's call (`call_function`) takes its output's gradient (its `InputBuffer`, moved in),
//!   allocates its inputs' gradients and any scratch of its formula, and releases its saved
//!   variables right after (`fn.release_variables()`: the graph is not retained); the incoming
//!   gradient is freed when the call returns, unless it passed it on unchanged (`AddBackward`
//!   hands the same tensor to both operands, `CatBackward` hands out views of it);
//! - a gradient for a tensor used twice (a residual stream) is accumulated into the one buffer
//!   its producer will read (`InputBuffer::accumulate`, in place when the buffer is not shared:
//!   `input_buffer.cpp`), so the second gradient is alive only during the call that made it;
//! - a slice's gradient is a zero-filled tensor of the whole base (`slice_backward`), so a
//!   gradient for a view of a longer storage costs the whole storage;
//! - a parameter's `.grad` is the first gradient `AccumulateGrad` receives, kept until
//!   `zero_grad(set_to_none=True)` (`torch/csrc/autograd/functions/accumulate_grad.h`: it steals
//!   the incoming tensor), so parameter gradients accumulate as backward reaches their ops;
//! - under non-reentrant `torch.utils.checkpoint` (`torch/utils/checkpoint.py`,
//!   `_checkpoint_without_reentrant_generator`), the first unpack inside a checkpointed block
//!   reruns the block's forward with saving on, so everything the block saves is alive again
//!   when backward reaches its last op, then freed op by op as backward walks through it; the
//!   block's inputs (held by the checkpoint frame) go when the block's backward is done.
//!
//! The loss of diffusers' training scripts closes the graph:
//! `F.mse_loss(model_pred.float(), target.float())` keeps the fp32 prediction and target, and
//! its backward makes a fp32 gradient of the prediction, cast back to the prediction's type;
//! the prediction itself stays referenced by the script until the step ends.

use std::collections::HashMap;

use super::forward_live::Lives;

/// One recorded op: the tensor it made, the gradients its backward makes for its inputs, the
/// parameter gradients it makes first, and the scratch its backward formula allocates beside
/// them.
#[derive(Clone, Debug)]
struct Op {
    out: u32,
    /// Bytes of the output's gradient (the output's own size and type).
    out_grad: f64,
    inputs: Vec<Input>,
    params: f64,
    scratch: f64,
}

/// An input's gradient: `id`, the bytes the call allocates for it (`cost`), and the bytes it
/// occupies while it waits for its producer (`keep`): equal for a fresh gradient, 0 allocated
/// for one handed over from the output's gradient (`add`, `cat`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Input {
    pub(crate) id: u32,
    pub(crate) cost: f64,
    pub(crate) keep: f64,
    /// A piece of a split tensor: the pieces' gradients wait side by side (`SplitBackward`
    /// gathers them) rather than accumulating into one buffer.
    pub(crate) piece: bool,
}

/// The recorded graph of one training forward.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    ops: Vec<Op>,
    /// For each tensor id (from 1), the number of ops recorded before it was made: its gradient
    /// is consumed once the walk has run back past that point.
    created: Vec<usize>,
    /// Saved bytes released by the backward of the op at each index (the first op, in forward
    /// order, to save a storage holds it longest).
    frees: Vec<f64>,
    /// Checkpointed blocks: the range of ops they ran, the bytes they save when recomputed and
    /// the range of tensor ids they made.
    blocks: Vec<(usize, usize, f64, u32, u32)>,
    /// Every tensor's lifetime in the forward.
    pub(crate) lives: Lives,
}

/// What the walk found: the most alive at once beyond the saved tensors, and of that the part
/// that is the recomputed block's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Walk {
    /// Peak of (saved not yet freed + recomputed block + gradients in flight + parameter
    /// gradients made so far + the loss's tensors), minus the saved tensors of the forward.
    pub beyond_saved: f64,
    /// The recomputed block's saved bytes alive at that peak.
    pub recomputed: f64,
}

impl Graph {
    /// A tensor was made now.
    pub(crate) fn made(&mut self, id: u32, bytes: f64) {
        self.lives.made(id, bytes);
        let i = id as usize;
        if self.created.len() < i {
            self.created.resize(i, usize::MAX);
        }
        self.created[i - 1] = self.ops.len();
    }

    /// `bytes` saved now are released by the backward of the op being recorded.
    pub(crate) fn saved(&mut self, bytes: f64) {
        let i = self.ops.len();
        if self.frees.len() <= i {
            self.frees.resize(i + 1, 0.0);
        }
        self.frees[i] += bytes;
    }

    /// The op being recorded now: it made `out` (`out_grad` bytes of gradient).
    pub(crate) fn op(&mut self, out: u32, out_grad: f64, inputs: Vec<Input>, params: f64, scratch: f64) {
        self.ops.push(Op { out, out_grad, inputs, params, scratch });
    }

    /// The ops recorded so far (where a checkpointed block starts).
    pub(crate) fn len(&self) -> usize {
        self.ops.len()
    }

    /// A checkpointed block ran the ops from `start` to now, made the tensors from `first` on
    /// and saves `bytes` when recomputed.
    pub(crate) fn block(&mut self, start: usize, bytes: f64, first: u32) {
        if self.ops.len() > start {
            self.blocks.push((start, self.ops.len(), bytes, first, self.lives.len()));
        }
    }

    fn created(&self, id: u32) -> usize {
        self.created.get(id as usize - 1).copied().unwrap_or(0)
    }

    /// Walk backward from `pred` (the model's output, `pred_bytes` per element, `elems`
    /// elements) with `saved` bytes kept by the forward. Parameter gradients are the recorded
    /// ops' weights (linears, convolutions, norms, LoRA adapters); biases and embedding tables
    /// are left out (a bias is 1/fan-in of its weight). Then the forward's own peak beyond what
    /// it has saved (`forward_live.rs`) is compared, since with a frozen base it can be larger.
    pub(crate) fn walk(&self, pred: u32, elems: f64, pred_bytes: f64, saved: f64) -> Walk {
        let mut pending: HashMap<u32, f64> = HashMap::new();
        let mut in_flight = 0.0;
        let mut live = saved;
        let mut grads = 0.0;
        let mut best = Walk::default();
        let mut recomputed = 0.0;
        // the loss: the fp32 prediction (a copy unless it is fp32) and target, kept by
        // `MseLossBackward`; its fp32 gradient, then the cast back
        let copy = if pred_bytes == 4.0 { 0.0 } else { elems * 4.0 };
        let kept = copy + elems * 4.0;
        let note = |now: f64, recomputed: f64, best: &mut Walk| {
            if now - saved > best.beyond_saved {
                *best = Walk { beyond_saved: now - saved, recomputed };
            }
        };
        note(live + kept + elems * 4.0, 0.0, &mut best);
        if copy > 0.0 {
            note(live + elems * 4.0 + elems * pred_bytes, 0.0, &mut best);
        }
        // the prediction stays referenced by the script for the whole backward
        live += elems * pred_bytes;
        pending.insert(pred, elems * pred_bytes);
        in_flight += elems * pred_bytes;
        for i in (0..self.ops.len()).rev() {
            if let Some(&(_, _, bytes, lo, hi)) = self.blocks.iter().find(|b| b.1 == i + 1) {
                // the recomputation: the block's forward with saving on, beside what is alive
                let (forward, _) = self.lives.peak(lo, hi, true);
                note(live + in_flight + grads + forward, forward, &mut best);
                live += bytes;
                recomputed += bytes;
            }
            let op = &self.ops[i];
            let g_out = match pending.remove(&op.out) {
                Some(g) => {
                    in_flight -= g;
                    g
                }
                // its consumer was not recorded: its gradient arrives now
                None => op.out_grad,
            };
            let cost: f64 = op.inputs.iter().map(|x| x.cost).sum();
            note(live + in_flight + grads + g_out + cost + op.params + op.scratch, recomputed, &mut best);
            let freed = self.frees.get(i).copied().unwrap_or(0.0);
            live -= freed;
            if self.blocks.iter().any(|b| b.0 <= i && i < b.1) {
                recomputed = (recomputed - freed).max(0.0);
            }
            grads += op.params;
            for x in &op.inputs {
                match pending.get_mut(&x.id) {
                    Some(g) if x.piece => {
                        *g += x.keep;
                        in_flight += x.keep;
                    }
                    Some(_) => {}
                    None => {
                        pending.insert(x.id, x.keep);
                        in_flight += x.keep;
                    }
                }
            }
            // gradients of tensors made since the previous op were consumed by their producers
            pending.retain(|&id, g| {
                let gone = self.created(id) >= i && id != pred;
                if gone {
                    in_flight -= *g;
                }
                !gone
            });
            if self.blocks.iter().any(|b| b.0 == i) {
                recomputed = 0.0;
            }
        }
        // the forward itself, beside what it has saved so far
        let (forward, kept) = self.lives.peak(1, self.lives.len(), false);
        if forward - kept > best.beyond_saved {
            best = Walk { beyond_saved: forward - kept, recomputed: 0.0 };
        }
        best
    }
}
