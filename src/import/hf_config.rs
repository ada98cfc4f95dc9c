//! A Hugging Face `config.json` → an [`Architecture`], with the warnings a user should see.
//!
//! Each supported `model_type` maps to one function (`families.rs` for decoders,
//! `encoders.rs` for encoders, T5, ViT and ResNet). Missing keys take the defaults of the
//! matching transformers configuration class, and each defaulted key becomes a warning.
//! Multimodal wrappers with a `text_config` import their text model; Qwen2.5-VL (flat Hub
//! configs too), Qwen3-VL, Gemma 3, PaliGemma and LLaVA with a `vision_config` add their vision tower
//! and projector (`vlm.rs`), the others (Llama-3.2-Vision, Qwen2-VL, Llama-4, Mistral-3, …)
//! say the vision tower is not counted. State-space and hybrid families are read by
//! `hybrids.rs`. An unknown
//! `model_type` with the usual keys is estimated as a Llama-shaped decoder (with experts when
//! the usual MoE keys are there), marked approximate; families with recurrent or state-space
//! layers (`UNMODELLED`) are refused instead. `tests/family_sweep.rs` checks every family
//! against transformers' own count (`tests/fixtures/measured/family_sweep.json`).

use serde_json::{Map, Value};

use super::encoders;
use super::families::{self, Defaults};
use super::gemma3n;
use super::gemma4;
use super::hybrids;
use super::keys::Keys;
use super::mllama;
use super::vlm;
use super::zamba;
use super::zamba2;
use crate::error::InputError;
use crate::model::arch::{Architecture, TransformerArch};

/// A config read into an architecture, with what the user should know about the reading.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub arch: Architecture,
    /// The `model_type` the architecture was built as.
    pub model_type: String,
    pub warnings: Vec<String>,
}

type Reader = fn(&Keys) -> Result<Architecture, InputError>;

/// A decoder family's reader as a `Reader` (a non-capturing closure is a plain `fn`).
macro_rules! dec {
    ($f:path) => {
        |c: &Keys| $f(c).map(Architecture::Transformer)
    };
}

macro_rules! families {
    (catalogue: { $($ty:literal => $f:expr),* $(,)? } more: { $($more_ty:literal => $more_f:expr),* $(,)? }) => {
        /// Every supported `model_type`, in the order of the error message.
        pub const SUPPORTED_MODEL_TYPES: &[&str] = &[$($ty,)* $($more_ty),*];
        /// The readers of the catalogue's families (`src/import/catalogue/`).
        fn catalogue_reader(model_type: &str) -> Option<Reader> {
            match model_type {
                $($ty => Some($f),)*
                _ => None,
            }
        }
        /// Every reader.
        fn reader(model_type: &str) -> Option<Reader> {
            match model_type {
                $($more_ty => Some($more_f),)*
                other => catalogue_reader(other),
            }
        }
    };
}

