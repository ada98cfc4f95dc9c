//! Llama 3.2 Vision (`mllama`): its text model with the cross-attention layers and its vision
//! model, with the defaults of transformers 5.25's `MllamaTextConfig` and `MllamaVisionConfig`
//! (`models/mllama/configuration_mllama.py`, lines 26–146); the parts are
//! `model/arch/cross_attention.rs` and `model/arch/mllama_vision.rs`. Counts are checked
//! against transformers in `tests/fixtures/measured/mllama.json` (`tests/mllama.rs`).

use serde_json::Value;

use super::families::{self, Defaults};
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::mllama_vision::MllamaVision;
use crate::model::arch::{Architecture, TowerKind, TransformerArch, VisionCrossAttention, VisionTower};

/// `MllamaTextConfig.__post_init__`'s `cross_attention_layers` (line 145).
const CROSS_LAYERS: &[u64] = &[3, 8, 13, 18, 23, 28, 33, 38];
/// `MllamaVisionConfig.__post_init__`'s `intermediate_layers_indices` (line 82).
const INTERMEDIATE: &[u64] = &[3, 7, 15, 23, 30];
/// Its `supported_aspect_ratios` (line 79), for `max_num_tiles` 4.
const DEFAULT_RATIOS: u64 = 8;

/// `MllamaTextModel` + `MllamaForConditionalGeneration`'s head (`modeling_mllama.py` lines
/// 1021–1045, 1405): a Llama decoder (head width hidden / heads, no biases) whose
/// `cross_attention_layers` are cross-attention layers (an index at or past
/// `num_hidden_layers` builds nothing: `layer_idx in self.cross_attention_layers`, line 1035),
/// `vocab_size + 8` embedding rows, and an LM head of `vocab_size` that is never tied (the
/// wrapper declares no tied weights, line 1399; measured with `tie_word_embeddings` true).
pub fn mllama_text(c: &Keys) -> Result<TransformerArch, InputError> {
    let mut t = families::decoder(c, &Defaults { hidden: 4096, layers: 40, heads: 32, kv_heads: Some(8), ffn: 14336, vocab: 128256, head_dim: None, tied: false })?;
    if t.embedding.tied {
        c.note("mllama's LM head is never tied to its embeddings (vocab_size + 8 rows): tie_word_embeddings is ignored, as transformers ignores it");
        t.embedding.tied = false;
    }
    t.embedding.extra_rows = 8;
    let listed = indices(c, "cross_attention_layers", CROSS_LAYERS)?;
    let mut cross: Vec<u64> = listed.into_iter().filter(|&i| i < t.layers).collect();
    cross.sort_unstable();
    cross.dedup();
    t.vision_cross = Some(VisionCrossAttention { layers: cross.len() as u64 });
    Ok(t)
}

/// The warning for an mllama text model read without a vision tower: with no images its
/// cross-attention layers are skipped in the forward (`MllamaTextModel.forward`, lines
/// 1135–1139), but every block's norms and MLP are counted in the activations.
pub fn without_images_note(arch: &Architecture) -> Option<String> {
    let t = arch.transformer()?;
    let cross = t.vision_cross?.layers.min(t.layers);
    (cross > 0).then(|| {
        format!(
            "approximate: without a vision_config there are no images, and transformers skips the {cross} cross-attention layers in the forward; their norms and MLP are still counted in the activations (at most {cross} of {} blocks' saved tensors too many)",
            t.layers
        )
    })
}

/// A list of layer indices (0 allowed); absent → `default`, recorded.
fn indices(c: &Keys, key: &str, default: &[u64]) -> Result<Vec<u64>, InputError> {
    match c.get(key) {
        None | Some(Value::Null) => {
            c.note_default(key, format!("{default:?}"));
            Ok(default.to_vec())
        }
        Some(Value::Array(items)) if items.len() <= 1024 => items
            .iter()
            .map(|v| v.as_u64().filter(|&n| n < 1 << 20).ok_or_else(|| InputError::new(key, format!("every entry must be a layer index (a whole number), got {v}"))))
            .collect(),
        Some(v) => Err(InputError::new(key, format!("must be a list of layer indices, got {v}"))),
    }
}

/// `MllamaVisionModel` and the projector (`MllamaVisionConfig`'s defaults: 1280 wide, 32 local
/// and 8 global blocks, 16 heads, 5120 MLP, 448-px tiles of 14-px patches, 4 tiles, 8 aspect
/// ratios, 5 intermediate layers, `vision_output_dim` 7680). The image processor's tile size and
/// `max_image_tiles` are not in `config.json`: the tower's `image_size` and `max_num_tiles` are
/// used (the vision model only runs on tiles of those), and said.
pub fn tower(c: &Keys, text_hidden: u64) -> Result<VisionTower, InputError> {
    let hidden = c.uint("hidden_size", 1280)?;
    let layers = c.uint("num_hidden_layers", 32)?;
    let heads = if c.has("attention_heads") { c.uint("attention_heads", 16)? } else { c.uint("num_attention_heads", 16)? };
    let max_tiles = c.uint("max_num_tiles", 4)?;
    let aspect_ratios = match c.get("supported_aspect_ratios") {
        None | Some(Value::Null) => {
            if max_tiles != 4 {
                return Err(InputError::new("max_num_tiles", "must be 4 for the default supported_aspect_ratios (MllamaVisionConfig.validate_architecture)"));
            }
            DEFAULT_RATIOS
        }
        Some(Value::Array(ratios)) if !ratios.is_empty() && ratios.len() <= 1024 => {
            for r in ratios {
                let pair = r.as_array().filter(|p| p.len() == 2 && p.iter().all(|n| n.as_u64().is_some_and(|n| n > 0)));
                if pair.is_none() {
                    return Err(InputError::new("supported_aspect_ratios", format!("every entry must be [tiles high, tiles wide], got {r}")));
                }
            }
            ratios.len() as u64
        }
        Some(v) => Err(InputError::new("supported_aspect_ratios", format!("must be a list of [tiles high, tiles wide] pairs, got {v}")))?,
    };
    let intermediate = indices(c, "intermediate_layers_indices", INTERMEDIATE)?;
    let vision_output = c.uint("vision_output_dim", 7680)?;
    // transformers builds any widths; its forward concatenates the final state with the listed
    // layers' states and feeds them to the projector, which reads vision_output_dim.
    let concatenated = hidden * (1 + intermediate.len() as u64);
    if concatenated != vision_output || intermediate.iter().any(|&i| i >= layers) {
        c.note(format!(
            "vision_config: the output ({concatenated} wide: hidden_size × (1 + {} intermediate layers), indices below num_hidden_layers {layers}) does not match vision_output_dim {vision_output}: transformers builds the model but its forward fails on an image (parameters counted as built)",
            intermediate.len()
        ));
    }
    c.note("the mllama image processor's tile size and max_image_tiles are not in config.json: tiles of vision_config.image_size px, vision_config.max_num_tiles per image (padding tiles included, as the processor pads them)");
    Ok(VisionTower {
        hidden,
        layers,
        heads,
        ffn: c.uint("intermediate_size", 5120)?,
        patch: c.uint("patch_size", 14)?,
        channels: c.uint("num_channels", 3)?,
        image_size: c.uint("image_size", 448)?,
        max_tiles,
        mllama: MllamaVision { global_layers: c.uint("num_global_layers", 8)?, aspect_ratios, intermediate_layers: intermediate.len() as u64, vision_output },
        ..VisionTower::base(TowerKind::Mllama, text_hidden)
    })
}
