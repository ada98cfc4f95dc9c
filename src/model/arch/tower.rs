//! The vision side of a vision-language model: a vision tower (a ViT over image patches)
//! and the projector that turns its output into tokens of the language model.
//!
//! Towers, each following its transformers module tree:
//! - Qwen2.5-VL's windowed ViT (`modeling_qwen2_5_vl.py` `Qwen2_5_VisionTransformerPretrainedModel`):
//!   a Conv3d patch embedding without bias over `temporal_patch_size` frames, RMSNorm
//!   pre-norm blocks with a fused `qkv` and `proj` (biases) and a gated MLP with biases; its
//!   projector `Qwen2_5_VLPatchMerger` merges 2×2 patches: RMSNorm(h), Linear(4h → 4h),
//!   GELU, Linear(4h → text width), with biases.
//! - Qwen3-VL's ViT (`modeling_qwen3_vl.py` `Qwen3VLVisionModel`): a Conv3d patch embedding
//!   with bias, a learned position table (`num_position_embeddings`, interpolated to the
//!   grid), LayerNorm blocks with a fused `qkv` and a GELU MLP (`linear_fc1`/`linear_fc2`), a
//!   2×2 merger (LayerNorm over each patch, then like Qwen2.5-VL's) and one DeepStack merger
//!   per `deepstack_visual_indexes` entry (LayerNorm over the merged 4h, then the same MLP).
//! - SigLIP (`modeling_siglip.py` `SiglipVisionModel`, Gemma 3, PaliGemma): a patch conv with
//!   bias, learned positions, LayerNorm pre-norm blocks with q/k/v/out projections and a
//!   GELU MLP (biases everywhere), a post LayerNorm and, when `vision_use_head`, an
//!   attention-pooling head; Gemma 3's projector (`modeling_gemma3.py`
//!   `Gemma3MultiModalProjector`) average-pools to `mm_tokens_per_image` tokens, RMSNorms
//!   them (`mm_soft_emb_norm`) and multiplies by `mm_input_projection_weight` (no bias).
//! - PaliGemma (`modeling_paligemma.py` `PaliGemmaMultiModalProjector`): SigLIP and one
//!   Linear(vision → `projection_dim`) with bias; every patch is a language-model token.
//! - CLIP (`modeling_clip.py` `CLIPVisionModel`, LLaVA): a class embedding, a patch conv
//!   without bias, positions for the patches and the class token, a LayerNorm before the
//!   blocks (`pre_layrnorm`), SigLIP's block, a post LayerNorm; LLaVA's projector
//!   (`modeling_llava.py` `LlavaMultiModalProjector`): Linear(vision → text), GELU,
//!   Linear(text → text), with biases; LLaVA-NeXT (`modeling_llava_next.py`) adds one
//!   learned `image_newline` vector of the text width, counted with the projector.
//! - Idefics3 / SmolVLM (`modeling_idefics3.py` `Idefics3VisionTransformer`, the same tree in
//!   `modeling_smolvlm.py`): SigLIP's tree without the pooling head, over square tiles of
//!   `image_size` px; its connector (`Idefics3Connector`) pixel-shuffles `scale_factor` ×
//!   `scale_factor` patches into one token (`merge`) and projects it with one Linear(h · s² →
//!   text width) without bias (`Idefics3SimpleMLP`).
//! - InternVL (`modeling_internvl.py` `InternVLVisionModel`, InternViT): a class token, a patch
//!   conv with bias, learned positions for the patches and the class token, blocks with
//!   LayerNorm or RMSNorm (`norm_type`), separate q/k/v (biases when `attention_bias`), q/k
//!   RMSNorms over the whole width (`use_qk_norm`), a `projection_layer` with bias, a GELU MLP
//!   with biases and two layer-scale vectors (`lambda_1`, `lambda_2`); a final LayerNorm
//!   unless `use_mean_pooling`; its projector (`InternVLMultiModalProjector`) pixel-shuffles
//!   2 × 2 patches (`downsample_ratio` 0.5) and runs LayerNorm(4h), Linear(4h → text), GELU,
//!   Linear(text → text), with biases.
//! - Gemma 4 (`modeling_gemma4.py` `Gemma4VisionModel`, `Gemma4MultimodalEmbedder`): a linear
//!   patch embedder with a 2-D position table, sandwich-normed blocks with q/k/v norms and a
//!   gated MLP, a parameter-free pooler, and a weightless norm and one linear as the projector;
//!   every image padded to the same patch budget (`gemma4_vision.rs`).
//! - Llama 4 (`modeling_llama4.py` `Llama4VisionModel`, lines 957–1138): an unfold patch
//!   embedding (`Llama4UnfoldConvolution`: Linear(channels · patch² → h) without bias), a class
//!   token appended after the patches, learned positions for the patches and the class token,
//!   `layernorm_pre`, LayerNorm blocks with q/k/v/o projections with biases (2-D rotary
//!   positions, no parameters) and a GELU MLP with biases, `layernorm_post`, and inside the
//!   vision model the pixel-shuffle adapter (`Llama4VisionPixelShuffleMLP`, lines 703–734): 2 × 2
//!   patches (`pixel_shuffle_ratio` 0.5) become one token, then `fc1` (intermediate_size →
//!   `projector_input_dim`), GELU, `fc2` (`projector_output_dim` → `projector_output_dim`), GELU,
//!   no biases (`Llama4VisionMLP2`, lines 672–686); it is counted with the vision tower, as
//!   transformers' module tree has it. The projector (`Llama4MultiModalProjector`, lines
//!   689–700) is one Linear(`vision_output_dim` → text width) without bias.
//!
//! Image tokens (what the language model reads per image) and patches (what the tower
//! reads) follow each image processor: Qwen2.5-VL resizes to multiples of patch × merge
//! within `min_pixels`/`max_pixels` (`image_processing_qwen2_vl.py` `smart_resize`),
//! SigLIP and CLIP resize to their own square `image_size`, Idefics3 and SmolVLM split the
//! image into tiles of `image_size` px plus a global view, InternVL into the tile grid closest to
//! its aspect ratio plus a thumbnail (`tiling.rs`), Gemma 4 into its patch budget, padded to it
//! (`gemma4_vision.rs`).

