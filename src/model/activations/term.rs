//! What every activation term is written in: a saved tensor (`ActTerm`: its bytes, how tensor
//! parallelism splits it, where in the model it sits), the quantities of one micro-batch
//! (`Ctx`, with the LoRA adapters' `LoraCtx`), and the two ways the parts push a term.

use crate::model::arch::{LinearKind, Scope};
use crate::model::inputs::Loss;

/// How a saved tensor is divided across tensor-parallel ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Attention and MLP internals: divided by t (Korthikanti Table 2, the "24/t" part).
    Tensor,
    /// Norm inputs, dropout masks, block inputs: divided by t only with sequence parallelism.
    Sequence,
    /// Copies of the routed experts' weights: divided by t and by the expert-parallel degree
    /// (each rank holds E/ep experts).
    Experts,
}

/// Where in the model a term sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Inside the blocks of this scope (`Layer`: every block; `DenseMlp`, `MoeLayer`,
    /// `Cross`: the blocks that have that part), multiplied by those blocks on the stage.
    Block(Scope),
    /// Before the first block (first pipeline stage).
    Input,
    /// After the last block: final norm, head, loss (last pipeline stage).
    Output,
}

/// One tensor (or group of tensors) saved for backward, for one micro-batch.
#[derive(Clone, Debug, PartialEq)]
pub struct ActTerm {
    pub name: &'static str,
    pub bytes: f64,
    pub split: Split,
    pub place: Place,
    /// Part of the attention core that selective recomputation drops (the 5as²b term).
    pub attention_core: bool,
    /// Kept only to pass a gradient back to the block's input (a frozen norm's statistics, the
    /// dropout masks of adapters reading the block input): the first block does not keep it
    /// when nothing before it needs a gradient (`activations::entry_without_gradient`).
    pub input_gradient_only: bool,
}

/// The quantities every term is written in.
pub struct Ctx {
    /// Tokens in the micro-batch on this rank (b · s / cp).
    pub tokens: f64,
    pub b: f64,
    /// Sequence length on this rank.
    pub s: f64,
    /// Full sequence (keys attended to).
    pub s_full: f64,
    /// Bytes of a matmul output.
    pub x: f64,
    /// Bytes of the residual stream.
    pub r: f64,
    pub mixed: bool,
    pub bf16: bool,
    pub dropout: bool,
    /// How the loss is computed (standard, chunked, fused with the output projection).
    pub loss: Loss,
    /// The output projection's weight is trained (`states::output_weight_trainable`).
    pub head_trainable: bool,
    /// Liger's norm, SwiGLU/GeGLU and RoPE Functions replace the eager code (`norm.rs`, `mlp.rs`).
    pub liger: bool,
    /// The norms' weights are frozen (LoRA): their normalised operand is not saved (`norm.rs`).
    pub frozen_norms: bool,
    /// LoRA adapters (`lora.rs`).
    pub lora: Option<LoraCtx>,
}

/// The adapters of a run, as the activation terms need them.
pub struct LoraCtx {
    pub rank: f64,
    pub dropout: bool,
    /// The adapters' weights in fp32 (PEFT's `autocast_adapter_dtype`, `Lora::fp32_adapters`);
    /// otherwise in the run's dtype (torchtune, LitGPT).
    pub fp32: bool,
    pub targets: Vec<LinearKind>,
}

impl LoraCtx {
    /// Adapted modules among `kinds`: one when they are fused into one module.
    pub fn adapted(&self, kinds: &[LinearKind], fused: bool) -> f64 {
        let n = kinds.iter().filter(|k| self.targets.contains(k)).count() as f64;
        if fused {
            n.min(1.0)
        } else {
            n
        }
    }
}

pub fn push(out: &mut Vec<ActTerm>, name: &'static str, bytes: f64, split: Split, place: Place) {
    out.push(ActTerm { name, bytes, split, place, attention_core: false, input_gradient_only: false });
}

/// A term kept only for the gradient of the block's input ([`ActTerm::input_gradient_only`]).
pub fn push_input_gradient_only(out: &mut Vec<ActTerm>, name: &'static str, bytes: f64, split: Split, place: Place) {
    out.push(ActTerm { name, bytes, split, place, attention_core: false, input_gradient_only: true });
}

/// A term of the attention core, which selective recomputation drops.
pub fn push_core(out: &mut Vec<ActTerm>, name: &'static str, bytes: f64, place: Place) {
    out.push(ActTerm { name, bytes, split: Split::Tensor, place, attention_core: true, input_gradient_only: false });
}
