//! Token mixers that are not attention, and the per-layer schedule of a hybrid model that
//! mixes them with attention, dense MLPs and mixtures of experts.
//!
//! Mixers, each with its parameter tensors and the state it keeps per sequence when
//! generating (constant in the sequence length, unlike a KV cache):
//! - Mamba (Gu & Dao 2023, Algorithm 2 "selective scan"; transformers `modeling_mamba.py`
//!   `MambaMixer`, `modeling_jamba.py` `JambaMambaMixer`): `in_proj` h → 2·d_inner (x and
//!   the gate z), a depthwise `conv1d` of width `d_conv`, `x_proj` d_inner → dt_rank + 2·N,
//!   `dt_proj` dt_rank → d_inner, `A_log` d_inner × N, `D`, `out_proj`. State: the last
//!   `d_conv` inputs of the conv (d_inner × d_conv) and the SSM state (d_inner × N).
//! - Mamba-2 (Dao & Gu 2024, §7 "the SSD layer"; `modeling_mamba2.py` `Mamba2Mixer`,
//!   `modeling_bamba.py`, `modeling_nemotron_h.py`, `modeling_falcon_h1.py`,
//!   `modeling_granitemoehybrid.py`): one `in_proj` h → 2·d_inner + 2·G·N + H (z, x, B, C,
//!   dt), a conv over x, B and C (d_inner + 2·G·N channels), per-head `A_log`, `D`,
//!   `dt_bias`, a gated RMSNorm over d_inner, `out_proj`. State: conv (d_inner + 2·G·N) ×
//!   d_conv and SSM H × P × N (heads × head width × state).
//! - Gated DeltaNet (Yang et al. 2025, "Gated Delta Networks", §3; transformers
//!   `modeling_qwen3_next.py` `Qwen3NextGatedDeltaNet`, `modeling_qwen3_5.py`): q, k
//!   (Hk × dk each), v and the output gate z (Hv × dv each), per-value-head β and α, a conv over
//!   q, k and v (2·Hk·dk + Hv·dv channels, no bias), `A_log` and `dt_bias` per value head, a
//!   gated RMSNorm over dv, `out_proj`. State: conv (2·Hk·dk + Hv·dv) × d_conv and the
//!   recurrent state Hv × dk × dv.
//! - Short convolution (LFM2, `modeling_lfm2.py` `Lfm2ShortConv`): `in_proj` h → 3h (B, C,
//!   x), a depthwise conv of width `L_cache` over h channels, `out_proj` h → h. State: h ×
//!   `L_cache`.
//!
//! The conv state's width is the whole kernel, as transformers 5.25 keeps it
//! (`cache_utils.py` `LinearAttentionLayer.lazy_initialization`: `(*conv_states.shape[:-1],
//! conv_kernel_size)`; vLLM keeps `d_conv − 1`). Bytes per element are the caller's
//! (`inference.rs`: transformers holds the conv state in the model dtype and the recurrent
//! state in fp32, `tests/fixtures/measured/hybrid_states.json`).

use serde::{Deserialize, Serialize};

use super::param::{check_dim, Bypass, LinearKind, ParamTensor, Scope, TpSplit};
use super::shared::SharedBlocks;
use crate::error::InputError;

