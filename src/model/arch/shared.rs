//! Shared transformer blocks reused across a hybrid stack (Zamba2, and Zamba v1's single
//! adapter-free block, `import/zamba.rs`): `num_mem_blocks`
//! attention + MLP blocks whose parameters exist once each, invoked at every hybrid layer
//! (`hybrid_layer_ids`), each invocation with its own adapters and output projection.
//!
//! transformers 5.25 `models/zamba2/modeling_zamba2.py`:
//! - `Zamba2Model.get_layers` (lines 1335–1371): every hybrid layer builds a
//!   `Zamba2AttentionDecoderLayer` and ties it (`_tied_weights_keys`, by prefix) to the one
//!   of hybrid layer `i % num_mem_blocks`, so `parameters()` counts `num_mem_blocks` of them;
//!   each hybrid layer's `nn.Linear(hidden, hidden, bias=False)` stays its own.
//! - `Zamba2AttentionDecoderLayer` (lines 1022–1031): `input_layernorm` over
//!   `attention_hidden_size` = 2·hidden (the hidden state concatenated with the embeddings,
//!   line 1065), `pre_ff_layernorm` over hidden.
//! - `Zamba2Attention` (lines 240–274): q/k/v read 2·hidden, heads of `attention_head_dim` =
//!   2·hidden / heads (`configuration_zamba2.py` `__post_init__`), `o_proj` back to hidden, no
//!   biases; with `use_shared_attention_adapter`, block b holds a rank-`adapter_rank` pair
//!   (2·hidden → r → 2·hidden) for q, k and v at every hybrid position i with
//!   i % `num_mem_blocks` == b: one set per invocation over all blocks.
//! - `Zamba2MLP` (lines 993–1006): fused `gate_up_proj`, `down_proj` (biases with
//!   `add_bias_linear`) and, always, a `gate_up_proj` adapter (hidden → r → 2·ffn) per
//!   invocation in the same way (`use_shared_mlp_adapter` of the Hub configs is not read).
//!
//! - With `tie_word_embeddings: false`, `PreTrainedModel.get_expanded_tied_weights_keys` returns
//!   no ties at all (`modeling_utils.py` 2494–2496): every hybrid layer keeps the block it built,
//!   each with the adapter list of its block id (`i % num_mem_blocks`) ([`SharedBlocks::tied`]).
//!
//! Counts checked against transformers in `tests/fixtures/measured/zamba2.json`
//! (`tests/zamba2.rs`).

use serde::{Deserialize, Serialize};

use super::attention::AttentionPart;
use super::mlp::MlpPart;
use super::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use crate::error::InputError;

/// The shared blocks of a hybrid stack and what each invocation adds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedBlocks {
    /// Distinct shared blocks (`num_mem_blocks`): `Scope::Shared` tensors exist this often.
    pub blocks: u64,
    /// Rank of the per-invocation adapters (`adapter_rank`).
    pub adapter_rank: u64,
    /// Adapter slots of each block: the length of `hybrid_layer_ids` (`num_fwd_mem_blocks`,
    /// line 1026), which a config.json may give apart from `layers_block_type`.
    pub adapter_slots: u64,
    /// q/k/v adapters per invocation (`use_shared_attention_adapter`).
    pub attention_adapters: bool,
    /// A `gate_up_proj` adapter per invocation (Zamba2: always); Zamba v1's block has no
    /// adapters at all (`modeling_zamba.py` `ZambaAttentionDecoderLayer`, lines 701–708).
    #[serde(default = "tied_by_default")]
    pub mlp_adapter: bool,
    /// The hybrid layers' blocks are tied to the first `num_mem_blocks` (transformers'
    /// `_tied_weights_keys`, applied only with `tie_word_embeddings`); `false`: each hybrid
    /// layer keeps its own block.
    #[serde(default = "tied_by_default")]
    pub tied: bool,
}

fn tied_by_default() -> bool {
    true
}

impl SharedBlocks {
    pub(super) fn check(&self, invocations: u64) -> Result<(), InputError> {
        check_dim("num_mem_blocks", self.blocks)?;
        if self.mlp_adapter || self.attention_adapters {
            check_dim("adapter_rank", self.adapter_rank)?;
        }
        if invocations == 0 {
            return Err(InputError::new("layers_block_type", "names no \"hybrid\" layer, so the shared blocks are never used"));
        }
        Ok(())
    }

    /// Blocks transformers builds and keeps apart: the first `num_mem_blocks` hybrid layers
    /// are the sources of the ties, fewer when fewer layers are hybrid.
    pub fn distinct_blocks(&self, invocations: u64) -> u64 {
        if self.tied {
            self.blocks.min(invocations)
        } else {
            invocations
        }
    }

    /// Adapter sets over the distinct blocks: block b holds one per slot i < `adapter_slots`
    /// with i % `num_mem_blocks` == b (one per invocation when the slots are the hybrid layers).
    /// Untied, hybrid layer j's own block holds the adapter list of block id j % `num_mem_blocks`.
    pub fn adapter_sets(&self, invocations: u64) -> u64 {
        let m = self.blocks.max(1);
        let of_block = |b: u64| self.adapter_slots.saturating_sub(b).div_ceil(m);
        if self.tied {
            (0..self.distinct_blocks(invocations)).map(of_block).sum()
        } else {
            (0..invocations).map(|j| of_block(j % m)).sum()
        }
    }

    /// The shared blocks' tensors (`Scope::Shared`), their adapters (`Scope::SharedAdapter`)
    /// and each invocation's own linear (`Scope::Attention`, whose count is the hybrid layers): the module trees in the
    /// module doc. The attention reads 2·`h`; its heads are `attention`'s.
    pub fn param_tensors(&self, h: u64, attention: &AttentionPart, mlp: &MlpPart, out: &mut Vec<ParamTensor>) {
        use TpSplit::*;
        let s = Scope::Shared;
        let wide = 2 * h;
        let (a, g, d) = (attention.heads, attention.kv_heads, attention.head_dim);
        out.push(ParamTensor::vector("shared.input_layernorm", wide, s, Replicated));
        out.push(ParamTensor::linear("shared.q_proj", &[LinearKind::Q], a * d, wide, s));
        out.push(ParamTensor::linear("shared.k_proj", &[LinearKind::K], g * d, wide, s));
        out.push(ParamTensor::linear("shared.v_proj", &[LinearKind::V], g * d, wide, s));
        out.push(ParamTensor::linear("shared.o_proj", &[LinearKind::O], h, a * d, s));
        out.push(ParamTensor::vector("shared.pre_ff_layernorm", h, s, Replicated));
        mlp.param_tensors(h, mlp.ffn, s, out);
        out.push(ParamTensor::new("hybrid.linear", &[h, h], Scope::Attention, Replicated));
        let (r, i) = (self.adapter_rank, Scope::SharedAdapter);
        if self.mlp_adapter {
            out.push(ParamTensor::new("shared.gate_up_proj_adapter.0", &[r, h], i, Replicated));
            out.push(ParamTensor::new("shared.gate_up_proj_adapter.1", &[2 * mlp.ffn, r], i, Replicated));
        }
        if self.attention_adapters {
            for name in ["shared.linear_q_adapter", "shared.linear_k_adapter", "shared.linear_v_adapter"] {
                out.push(ParamTensor::new(name, &[r, wide], i, Replicated));
                out.push(ParamTensor::new(name, &[wide, r], i, Replicated));
            }
        }
    }
}
