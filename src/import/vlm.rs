//! Vision-language wrappers: the `vision_config` (and the wrapper's projector keys) of a
//! Qwen2.5-VL, Qwen3-VL, Gemma 3, PaliGemma, LLaVA, Idefics3, SmolVLM, InternVL, Llama 4 or Gemma 4 config → a [`VisionTower`] beside the language model that
//! `hf_config.rs` reads from the text part. Defaults are those of transformers 5.25's
//! `Qwen2_5_VLVisionConfig`, `Qwen3VLVisionConfig`, `SiglipVisionConfig` (inside `Gemma3Config`), the
//! `CLIPVisionConfig` `LlavaConfig` builds when none is given (`configuration_llava.py`) and
//! `Idefics3VisionConfig` / `SmolVLMVisionConfig` (`configuration_idefics3.py`, `configuration_smolvlm.py`)
//! and `InternVLVisionConfig` (`configuration_internvl.py`); LLaVA-NeXT is LLaVA's CLIP with
//! `image_grid_pinpoints` (`configuration_llava_next.py`); Llama 4's are `Llama4VisionConfig`'s
//! (`configuration_llama4.py`); Gemma 4's are `Gemma4VisionConfig`'s (`configuration_gemma4.py`
//! lines 266–313);
//! counts are checked against transformers in `tests/fixtures/measured/vlm_params.json`.

use serde_json::{Map, Value};

use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::tower::{InternVit, Llama4Adapter};
use crate::model::arch::{TowerKind, VisionTower};

/// Wrappers whose tower Headroom builds.
pub fn has_tower(model_type: &str) -> bool {
    matches!(
        model_type,
        "qwen2_5_vl"
            | "qwen3_vl"
            | "qwen3_vl_moe"
            | "qwen3_5"
            | "qwen3_5_moe"
            | "gemma3"
            | "paligemma"
            | "llava"
            | "idefics3"
            | "smolvlm"
            | "internvl"
            | "llava_next"
            | "llama4"
            | "mllama"
            | "gemma4"
    )
}

/// `tie_word_embeddings` of the wrapper's configuration class when `config.json` leaves it
/// out (transformers 5.25: `Gemma3Config`, `PaliGemmaConfig`, `InternVLConfig` and
/// `Gemma4Config` tie, the others do not).
pub fn ties_by_default(model_type: &str) -> bool {
    matches!(model_type, "gemma3" | "paligemma" | "internvl" | "gemma4")
}