families! {
    // The catalogue's families: the first download reads the catalogue with these alone
    // (`import_catalogue_config`).
    catalogue: {
        "llama" => dec!(families::llama),
        "mistral" => dec!(families::mistral),
        "mixtral" => dec!(families::mixtral),
        "qwen2" => dec!(families::qwen2),
        "qwen2_moe" => dec!(families::qwen2_moe),
        "qwen3" => dec!(families::qwen3),
        "qwen3_moe" => dec!(families::qwen3_moe),
        "gemma" => dec!(families::gemma),
        "gemma2" => dec!(families::gemma2),
        "gemma3_text" => dec!(families::gemma3_text),
        "gemma3n_text" => dec!(gemma3n::gemma3n_text),
        "phi3" => dec!(families::phi3),
        "phi" => dec!(families::phi),
        "deepseek_v2" => dec!(families::deepseek_v2),
        "deepseek_v3" => dec!(families::deepseek_v3),
        "gpt_oss" => dec!(families::gpt_oss),
        "olmo2" => dec!(families::olmo2),
        "granite" => dec!(families::granite),
        "granitemoe" => dec!(families::granitemoe),
        "falcon" => dec!(families::falcon),
        "gpt_neox" => dec!(families::gpt_neox),
        "starcoder2" => dec!(families::starcoder2),
        "cohere" => dec!(families::cohere),
        "gpt2" => dec!(families::gpt2),
        "bert" => encoders::bert,
        "roberta" => encoders::roberta,
        "t5" => encoders::t5,
        "vit" => encoders::vit,
        "resnet" => encoders::resnet,
        "mamba" => dec!(hybrids::mamba),
        "mamba2" => dec!(hybrids::mamba2),
        "jamba" => dec!(hybrids::jamba),
        "qwen3_next" => dec!(hybrids::qwen3_next),
        "nemotron_h" => dec!(hybrids::nemotron_h),
        "granitemoehybrid" => dec!(hybrids::granitemoehybrid),
        "lfm2" => dec!(hybrids::lfm2),
    }
    // The others: only a pasted config or a link's `hf=` reads them (`import_hf_config`).
    more: {
        "llama4_text" => dec!(families::llama4_text),
        "olmoe" => dec!(families::olmoe),
        "phimoe" => dec!(families::phimoe),
        "glm" => dec!(families::glm),
        "glm4" => dec!(families::glm4),
        "glm4_moe" => dec!(families::glm4_moe),
        "smollm3" => dec!(families::smollm3),
        "ernie4_5" => dec!(families::ernie4_5),
        "ernie4_5_moe" => dec!(families::ernie4_5_moe),
        "cohere2" => dec!(families::cohere2),
        "exaone4" => dec!(families::exaone4),
        "hunyuan_v1_dense" => dec!(families::hunyuan_v1_dense),
        "hunyuan_v1_moe" => dec!(families::hunyuan_v1_moe),
        "seed_oss" => dec!(families::seed_oss),
        "helium" => dec!(families::helium),
        "ministral" => dec!(families::ministral),
        "ministral3" => dec!(families::ministral3),
        "stablelm" => dec!(families::stablelm),
        "nemotron" => dec!(families::nemotron),
        "arcee" => dec!(families::arcee),
        "olmo3" => dec!(families::olmo3),
        "dots1" => dec!(families::dots1),
        "minimax_m2" => dec!(families::minimax_m2),
        "gptj" => dec!(families::gptj),
        "codegen" => dec!(families::codegen),
        "gpt_bigcode" => dec!(families::gpt_bigcode),
        "opt" => dec!(families::opt),
        "bloom" => dec!(families::bloom),
        "mpt" => dec!(families::mpt),
        "dbrx" => dec!(families::dbrx),
        "granitemoeshared" => dec!(families::granitemoeshared),
        "olmo" => dec!(families::olmo),
        "exaone" => dec!(families::exaone),
        "internlm3" => dec!(families::internlm3),
        "iquestcoder" => dec!(families::iquestcoder),
        "sarvam_moe" => dec!(families::glm4_moe),
        "sarvam_mla" => dec!(families::deepseek_v3),
        "glm4_moe_lite" => dec!(families::glm4_moe_lite),
        "apertus" => dec!(families::apertus),
        "cwm" => dec!(families::cwm),
        "vaultgemma" => dec!(families::vaultgemma),
        "deepseek_v32" => dec!(families::deepseek_v32),
        "gpt_neo" => dec!(families::gpt_neo),
        "flex_olmo" => dec!(families::flex_olmo),
        "granite_swa" => dec!(families::granite_swa),
        "granitemoe_swa" => dec!(families::granitemoe_swa),
        "hyperclovax" => dec!(families::hyperclovax),
        "exaone_moe" => dec!(families::exaone_moe),
        "hy_v3" => dec!(families::hy_v3),
        "mellum" => dec!(families::mellum),
        "cohere2_moe" => dec!(families::cohere2_moe),
        "minicpm3" => dec!(families::minicpm3),
        "youtu" => dec!(families::youtu),
        "glm_moe_dsa" => dec!(families::glm_moe_dsa),
        "falcon_mamba" => dec!(hybrids::mamba),
        "qwen3_5_text" => dec!(hybrids::qwen3_5_text),
        "qwen3_5_moe_text" => dec!(hybrids::qwen3_5_moe_text),
        "bamba" => dec!(hybrids::bamba),
        "falcon_h1" => dec!(hybrids::falcon_h1),
        "zamba" => dec!(zamba::zamba),
        "zamba2" => dec!(zamba2::zamba2),
        "lfm2_moe" => dec!(hybrids::lfm2_moe),
        "olmo_hybrid" => dec!(hybrids::olmo_hybrid),
        "gemma4_text" => dec!(gemma4::gemma4_text),
        "mllama_text_model" => dec!(mllama::mllama_text),
    }
}

