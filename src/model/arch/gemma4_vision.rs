//! Gemma 4's vision model and its embedder into the language model, as transformers 5.25 builds
//! them (`models/gemma4/modeling_gemma4.py`), and what it reads per image.
//!
//! `Gemma4VisionModel` (lines 2049–2114): `patch_embedder` (`Gemma4VisionPatchEmbedder`, lines
//! 575–617: `input_proj`, a Linear(3 · patch² → h) without bias — three channels, whatever the
//! config — and `position_embedding_table`, a parameter of `[2, position_embedding_size, h]`,
//! one row per x and one per y coordinate), `encoder` (`Gemma4VisionEncoder`, lines 1007–1048:
//! an axial rotary table without parameters and `num_hidden_layers` blocks) and `pooler`
//! (`Gemma4VisionPooler`, lines 620–684: no parameters); `standardize`'s `std_bias` and
//! `std_scale` are buffers. A block (`Gemma4VisionEncoderLayer`, lines 962–1004) holds four
//! `Gemma4RMSNorm`s of h (input, post-attention, pre- and post-feedforward), attention
//! (`Gemma4VisionAttention`, lines 892–959: q of `num_attention_heads · head_dim`, k and v of
//! `num_key_value_heads · head_dim`, o back to h, each a `Gemma4ClippableLinear` — an
//! `nn.Linear` without bias in `.linear`, lines 167–193, its clipping bounds buffers — and
//! `q_norm`, `k_norm` of `head_dim`, `v_norm` without weight) and a gated MLP
//! (`Gemma4VisionMLP`, lines 687–700: gate, up and down, clippable, no bias). The projector is
//! `Gemma4Model.embed_vision` (`Gemma4MultimodalEmbedder`, lines 2117–2141): a weightless
//! RMSNorm and `embedding_projection`, a Linear(h → text width) without bias. Checked against
//! transformers on the meta device in `tests/fixtures/measured/gemma4_vision.json`.
//!
//! Per image the processor (`image_processing_gemma4.py`, `Gemma4ImageProcessor`, lines
//! 136–274) resizes to the largest size with the aspect ratio kept that has at most
//! `max_patches = max_soft_tokens · pooling_kernel_size²` patches and sides that are multiples of
//! `pooling_kernel_size · patch_size` (`get_aspect_ratio_preserving_size`, lines 33–84), then
//! pads the patches to `max_patches` (line 261): the tower always reads `max_patches`
//! patches, the padding masked out of attention; the pooler averages `k × k` patches into one
//! soft token and drops the padding's (lines 2098–2106), so the language model reads
//! `real patches / k²` soft tokens (`processing_gemma4.py` `_get_num_multimodal_tokens`, lines
//! 262–274). A video's frames are images at the video processor's budget, 70 soft tokens
//! (`video_processing_gemma4.py` line 168), each padded alike; the timestamps and the
//! begin/end-of-image tokens around each frame's soft tokens are text, not counted here.

use serde::{Deserialize, Serialize};

use super::param::{LinearKind, ParamTensor, Scope, TpSplit};

/// `Gemma4ImageProcessor.max_soft_tokens` (`image_processing_gemma4.py` line 147): soft tokens per image at most, the
/// default the reader assumes when the config does not say (`_SUPPORTED_SOFT_TOKENS`, line 29,
/// are the values the processor accepts).
pub const DEFAULT_SOFT_TOKENS: u64 = 280;
pub const SUPPORTED_SOFT_TOKENS: [u64; 5] = [70, 140, 280, 560, 1120];

/// `Gemma4VideoProcessor.max_soft_tokens` (`video_processing_gemma4.py` line 168): each frame of a
/// video is one image at this budget (`convert_video_to_patches`, lines 122–135, patchifies every frame alike).
pub const GEMMA4_VIDEO_SOFT_TOKENS: u64 = 70;

/// The Gemma 4-only shape of the vision model (`Gemma4VisionConfig`, `configuration_gemma4.py`
/// lines 266–313).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Gemma4Vision {
    /// `num_key_value_heads`.
    pub kv_heads: u64,
    /// `head_dim`: the attention's head width (not `hidden_size / num_attention_heads`).
    pub head_dim: u64,
    /// `position_embedding_size`: rows per coordinate of the position table.
    pub position_rows: u64,
}

/// `get_aspect_ratio_preserving_size` (`image_processing_gemma4.py` lines 33–84): the
/// `(height, width)` an image of `height × width` px is resized to. transformers raises where
/// both sides round to zero (a budget under one pooling cell); one cell is returned then.
pub fn aspect_ratio_preserving_size(height: u64, width: u64, patch: u64, max_patches: u64, kernel: u64) -> (u64, u64) {
    let (h, w) = (height.max(1) as f64, width.max(1) as f64);
    let target_px = (max_patches * patch * patch) as f64;
    let factor = (target_px / (h * w)).sqrt();
    let side = (kernel * patch).max(1);
    let down = |ideal: f64| (ideal / side as f64).floor() as u64 * side;
    let (mut th, mut tw) = (down(factor * h), down(factor * w));
    let max_side = (max_patches / (kernel * kernel).max(1)) * side;
    if th == 0 && tw == 0 {
        return (side, side);
    }
    if th == 0 {
        th = side;
        tw = ((w / h).floor() as u64 * side).min(max_side);
    } else if tw == 0 {
        tw = side;
        th = ((h / w).floor() as u64 * side).min(max_side);
    }
    (th, tw)
}