use serde::{Deserialize, Serialize};

use super::anyres::{anyres_tiles, anyres_tokens};
use super::gemma4_vision::{gemma4_tokens, Gemma4Dims, Gemma4Vision, GEMMA4_VIDEO_SOFT_TOKENS};
use super::llama4_tiles::llama4_tiles;
use super::mllama_vision::{padded, MllamaDims, MllamaVision};
use super::param::{check_dim, LinearKind, ParamTensor, Scope, TpSplit};
use super::tiling::{idefics3_tiles, internvl_tiles};
use crate::error::InputError;

/// Which tower.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TowerKind {
    /// Qwen2.5-VL's windowed ViT with its 2×2 patch merger.
    Qwen25Vl,
    /// Qwen3-VL's ViT: learned positions, LayerNorm blocks with a GELU MLP, a 2×2 merger and
    /// DeepStack mergers that feed intermediate layers' features to the language model.
    Qwen3Vl,
    /// SigLIP with Gemma 3's pooled projector.
    Siglip,
    /// SigLIP with PaliGemma's one linear projector (bias), every patch a token.
    PaliGemma,
    /// CLIP with LLaVA's two-layer projector.
    Clip,
    /// Idefics3's / SmolVLM's SigLIP over image tiles, with the pixel-shuffle connector.
    Idefics3,
    /// InternVL's InternViT over image tiles, with the pixel-shuffle MLP projector.
    InternVl,
    /// Llama 4's ViT over image tiles, its pixel-shuffle adapter and one linear projector.
    Llama4,
    /// Llama 3.2 Vision's local and gated global encoders over `max_num_tiles` tiles, whose
    /// output the language model's cross-attention layers read (`mllama_vision.rs`).
    Mllama,
    /// Gemma 4's vision model over a fixed budget of padded patches, pooled k × k into soft
    /// tokens, and its embedder (`gemma4_vision.rs`).
    Gemma4,
}

/// Llama 4's adapter and projector widths (`Llama4VisionConfig`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Llama4Adapter {
    /// `projector_input_dim`: `fc1`'s output.
    pub input: u64,
    /// `projector_output_dim`: `fc2`'s input and output.
    pub output: u64,
    /// `vision_output_dim`: the projector's input.
    pub vision_output: u64,
}

/// InternViT's switches (`InternVLVisionConfig`), which its two sizes set differently
/// (InternViT-300M: LayerNorm, no q/k norm, mean pooling; InternViT-6B: RMSNorm, q/k norms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InternVit {
    /// `norm_type: "rms_norm"` (else LayerNorm).
    pub rms_norm: bool,
    /// `use_qk_norm`: an RMSNorm over the whole q and k projections.
    pub qk_norm: bool,
    /// `attention_bias`: biases on q/k/v.
    pub attention_bias: bool,
    /// `use_mean_pooling: false`: a final LayerNorm over the last hidden state.
    pub final_norm: bool,
    /// `use_mask_token`: one more learned vector.
    pub mask_token: bool,
    /// `use_absolute_position_embeddings`.
    pub positions: bool,
}