/// Text models inside multimodal wrappers, by the wrapper's `model_type`.
const TEXT_MODEL_OF: &[(&str, &str)] = &[
    ("gemma3", "gemma3_text"),
    ("mllama", "mllama_text_model"),
    ("qwen2_vl", "qwen2"),
    ("qwen2_5_vl", "qwen2"),
    ("llama4", "llama4_text"),
    ("mistral3", "mistral"),
    ("gemma3n", "gemma3n_text"),
    ("qwen3_5", "qwen3_5_text"),
    ("qwen3_5_moe", "qwen3_5_moe_text"),
    ("gemma4", "gemma4_text"),
    ("qwen3_vl", "qwen3_vl_text"),
    ("qwen3_vl_moe", "qwen3_vl_moe_text"),
    ("glm4v", "glm4v_text"),
    ("glm4v_moe", "glm4v_moe_text"),
    // `Idefics3Config` / `SmolVLMConfig`: a Llama text model unless `text_config` says otherwise.
    ("idefics3", "llama"),
    ("smolvlm", "llama"),
    // `InternVLConfig`: a Qwen2 text model by default.
    ("internvl", "qwen2"),
    // `LlavaConfig` / `LlavaNextConfig`: a Llama text model by default.
    ("llava", "llama"),
    ("llava_next", "llama"),
];

/// Keys a family's configuration class reads under another name (its `attribute_map`, or
/// an older spelling its `__init__` accepts): (model_type, key in config.json, key read).
const ATTRIBUTE_MAP: &[(&str, &str, &str)] = &[
    ("exaone", "num_layers", "num_hidden_layers"),
    ("exaone", "activation_function", "hidden_act"),
    ("internlm3", "qkv_bias", "attention_bias"),
    ("internlm3", "bias", "mlp_bias"),
    ("bloom", "n_embed", "hidden_size"),
    ("ernie4_5_moe", "num_experts", "moe_num_experts"),
    ("ernie4_5_moe", "num_experts_per_tok", "moe_k"),
    // `Lfm2MoeConfig.__post_init__` pops `tie_embedding` into `tie_word_embeddings`.
    ("lfm2_moe", "tie_embedding", "tie_word_embeddings"),
];

/// Families whose layers Headroom cannot model, refused with what is missing rather than
/// estimated as a Llama-shaped decoder (which would be silently wrong): recurrent or
/// state-space layers keep a per-sequence state instead of (or beside) a KV cache, with
/// parameters and activations of shapes Headroom has no part for.
const UNMODELLED: &[(&str, &str)] = &[
    ("kimi_linear", "Kimi Delta Attention linear-attention layers (recurrent state)"),
    ("bailing_hybrid", "delta-rule linear-attention layers (recurrent state)"),
    ("minimax", "lightning (linear) attention layers (recurrent state)"),
    ("lfm3", "short-convolution layers (conv state)"),
    ("recurrent_gemma", "RG-LRU recurrent layers"),
    ("rwkv", "RWKV time-mix recurrence"),
    ("xlstm", "mLSTM recurrent layers"),
];

/// What an import does with a `model_type` none of its families is: an architecture and the
/// warning that goes with it, or the error.
type Unknown = fn(&str, &Keys) -> Result<(Architecture, String), InputError>;