/// The padded patches the tower reads per image of `width × height` px (`max_soft_tokens · k²`)
/// and the soft tokens the language model reads (the image's real patches / k²), for patches of
/// `patch` px pooled `kernel × kernel`.
pub fn gemma4_tokens(width: u64, height: u64, patch: u64, kernel: u64, max_soft_tokens: u64) -> (u64, u64) {
    let (k, p) = (kernel.max(1), patch.max(1));
    let max_patches = max_soft_tokens * k * k;
    let (th, tw) = aspect_ratio_preserving_size(height, width, p, max_patches, k);
    (max_patches, (th / p) * (tw / p) / (k * k))
}

/// The shape the tensors are built from, `VisionTower`'s common fields.
pub struct Gemma4Dims {
    pub hidden: u64,
    pub ffn: u64,
    pub patch: u64,
    pub layers: u64,
    pub heads: u64,
    pub text_hidden: u64,
}

impl Gemma4Vision {
    /// `Gemma4VisionModel` (`vision.*`) and `embed_vision` (`projector.*`).
    pub fn param_tensors(&self, d: &Gemma4Dims, out: &mut Vec<ParamTensor>) {
        use TpSplit::Replicated;
        let s = Scope::Tower;
        let (h, f, p, g) = (d.hidden, d.ffn, d.patch, self);
        let (qd, kvd) = (d.heads * g.head_dim, g.kv_heads * g.head_dim);
        let v = |name: &'static str, n: u64| ParamTensor::vector(name, n, s, Replicated);
        out.push(ParamTensor::new("vision.patch_embedder.input_proj", &[h, 3 * p * p], s, Replicated));
        out.push(ParamTensor::new("vision.patch_embedder.position_embedding_table", &[2, g.position_rows, h], s, Replicated));
        const Q: &[LinearKind] = &[LinearKind::Q];
        const K: &[LinearKind] = &[LinearKind::K];
        const V: &[LinearKind] = &[LinearKind::V];
        const O: &[LinearKind] = &[LinearKind::O];
        const GATE: &[LinearKind] = &[LinearKind::Gate];
        const UP: &[LinearKind] = &[LinearKind::Up];
        const DOWN: &[LinearKind] = &[LinearKind::Down];
        for _ in 0..d.layers {
            out.push(ParamTensor::tower_linear("vision.self_attn.q_proj", Q, qd, h));
            out.push(ParamTensor::tower_linear("vision.self_attn.k_proj", K, kvd, h));
            out.push(ParamTensor::tower_linear("vision.self_attn.v_proj", V, kvd, h));
            out.push(ParamTensor::tower_linear("vision.self_attn.o_proj", O, h, qd));
            out.push(v("vision.self_attn.q_norm", g.head_dim));
            out.push(v("vision.self_attn.k_norm", g.head_dim));
            out.push(ParamTensor::tower_linear("vision.mlp.gate_proj", GATE, f, h));
            out.push(ParamTensor::tower_linear("vision.mlp.up_proj", UP, f, h));
            out.push(ParamTensor::tower_linear("vision.mlp.down_proj", DOWN, h, f));
            for name in ["vision.input_layernorm", "vision.post_attention_layernorm", "vision.pre_feedforward_layernorm", "vision.post_feedforward_layernorm"] {
                out.push(v(name, h));
            }
        }
        out.push(ParamTensor::new("projector.embedding_projection", &[d.text_hidden, h], s, Replicated));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The processor's sizes by hand: 768 × 1024 at 280 soft tokens (2520 patches of 16 px, 48-px
    /// cells): factor √(2520 · 256 / 786432) = 0.9057, 695.6 → 672, 927.4 → 912; a 200 × 1600 strip
    /// keeps a one-cell height only when its ideal height rounds to zero.
    #[test]
    fn sizes_follow_the_processor() {
        assert_eq!(aspect_ratio_preserving_size(768, 1024, 16, 2520, 3), (672, 912));
        assert_eq!(aspect_ratio_preserving_size(96, 96, 4, 630, 3), (96, 96));
        assert_eq!(aspect_ratio_preserving_size(48, 96, 4, 630, 3), (60, 132));
        let (h, w) = aspect_ratio_preserving_size(10, 4000, 16, 2520, 3);
        assert_eq!(h, 48);
        assert!(w <= 2520 / 9 * 48, "{w}");
    }
}