/// A vision tower and its projector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VisionTower {
    pub kind: TowerKind,
    /// Tower width.
    pub hidden: u64,
    /// Tower blocks.
    pub layers: u64,
    pub heads: u64,
    /// Tower MLP width.
    pub ffn: u64,
    /// Patch side in pixels.
    pub patch: u64,
    /// Input channels.
    pub channels: u64,
    /// Square image side the tower's positions were trained for (SigLIP, CLIP); Qwen2.5-VL
    /// takes any size.
    pub image_size: u64,
    /// Frames one patch spans (Qwen2.5-VL's `temporal_patch_size`; 1 otherwise).
    pub temporal_patch: u64,
    /// Patches merged into one language-model token per side (Qwen2.5-VL: 2).
    pub merge: u64,
    /// Language-model tokens per image for a pooled projector (Gemma 3: 256).
    pub tokens_per_image: u64,
    /// SigLIP's attention-pooling head (`vision_use_head`).
    pub head: bool,
    /// Width of the language model the projector writes into.
    pub text_hidden: u64,
    /// Qwen3-VL's learned position table (`num_position_embeddings`).
    #[serde(default)]
    pub positions: u64,
    /// Qwen3-VL's DeepStack mergers (`deepstack_visual_indexes`), one per listed layer.
    #[serde(default)]
    pub deepstack: u64,
    /// The image processor's `size.longest_edge` (Idefics3, SmolVLM): every image is resized
    /// to it before it is split into tiles of `image_size`.
    #[serde(default)]
    pub longest_edge: u64,
    /// The image processor's `max_patches` (InternVL): the most tiles of the grid.
    #[serde(default)]
    pub max_tiles: u64,
    /// InternViT's switches (InternVL only).
    #[serde(default)]
    pub internvit: InternVit,
    /// LLaVA-NeXT's `image_grid_pinpoints`, `[height, width]` each: the resolutions an image is
    /// resized and padded to before it is cut into tiles of `image_size` (empty: LLaVA-1.5,
    /// one tile).
    #[serde(default)]
    pub pinpoints: Vec<[u64; 2]>,
    /// Llama 4's adapter and projector widths (Llama 4 only).
    #[serde(default)]
    pub llama4: Llama4Adapter,
    /// Llama 3.2 Vision's global encoder, tile embeddings and output width (mllama only).
    #[serde(default)]
    pub mllama: MllamaVision,
    /// Gemma 4's key/value heads, head width and position table (Gemma 4 only; its
    /// `pooling_kernel_size` is `merge`, its processor's `max_soft_tokens` `tokens_per_image`).
    #[serde(default)]
    pub gemma4: Gemma4Vision,
}

/// The visual input of one sample (`training.resolution`, `training.images_per_sample`,
/// `training.frames`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visual {
    /// `[width, height]` in pixels; `None`: the tower's default ([`VisionTower::default_size`]).
    pub resolution: Option<(u64, u64)>,
    pub images: u64,
    /// Frames per visual input (1: a still image).
    pub frames: u64,
}

/// The image side assumed for Qwen2.5-VL when `training.resolution` is not set (it takes
/// any size): 448 px, 16 × 28, 256 tokens per image.
pub const QWEN_DEFAULT_SIDE: u64 = 448;

/// The image side assumed for Gemma 4 when `training.resolution` is not set.
pub const GEMMA4_DEFAULT_SIDE: u64 = 768;

/// Qwen2.5-VL's processor limits: `min_pixels` 56·56 and `max_pixels` 28·28·1280, the
/// defaults of transformers' `Qwen2VLImageProcessor` (`image_processing_qwen2_vl.py`),
/// which is what `smart_resize` uses unless the processor is built with other limits.
pub const QWEN_MIN_PIXELS: u64 = 56 * 56;
pub const QWEN_MAX_PIXELS: u64 = 28 * 28 * 1280;

/// Python's `round` (half to even), as `smart_resize` rounds.
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// `smart_resize` of `image_processing_qwen2_vl.py`: (height, width) rounded to multiples
/// of `factor`, scaled to keep the pixels within [min_pixels, max_pixels].
pub fn smart_resize(height: u64, width: u64, factor: u64, min_pixels: u64, max_pixels: u64) -> (u64, u64) {
    let (h, w, f) = (height.max(1) as f64, width.max(1) as f64, factor.max(1) as f64);
    let mut hb = round_half_even(h / f) * f;
    let mut wb = round_half_even(w / f) * f;
    if hb * wb > max_pixels as f64 {
        let beta = (h * w / max_pixels as f64).sqrt();
        hb = f.max((h / beta / f).floor() * f);
        wb = f.max((w / beta / f).floor() * f);
    } else if hb * wb < min_pixels as f64 {
        let beta = (min_pixels as f64 / (h * w)).sqrt();
        hb = (h * beta / f).ceil() * f;
        wb = (w * beta / f).ceil() * f;
    }
    (hb as u64, wb as u64)
}