/// How an import reads: its families, and what it does with any other `model_type`.
#[derive(Clone, Copy)]
struct Readers {
    read: fn(&str) -> Option<Reader>,
    unknown: Unknown,
}

/// Build an architecture from the content of a `config.json`: every family Headroom reads,
/// and a marked approximation for an unknown one.
pub fn import_hf_config(config: &Value) -> Result<Imported, InputError> {
    let mut imported = import(config, Readers { read: reader, unknown: approximate })?;
    if config.get("model_type").and_then(Value::as_str) == Some("mllama_text_model") {
        imported.warnings.extend(mllama::without_images_note(&imported.arch));
    }
    Ok(imported)
}

/// [`import_hf_config`] with the catalogue's families only: the same result for every config
/// of `src/import/catalogue/` (tested), without the other families' readers, so the page's
/// first download, which reads the catalogue, does not carry them (the rest come with the
/// pasted-config and link code, `src/ui/model_picker.rs`, `src/ui/url_codec.rs`).
pub fn import_catalogue_config(config: &Value) -> Result<Imported, InputError> {
    import(
        config,
        Readers {
            read: catalogue_reader,
            unknown: |model_type, _| Err(InputError::new("model_type", format!("\"{}\" is not a family of the catalogue", crate::safe_text::quoted(model_type)))),
        },
    )
}