/// One non-attention token mixer, with the shapes its parameters and state take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Mixer {
    /// Mamba's selective scan.
    Mamba {
        /// d_inner (`intermediate_size`, expand · h).
        inner: u64,
        /// N (`state_size`, `mamba_d_state`).
        state: u64,
        /// Conv kernel width (`conv_kernel`, `mamba_d_conv`).
        conv: u64,
        /// Rank of Δ's projection (`time_step_rank`, `mamba_dt_rank`).
        dt_rank: u64,
        conv_bias: bool,
        /// `in_proj` and `out_proj` have biases (`use_bias`, `mamba_proj_bias`).
        proj_bias: bool,
        /// Jamba's RMSNorms on Δ, B and C (`dt_layernorm`, `b_layernorm`, `c_layernorm`).
        dt_norms: bool,
        /// Zamba's multi-head Mamba (`n_mamba_heads`; transformers 5.25 `modeling_zamba.py`
        /// `ZambaMambaMixer`, lines 486–683): the d_inner channels split into this many heads,
        /// each with its own Δ/B/C projection, held as parameter tensors `x_proj_weight`
        /// (heads × (R + 2N) × d_inner/heads) and `dt_proj_weight` (heads × d_inner/heads × R),
        /// not `nn.Linear` modules, and each scanned apart by `selective_scan_fn` after one
        /// `causal_conv1d_fn` (no fused `mamba_inner_fn`). `None`: Mamba's and Jamba's mixers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        heads: Option<u64>,
    },
    /// Mamba-2's state-space duality (SSD) layer.
    Mamba2 {
        /// d_inner = heads × head width.
        inner: u64,
        /// H (`num_heads`, `mamba_n_heads`).
        heads: u64,
        /// P, the width of one head (`head_dim`, `mamba_d_head`).
        head_dim: u64,
        /// G (`n_groups`): B and C are shared by the heads of a group.
        groups: u64,
        /// N (`state_size`, `mamba_d_state`, `ssm_state_size`).
        state: u64,
        conv: u64,
        /// Chunk length of the SSD kernels (`chunk_size`).
        chunk: u64,
        conv_bias: bool,
        proj_bias: bool,
        /// The gated RMSNorm over d_inner before `out_proj` (absent in Falcon-H1 unless
        /// `mamba_rms_norm`).
        gated_norm: bool,
        /// Falcon-H1 scales the in_proj output by its fp32 `mup_vector` buffer
        /// (`modeling_falcon_h1.py` line 871): under autocast the torch fallback then runs on
        /// an fp32 projection (`activations/mixer_torch.rs`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        fp32_projection_scale: bool,
    },
    /// Gated DeltaNet (Qwen3-Next, Qwen3.5).
    GatedDeltaNet {
        /// Hk (`linear_num_key_heads`).
        key_heads: u64,
        /// Hv (`linear_num_value_heads`).
        value_heads: u64,
        /// dk (`linear_key_head_dim`).
        key_dim: u64,
        /// dv (`linear_value_head_dim`).
        value_dim: u64,
        /// `linear_conv_kernel_dim`.
        conv: u64,
        /// Qwen3.5's four input matrices (`in_proj_qkv`, `in_proj_z`, `in_proj_b`,
        /// `in_proj_a`) instead of Qwen3-Next's two fused ones: the same elements, but twice
        /// as many modules for LoRA.
        #[serde(default)]
        split_projections: bool,
        /// OLMo-Hybrid's six input projections (`q_proj`, `k_proj`, `v_proj`, `g_proj`,
        /// `a_proj`, `b_proj`; `modeling_olmo_hybrid.py` lines 655–661): Qwen3.5's elements
        /// again, in six modules, each with its own LoRA adapter and, under autocast, its own
        /// 16-bit copy of the block's input. Implies `split_projections`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        six_projections: bool,
    },
    /// LFM2's gated short convolution.
    ShortConv {
        /// `conv_L_cache`.
        conv: u64,
        /// `conv_bias`: the conv and both projections have biases.
        bias: bool,
    },
}