impl VisionTower {
    /// A tower of `kind` writing into a language model `text_hidden` wide, before its reader
    /// sets its shape: every field a family leaves alone is neutral (no fixed image size,
    /// temporal patch and merge of 1, tokens from the image, no pooling head, no position
    /// table, no deepstack, no tiling, no pinpoints) and the shape is zero.
    pub fn base(kind: TowerKind, text_hidden: u64) -> VisionTower {
        VisionTower {
            kind,
            hidden: 0,
            layers: 0,
            heads: 0,
            ffn: 0,
            patch: 0,
            channels: 0,
            image_size: 0,
            temporal_patch: 1,
            merge: 1,
            tokens_per_image: 0,
            head: false,
            text_hidden,
            positions: 0,
            deepstack: 0,
            longest_edge: 0,
            max_tiles: 0,
            internvit: InternVit::default(),
            pinpoints: Vec::new(),
            llama4: Llama4Adapter::default(),
            mllama: MllamaVision::default(),
            gemma4: Gemma4Vision::default(),
        }
    }
    pub(super) fn check(&self) -> Result<(), InputError> {
        check_dim("vision_config.hidden_size", self.hidden)?;
        check_dim("vision_config.depth", self.layers)?;
        check_dim("vision_config.num_heads", self.heads)?;
        check_dim("vision_config.intermediate_size", self.ffn)?;
        check_dim("vision_config.patch_size", self.patch)?;
        check_dim("vision_config.in_channels", self.channels)?;
        check_dim("vision_config.temporal_patch_size", self.temporal_patch)?;
        if self.kind == TowerKind::Llama4 {
            check_dim("vision_config.pixel_shuffle_ratio", self.merge)?;
            check_dim("vision_config.image_size", self.image_size)?;
            check_dim("vision_config.projector_input_dim", self.llama4.input)?;
            check_dim("vision_config.projector_output_dim", self.llama4.output)?;
            check_dim("vision_config.vision_output_dim", self.llama4.vision_output)?;
            return Ok(());
        }
        if self.kind == TowerKind::Gemma4 {
            check_dim("vision_config.pooling_kernel_size", self.merge)?;
            check_dim("vision_config.num_key_value_heads", self.gemma4.kv_heads)?;
            check_dim("vision_config.head_dim", self.gemma4.head_dim)?;
            check_dim("vision_config.position_embedding_size", self.gemma4.position_rows)?;
            check_dim("vision_config.default_output_length", self.tokens_per_image)?;
            return Ok(());
        }
        if self.kind == TowerKind::Mllama {
            check_dim("vision_config.image_size", self.image_size)?;
            check_dim("vision_config.max_num_tiles", self.max_tiles)?;
            check_dim("vision_config.vision_output_dim", self.mllama.vision_output)?;
            return Ok(());
        }
        if self.kind == TowerKind::InternVl {
            check_dim("downsample_ratio", self.merge)?;
            check_dim("vision_config.image_size", self.image_size)?;
            return Ok(());
        }
        if self.kind == TowerKind::Idefics3 {
            check_dim("scale_factor", self.merge)?;
            check_dim("vision_config.image_size", self.image_size)?;
            check_dim("vision_config.size.longest_edge", self.longest_edge)?;
            return Ok(());
        }
        check_dim("vision_config.spatial_merge_size", self.merge)?;
        if self.fixed_size().is_some() {
            check_dim("vision_config.image_size", self.image_size)?;
        }
        Ok(())
    }

    /// Patches the tower reads for one image of `width × height` pixels (`frames` > 1: a
    /// video), and the language-model tokens they become.
    pub fn tokens(&self, width: u64, height: u64, frames: u64) -> (u64, u64) {
        match self.kind {
            TowerKind::Qwen25Vl | TowerKind::Qwen3Vl => {
                let (h, w) = smart_resize(height, width, self.patch * self.merge, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS);
                // An image is one temporal patch (the frame repeated); a video groups frames.
                let t = frames.max(1).div_ceil(self.temporal_patch.max(1));
                let patches = t * (h / self.patch) * (w / self.patch);
                (patches, patches / (self.merge * self.merge))
            }
            TowerKind::Siglip => {
                let patches = (self.image_size / self.patch).pow(2);
                (patches, self.tokens_per_image.min(patches).max(1))
            }
            TowerKind::PaliGemma => {
                let patches = (self.image_size / self.patch).pow(2);
                (patches, patches)
            }
            // LLaVA-NeXT: every tile (the base image and the grid's crops) is a CLIP sequence;
            // the language model reads the base image's patches, then the grid's features
            // with the padding cut away and a newline per row (`anyres.rs`).
            TowerKind::Clip if !self.pinpoints.is_empty() => {
                let side = self.image_size / self.patch;
                let tiles = self.sequences(width, height, frames);
                (tiles * (side * side + 1), anyres_tokens(width, height, &self.pinpoints, self.image_size, side))
            }
            // CLIP reads the patches and a class token; LLaVA's "default" feature selection
            // drops the class token.
            TowerKind::Clip => {
                let patches = (self.image_size / self.patch).pow(2);
                (patches + 1, patches)
            }
            TowerKind::Idefics3 => {
                let patches = self.sequences(width, height, frames) * (self.image_size / self.patch).pow(2);
                (patches, patches / (self.merge * self.merge))
            }
            // Each tile's patches and its class token; the class token is dropped before the
            // pixel shuffle (`vision_feature_select_strategy` "default").
            TowerKind::InternVl => {
                let tiles = self.sequences(width, height, frames);
                let patches = (self.image_size / self.patch).pow(2);
                (tiles * (patches + 1), tiles * (patches / (self.merge * self.merge)))
            }
            // Each tile's patches and the class token appended after them, which is sliced off
            // before the pixel shuffle; the language model reads (side / patch)² / merge² tokens
            // per tile (`processing_llama4.py` lines 129–131 and 153–161).
            TowerKind::Llama4 => {
                let tiles = self.sequences(width, height, frames);
                let patches = (self.image_size / self.patch).pow(2);
                (tiles * (patches + 1), tiles * (patches / (self.merge * self.merge)))
            }
            // Every tile of every image, padding tiles included; the language model reads them
            // through its cross-attention layers, not as tokens of its sequence.
            TowerKind::Mllama => (frames.max(1) * self.mllama_vision_tokens(), 0),
            // An image is the padded patch budget; a video's every frame is one at the video
            // processor's own budget (`gemma4_vision.rs`).
            TowerKind::Gemma4 => {
                let budget = if frames > 1 { GEMMA4_VIDEO_SOFT_TOKENS } else { self.tokens_per_image };
                let (patches, tokens) = gemma4_tokens(width, height, self.patch, self.merge, budget);
                (frames.max(1) * patches, frames.max(1) * tokens)
            }
        }
    }