// long: the importer's steps in order (model type, multimodal text_config, attribute_map renames, the family's reader or the approximation, the notes), each short.
fn import(config: &Value, readers: Readers) -> Result<Imported, InputError> {
    let map = config.as_object().ok_or_else(|| InputError::new("", "expected a JSON object (the content of config.json)"))?;
    let model_type = match map.get("model_type") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(InputError::new("model_type", "must be a string")),
        None => return Err(InputError::new("model_type", format!("missing; supported: {}", SUPPORTED_MODEL_TYPES.join(", ")))),
    };
    let mut warnings = Vec::new();
    // Qwen2.5-VL's Hub configs are flat: the language model's keys at the top beside
    // `vision_config` (transformers 5 moves them into `text_config` when it loads them).
    if model_type == "qwen2_5_vl" && !map.contains_key("text_config") {
        let mut text = map.clone();
        let vision = text.remove("vision_config");
        let mut wrapper = Map::new();
        wrapper.insert("model_type".into(), Value::String(model_type.clone()));
        if let Some(v) = vision {
            wrapper.insert("vision_config".into(), v);
        }
        text.remove("model_type");
        // The wrapper's own config keeps `tie_word_embeddings` (it ties the LM head).
        if let Some(tied) = text.get("tie_word_embeddings") {
            wrapper.insert("tie_word_embeddings".into(), tied.clone());
        }
        wrapper.insert("text_config".into(), Value::Object(text));
        return import(&Value::Object(wrapper), readers);
    }
    if let Some(text) = map.get("text_config").filter(|v| v.is_object()) {
        let inner_type = text
            .get("model_type")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| TEXT_MODEL_OF.iter().find(|(outer, _)| *outer == model_type).map(|(_, inner)| inner.to_string()));
        let mut text = text.clone();
        if let (Some(obj), Some(inner)) = (text.as_object_mut(), &inner_type) {
            obj.insert("model_type".into(), Value::String(text_family(inner).to_string()));
        }
        // Hub wrappers often say `tie_word_embeddings` only at the top (Qwen3-VL: false for
        // the 8B and up, true for the 2B/4B). A vision-language wrapper's LM head sits in the
        // wrapper, which ties it by its own config (transformers 5.25 `modeling_utils.py`
        // `get_expanded_tied_weights_keys` reads `self.config.tie_word_embeddings`): its value,
        // or the wrapper class's default, wins over the text config's (InternVL: true over
        // Qwen2's false). Other wrappers: the text model inherits it unless it says its own.
        if let Some(obj) = text.as_object_mut() {
            let top = map.get("tie_word_embeddings").and_then(Value::as_bool);
            if vlm::has_tower(&model_type) {
                obj.insert("tie_word_embeddings".into(), Value::Bool(top.unwrap_or_else(|| vlm::ties_by_default(&model_type))));
            } else if let Some(tied) = top {
                obj.entry("tie_word_embeddings").or_insert(Value::Bool(tied));
            }
        }
        let mut imported = import(&text, readers).map_err(|e| e.within("text_config"))?;
        // PEFT converts by the model's own `config.model_type`: the wrapper's (a text model
        // read as a known family).
        if let Architecture::Transformer(t) = &mut imported.arch {
            if t.moe.as_ref().is_some_and(|m| m.peft.fused) {
                set_moe_peft(t, &model_type);
            }
        }
        if vlm::has_tower(&model_type) && map.get("vision_config").is_some_and(Value::is_object) {
            if let Architecture::Transformer(t) = &mut imported.arch {
                let (tower, tower_warnings) = vlm::tower(&model_type, map, t.hidden)?;
                t.tower = Some(Box::new(tower));
                imported.warnings.extend(tower_warnings);
            }
            imported.arch.check()?;
            imported.warnings.insert(
                0,
                format!(
                    "\"{model_type}\" is a vision-language model: its vision tower and projector are counted beside its text model ({}); see param_count_by_part",
                    imported.model_type
                ),
            );
            if let Some(audio) = gemma4_audio_left_out(&model_type, map) {
                imported.warnings.insert(1, format!("\"{model_type}\": {audio}"));
            }
            return Ok(imported);
        }
        // Gemma 3n's wrapper also holds a Conformer audio tower and both towers' embedders
        // (`Gemma3nModel.__init__`, `modeling_gemma3n.py` lines 1917–1926).
        // Gemma 4's wrapper without a `vision_config` builds no vision tower (`Gemma4Model.__init__`,
        // `modeling_gemma4.py` lines 2230–2249); its audio tower is not counted.
        let gemma4_left_out = if model_type == "gemma4" {
            Some(gemma4_audio_left_out(&model_type, map).unwrap_or_else(|| "it sets neither vision_config nor audio_config, so Gemma4Model builds no tower".to_string()))
        } else {
            None
        };
        let left_out = match model_type.as_str() {
            "gemma3n" => "the vision tower (MobileNetV5), the audio tower (Conformer) and their embedders are not",
            "gemma4" => gemma4_left_out.as_deref().unwrap_or_default(),
            _ => "the vision tower is not",
        };
        imported.warnings.insert(0, format!("\"{model_type}\" is multimodal: only its text model ({}) is counted; {left_out}", imported.model_type));
        if model_type == "mllama" {
            imported.warnings.extend(mllama::without_images_note(&imported.arch));
        }
        return Ok(imported);
    }
    if let Some((_, missing)) = UNMODELLED.iter().find(|(ty, _)| *ty == model_type) {
        return Err(InputError::new(
            "model_type",
            format!(
                "\"{}\" is not supported: Headroom cannot model its {missing}; a Llama-shaped estimate would be wrong, so none is given",
                crate::safe_text::quoted(&model_type)
            ),
        ));
    }
    // transformers' `attribute_map` spellings, as the family's configuration class reads them.
    let renames: Vec<_> = ATTRIBUTE_MAP.iter().filter(|(ty, from, to)| *ty == model_type && map.contains_key(*from) && !map.contains_key(*to)).collect();
    let renamed;
    let map = if renames.is_empty() {
        map
    } else {
        let mut m = map.clone();
        for (_, from, to) in renames {
            if let Some(v) = m.remove(*from) {
                m.insert(to.to_string(), v);
            }
        }
        renamed = m;
        &renamed
    };
    let keys = Keys::new(map);
    let (arch, model_type, known) = match (readers.read)(&model_type) {
        Some(read) => (read(&keys)?, model_type, true),
        None => {
            let (arch, warning) = (readers.unknown)(&model_type, &keys)?;
            warnings.push(warning);
            (arch, model_type, false)
        }
    };
    warnings.extend(keys.notes());
    warnings.extend(keys.defaulted().into_iter().map(|d| format!("config.json does not set {d}: transformers' default used")));
    let mut arch = arch;
    if let Architecture::Transformer(t) = &mut arch {
        t.attention.eager_softmax_fp32 = super::eager_softmax::eager_softmax_fp32(&model_type);
        // A family transformers does not know (remote code) keeps the default: per-expert linears.
        if known {
            set_moe_peft(t, &model_type);
        }
    }
    arch.check()?;
    Ok(Imported { arch, model_type, warnings })
}