/// The tower and projector of `config` (a `model_type` for which [`has_tower`] holds),
/// writing into a language model of width `text_hidden`, and the warnings for the user: the
/// keys that took their defaults and what the reader assumed.
pub fn tower(model_type: &str, config: &Map<String, Value>, text_hidden: u64) -> Result<(VisionTower, Vec<String>), InputError> {
    let empty = Map::new();
    let vision = config.get("vision_config").and_then(Value::as_object).unwrap_or(&empty);
    let c = Keys::new(vision);
    let top = Keys::new(config);
    let within = |e: InputError| e.within("vision_config");
    // A SigLIP tower with `SiglipVisionConfig`'s defaults (Gemma 3's and PaliGemma's).
    let siglip = |kind, tokens_per_image, text_hidden| -> Result<VisionTower, InputError> {
        Ok(VisionTower {
            hidden: c.uint("hidden_size", 768).map_err(within)?,
            layers: c.uint("num_hidden_layers", 12).map_err(within)?,
            heads: c.uint("num_attention_heads", 12).map_err(within)?,
            ffn: c.uint("intermediate_size", 3072).map_err(within)?,
            patch: c.uint("patch_size", 16).map_err(within)?,
            channels: c.uint("num_channels", 3).map_err(within)?,
            image_size: c.uint("image_size", 224).map_err(within)?,
            tokens_per_image,
            head: c.flag("vision_use_head", true).map_err(within)?,
            ..VisionTower::base(kind, text_hidden)
        })
    };
    let tower = match model_type {
        "qwen2_5_vl" => {
            let channels = if c.has("in_chans") { c.uint("in_chans", 3) } else { c.uint("in_channels", 3) }.map_err(within)?;
            VisionTower {
                hidden: c.uint("hidden_size", 3584).map_err(within)?,
                layers: c.uint("depth", 32).map_err(within)?,
                heads: c.uint("num_heads", 16).map_err(within)?,
                ffn: c.uint("intermediate_size", 3420).map_err(within)?,
                patch: c.uint("patch_size", 14).map_err(within)?,
                channels,
                temporal_patch: c.uint("temporal_patch_size", 2).map_err(within)?,
                merge: c.uint("spatial_merge_size", 2).map_err(within)?,
                text_hidden: c.uint("out_hidden_size", text_hidden).map_err(within)?,
                ..VisionTower::base(TowerKind::Qwen25Vl, text_hidden)
            }
        }
        // Qwen3.5's tower is Qwen3-VL's without DeepStack (`modular_qwen3_5.py`
        // `Qwen3_5VisionModel(Qwen3VLVisionModel)` deletes `deepstack_visual_indexes` and
        // `deepstack_merger_list`); `Qwen3_5VisionConfig` has Qwen3-VL's defaults. Both
        // classes' `out_hidden_size` default to 3584 whatever the text width
        // (`configuration_qwen3_5.py` `Qwen3_5VisionConfig`, `configuration_qwen3_vl.py` line 53).
        "qwen3_5" | "qwen3_5_moe" => VisionTower { deepstack: 0, ..qwen3_vl(&c, 3584, text_hidden).map_err(within)? },
        "qwen3_vl" | "qwen3_vl_moe" => VisionTower {
            deepstack: match vision.get("deepstack_visual_indexes") {
                Some(Value::Array(list)) => list.len() as u64,
                Some(v) if !v.is_null() => return Err(InputError::new("vision_config.deepstack_visual_indexes", format!("must be a list of layer indices, got {v}"))),
                _ => 3,
            },
            ..qwen3_vl(&c, 3584, text_hidden).map_err(within)?
        },
        "gemma3" => siglip(TowerKind::Siglip, top.uint("mm_tokens_per_image", 256)?, text_hidden)?,
        // `SiglipVisionConfig`'s defaults for the keys a `vision_config` leaves out (PaliGemma's
        // own default tower, used when there is no `vision_config`, is not read here).
        "paligemma" => siglip(TowerKind::PaliGemma, 0, top.uint("projection_dim", text_hidden)?)?,
        "llava" | "llava_next" => clip(&c, &top, model_type, text_hidden)?,
        "internvl" => internvl(&c, &top, text_hidden)?,
        "llama4" => llama4(&c, text_hidden).map_err(within)?,
        "mllama" => super::mllama::tower(&c, text_hidden).map_err(within)?,
        "gemma4" => gemma4(&c, text_hidden).map_err(within)?,
        "idefics3" | "smolvlm" => {
            let merge = top.uint("scale_factor", 2)?;
            idefics3(&c, merge, text_hidden).map_err(within)?
        }
        other => return Err(InputError::new("model_type", format!("\"{other}\" has no vision tower reader"))),
    };
    let defaulted = c.defaulted().into_iter().map(|d| format!("vision_config.{d}")).chain(top.defaulted());
    let mut warnings: Vec<String> = defaulted.map(|d| format!("config.json does not set {d}: transformers' default used")).collect();
    warnings.extend(c.notes());
    warnings.extend(top.notes());
    Ok((tower, warnings))
}

