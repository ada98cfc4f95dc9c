//! Llama 3.2 Vision's (mllama) vision model and projector, as transformers 5.25 builds them
//! (`models/mllama/modeling_mllama.py`), and what it reads per image.
//!
//! `MllamaVisionModel` (lines 820–1013): a patch conv without bias (`patch_embedding`), a class
//! token, `pre_tile_positional_embedding` and `post_tile_positional_embedding`
//! (`MllamaPrecomputedAspectRatioEmbedding`, lines 120–140: an embedding of
//! `len(supported_aspect_ratios) + 1` rows of `max_num_tiles · h` and a gate), the gated
//! positional embedding (`MllamaPrecomputedPositionEmbedding`, lines 143–177: a gate, the
//! positions of the patches and the class token, and a tile position table of
//! `len(supported_aspect_ratios) + 1` rows of `max_num_tiles · (patches + 1) · h`),
//! `layernorm_pre` and `layernorm_post`, the local encoder of `num_hidden_layers` blocks and the
//! global encoder of `num_global_layers` gated blocks (`MllamaVisionEncoderLayer`, lines
//! 289–329: LayerNorms, q/k/v/o without biases, a GELU MLP with biases, and `gate_attn` /
//! `gate_ffn` in the global blocks). Its output concatenates the final state with the states of
//! `intermediate_layers_indices` (lines 997–1011): `vision_output_dim` wide. The projector
//! (`multi_modal_projector`, lines 1285–1289) is one Linear(`vision_output_dim` → text width)
//! with bias.
//!
//! Every image is `max_num_tiles` tiles of `image_size` px: the image processor pads the tiles
//! an image does not fill with zeros (`image_processing_mllama.py` `pad_batches_and_tiles`,
//! lines 242–292; measured: `pixel_values` holds `max_image_tiles` tiles at every size in
//! `mllama.json`), and the vision model's tile embeddings broadcast over exactly
//! `max_num_tiles` tiles. Each tile is `(image_size / patch)² + 1` tokens, padded to a multiple
//! of 8 inside the encoders (lines 949–955), and both encoders attend over all tiles of an
//! image at once. The language model reads none of these as tokens: its cross-attention
//! layers read them as keys and values (`cross_attention.rs`).

use serde::{Deserialize, Serialize};

use super::param::{LinearKind, ParamTensor, Scope, TpSplit};

/// The mllama-only shape of the vision model (`MllamaVisionConfig`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MllamaVision {
    /// `num_global_layers`: the gated global encoder's blocks.
    pub global_layers: u64,
    /// `len(supported_aspect_ratios)`: the tile embeddings hold one more row (id 0, padding).
    pub aspect_ratios: u64,
    /// `len(intermediate_layers_indices)`: local encoder states concatenated to the output.
    pub intermediate_layers: u64,
    /// `vision_output_dim`: the projector's input.
    pub vision_output: u64,
}

/// The tower's shape the mllama tensors are built from (`VisionTower`'s fields).
pub struct MllamaDims {
    pub hidden: u64,
    pub ffn: u64,
    pub patch: u64,
    pub channels: u64,
    pub image_size: u64,
    /// Local encoder blocks (`num_hidden_layers`).
    pub layers: u64,
    pub max_tiles: u64,
    pub text_hidden: u64,
}

impl MllamaDims {
    /// Tokens of one tile: its patches and the class token.
    pub fn tile_tokens(&self) -> u64 {
        (self.image_size / self.patch.max(1)).pow(2) + 1
    }
}

/// A tile's tokens padded to a multiple of 8, as the encoders read them.
pub fn padded(tile_tokens: u64) -> u64 {
    tile_tokens.div_ceil(8) * 8
}

impl MllamaVision {
    /// The vision model's and the projector's tensors.
    pub fn param_tensors(&self, d: &MllamaDims, out: &mut Vec<ParamTensor>) {
        use TpSplit::Replicated;
        let s = Scope::Tower;
        let (h, f, p, c) = (d.hidden, d.ffn, d.patch, d.channels);
        let v = |name: &'static str, n: u64| ParamTensor::vector(name, n, s, Replicated);
        let rows = self.aspect_ratios + 1;
        let tile = d.tile_tokens();
        out.push(ParamTensor::new("vision.patch_embedding", &[h, c, p, p], s, Replicated));
        out.push(v("vision.class_embedding", h));
        out.push(v("vision.gated_positional_embedding.gate", 1));
        out.push(ParamTensor::table("vision.gated_positional_embedding.embedding", tile, h, s, Replicated));
        out.push(ParamTensor::table("vision.gated_positional_embedding.tile_embedding", rows, d.max_tiles * tile * h, s, Replicated));
        for name in ["vision.pre_tile_positional_embedding", "vision.post_tile_positional_embedding"] {
            out.push(ParamTensor::table(name, rows, d.max_tiles * h, s, Replicated));
            out.push(v(name, 1));
        }
        out.push(v("vision.layernorm_pre", 2 * h));
        out.push(v("vision.layernorm_post", 2 * h));
        for gated in std::iter::repeat_n(false, d.layers as usize).chain(std::iter::repeat_n(true, self.global_layers as usize)) {
            for (name, kinds) in [("vision.self_attn.q_proj", Q), ("vision.self_attn.k_proj", K), ("vision.self_attn.v_proj", V), ("vision.self_attn.o_proj", O)] {
                out.push(ParamTensor::tower_linear(name, kinds, h, h));
            }
            out.push(ParamTensor::tower_linear("vision.mlp.fc1", UP, f, h));
            out.push(v("vision.mlp.fc1.bias", f));
            out.push(ParamTensor::tower_linear("vision.mlp.fc2", DOWN, h, f));
            out.push(v("vision.mlp.fc2.bias", h));
            out.push(v("vision.input_layernorm", 2 * h));
            out.push(v("vision.post_attention_layernorm", 2 * h));
            if gated {
                out.push(v("vision.gate_attn", 1));
                out.push(v("vision.gate_ffn", 1));
            }
        }
        out.push(ParamTensor::new("projector.multi_modal_projector", &[d.text_hidden, self.vision_output], s, Replicated));
        out.push(v("projector.multi_modal_projector.bias", d.text_hidden));
    }
}

const Q: &[LinearKind] = &[LinearKind::Q];
const K: &[LinearKind] = &[LinearKind::K];
const V: &[LinearKind] = &[LinearKind::V];
const O: &[LinearKind] = &[LinearKind::O];
const UP: &[LinearKind] = &[LinearKind::Up];
const DOWN: &[LinearKind] = &[LinearKind::Down];