/// transformers 5's expert storage and PEFT's conversion for `model_type` (`moe_peft.rs`).
fn set_moe_peft(t: &mut TransformerArch, model_type: &str) {
    if let Some(moe) = &mut t.moe {
        moe.peft = super::moe_peft::moe_peft(model_type);
    }
}

/// An unknown `model_type` as a Llama-shaped decoder (with experts where the usual MoE keys
/// say so), and the warning that says it is approximate.
fn approximate(model_type: &str, keys: &Keys) -> Result<(Architecture, String), InputError> {
    let arch = generic_decoder(keys).map_err(|e| {
        InputError::new(
            e.field.clone(),
            format!("{}; \"{}\" is not a supported model_type (supported: {})", e.message, crate::safe_text::quoted(model_type), SUPPORTED_MODEL_TYPES.join(", ")),
        )
    })?;
    let moe = match &arch {
        Architecture::Transformer(t) => t.moe.is_some(),
        _ => false,
    };
    let warning = format!(
        "approximate: \"{}\" is not a family Headroom knows; estimated as a Llama-shaped decoder (RMSNorm, SwiGLU, rotary) from hidden_size, num_hidden_layers, num_attention_heads, intermediate_size and vocab_size{}",
        crate::safe_text::quoted(model_type),
        if moe { ", with the mixture of experts its usual MoE keys describe" } else { "" }
    );
    Ok((arch, warning))
}

/// The family a text model inside a wrapper is read as.
fn text_family(inner: &str) -> &str {
    match inner {
        "qwen2_vl_text" | "qwen2_5_vl_text" => "qwen2",
        "qwen3_vl_text" => "qwen3",
        "qwen3_vl_moe_text" => "qwen3_moe",
        "glm4v_text" => "glm4",
        "glm4v_moe_text" => "glm4_moe",
        other => other,
    }
}

/// A Llama-shaped decoder from the five usual keys, all required.
fn generic_decoder(c: &Keys) -> Result<Architecture, InputError> {
    for key in ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"] {
        if !c.has(key) {
            return Err(InputError::new(key, "missing"));
        }
    }
    let d = Defaults { hidden: 0, layers: 0, heads: 0, kv_heads: None, ffn: 0, vocab: 0, head_dim: None, tied: false };
    let mut t = families::decoder(c, &d)?;
    // Llama's meaning of the usual bias switches, where the config sets them.
    if let Some(serde_json::Value::Bool(b)) = c.get("attention_bias") {
        t.attention.qkv_bias = *b;
        t.attention.out_bias = *b;
    }
    if let Some(serde_json::Value::Bool(b)) = c.get("mlp_bias") {
        t.mlp.bias = *b;
    }
    t.moe = generic_moe(c, &t)?;
    Ok(Architecture::Transformer(t))
}