impl Mixer {
    pub(super) fn check(&self) -> Result<(), InputError> {
        match *self {
            Mixer::Mamba { inner, state, conv, dt_rank, heads, .. } => {
                check_dim("intermediate_size", inner)?;
                check_dim("state_size", state)?;
                check_dim("conv_kernel", conv)?;
                check_dim("time_step_rank", dt_rank)?;
                match heads {
                    Some(0) => Err(InputError::new("n_mamba_heads", "must be at least 1")),
                    Some(n) if !inner.is_multiple_of(n) => Err(InputError::new("n_mamba_heads", format!("{n} must divide the {inner} inner channels"))),
                    _ => Ok(()),
                }
            }
            Mixer::Mamba2 { inner, heads, groups, state, conv, .. } => {
                check_dim("num_heads", heads)?;
                check_dim("n_groups", groups)?;
                check_dim("state_size", state)?;
                check_dim("conv_kernel", conv)?;
                check_dim("intermediate_size", inner)?;
                if !heads.is_multiple_of(groups) {
                    return Err(InputError::new("n_groups", format!("{groups} must divide the {heads} heads")));
                }
                Ok(())
            }
            Mixer::GatedDeltaNet { key_heads, value_heads, key_dim, value_dim, conv, .. } => {
                check_dim("linear_num_key_heads", key_heads)?;
                check_dim("linear_num_value_heads", value_heads)?;
                check_dim("linear_key_head_dim", key_dim)?;
                check_dim("linear_value_head_dim", value_dim)?;
                check_dim("linear_conv_kernel_dim", conv)?;
                if !value_heads.is_multiple_of(key_heads) {
                    return Err(InputError::new("linear_num_value_heads", format!("{value_heads} must be a multiple of linear_num_key_heads ({key_heads})")));
                }
                Ok(())
            }
            Mixer::ShortConv { conv, .. } => check_dim("conv_L_cache", conv),
        }
    }