    /// The separate sequences the tower's attention runs over for one image (or video) of
    /// `width × height` px: Qwen's temporal patch groups (all in one sequence per group), the
    /// tiles of Idefics3, InternVL and LLaVA-NeXT, one image otherwise. A video is one global
    /// view per frame for SmolVLM (`processing_smolvlm.py` `_get_num_multimodal_tokens`:
    /// "Videos are always processed without image splitting") and InternVL.
    pub fn sequences(&self, width: u64, height: u64, frames: u64) -> u64 {
        match self.kind {
            TowerKind::Qwen25Vl | TowerKind::Qwen3Vl => frames.max(1).div_ceil(self.temporal_patch.max(1)),
            TowerKind::Idefics3 if frames > 1 => frames,
            TowerKind::Idefics3 => idefics3_tiles(width, height, self.longest_edge, self.image_size),
            // `processing_internvl.py`: a video frame is one tile.
            TowerKind::InternVl if frames > 1 => frames,
            TowerKind::InternVl => internvl_tiles(width, height, self.image_size, self.max_tiles),
            TowerKind::Clip if !self.pinpoints.is_empty() => anyres_tiles(width, height, &self.pinpoints, self.image_size),
            // Llama 4 has no video processor: each frame is read as one image.
            TowerKind::Llama4 => frames.max(1) * llama4_tiles(width, height, self.image_size, self.max_tiles),
            _ => frames.max(1),
        }
    }

    /// `(width, height)` used when `training.resolution` is not set.
    pub fn default_size(&self) -> (u64, u64) {
        match self.kind {
            TowerKind::Qwen25Vl | TowerKind::Qwen3Vl => (QWEN_DEFAULT_SIDE, QWEN_DEFAULT_SIDE),
            // Any size is resized into the patch budget; the tower reads the padded budget either
            // way. 768 × 768 px: 256 soft tokens at the default 280.
            TowerKind::Gemma4 => (GEMMA4_DEFAULT_SIDE, GEMMA4_DEFAULT_SIDE),
            // Any square image is resized to `longest_edge` first: the same tiles at any side.
            TowerKind::Idefics3 => (self.longest_edge, self.longest_edge),
            // One tile (InternVL, LLaVA-NeXT's smallest grid): the side the tower was trained at.
            _ => (self.image_size, self.image_size),
        }
    }

    /// Patches the tower reads and language-model tokens it produces for one sample.
    pub fn sample_tokens(&self, visual: Visual) -> (u64, u64) {
        let (w, h) = visual.resolution.unwrap_or_else(|| self.default_size());
        let (patches, tokens) = self.tokens(w, h, visual.frames);
        (patches * visual.images, tokens * visual.images)
    }

    /// The image side a tower resizes every image to (SigLIP, CLIP), or `None` when it
    /// takes the image's own size (Qwen2.5-VL) or splits it into tiles (Idefics3, InternVL).
    pub fn fixed_size(&self) -> Option<u64> {
        match self.kind {
            TowerKind::Qwen25Vl | TowerKind::Qwen3Vl | TowerKind::Idefics3 | TowerKind::InternVl | TowerKind::Llama4 | TowerKind::Mllama | TowerKind::Gemma4 => None,
            _ => Some(self.image_size),
        }
    }