/// Qwen3-VL's ViT (`Qwen3VLVisionConfig`'s defaults: 1152 wide, 27 blocks, 16 heads, 4304
/// MLP, 16-px patches over 2 frames, 2 × 2 merging, a 48 × 48 position table), without its
/// DeepStack mergers, which the caller sets; the merger writes `out_hidden_size` wide
/// (`out_default` when unset; `text_hidden` is the language model's width).
fn qwen3_vl(c: &Keys, out_default: u64, text_hidden: u64) -> Result<VisionTower, InputError> {
    Ok(VisionTower {
        hidden: c.uint("hidden_size", 1152)?,
        layers: c.uint("depth", 27)?,
        heads: c.uint("num_heads", 16)?,
        ffn: c.uint("intermediate_size", 4304)?,
        patch: c.uint("patch_size", 16)?,
        channels: c.uint("in_channels", 3)?,
        temporal_patch: c.uint("temporal_patch_size", 2)?,
        merge: c.uint("spatial_merge_size", 2)?,
        text_hidden: c.uint("out_hidden_size", out_default)?,
        positions: c.uint("num_position_embeddings", 2304)?,
        ..VisionTower::base(TowerKind::Qwen3Vl, text_hidden)
    })
}

/// Idefics3's / SmolVLM's SigLIP tower (`Idefics3VisionConfig`'s defaults: 1152 wide, 12
/// blocks, 16 heads, 3072 MLP, 224 px, 32-px patches) and the connector's `scale_factor`
/// (default 2, a key of the wrapper). The tiles' processor size is not in `config.json`
/// proper: SmolVLM's Hub configs carry it in `vision_config.size.longest_edge`; without it
/// the processors' default ratio is assumed, 4 tiles per side (`size.longest_edge` 1456 =
/// 4 × `max_image_size.longest_edge` 364 in `image_processing_idefics3.py`), and said.
fn idefics3(c: &Keys, merge: u64, text_hidden: u64) -> Result<VisionTower, InputError> {
    let image_size = c.uint("image_size", 224)?;
    let longest_edge = match c.nested("size").and_then(|size| size.get("longest_edge")) {
        Some(v) => v.as_u64().filter(|&n| n > 0).ok_or_else(|| InputError::new("size.longest_edge", format!("must be a positive whole number of pixels, got {v}")))?,
        None => {
            c.note(format!(
                "vision_config.size.longest_edge not set: images are resized to a longest edge of 4 tiles ({} px) before splitting, the image processors' default ratio; set it to the preprocessor_config.json's size.longest_edge",
                4 * image_size
            ));
            4 * image_size
        }
    };
    let patch = c.uint("patch_size", 32)?;
    // The connector's pixel shuffle reshapes each tile's square grid of patches into blocks of
    // scale_factor × scale_factor (`Idefics3Connector.pixel_shuffle`); transformers builds the
    // model either way (the default config's 7 × 7 grid does not divide by 2) but its forward
    // fails on an image.
    let side = image_size / patch;
    if side == 0 || side % merge != 0 {
        c.note(format!(
            "vision_config: a tile of {image_size} px has {side} patches of {patch} px per side, which scale_factor {merge} does not divide: transformers' connector cannot pixel-shuffle it, so images fail in its forward (parameters counted; tokens per tile rounded down)"
        ));
    }
    Ok(VisionTower {
        hidden: c.uint("hidden_size", 1152)?,
        layers: c.uint("num_hidden_layers", 12)?,
        heads: c.uint("num_attention_heads", 16)?,
        ffn: c.uint("intermediate_size", 3072)?,
        patch,
        channels: c.uint("num_channels", 3)?,
        image_size,
        merge,
        longest_edge,
        ..VisionTower::base(TowerKind::Idefics3, text_hidden)
    })
}