    /// Short label for summaries.
    pub fn label(&self) -> &'static str {
        match self {
            Mixer::Mamba { .. } => "Mamba",
            Mixer::Mamba2 { .. } => "Mamba-2",
            Mixer::GatedDeltaNet { .. } => "Gated DeltaNet",
            Mixer::ShortConv { .. } => "short conv",
        }
    }

    /// Channels of the depthwise conv (what its state holds per kernel position).
    pub fn conv_channels(&self, h: u64) -> u64 {
        match *self {
            Mixer::Mamba { inner, .. } => inner,
            Mixer::Mamba2 { inner, groups, state, .. } => inner + 2 * groups * state,
            Mixer::GatedDeltaNet { key_heads, value_heads, key_dim, value_dim, .. } => 2 * key_heads * key_dim + value_heads * value_dim,
            Mixer::ShortConv { .. } => h,
        }
    }

    /// Conv kernel width.
    pub fn conv_width(&self) -> u64 {
        match *self {
            Mixer::Mamba { conv, .. } | Mixer::Mamba2 { conv, .. } | Mixer::GatedDeltaNet { conv, .. } | Mixer::ShortConv { conv, .. } => conv,
        }
    }

    /// Elements of the conv state of one sequence in one layer: channels × kernel width.
    pub fn conv_state(&self, h: u64) -> u64 {
        self.conv_channels(h) * self.conv_width()
    }

    /// Elements of the recurrent (SSM / delta-rule) state of one sequence in one layer:
    /// Mamba d_inner·N; Mamba-2 H·P·N; Gated DeltaNet Hv·dk·dv; none for a short conv.
    pub fn recurrent_state(&self) -> u64 {
        match *self {
            Mixer::Mamba { inner, state, .. } => inner * state,
            Mixer::Mamba2 { heads, head_dim, state, .. } => heads * head_dim * state,
            Mixer::GatedDeltaNet { value_heads, key_dim, value_dim, .. } => value_heads * key_dim * value_dim,
            Mixer::ShortConv { .. } => 0,
        }
    }

    /// Parameter tensors of one mixer, in `Scope::Mixer`, following the module trees named
    /// in the module doc (checked against transformers' counts in `family_sweep.json` and
    /// `hybrid_params.json`). The `nn.Linear`s are LoRA targets (`LinearKind::MIXER`); those
    /// whose weight a training path reads directly are marked `bypassed` (`Bypass`): on the
    /// fused kernels, Mamba's `mamba_inner_fn` takes `x_proj.weight` and `out_proj.weight`
    /// (transformers 5.25 `modeling_mamba.py` `MambaMixer.forward`, lines 575–589) and the
    /// Mamba-2 family's `mamba2_split_conv1d_scan_combined` takes
    /// `outproj_weight=self.out_proj.weight` (`modeling_mamba2.py` line 681,
    /// `modeling_bamba.py` 872, `modeling_nemotron_h.py` 682, `modeling_falcon_h1.py` 887,
    /// `modeling_granitemoehybrid.py` 793), while the torch fallback calls those modules; on
    /// every path Δ is `self.dt_proj.weight @ time_step` (Mamba's `mamba_inner_fn` takes it
    /// too; line 616; Jamba `modeling_jamba.py` line 729). Measured on the fallback: only
    /// `dt_proj`'s adapters get no gradient (`mixer_lora.json`).
    pub fn param_tensors(&self, h: u64, out: &mut Vec<ParamTensor>) {
        use TpSplit::*;
        let s = Scope::Mixer;
        let linear = |name: &'static str, kinds: &'static [LinearKind], o: u64, i: u64| ParamTensor::linear(name, kinds, o, i, s);
        match *self {
            Mixer::Mamba { inner, state, conv, dt_rank, conv_bias, proj_bias, dt_norms, heads } => {
                // Jamba's norms on Δ, B and C and Zamba's heads keep them off the fused
                // function: only Jamba's Δ projection is read directly.
                let fused = !dt_norms && heads.is_none();
                let bypass = |t: ParamTensor, bypassed: bool| if bypassed { t.bypassed(Bypass::FusedKernels) } else { t };
                out.push(linear("mixer.in_proj", MIXER_IN, 2 * inner, h));
                if proj_bias {
                    out.push(ParamTensor::vector("mixer.in_proj.bias", 2 * inner, s, Sharded));
                }
                out.push(ParamTensor::new("mixer.conv1d", &[inner, 1, conv], s, Sharded));
                if conv_bias {
                    out.push(ParamTensor::vector("mixer.conv1d.bias", inner, s, Sharded));
                }
                if let Some(n) = heads {
                    out.push(ParamTensor::new("mixer.x_proj_weight", &[n, dt_rank + 2 * state, inner / n], s, Sharded));
                    out.push(ParamTensor::new("mixer.dt_proj_weight", &[n, inner / n, dt_rank], s, Sharded));
                } else {
                    out.push(bypass(linear("mixer.x_proj", X_PROJ, dt_rank + 2 * state, inner), fused));
                    out.push(linear("mixer.dt_proj", DT_PROJ, inner, dt_rank).bypassed(Bypass::Always));
                }
                out.push(ParamTensor::vector("mixer.dt_proj.bias", inner, s, Sharded));
                out.push(ParamTensor::new("mixer.A_log", &[inner, state], s, Sharded));
                out.push(ParamTensor::vector("mixer.D", inner, s, Sharded));
                if dt_norms {
                    out.push(ParamTensor::vector("mixer.dt_layernorm", dt_rank, s, Replicated));
                    out.push(ParamTensor::vector("mixer.b_layernorm", state, s, Replicated));
                    out.push(ParamTensor::vector("mixer.c_layernorm", state, s, Replicated));
                }
                out.push(bypass(linear("mixer.out_proj", MIXER_OUT, h, inner), fused));
                if proj_bias {
                    out.push(ParamTensor::vector("mixer.out_proj.bias", h, s, Replicated));
                }
            }
            Mixer::Mamba2 { inner, heads, groups, state, conv_bias, proj_bias, gated_norm, .. } => {
                let width = 2 * inner + 2 * groups * state + heads;
                out.push(linear("mixer.in_proj", MIXER_IN, width, h));
                if proj_bias {
                    out.push(ParamTensor::vector("mixer.in_proj.bias", width, s, Sharded));
                }
                let channels = self.conv_channels(h);
                out.push(ParamTensor::new("mixer.conv1d", &[channels, 1, self.conv_width()], s, Sharded));
                if conv_bias {
                    out.push(ParamTensor::vector("mixer.conv1d.bias", channels, s, Sharded));
                }
                for name in ["mixer.dt_bias", "mixer.A_log", "mixer.D"] {
                    out.push(ParamTensor::vector(name, heads, s, Sharded));
                }
                if gated_norm {
                    out.push(ParamTensor::vector("mixer.norm", inner, s, Sharded));
                }
                out.push(linear("mixer.out_proj", MIXER_OUT, h, inner).bypassed(Bypass::FusedKernels));
                if proj_bias {
                    out.push(ParamTensor::vector("mixer.out_proj.bias", h, s, Replicated));
                }
            }
            Mixer::GatedDeltaNet { key_heads, value_heads, key_dim, value_dim, split_projections, six_projections, .. } => {
                let (k, v) = (key_heads * key_dim, value_heads * value_dim);
                // Qwen3-Next fuses q, k, v, z into `in_proj_qkvz` and β, α into `in_proj_ba`
                // (`modeling_qwen3_next.py`); Qwen3.5 keeps four matrices (`modeling_qwen3_5.py`
                // lines 595–598), OLMo-Hybrid six: the same elements.
                if six_projections {
                    out.push(linear("mixer.q_proj", MIXER_IN, k, h));
                    out.push(linear("mixer.k_proj", MIXER_IN, k, h));
                    out.push(linear("mixer.v_proj", MIXER_IN, v, h));
                    out.push(linear("mixer.g_proj", MIXER_IN, v, h));
                    out.push(linear("mixer.b_proj", MIXER_GATES, value_heads, h));
                    out.push(linear("mixer.a_proj", MIXER_GATES, value_heads, h));
                } else if split_projections {
                    out.push(linear("mixer.in_proj_qkv", MIXER_IN, 2 * k + v, h));
                    out.push(linear("mixer.in_proj_z", MIXER_IN, v, h));
                    out.push(linear("mixer.in_proj_b", MIXER_GATES, value_heads, h));
                    out.push(linear("mixer.in_proj_a", MIXER_GATES, value_heads, h));
                } else {
                    out.push(linear("mixer.in_proj_qkvz", MIXER_IN, 2 * k + 2 * v, h));
                    out.push(linear("mixer.in_proj_ba", MIXER_GATES, 2 * value_heads, h));
                }
                out.push(ParamTensor::new("mixer.conv1d", &[self.conv_channels(h), 1, self.conv_width()], s, Sharded));
                out.push(ParamTensor::vector("mixer.dt_bias", value_heads, s, Sharded));
                out.push(ParamTensor::vector("mixer.A_log", value_heads, s, Sharded));
                out.push(ParamTensor::vector("mixer.norm", value_dim, s, Replicated));
                out.push(linear("mixer.out_proj", MIXER_OUT, h, v));
            }
            Mixer::ShortConv { conv, bias } => {
                out.push(linear("mixer.in_proj", MIXER_IN, 3 * h, h));
                out.push(ParamTensor::new("mixer.conv", &[h, 1, conv], s, Sharded));
                out.push(linear("mixer.out_proj", MIXER_OUT, h, h));
                if bias {
                    out.push(ParamTensor::vector("mixer.in_proj.bias", 3 * h, s, Sharded));
                    out.push(ParamTensor::vector("mixer.conv.bias", h, s, Sharded));
                    out.push(ParamTensor::vector("mixer.out_proj.bias", h, s, Replicated));
                }
            }
        }
    }

    /// The kind of each input projection module that reads the block norm's output.
    pub fn input_projections(&self) -> &'static [LinearKind] {
        match self {
            Mixer::GatedDeltaNet { six_projections: true, .. } => {
                &[LinearKind::MixerIn, LinearKind::MixerIn, LinearKind::MixerIn, LinearKind::MixerIn, LinearKind::MixerGates, LinearKind::MixerGates]
            }
            Mixer::GatedDeltaNet { split_projections: true, .. } => &[LinearKind::MixerIn, LinearKind::MixerIn, LinearKind::MixerGates, LinearKind::MixerGates],
            Mixer::GatedDeltaNet { .. } => &[LinearKind::MixerIn, LinearKind::MixerGates],
            _ => &[LinearKind::MixerIn],
        }
    }
}