    // long: one line per tensor of the vision tower and projector, for every tower kind, as transformers builds them; splitting it would only split the list.
    /// Parameter tensors of the tower (`vision.*`) and the projector (`projector.*`), all in
    /// `Scope::Tower`.
    pub fn param_tensors(&self, out: &mut Vec<ParamTensor>) {
        use TpSplit::Replicated;
        let s = Scope::Tower;
        let (h, f, p, c) = (self.hidden, self.ffn, self.patch, self.channels);
        let v = |name: &'static str, n: u64| ParamTensor::vector(name, n, s, Replicated);
        let m = |name: &'static str, o: u64, i: u64| ParamTensor::new(name, &[o, i], s, Replicated);
        let l = |name: &'static str, kinds: &'static [LinearKind], o: u64, i: u64| ParamTensor::tower_linear(name, kinds, o, i);
        let per_layer = |out: &mut Vec<ParamTensor>, one: &dyn Fn(&mut Vec<ParamTensor>)| {
            for _ in 0..self.layers {
                one(out);
            }
        };
        match self.kind {
            TowerKind::Qwen25Vl => {
                out.push(ParamTensor::new("vision.patch_embed", &[h, c * self.temporal_patch, p, p], s, Replicated));
                per_layer(out, &|out| {
                    out.push(v("vision.norm1", h));
                    out.push(v("vision.norm2", h));
                    out.push(l("vision.attn.qkv", QKV, 3 * h, h));
                    out.push(v("vision.attn.qkv.bias", 3 * h));
                    out.push(l("vision.attn.proj", O, h, h));
                    out.push(v("vision.attn.proj.bias", h));
                    for (name, kinds) in [("vision.mlp.gate_proj", GATE), ("vision.mlp.up_proj", UP)] {
                        out.push(l(name, kinds, f, h));
                        out.push(v(name, f));
                    }
                    out.push(l("vision.mlp.down_proj", DOWN, h, f));
                    out.push(v("vision.mlp.down_proj.bias", h));
                });
                let merged = h * self.merge * self.merge;
                out.push(v("projector.ln_q", h));
                out.push(m("projector.mlp.0", merged, merged));
                out.push(v("projector.mlp.0.bias", merged));
                out.push(m("projector.mlp.2", self.text_hidden, merged));
                out.push(v("projector.mlp.2.bias", self.text_hidden));
            }
            TowerKind::Qwen3Vl => {
                out.push(ParamTensor::new("vision.patch_embed", &[h, c * self.temporal_patch, p, p], s, Replicated));
                out.push(v("vision.patch_embed.bias", h));
                out.push(m("vision.pos_embed", self.positions, h));
                per_layer(out, &|out| {
                    out.push(v("vision.norm1", 2 * h));
                    out.push(v("vision.norm2", 2 * h));
                    out.push(l("vision.attn.qkv", QKV, 3 * h, h));
                    out.push(v("vision.attn.qkv.bias", 3 * h));
                    out.push(l("vision.attn.proj", O, h, h));
                    out.push(v("vision.attn.proj.bias", h));
                    out.push(l("vision.mlp.linear_fc1", UP, f, h));
                    out.push(v("vision.mlp.linear_fc1.bias", f));
                    out.push(l("vision.mlp.linear_fc2", DOWN, h, f));
                    out.push(v("vision.mlp.linear_fc2.bias", h));
                });
                let merged = h * self.merge * self.merge;
                // The merger normalises each patch before the 2×2 shuffle; the DeepStack mergers
                // normalise the shuffled, 4h-wide tokens (`use_postshuffle_norm`).
                for norm in std::iter::once(h).chain(std::iter::repeat_n(merged, self.deepstack as usize)) {
                    out.push(v("projector.norm", 2 * norm));
                    out.push(m("projector.linear_fc1", merged, merged));
                    out.push(v("projector.linear_fc1.bias", merged));
                    out.push(m("projector.linear_fc2", self.text_hidden, merged));
                    out.push(v("projector.linear_fc2.bias", self.text_hidden));
                }
            }
            TowerKind::InternVl => self.internvit_tensors(out),
            TowerKind::Llama4 => self.llama4_tensors(out),
            TowerKind::Mllama => self.mllama.param_tensors(&self.mllama_dims(), out),
            TowerKind::Gemma4 => {
                let (hidden, ffn, patch, layers, heads, text_hidden) = (self.hidden, self.ffn, self.patch, self.layers, self.heads, self.text_hidden);
                self.gemma4.param_tensors(&Gemma4Dims { hidden, ffn, patch, layers, heads, text_hidden }, out);
            }
            TowerKind::Siglip | TowerKind::PaliGemma | TowerKind::Clip | TowerKind::Idefics3 => {
                let patches = (self.image_size / p).pow(2);
                if self.kind == TowerKind::Clip {
                    out.push(v("vision.class_embedding", h));
                    out.push(ParamTensor::new("vision.patch_embedding", &[h, c, p, p], s, Replicated));
                    out.push(m("vision.position_embedding", patches + 1, h));
                    out.push(v("vision.pre_layrnorm", 2 * h));
                } else {
                    out.push(ParamTensor::new("vision.patch_embedding", &[h, c, p, p], s, Replicated));
                    out.push(v("vision.patch_embedding.bias", h));
                    out.push(m("vision.position_embedding", patches, h));
                }
                per_layer(out, &|out| {
                    out.push(v("vision.layer_norm1", 2 * h));
                    for (name, kinds) in [("vision.self_attn.q_proj", Q), ("vision.self_attn.k_proj", K), ("vision.self_attn.v_proj", V), ("vision.self_attn.out_proj", O)] {
                        out.push(l(name, kinds, h, h));
                        out.push(v(name, h));
                    }
                    out.push(v("vision.layer_norm2", 2 * h));
                    out.push(l("vision.mlp.fc1", UP, f, h));
                    out.push(v("vision.mlp.fc1.bias", f));
                    out.push(l("vision.mlp.fc2", DOWN, h, f));
                    out.push(v("vision.mlp.fc2.bias", h));
                });
                out.push(v("vision.post_layernorm", 2 * h));
                if self.head {
                    out.push(v("vision.head.probe", h));
                    out.push(m("vision.head.attention.in_proj", 3 * h, h));
                    out.push(v("vision.head.attention.in_proj.bias", 3 * h));
                    out.push(m("vision.head.attention.out_proj", h, h));
                    out.push(v("vision.head.attention.out_proj.bias", h));
                    out.push(v("vision.head.layernorm", 2 * h));
                    out.push(m("vision.head.mlp.fc1", f, h));
                    out.push(v("vision.head.mlp.fc1.bias", f));
                    out.push(m("vision.head.mlp.fc2", h, f));
                    out.push(v("vision.head.mlp.fc2.bias", h));
                }
                if self.kind == TowerKind::Siglip {
                    out.push(m("projector.mm_input_projection_weight", h, self.text_hidden));
                    out.push(v("projector.mm_soft_emb_norm", h));
                } else if self.kind == TowerKind::PaliGemma {
                    out.push(m("projector.linear", self.text_hidden, h));
                    out.push(v("projector.linear.bias", self.text_hidden));
                } else if self.kind == TowerKind::Idefics3 {
                    out.push(m("projector.modality_projection.proj", self.text_hidden, h * self.merge * self.merge));
                } else {
                    let t = self.text_hidden;
                    out.push(m("projector.linear_1", t, h));
                    out.push(v("projector.linear_1.bias", t));
                    out.push(m("projector.linear_2", t, t));
                    out.push(v("projector.linear_2.bias", t));
                    if !self.pinpoints.is_empty() {
                        // LLaVA-NeXT's `image_newline`, appended to each row of the grid's features.
                        out.push(v("projector.image_newline", t));
                    }
                }
            }
        }
    }
}

