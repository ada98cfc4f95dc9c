//! `config.json` → parts for the encoder, encoder-decoder and vision families: BERT,
//! RoBERTa (masked LM), T5 (`T5ForConditionalGeneration`), ViT and ResNet. Defaults are the
//! transformers configuration classes' (`BertConfig`, `RobertaConfig`, `T5Config`,
//! `ViTConfig`, `ResNetConfig`).

use super::families::{activation, check_heads};
use super::keys::Keys;
use crate::error::InputError;
use crate::model::arch::{Architecture, AttentionPart, EmbeddingPart, MlpPart, NormKind, NormPart, Placement, ResNetArch, Stack, TransformerArch, VisionPart};

/// The shared shape of BERT, RoBERTa and ViT (`*-base` defaults): blocks with biases,
/// LayerNorm and a non-gated MLP of width `intermediate_size`.
fn bert_like_block(c: &Keys, stack: Stack, placement: Placement) -> Result<TransformerArch, InputError> {
    let h = c.uint("hidden_size", 768)?;
    let heads = c.uint("num_attention_heads", 12)?;
    check_heads(h, heads, heads)?;
    let act_name = c.text("hidden_act", "gelu")?;
    Ok(TransformerArch {
        stack,
        hidden: h,
        layers: c.uint("num_hidden_layers", 12)?,
        vocab: 0,
        embedding: EmbeddingPart::default(),
        attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, qkv_bias: true, out_bias: true, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement },
        mlp: MlpPart {
            ffn: c.uint("intermediate_size", 3072)?,
            activation: activation(&act_name)
                .ok_or_else(|| InputError::new("hidden_act", format!("\"{}\" is not an activation Headroom knows", crate::safe_text::quoted(&act_name))))?,
            gated: false,
            fused_gate_up: false,
            bias: true,
        },
        ..TransformerArch::default()
    })
}

/// `BertConfig` (bert-base-uncased shapes), built as `BertForMaskedLM`.
pub fn bert(c: &Keys) -> Result<Architecture, InputError> {
    masked_lm(c, 30522, 512, 2)
}

/// `RobertaConfig`, built as `RobertaForMaskedLM` (BERT's tree; the Hub configs set 514
/// positions and one token type).
pub fn roberta(c: &Keys) -> Result<Architecture, InputError> {
    masked_lm(c, 50265, 512, 2)
}

fn masked_lm(c: &Keys, vocab: u64, positions: u64, types: u64) -> Result<Architecture, InputError> {
    Ok(Architecture::Transformer(TransformerArch {
        vocab: c.uint("vocab_size", vocab)?,
        embedding: EmbeddingPart {
            max_positions: c.uint("max_position_embeddings", positions)?,
            token_types: c.uint("type_vocab_size", types)?,
            tied: c.flag("tie_word_embeddings", true)?,
            ..EmbeddingPart::default()
        },
        ..bert_like_block(c, Stack::Encoder, Placement::Post)?
    }))
}

/// `ViTConfig` defaults (vit-base-patch16-224 shapes), built as `ViTForImageClassification`.
pub fn vit(c: &Keys) -> Result<Architecture, InputError> {
    let patch = c.uint("patch_size", 16)?;
    let image_size = c.uint("image_size", 224)?;
    if patch > image_size {
        return Err(InputError::new("patch_size", format!("{patch} is larger than image_size {image_size}")));
    }
    let mut t = bert_like_block(c, Stack::Vision, Placement::Pre)?;
    t.attention.qkv_bias = c.flag("qkv_bias", true)?;
    t.vision = VisionPart { classes: c.labels()?, patch, image_size, channels: c.uint("num_channels", 3)? };
    Ok(Architecture::Transformer(t))
}

/// `T5Config` (t5-small shapes), built as `T5ForConditionalGeneration`: an encoder of
/// `num_layers` and a decoder of `num_decoder_layers` blocks (with cross-attention), bias-free
/// projections of width heads·d_kv, T5's RMS LayerNorm, a ReLU MLP or, with
/// `feed_forward_proj: "gated-gelu"` (T5 v1.1, Flan-T5), a gated `gelu_new` one.
pub fn t5(c: &Keys) -> Result<Architecture, InputError> {
    let h = c.uint("d_model", 512)?;
    let heads = c.uint("num_heads", 8)?;
    let encoder = c.uint("num_layers", 6)?;
    let decoder = c.uint_or("num_decoder_layers", encoder)?;
    let proj = c.text("feed_forward_proj", "relu")?;
    let (gated, act_name) = match proj.strip_prefix("gated-") {
        Some(a) => (true, if a == "gelu" { "gelu_new" } else { a }),
        None => (false, proj.as_str()),
    };
    let activation =
        activation(act_name).ok_or_else(|| InputError::new("feed_forward_proj", format!("\"{}\" is not relu, gelu or gated-gelu", crate::safe_text::quoted(&proj))))?;
    Ok(Architecture::Transformer(TransformerArch {
        stack: Stack::EncoderDecoder,
        hidden: h,
        layers: encoder.saturating_add(decoder),
        decoder_layers: decoder,
        vocab: c.uint("vocab_size", 32128)?,
        // transformers 5 ties T5's LM head to `shared` whatever the config says
        // (`T5Config.__post_init__`: `tie_word_embeddings = True`; the Hub value only decides
        // `scale_decoder_outputs`), so T5 v1.1 / Flan-T5 build v·h fewer parameters than their
        // checkpoints hold.
        embedding: EmbeddingPart { tied: true, ..EmbeddingPart::default() },
        attention: AttentionPart {
            heads,
            kv_heads: heads,
            head_dim: c.uint("d_kv", 64)?,
            rotary_dim: 0,
            relative_buckets: c.uint("relative_attention_num_buckets", 32)?,
            ..AttentionPart::default()
        },
        norm: NormPart { kind: NormKind::T5Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: c.uint("d_ff", 2048)?, activation, gated, fused_gate_up: false, bias: false },
        ..TransformerArch::default()
    }))
}

/// `ResNetConfig` defaults (microsoft/resnet-50 shapes), built as `ResNetForImageClassification`.
pub fn resnet(c: &Keys) -> Result<Architecture, InputError> {
    let widths = c.uint_list("hidden_sizes", &[256, 512, 1024, 2048])?;
    let depths = c.uint_list("depths", &[3, 4, 6, 3])?;
    if widths.len() != depths.len() {
        return Err(InputError::new("depths", format!("has {} stages but hidden_sizes has {}", depths.len(), widths.len())));
    }
    let layer_type = c.text("layer_type", "bottleneck")?;
    let bottleneck = match layer_type.as_str() {
        "bottleneck" => true,
        "basic" => false,
        other => return Err(InputError::new("layer_type", format!("\"{}\" is not \"basic\" or \"bottleneck\"", crate::safe_text::quoted(other)))),
    };
    Ok(Architecture::Resnet(ResNetArch {
        stem_width: c.uint("embedding_size", 64)?,
        widths,
        depths,
        bottleneck,
        channels: c.uint("num_channels", 3)?,
        classes: c.labels()?,
        image_size: c.uint_or("image_size", 224)?,
    }))
}