const MIXER_IN: &[LinearKind] = &[LinearKind::MixerIn];
const MIXER_GATES: &[LinearKind] = &[LinearKind::MixerGates];
const X_PROJ: &[LinearKind] = &[LinearKind::XProj];
const DT_PROJ: &[LinearKind] = &[LinearKind::DtProj];
const MIXER_OUT: &[LinearKind] = &[LinearKind::MixerOut];

/// Which blocks of a hybrid stack hold which part. Counts, not positions: the memory of a
/// stack does not depend on the order of its blocks (pipeline stages take their share).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HybridPart {
    pub mixer: Mixer,
    /// Blocks with attention (Jamba: 1 in 8; Qwen3-Next: 1 in 4; Falcon-H1: all of them,
    /// beside the mixer).
    pub attention_layers: u64,
    /// Blocks with the mixer.
    pub mixer_layers: u64,
    /// Blocks with a dense MLP.
    pub dense_layers: u64,
    /// Blocks with a mixture of experts.
    pub moe_layers: u64,
    /// Each block holds one sublayer behind one norm (Mamba's `MambaBlock`, Nemotron-H's
    /// `NemotronHBlock`: mixer, attention, MLP or MoE); otherwise a block has the two norms
    /// of a pre-norm block (token mixer, then feed-forward).
    pub one_sublayer: bool,
    /// Shared attention + MLP blocks invoked at the attention layers (Zamba2,
    /// `shared.rs`): then the attention and dense-MLP blocks count invocations (activations,
    /// KV cache), and their parameters exist once per shared block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedBlocks>,
    /// The blocks before the first attention block, by what they hold.
    #[serde(default, skip_serializing_if = "LeadBlocks::is_empty")]
    pub lead: LeadBlocks,
}