/// Llama 4's vision model (`Llama4VisionConfig`'s defaults: 768 wide, 34 blocks, 16 heads,
/// 5632 MLP, 448-px tiles of 14-px patches, `pixel_shuffle_ratio` 0.5, adapter 4096 → 4096,
/// `vision_output_dim` 7680). The tiles' limit, the processor's `max_patches`, is not in
/// `config.json`: `Llama4ImageProcessor`'s default (16) is used, and said; the tile side is
/// taken to be the tower's `image_size` (its position table is that grid's).
fn llama4(c: &Keys, text_hidden: u64) -> Result<VisionTower, InputError> {
    let ratio = c.number("pixel_shuffle_ratio", 0.5)?;
    // `pixel_shuffle` folds 1 / ratio patches per side into one token.
    let merge = 1.0 / ratio;
    if !(merge >= 1.0 && merge.fract() == 0.0 && merge <= 64.0) {
        return Err(InputError::new("pixel_shuffle_ratio", format!("must be 1 / n for a whole n (0.5: 2 × 2 patches per token), got {ratio}")));
    }
    if c.text("vision_feature_select_strategy", "default")? != "default" {
        return Err(InputError::new("vision_feature_select_strategy", "Llama 4's pixel shuffle is modelled for \"default\" only"));
    }
    c.note("the Llama 4 image processor's max_patches is not in config.json: Llama4ImageProcessor's default, 16 tiles and a global tile at most, is used, with tiles of vision_config.image_size px");
    let (hidden, ffn) = (c.uint("hidden_size", 768)?, c.uint("intermediate_size", 5632)?);
    let (input, output, vision_output) = (c.uint("projector_input_dim", 4096)?, c.uint("projector_output_dim", 4096)?, c.uint("vision_output_dim", 7680)?);
    // transformers builds any widths, but its forward chains them: the shuffled tokens
    // (merge² · h wide) into `fc1` (intermediate_size in), `fc1`'s output into `fc2`
    // (projector_output_dim in), `fc2`'s into the projector (vision_output_dim in). The class
    // default itself does not chain (768 · 4 ≠ 5632, 4096 ≠ 7680).
    let shuffled = hidden * (merge as u64).pow(2);
    if shuffled != ffn || input != output || output != vision_output {
        c.note(format!(
            "vision_config: the widths do not chain (pixel-shuffled tokens {shuffled} wide into an adapter reading intermediate_size {ffn}; projector_input_dim {input} into projector_output_dim {output}; that into vision_output_dim {vision_output}): transformers builds the model but its forward fails on an image (parameters counted as built; activations by each module's own width)"
        ));
    }
    Ok(VisionTower {
        hidden,
        layers: c.uint("num_hidden_layers", 34)?,
        heads: c.uint("num_attention_heads", 16)?,
        ffn,
        patch: c.uint("patch_size", 14)?,
        channels: c.uint("num_channels", 3)?,
        image_size: c.uint("image_size", 448)?,
        merge: merge as u64,
        max_tiles: 16,
        llama4: Llama4Adapter { input: c.uint("projector_input_dim", 4096)?, output: c.uint("projector_output_dim", 4096)?, vision_output: c.uint("vision_output_dim", 7680)? },
        ..VisionTower::base(TowerKind::Llama4, text_hidden)
    })
}

