//! The feed-forward part of a transformer block: a dense MLP (gated or not, with its
//! activation, optionally with gate and up fused into one matrix) or a mixture of experts
//! (routed experts with top-k, shared experts, dense first layers, a layer frequency).
//!
//! Module trees followed: `modeling_llama.py` (`LlamaMLP`), `modeling_phi3.py`
//! (`gate_up_proj`), `modeling_gpt2.py`/`modeling_bert.py` (non-gated with biases),
//! `modeling_t5.py` (`T5DenseActDense`, `T5DenseGatedActDense`), `modeling_mixtral.py`,
//! `modeling_qwen2_moe.py` (shared expert with a sigmoid gate), `modeling_deepseek_v3.py`
//! (shared experts, `first_k_dense_replace`), `modeling_gpt_oss.py` (expert biases, router
//! bias) and `modeling_granitemoe.py`.

use serde::{Deserialize, Serialize};

use super::moe_peft::MoePeft;
use super::param::{check_dim, LinearKind, ParamTensor, PeftReach, Scope, TpSplit};
use crate::error::InputError;

const GATE: &[LinearKind] = &[LinearKind::Gate];
const UP: &[LinearKind] = &[LinearKind::Up];
const DOWN: &[LinearKind] = &[LinearKind::Down];
const GATE_UP: &[LinearKind] = &[LinearKind::Gate, LinearKind::Up];

/// The nonlinearity of a feed-forward block, as the implementation computes it (which
/// decides what autograd saves).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activation {
    /// SiLU (`silu`, `swish`).
    Silu,
    /// Exact GELU (`gelu`).
    Gelu,
    /// GELU's tanh approximation as one fused op (`gelu_pytorch_tanh`, `gelu_fast`).
    GeluTanh,
    /// GELU's tanh approximation written out op by op (GPT-2's `gelu_new`).
    GeluNew,
    /// ReLU (T5).
    Relu,
    /// Squared ReLU (`relu2`, Nemotron-H: `torch.square(relu(x))`, transformers
    /// `activations.py` `ReLUSquaredActivation`), not gated.
    Relu2,
    /// gpt-oss's clamped SwiGLU (`gate.clamp(max=limit)`, `up.clamp(-limit, limit)`,
    /// `gate·sigmoid(α·gate)·(up + 1)`), gated.
    SwigluClamped,
}

/// How a mixture-of-experts block picks its experts (which decides what the router saves).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Router {
    /// fp32 softmax over all experts, top-k, renormalised in fp32 (Mixtral, Granite-MoE).
    Softmax,
    /// fp32 softmax, top-k, weights cast back without renormalising (Qwen2-MoE,
    /// `norm_topk_prob: false`).
    SoftmaxRaw,
    /// fp32 softmax, top-k, renormalised by their sum (Qwen3-MoE, `norm_topk_prob: true`).
    SoftmaxNormalized,
    /// DeepSeek-V2's greedy softmax routing over an fp32 router.
    SoftmaxGreedy,
    /// DeepSeek-V3's sigmoid scores with group-limited top-k over an fp32 router.
    SigmoidGrouped,
    /// Sigmoid scores in the model dtype, top-k, renormalised by their sum (LFM2-MoE,
    /// `norm_topk_prob: true`).
    SigmoidNormalized,
    /// Sigmoid scores in the model dtype, top-k, not renormalised (LFM2-MoE,
    /// `norm_topk_prob: false`).
    SigmoidRaw,
    /// Top-k of the logits, then a softmax over those k (gpt-oss).
    TopKSoftmax,
    /// Gemma 4's `Gemma4TextRouter` (`modeling_gemma4.py` lines 1294–1328): the input
    /// RMS-normed without weight, times a learned `scale` (h) and h^-0.5, `proj`, an fp32
    /// softmax, top-k renormalised by their sum, times a learned `per_expert_scale` (E).
    ScaledSoftmax,
}

/// A dense feed-forward block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MlpPart {
    /// Intermediate width f.
    pub ffn: u64,
    pub activation: Activation,
    /// act(gate(x)) · up(x) (GLU variants, Shazeer 2020) instead of act(up(x)).
    pub gated: bool,
    /// Gate and up in one matrix of width 2f (Phi-3 `gate_up_proj`).
    pub fused_gate_up: bool,
    pub bias: bool,
}

impl Default for MlpPart {
    /// Llama-3-8B's SwiGLU.
    fn default() -> Self {
        MlpPart { ffn: 14336, activation: Activation::Silu, gated: true, fused_gate_up: false, bias: false }
    }
}

/// A mixture-of-experts feed-forward block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MoePart {
    /// Routed experts E.
    pub experts: u64,
    /// Experts each token is routed to (top-k).
    pub top_k: u64,
    /// Intermediate width of one routed expert.
    pub expert_ffn: u64,
    /// Intermediate width of the shared expert(s) together (0: none).
    pub shared_ffn: u64,
    /// A sigmoid gate on the shared expert's output (Qwen2-MoE `shared_expert_gate`).
    pub shared_gate: bool,
    /// Leading blocks with a dense MLP instead (`first_k_dense_replace`).
    pub first_dense: u64,
    /// Every n-th block is MoE (`decoder_sparse_step`; 1: all of them).
    pub every: u64,
    /// The router has a bias (gpt-oss).
    pub router_bias: bool,
    /// Experts have biases (gpt-oss).
    pub expert_bias: bool,
    pub router: Router,
    /// How the experts are stored, and so what PEFT's LoRA reaches (`moe_peft.rs`). Left out
    /// of the JSON when the default (one linear per expert).
    #[serde(skip_serializing_if = "MoePeft::is_default")]
    pub peft: MoePeft,
    /// The experts run beside the block's dense MLP rather than instead of it, each branch
    /// with its own norms (Gemma 4's `enable_moe_block`: `pre_feedforward_layernorm_2`,
    /// `post_feedforward_layernorm_1` and `_2`, `modeling_gemma4.py` lines 1353–1358, 1391–1403).
    pub beside_dense: bool,
}