/// The blocks of a hybrid stack before its first attention block (Jamba's first four, Qwen3-Next's
/// first three), by what they hold. With LoRA on attention alone and no checkpointing, nothing
/// in them needs a gradient (their inputs come from the frozen embedding, their weights are
/// frozen), so autograd saves nothing in them: measured on an H200 (`gpu_peak_owners.json`:
/// 3 of Jamba-Mini's 7 Mamba layers hold saved tensors at the peak when cut to 8 layers, the
/// three after its attention layer). Checkpointing through transformers hooks the embedding
/// (`enable_input_require_grads`), and then every block keeps its input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LeadBlocks {
    pub blocks: u64,
    pub mixer: u64,
    pub dense: u64,
    pub moe: u64,
}

impl LeadBlocks {
    pub fn is_empty(&self) -> bool {
        self.blocks == 0
    }

    /// The lead of a stack whose blocks hold attention where `attention` says and experts where
    /// `moe` says (a mixer or a dense MLP elsewhere); `one_sublayer`: a block holds one of them.
    pub fn of(attention: &[bool], moe: impl Fn(u64) -> bool, one_sublayer: bool) -> LeadBlocks {
        let blocks = attention.iter().position(|a| *a).unwrap_or(0) as u64;
        let moe = (0..blocks).filter(|i| moe(*i)).count() as u64;
        if one_sublayer {
            return LeadBlocks { blocks, mixer: blocks - moe, dense: 0, moe };
        }
        LeadBlocks { blocks, mixer: blocks, dense: blocks - moe, moe }
    }
}

impl HybridPart {
    /// A Zamba-style stack: every one of `layers` blocks holds `mixer`, and each of the
    /// `invocations` hybrid layers also runs one of the shared attention + MLP blocks (one
    /// sublayer behind each block's norm).
    pub fn with_shared_blocks(mixer: Mixer, layers: u64, invocations: u64, shared: SharedBlocks) -> Self {
        HybridPart {
            mixer,
            attention_layers: invocations,
            mixer_layers: layers,
            dense_layers: invocations,
            moe_layers: 0,
            one_sublayer: true,
            shared: Some(shared),
            lead: LeadBlocks::default(),
        }
    }

    pub(super) fn check(&self, layers: u64) -> Result<(), InputError> {
        self.mixer.check()?;
        for (field, n) in
            [("attention layers", self.attention_layers), ("mixer layers", self.mixer_layers), ("dense MLP layers", self.dense_layers), ("MoE layers", self.moe_layers)]
        {
            if n > layers {
                return Err(InputError::new("layer_types", format!("{n} {field} exceed the {layers} layers")));
            }
        }
        if let Some(shared) = &self.shared {
            shared.check(self.attention_layers)?;
        }
        Ok(())
    }
}