/// Experts from the usual MoE keys, when the config names more than one expert: routed
/// experts (`num_local_experts` / `num_experts` / `n_routed_experts` / `moe_num_experts`)
/// of `moe_intermediate_size` (else `intermediate_size`), top-k (`num_experts_per_tok` /
/// `moe_k` / `moe_topk`), shared experts (`n_shared_experts` / `num_shared_experts` ×
/// expert width, or `shared_expert_intermediate_size` / `shared_intermediate_size`), dense
/// first blocks (`first_k_dense_replace`, `num_dense_layers`), `decoder_sparse_step`, and
/// per-layer lists (`mlp_layer_types`, `mlp_only_layers`). Never exact by construction
/// (router kind, norms and biases of the family are guesses): the caller marks it approximate.
fn generic_moe(c: &Keys, t: &crate::model::arch::TransformerArch) -> Result<Option<crate::model::arch::MoePart>, InputError> {
    use crate::model::arch::MoePart;
    let first = |keys: &[&'static str]| keys.iter().copied().find(|k| c.get(k).and_then(serde_json::Value::as_u64).is_some());
    if matches!(c.get("is_moe"), Some(serde_json::Value::Bool(false))) {
        return Ok(None);
    }
    let Some(experts_key) = first(&["num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"]) else { return Ok(None) };
    let experts = c.uint(experts_key, 1)?;
    if experts < 2 {
        return Ok(None);
    }
    let top_k = match first(&["num_experts_per_tok", "moe_k", "moe_topk"]) {
        Some(key) => c.uint(key, 1)?,
        None => return Ok(None),
    };
    let expert_ffn = c.uint_or("moe_intermediate_size", t.mlp.ffn)?;
    let shared_ffn = match first(&["n_shared_experts", "num_shared_experts", "moe_num_shared_experts"]) {
        Some(key) => c.count(key, 0)? * expert_ffn,
        None => match first(&["shared_expert_intermediate_size", "shared_intermediate_size"]) {
            Some(key) => c.count(key, 0)?,
            None => 0,
        },
    };
    let mut first_dense = match first(&["first_k_dense_replace", "num_dense_layers"]) {
        Some(key) => c.count(key, 0)?.min(t.layers),
        None => 0,
    };
    let mut every = match c.get("decoder_sparse_step").and_then(serde_json::Value::as_u64) {
        Some(n) if n > 0 => n,
        _ => 1,
    };
    // Per-layer lists: `mlp_layer_types` ("dense" / "sparse"), `mlp_only_layers` (dense ones).
    let layers = t.layers as usize;
    let sparse: Option<Vec<u64>> = match (c.strings("mlp_layer_types").ok().flatten(), c.get("mlp_only_layers")) {
        (Some(types), _) => Some(types.iter().take(layers).enumerate().filter(|(_, ty)| !matches!(**ty, "dense" | "mlp")).map(|(i, _)| i as u64).collect()),
        (None, Some(serde_json::Value::Array(dense))) if !dense.is_empty() => {
            let dense: Vec<u64> = dense.iter().filter_map(serde_json::Value::as_u64).collect();
            Some((0..t.layers).filter(|i| !dense.contains(i)).collect())
        }
        _ => None,
    };
    if let Some(sparse) = sparse {
        if sparse.is_empty() {
            return Ok(None);
        }
        // Exact when the list follows Headroom's rule; else as many MoE blocks, at the end.
        (first_dense, every) = families::moe_layer_rule("mlp_layer_types", &sparse, t.layers).ok().flatten().unwrap_or((t.layers - sparse.len() as u64, 1));
    }
    Ok(Some(MoePart { experts, top_k: top_k.min(experts), expert_ffn, shared_ffn, first_dense, every, ..MoePart::default() }))
}

/// Gemma 4's audio tower, left out of the count: `Gemma4Model` builds `audio_tower`
/// (`Gemma4AudioModel`) and `embed_audio` when `audio_config` is set (`modeling_gemma4.py` lines
/// 2230–2249); `None` when it is not.
fn gemma4_audio_left_out(model_type: &str, map: &Map<String, Value>) -> Option<String> {
    (model_type == "gemma4" && map.get("audio_config").is_some_and(Value::is_object))
        .then(|| "the audio tower (Gemma4AudioModel, audio_config) and its embedder (embed_audio) are not counted".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_number_names_the_field() {
        let err = import_hf_config(&json!({"model_type": "llama", "hidden_size": "big"})).unwrap_err();
        assert_eq!(err.field, "hidden_size");
    }

    #[test]
    fn gqa_heads_must_divide() {
        let err = import_hf_config(&json!({"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 5})).unwrap_err();
        assert_eq!(err.field, "num_key_value_heads");
    }

    #[test]
    fn gpt2_defaults_build_gpt2_small() {
        assert_eq!(import_hf_config(&json!({"model_type": "gpt2"})).unwrap().arch.param_count(), 124_439_808.0);
    }

    /// `{"model_type": "llama"}` is Llama-2-7B's shapes, and every defaulted key is named.
    #[test]
    fn defaulted_keys_are_listed() {
        let i = import_hf_config(&json!({"model_type": "llama"})).unwrap();
        assert_eq!(i.arch.param_count(), 6_738_415_616.0);
        for key in ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size", "tie_word_embeddings"] {
            assert!(i.warnings.iter().any(|w| w.contains(key)), "{key} not listed in {:?}", i.warnings);
        }
    }

    #[test]
    fn unknown_type_with_usual_keys_is_approximate() {
        let cfg = json!({"model_type": "brand_new", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 1000});
        let i = import_hf_config(&cfg).unwrap();
        assert!(i.warnings[0].starts_with("approximate"));
        // 2·v·h + L·(4h² + 3·h·f + 2h) + h
        assert_eq!(i.arch.param_count(), (2 * 1000 * 1024 + 4 * (4 * 1024 * 1024 + 3 * 1024 * 4096 + 2 * 1024) + 1024) as f64);
    }

    #[test]
    fn unknown_type_without_usual_keys_is_refused() {
        let err = import_hf_config(&json!({"model_type": "brand_new", "hidden_size": 8})).unwrap_err();
        assert!(err.message.contains("not a supported model_type"), "{err}");
    }

    /// Qwen3-VL's Hub configs say `tie_word_embeddings` at the top only. The wrapper holds the
    /// LM head and ties it by its own flag, or `Qwen3VLConfig`'s default (false) without one,
    /// whatever the text config says (checked with transformers 5.25 on the meta device:
    /// `Qwen3VLForConditionalGeneration`'s lm_head is embed_tokens exactly when the top-level
    /// flag is true, for text flags true, false and absent).
    #[test]
    fn wrapper_tie_flag_reaches_the_text_model() {
        let text = json!({"model_type": "qwen3_vl_text", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 1000});
        let count = |outer: Value, inner: Option<bool>| {
            let mut t = text.clone();
            if let Some(b) = inner {
                t["tie_word_embeddings"] = json!(b);
            }
            let mut cfg = json!({"model_type": "qwen3_vl", "text_config": t});
            if !outer.is_null() {
                cfg["tie_word_embeddings"] = outer;
            }
            import_hf_config(&cfg).unwrap().arch.param_count()
        };
        assert_eq!(count(json!(false), None) - count(json!(true), None), 64_000.0);
        assert_eq!(count(json!(false), Some(true)), count(json!(false), None));
        assert_eq!(count(json!(true), Some(false)), count(json!(true), None));
        assert_eq!(count(Value::Null, Some(true)), count(json!(false), None));
        assert_eq!(import_hf_config(&json!({"model_type": "qwen3_vl", "text_config": text})).unwrap().model_type, "qwen3");
    }

    /// Without a `vision_config` only the text model is built, and the warning says so; with
    /// one, the tower is counted beside it.
    #[test]
    fn multimodal_wrapper_imports_its_text_model() {
        let cfg = json!({"model_type": "gemma3", "text_config": {"hidden_size": 3840, "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 15360, "head_dim": 256}});
        let i = import_hf_config(&cfg).unwrap();
        assert_eq!(i.model_type, "gemma3_text");
        assert!(i.warnings[0].contains("the vision tower is not"), "{:?}", i.warnings);
        let mut with_tower = cfg.clone();
        with_tower["vision_config"] = json!({"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304, "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false});
        let v = import_hf_config(&with_tower).unwrap();
        assert!(v.warnings[0].contains("vision tower and projector are counted"), "{:?}", v.warnings);
        assert!(v.arch.param_count() > i.arch.param_count() + 4.0e8);
    }
}