impl VisionTower {
    /// The shape mllama's tensors and tokens are built from (`mllama_vision.rs`).
    fn mllama_dims(&self) -> MllamaDims {
        let (hidden, ffn, patch, channels, image_size, layers) = (self.hidden, self.ffn, self.patch, self.channels, self.image_size, self.layers);
        MllamaDims { hidden, ffn, patch, channels, image_size, layers, max_tiles: self.max_tiles, text_hidden: self.text_hidden }
    }

    /// mllama: the tokens of one tile, its patches and the class token.
    pub fn mllama_tile_tokens(&self) -> u64 {
        self.mllama_dims().tile_tokens()
    }

    /// mllama: a tile's tokens padded to a multiple of 8, as its encoders read them.
    pub fn mllama_padded_tile_tokens(&self) -> u64 {
        padded(self.mllama_tile_tokens())
    }

    /// mllama: the vision tokens of one image its cross-attention layers read as keys and
    /// values, every tile's, padding tiles included (`modeling_mllama.py`
    /// `_prepare_static_cache`, lines 1518–1532: `num_images · max_num_tiles · num_patches`).
    pub fn mllama_vision_tokens(&self) -> u64 {
        self.max_tiles * self.mllama_tile_tokens()
    }

    /// Llama 4's vision model (the adapter included) and projector (`modeling_llama4.py`
    /// `Llama4VisionModel`, `Llama4MultiModalProjector`).
    fn llama4_tensors(&self, out: &mut Vec<ParamTensor>) {
        use TpSplit::Replicated;
        let s = Scope::Tower;
        let (h, f, p, c, a) = (self.hidden, self.ffn, self.patch, self.channels, self.llama4);
        let v = |name: &'static str, n: u64| ParamTensor::vector(name, n, s, Replicated);
        let m = |name: &'static str, o: u64, i: u64| ParamTensor::new(name, &[o, i], s, Replicated);
        out.push(m("vision.patch_embedding.linear", h, c * p * p));
        out.push(v("vision.class_embedding", h));
        out.push(m("vision.positional_embedding_vlm", (self.image_size / p).pow(2) + 1, h));
        out.push(v("vision.layernorm_pre", 2 * h));
        out.push(v("vision.layernorm_post", 2 * h));
        for _ in 0..self.layers {
            for (name, kinds) in [("vision.self_attn.q_proj", Q), ("vision.self_attn.k_proj", K), ("vision.self_attn.v_proj", V), ("vision.self_attn.o_proj", O)] {
                out.push(ParamTensor::tower_linear(name, kinds, h, h));
                out.push(v(name, h));
            }
            out.push(ParamTensor::tower_linear("vision.mlp.fc1", UP, f, h));
            out.push(v("vision.mlp.fc1.bias", f));
            out.push(ParamTensor::tower_linear("vision.mlp.fc2", DOWN, h, f));
            out.push(v("vision.mlp.fc2.bias", h));
            out.push(v("vision.input_layernorm", 2 * h));
            out.push(v("vision.post_attention_layernorm", 2 * h));
        }
        // `Llama4VisionMLP2`: fc1 reads `intermediate_size` (the shuffled width, 4h in the
        // configs whose forward runs), fc2 is square at `projector_output_dim`.
        out.push(m("vision.vision_adapter.mlp.fc1", a.input, f));
        out.push(m("vision.vision_adapter.mlp.fc2", a.output, a.output));
        out.push(m("projector.linear_1", self.text_hidden, a.vision_output));
    }

