//! What a training forward holds at once beyond what it has saved so far: the intermediates
//! that no op saves, alive from the op that makes them until the op that last reads them has
//! made its own output (eager PyTorch frees a storage when its last reference goes:
//! `c10/core/StorageImpl.h`, reference counted). For a frozen base (LoRA) much of a block is
//! such intermediates, since a frozen linear keeps nothing for its weight: a block's working
//! set can then exceed its backward's, at the end of the forward or, under checkpointing, while
//! backward recomputes the block.
//!
//! Time is the creation order of tensors (their ids); only tensors made by recorded ops are
//! counted (the model's inputs exist before the step).

/// Each tensor's lifetime in the forward, indexed by id − 1.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lives {
    bytes: Vec<f64>,
    /// Made by a recorded op (else an input, or made where no op was recorded).
    output: Vec<bool>,
    /// The id of the last tensor made by an op that read it.
    last_use: Vec<u32>,
    /// When it was first saved, and whether inside a checkpointed block.
    saved: Vec<Option<(u32, bool)>>,
    /// When each save inside a checkpointed block happened, repeated saves included (each is
    /// a holder the recomputation must fill).
    block_saves: Vec<u32>,
}

impl Lives {
    pub(crate) fn made(&mut self, id: u32, bytes: f64) {
        let i = id as usize - 1;
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0.0);
            self.output.resize(i + 1, false);
            self.last_use.resize(i + 1, 0);
            self.saved.resize(i + 1, None);
        }
        self.bytes[i] = bytes;
        self.last_use[i] = id;
    }

    /// `id` was made by an op from `inputs`.
    pub(crate) fn op(&mut self, id: u32, inputs: impl Iterator<Item = u32>) {
        if let Some(o) = self.output.get_mut(id as usize - 1) {
            *o = true;
        }
        for x in inputs {
            if let Some(u) = self.last_use.get_mut(x as usize - 1) {
                *u = (*u).max(id);
            }
        }
    }

    /// `id` is read (or named) until `until` is made: a Python local that stays bound until
    /// its block's function returns.
    pub(crate) fn hold(&mut self, id: u32, until: u32) {
        if let Some(u) = self.last_use.get_mut(id as usize - 1) {
            *u = (*u).max(until);
        }
    }

    /// A tensor was saved (again) inside a checkpointed block now.
    pub(crate) fn block_save(&mut self, now: u32) {
        self.block_saves.push(now);
    }

    /// `id` was saved now (`now`: the last id made), inside a checkpointed block or not.
    pub(crate) fn saved(&mut self, id: u32, now: u32, in_block: bool) {
        if let Some(s) = self.saved.get_mut(id as usize - 1) {
            s.get_or_insert((now, in_block));
        }
    }

    /// The most alive at once among tensors `lo..=hi`, and the bytes they have saved by the end:
    /// `block` counts the saves made inside checkpointed blocks as saves (a block being
    /// recomputed), else only the others (the forward itself).
    pub(crate) fn peak(&self, lo: u32, hi: u32, block: bool) -> (f64, f64) {
        let (lo, mut hi) = (lo.max(1) as usize, (hi as usize).min(self.bytes.len()));
        if block {
            // non-reentrant checkpoint stops the recomputation at the block's last save
            // (`torch/utils/checkpoint.py`: early stop is on by default,
            // `set_checkpoint_early_stop`; the pack hook raises `_StopRecomputationError` once
            // every holder is filled). An op's inputs are saved before it runs (the generated
            // `VariableType` kernels build the `SavedVariable`s, then redispatch), so a last save
            // of inputs stops the recomputation before that op's output exists; an output save
            // (ReLU's result, attention's output) comes after it: `now` at the save says which.
            let last = self.block_saves.iter().map(|&t| t as usize).filter(|&t| lo <= t && t <= hi).max();
            hi = hi.min(last.unwrap_or(hi));
        }
        if hi < lo {
            return (0.0, 0.0);
        }
        let mut delta = vec![0.0; hi - lo + 2];
        let mut saved = 0.0;
        for i in lo - 1..hi {
            let keeps = self.saved[i].filter(|s| s.1 == block);
            let start = match (self.output[i], keeps) {
                (true, _) => i + 1,
                (false, Some((at, _))) => (at as usize).max(lo),
                (false, None) => continue,
            };
            if start > hi {
                continue;
            }
            delta[start - lo] += self.bytes[i];
            if keeps.is_some() {
                saved += self.bytes[i];
            } else {
                let end = (self.last_use[i] as usize).clamp(start, hi);
                delta[end + 1 - lo] -= self.bytes[i];
            }
        }
        let (mut now, mut most) = (0.0, 0.0_f64);
        for d in &delta[..=hi - lo] {
            now += d;
            most = most.max(now);
        }
        (most, saved)
    }

    /// The last id made.
    pub(crate) fn len(&self) -> u32 {
        self.bytes.len() as u32
    }
}