/// InternVL's InternViT (`InternVLVisionConfig`'s defaults: 1024 wide, 24 blocks, 16 heads,
/// 4096 MLP, 448-px tiles of 14-px patches, LayerNorm, no q/k norm, no q/k/v biases, mean
/// pooling) and the wrapper's `downsample_ratio` (0.5: 2 × 2 patches per token). The tiles'
/// limit, the processor's `max_patches`, is not in `config.json`: the default of
/// `GotOcr2ImageProcessor` (12) is used, and said.
fn internvl(c: &Keys, top: &Keys, text_hidden: u64) -> Result<VisionTower, InputError> {
    let within = |e: InputError| e.within("vision_config");
    let ratio = top.number("downsample_ratio", 0.5)?;
    // The projector is `int(1 / downsample_ratio)`² · h wide, and the pixel shuffle needs the
    // tile's patch grid to divide by it.
    let merge = 1.0 / ratio;
    if !(merge >= 1.0 && merge.fract() == 0.0 && merge <= 64.0) {
        return Err(InputError::new("downsample_ratio", format!("must be 1 / n for a whole n (0.5: 2 × 2 patches per token), got {ratio}")));
    }
    let square = |key: &str, default: u64| -> Result<u64, InputError> {
        match c.get(key) {
            Some(Value::Array(sides)) => match sides.as_slice() {
                [a, b] if a == b => a.as_u64().filter(|&n| n > 0).ok_or_else(|| InputError::new(key, format!("must be positive whole numbers, got {a}"))),
                _ => Err(InputError::new(key, "only square sizes ([n, n]) are supported")),
            },
            _ => c.uint(key, default),
        }
    };
    // With "full" the class token stays in each tile's features, which then do not form the
    // square grid `InternVLModel.get_image_features` reshapes them into.
    if top.text("vision_feature_select_strategy", "default")? != "default" {
        return Err(InputError::new("vision_feature_select_strategy", "InternVL's pixel shuffle needs \"default\" (the class token dropped)"));
    }
    let norm_type = c.text("norm_type", "layer_norm").map_err(within)?;
    if norm_type != "layer_norm" && norm_type != "rms_norm" {
        return Err(InputError::new("vision_config.norm_type", format!("must be \"layer_norm\" or \"rms_norm\", got \"{norm_type}\"")));
    }
    c.note("the InternVL image processor's max_patches is not in config.json: GotOcr2ImageProcessor's default, 12 tiles and a thumbnail at most, is used");
    Ok(VisionTower {
        hidden: c.uint("hidden_size", 1024).map_err(within)?,
        layers: c.uint("num_hidden_layers", 24).map_err(within)?,
        heads: c.uint("num_attention_heads", 16).map_err(within)?,
        ffn: c.uint("intermediate_size", 4096).map_err(within)?,
        patch: square("patch_size", 14).map_err(within)?,
        channels: c.uint("num_channels", 3).map_err(within)?,
        image_size: square("image_size", 448).map_err(within)?,
        merge: merge as u64,
        max_tiles: 12,
        internvit: InternVit {
            rms_norm: norm_type == "rms_norm",
            qk_norm: c.flag("use_qk_norm", false).map_err(within)?,
            attention_bias: c.flag("attention_bias", false).map_err(within)?,
            final_norm: !c.flag("use_mean_pooling", true).map_err(within)?,
            mask_token: c.flag("use_mask_token", false).map_err(within)?,
            positions: c.flag("use_absolute_position_embeddings", true).map_err(within)?,
        },
        ..VisionTower::base(TowerKind::InternVl, text_hidden)
    })
}

/// LLaVA-NeXT's `image_grid_pinpoints` (`[height, width]` pairs; `LlavaNextConfig`'s default
/// when absent) and its `vision_feature_select_strategy`, which must be "default": with "full"
/// the class token stays in each tile's features and `pack_image_features` cannot lay them
/// out as a grid.
fn anyres_pinpoints(top: &Keys) -> Result<Vec<[u64; 2]>, InputError> {
    if top.text("vision_feature_select_strategy", "default")? != "default" {
        return Err(InputError::new("vision_feature_select_strategy", "LLaVA-NeXT's anyres packing is modelled for \"default\" only"));
    }
    let bad = |v: &Value| InputError::new("image_grid_pinpoints", format!("must be a list of [height, width] pairs in pixels, got {v}"));
    match top.get("image_grid_pinpoints") {
        None => {
            top.note("config.json does not set image_grid_pinpoints: LlavaNextConfig's default used ([[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]])");
            Ok(vec![[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]])
        }
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .map(|pair| match pair.as_array().map(Vec::as_slice) {
                Some([h, w]) => match (h.as_u64(), w.as_u64()) {
                    (Some(h), Some(w)) if h > 0 && w > 0 => Ok([h, w]),
                    _ => Err(bad(pair)),
                },
                _ => Err(bad(pair)),
            })
            .collect(),
        Some(v) => Err(bad(v)),
    }
}