    /// InternViT's tensors and InternVL's projector (`modeling_internvl.py`
    /// `InternVLVisionModel`, `InternVLMultiModalProjector`).
    fn internvit_tensors(&self, out: &mut Vec<ParamTensor>) {
        use TpSplit::Replicated;
        let s = Scope::Tower;
        let (h, f, p, c, o) = (self.hidden, self.ffn, self.patch, self.channels, self.internvit);
        let v = |name: &'static str, n: u64| ParamTensor::vector(name, n, s, Replicated);
        let m = |name: &'static str, o: u64, i: u64| ParamTensor::new(name, &[o, i], s, Replicated);
        // LayerNorm: weight and bias; InternVL's RMSNorm: a weight.
        let norm = if o.rms_norm { h } else { 2 * h };
        out.push(v("vision.embeddings.cls_token", h));
        if o.mask_token {
            out.push(v("vision.embeddings.mask_token", h));
        }
        out.push(ParamTensor::new("vision.embeddings.patch_embeddings.projection", &[h, c, p, p], s, Replicated));
        out.push(v("vision.embeddings.patch_embeddings.projection.bias", h));
        if o.positions {
            out.push(m("vision.embeddings.position_embeddings", (self.image_size / p).pow(2) + 1, h));
        }
        for _ in 0..self.layers {
            for (name, kinds) in [("vision.attention.q_proj", Q), ("vision.attention.k_proj", K), ("vision.attention.v_proj", V)] {
                out.push(ParamTensor::tower_linear(name, kinds, h, h));
                if o.attention_bias {
                    out.push(v(name, h));
                }
            }
            if o.qk_norm {
                out.push(v("vision.attention.q_norm", h));
                out.push(v("vision.attention.k_norm", h));
            }
            out.push(ParamTensor::tower_linear("vision.attention.projection_layer", O, h, h));
            out.push(v("vision.attention.projection_layer.bias", h));
            out.push(ParamTensor::tower_linear("vision.mlp.fc1", UP, f, h));
            out.push(v("vision.mlp.fc1.bias", f));
            out.push(ParamTensor::tower_linear("vision.mlp.fc2", DOWN, h, f));
            out.push(v("vision.mlp.fc2.bias", h));
            out.push(v("vision.layernorm_before", norm));
            out.push(v("vision.layernorm_after", norm));
            out.push(v("vision.lambda_1", h));
            out.push(v("vision.lambda_2", h));
        }
        if o.final_norm {
            out.push(v("vision.layernorm", 2 * h));
        }
        let (merged, t) = (h * self.merge * self.merge, self.text_hidden);
        out.push(v("projector.layer_norm", 2 * merged));
        out.push(m("projector.linear_1", t, merged));
        out.push(v("projector.linear_1.bias", t));
        out.push(m("projector.linear_2", t, t));
        out.push(v("projector.linear_2.bias", t));
    }
}

const Q: &[LinearKind] = &[LinearKind::Q];
const K: &[LinearKind] = &[LinearKind::K];
const V: &[LinearKind] = &[LinearKind::V];
const O: &[LinearKind] = &[LinearKind::O];
const QKV: &[LinearKind] = &[LinearKind::Q, LinearKind::K, LinearKind::V];
const GATE: &[LinearKind] = &[LinearKind::Gate];
const UP: &[LinearKind] = &[LinearKind::Up];
const DOWN: &[LinearKind] = &[LinearKind::Down];

/// Whether a `Scope::Tower` tensor belongs to the projector (else to the vision tower).
pub fn is_projector(t: &ParamTensor) -> bool {
    t.name.starts_with("projector.")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `smart_resize` as Python computes it: 1024 px rounds to 1036 (37 × 28), over the
    /// default max_pixels (1,003,520), so it is scaled to ⌊1024 / 1.0222 / 28⌋ · 28 = 980;
    /// without the cap it stays 1036; 4000 × 3000 is scaled under max_pixels; a tiny image is
    /// scaled up past min_pixels.
    #[test]
    fn smart_resize_matches_the_processor() {
        assert_eq!(smart_resize(1024, 1024, 28, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS), (980, 980));
        assert_eq!(smart_resize(1024, 1024, 28, QWEN_MIN_PIXELS, u64::MAX), (1036, 1036));
        let (h, w) = smart_resize(3000, 4000, 28, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS);
        assert!(h * w <= QWEN_MAX_PIXELS && h % 28 == 0 && w % 28 == 0, "{h} × {w}");
        assert_eq!(smart_resize(20, 20, 28, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS), (56, 56));
        // Half to even: 42 / 28 = 1.5 → 2; 70 / 28 = 2.5 → 2.
        assert_eq!(smart_resize(42, 70, 28, 0, u64::MAX), (56, 56));
    }
}
