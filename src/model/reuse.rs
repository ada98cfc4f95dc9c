//! What consecutive estimates of one architecture can share: the model states of a pipeline
//! stage (`states::state_bytes`, a pass over every parameter tensor) depend on the stage's
//! layout, the offload and the precision, optimizer, gradient dtype, freezing and LoRA of the step, not on
//! the micro-batch, the accumulation or the checkpointing — which is what a layout search
//! varies most. The last few are kept and handed back when asked for again with equal
//! inputs, so they are the same bytes as computed afresh.

use super::arch::{Architecture, ParamTensor};
use super::inputs::{Frozen, Lora, Offload, Optimizer, Training};
use super::layout::Layout;
use super::precision::Precision;
use super::states::{state_bytes, StateBytes};

/// Model states kept: both stages a pipelined estimate evaluates, for the two offloads the
/// search alternates between, twice over.
const KEPT: usize = 8;

/// Everything `state_bytes` reads besides the architecture.
#[derive(Clone, Debug, PartialEq)]
struct StatesKey {
    layout: Layout,
    offload: Offload,
    precision: Precision,
    optimizer: Optimizer,
    frozen: Frozen,
    lora: Option<Lora>,
    fp32_gradients: bool,
}

impl StatesKey {
    fn new(training: &Training, layout: &Layout, offload: Offload) -> StatesKey {
        StatesKey {
            layout: *layout,
            offload,
            precision: training.precision,
            optimizer: training.optimizer,
            frozen: training.frozen.clone(),
            lora: training.lora.clone(),
            fp32_gradients: training.fp32_gradients,
        }
    }

    /// Equal to `StatesKey::new(training, layout, offload)`, without building it.
    fn matches(&self, training: &Training, layout: &Layout, offload: Offload) -> bool {
        self.layout == *layout
            && self.offload == offload
            && self.precision == training.precision
            && self.optimizer == training.optimizer
            && self.frozen == training.frozen
            && self.lora == training.lora
            && self.fp32_gradients == training.fp32_gradients
    }
}

/// The last model states computed for one architecture. Use one per architecture: the
/// architecture is not part of the key.
#[derive(Clone, Debug, Default)]
pub struct Reuse {
    states: Vec<(StatesKey, StateBytes)>,
    /// Where the next new entry goes once `KEPT` are held.
    next: usize,
}

impl Reuse {
    /// `state_bytes(arch, tensors, training, layout, offload)`, kept or computed.
    pub fn state_bytes(&mut self, arch: &Architecture, tensors: &[ParamTensor], training: &Training, layout: &Layout, offload: Offload) -> StateBytes {
        if let Some((_, bytes)) = self.states.iter().find(|(k, _)| k.matches(training, layout, offload)) {
            return *bytes;
        }
        let bytes = state_bytes(arch, tensors, training, layout, offload);
        let entry = (StatesKey::new(training, layout, offload), bytes);
        if self.states.len() < KEPT {
            self.states.push(entry);
        } else {
            self.states[self.next] = entry;
            self.next = (self.next + 1) % KEPT;
        }
        bytes
    }
}