/// LLaVA's and LLaVA-NeXT's CLIP tower (the `CLIPVisionConfig` `LlavaConfig` builds when the
/// `vision_config` leaves keys out: 1024 wide, 24 blocks, 16 heads, 4096 MLP, 336 px, 14-px
/// patches) and two-layer projector.
fn clip(c: &Keys, top: &Keys, model_type: &str, text_hidden: u64) -> Result<VisionTower, InputError> {
    let within = |e: InputError| e.within("vision_config");
    // `LlavaConfig.multimodal_projector_bias` (also LLaVA-NeXT's).
    if !top.flag("multimodal_projector_bias", true)? {
        return Err(InputError::new("multimodal_projector_bias", "a projector without biases is not supported yet"));
    }
    let pinpoints = if model_type == "llava_next" { anyres_pinpoints(top)? } else { Vec::new() };
    Ok(VisionTower {
        hidden: c.uint("hidden_size", 1024).map_err(within)?,
        layers: c.uint("num_hidden_layers", 24).map_err(within)?,
        heads: c.uint("num_attention_heads", 16).map_err(within)?,
        ffn: c.uint("intermediate_size", 4096).map_err(within)?,
        patch: c.uint("patch_size", 14).map_err(within)?,
        channels: c.uint("num_channels", 3).map_err(within)?,
        image_size: c.uint("image_size", 336).map_err(within)?,
        pinpoints,
        ..VisionTower::base(TowerKind::Clip, text_hidden)
    })
}

/// Gemma 4's vision model (`Gemma4VisionConfig`'s defaults: 768 wide, 16 blocks, 12 heads and 12
/// key/value heads of 64, 3072 MLP, 16-px patches, a 3 × 3 pooling kernel, 10,240 position rows).
/// The soft tokens per image are the image processor's `max_soft_tokens`, which `config.json`
/// proper does not hold: the Hub configs' `vision_config.default_output_length` is read when
/// present, else `Gemma4ImageProcessor`'s default (280) is used, and said. Only the
/// `gelu_pytorch_tanh` MLP (the class default) is modelled.
fn gemma4(c: &Keys, text_hidden: u64) -> Result<VisionTower, InputError> {
    use crate::model::arch::gemma4_vision::{Gemma4Vision, DEFAULT_SOFT_TOKENS, SUPPORTED_SOFT_TOKENS};
    let soft_tokens = match c.get("default_output_length") {
        Some(v) => v
            .as_u64()
            .filter(|n| SUPPORTED_SOFT_TOKENS.contains(n))
            .ok_or_else(|| InputError::new("default_output_length", format!("must be one of the image processor's max_soft_tokens, {SUPPORTED_SOFT_TOKENS:?}, got {v}")))?,
        None => {
            c.note(format!(
                "vision_config.default_output_length not set: the image processor's default max_soft_tokens, {DEFAULT_SOFT_TOKENS} soft tokens per image ({DEFAULT_SOFT_TOKENS} · pooling_kernel_size² padded patches), is used; set it to the preprocessor_config.json's max_soft_tokens"
            ));
            DEFAULT_SOFT_TOKENS
        }
    };
    let activation = c.text("hidden_activation", "gelu_pytorch_tanh")?;
    if activation != "gelu_pytorch_tanh" {
        return Err(InputError::new(
            "hidden_activation",
            format!("only \"gelu_pytorch_tanh\" is modelled for Gemma 4's vision MLP, got \"{}\"", crate::safe_text::quoted(&activation)),
        ));
    }
    let heads = c.uint("num_attention_heads", 12)?;
    Ok(VisionTower {
        hidden: c.uint("hidden_size", 768)?,
        layers: c.uint("num_hidden_layers", 16)?,
        heads,
        ffn: c.uint("intermediate_size", 3072)?,
        patch: c.uint("patch_size", 16)?,
        // `Gemma4VisionPatchEmbedder.input_proj` reads three channels whatever the config says.
        channels: 3,
        merge: c.uint("pooling_kernel_size", 3)?,
        tokens_per_image: soft_tokens,
        gemma4: Gemma4Vision { kv_heads: c.uint("num_key_value_heads", 12)?, head_dim: c.uint("head_dim", 64)?, position_rows: c.uint("position_embedding_size", 10_240)? },
        ..VisionTower::base(TowerKind::Gemma4, text_hidden)
    })
}