impl Default for MoePart {
    /// Mixtral-8x7B's routing.
    fn default() -> Self {
        MoePart {
            experts: 8,
            top_k: 2,
            expert_ffn: 14336,
            shared_ffn: 0,
            shared_gate: false,
            first_dense: 0,
            every: 1,
            router_bias: false,
            expert_bias: false,
            router: Router::Softmax,
            peft: MoePeft::default(),
            beside_dense: false,
        }
    }
}

impl MlpPart {
    pub(super) fn check(&self) -> Result<(), InputError> {
        check_dim("ffn", self.ffn)
    }

    /// Matrices of a dense MLP of width `f` in `scope`.
    pub fn param_tensors(&self, h: u64, f: u64, scope: Scope, out: &mut Vec<ParamTensor>) {
        push_mlp(self, h, f, scope, self.bias, out);
    }
}

impl MoePart {
    pub(super) fn check(&self) -> Result<(), InputError> {
        check_dim("experts", self.experts)?;
        check_dim("expert_ffn", self.expert_ffn)?;
        if self.top_k == 0 || self.top_k > self.experts {
            return Err(InputError::new("top_k", format!("{} must be between 1 and the {} experts", self.top_k, self.experts)));
        }
        if self.every == 0 {
            return Err(InputError::new("every", "must be at least 1"));
        }
        Ok(())
    }

    /// Blocks (of `layers`) whose feed-forward is a mixture of experts: after the first
    /// `first_dense`, every `every`-th block (transformers' `(i + 1) % decoder_sparse_step == 0`).
    pub fn moe_blocks(&self, layers: u64) -> u64 {
        // Blocks i in [first_dense, layers) with (i + 1) a multiple of `every`.
        let every = self.every.max(1);
        layers / every - self.first_dense.min(layers) / every
    }

    /// Whether block `i` is one of the `moe_blocks`.
    pub fn is_moe_block(&self, i: u64) -> bool {
        i >= self.first_dense && (i + 1).is_multiple_of(self.every.max(1))
    }

    /// Router, shared expert(s) and routed experts, in `Scope::MoeLayer` and `Scope::Expert`;
    /// fused experts are one gate-up and one down matrix per expert, each reached by PEFT as
    /// `moe_peft.rs` says.
    pub fn param_tensors(&self, mlp: &MlpPart, h: u64, out: &mut Vec<ParamTensor>) {
        let router = ParamTensor::new("router", &[self.experts, h], Scope::MoeLayer, TpSplit::Replicated);
        out.push(match self.peft.router_reach() {
            Some(reach) => router.peft_target(reach, h, self.experts),
            None => router,
        });
        if self.router_bias {
            out.push(ParamTensor::vector("router.bias", self.experts, Scope::MoeLayer, TpSplit::Replicated));
        }
        if self.router == Router::ScaledSoftmax {
            out.push(ParamTensor::vector("router.scale", h, Scope::MoeLayer, TpSplit::Replicated));
            out.push(ParamTensor::vector("router.per_expert_scale", self.experts, Scope::MoeLayer, TpSplit::Replicated));
        }
        if self.shared_ffn > 0 {
            push_mlp(mlp, h, self.shared_ffn, Scope::MoeLayer, mlp.bias, out);
            if self.shared_gate {
                let gate = ParamTensor::new("shared_expert_gate", &[1, h], Scope::MoeLayer, TpSplit::Replicated);
                // An `nn.Linear(h, 1)` in transformers 5, which only "all-linear" names.
                out.push(if self.peft.fused { gate.peft_target(PeftReach::AllLinearModule, h, 1) } else { gate });
            }
        }
        let start = out.len();
        if self.peft.fused {
            let fused = MlpPart { fused_gate_up: mlp.gated, ..mlp.clone() };
            push_mlp(&fused, h, self.expert_ffn, Scope::Expert, self.expert_bias, out);
        } else {
            push_mlp(mlp, h, self.expert_ffn, Scope::Expert, self.expert_bias, out);
        }
        for t in &mut out[start..] {
            if let Some(kinds) = t.linear {
                t.peft = self.peft.expert_reach(kinds.len());
            }
        }
    }
}

fn push_mlp(mlp: &MlpPart, h: u64, f: u64, scope: Scope, bias: bool, out: &mut Vec<ParamTensor>) {
    use TpSplit::*;
    if mlp.gated && mlp.fused_gate_up {
        out.push(ParamTensor::linear("gate_up_proj", GATE_UP, 2 * f, h, scope));
        if bias {
            out.push(ParamTensor::vector("gate_up_proj.bias", 2 * f, scope, Sharded));
        }
    } else {
        if mlp.gated {
            out.push(ParamTensor::linear("gate_proj", GATE, f, h, scope));
            if bias {
                out.push(ParamTensor::vector("gate_proj.bias", f, scope, Sharded));
            }
        }
        out.push(ParamTensor::linear("up_proj", UP, f, h, scope));
        if bias {
            out.push(ParamTensor::vector("up_proj.bias", f, scope, Sharded));
        }
    }
    out.push(ParamTensor::linear("down_proj", DOWN, h, f, scope));
    if bias {
        out.push(ParamTensor::vector("down_proj.bias", h, scope, Replicated));
    }
}
