//! A transformer assembled from parts: embeddings, a stack of blocks (attention, norms,
//! feed-forward or mixture of experts), and a head; as a decoder (causal LM), an encoder
//! (masked LM), an encoder-decoder (T5) or a vision encoder (ViT).
//!
//! Blocks need not be identical: DeepSeek's first blocks are dense and the rest MoE,
//! Qwen2-MoE can alternate, Gemma-2 alternates sliding and global attention, and T5's
//! decoder blocks add cross-attention. Each parameter tensor's `Scope` says which blocks
//! hold it, and [`TransformerArch::blocks`] counts them.

use serde::{Deserialize, Serialize};

use super::attention::AttentionPart;
use super::cross_attention::VisionCrossAttention;
use super::mixer::HybridPart;
use super::mlp::{MlpPart, MoePart};
use super::norm::NormPart;
use super::param::{check_dim, BlockSubset, ParamTensor, PeftReach, Scope, TpSplit};
use super::per_layer::PerLayerInputs;
use super::tower::VisionTower;
use crate::error::InputError;

/// Which way a transformer stack is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stack {
    /// Causal language model (GPT-2, Llama, Qwen, Gemma, DeepSeek, …).
    Decoder,
    /// Bidirectional encoder with a masked-LM head (BERT, RoBERTa).
    Encoder,
    /// Encoder and decoder with cross-attention and an LM head (T5).
    EncoderDecoder,
    /// Vision Transformer over image patches with a classification head (ViT).
    Vision,
}

impl Stack {
    pub fn label(self) -> &'static str {
        match self {
            Stack::Decoder => "decoder",
            Stack::Encoder => "encoder",
            Stack::EncoderDecoder => "encoder-decoder",
            Stack::Vision => "vision encoder",
        }
    }
}

/// Token and position embeddings, and the output head that may share their matrix.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EmbeddingPart {
    /// Learned absolute position embeddings (GPT-2, BERT); 0 for rotary or relative models.
    pub max_positions: u64,
    /// Segment ("token type") embeddings (BERT).
    pub token_types: u64,
    /// The LM head shares the token-embedding matrix.
    pub tied: bool,
    /// The LM head has a bias (Phi).
    pub head_bias: bool,
    /// Final logits soft-capped with tanh (Gemma-2 `final_logit_softcapping`).
    pub logit_softcap: bool,
    /// Token-embedding rows beyond the vocabulary, which the LM head does not have (mllama's
    /// `vocab_size + 8`, `modeling_mllama.py` line 1030).
    pub extra_rows: u64,
}

/// Image input and classifier of a Vision Transformer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VisionPart {
    /// Classifier outputs.
    pub classes: u64,
    /// Patch side in pixels.
    pub patch: u64,
    /// Image side the position embeddings were trained for.
    pub image_size: u64,
    /// Input channels.
    pub channels: u64,
}

/// A transformer, in the quantities the memory formulas use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransformerArch {
    pub stack: Stack,
    /// Model width h.
    pub hidden: u64,
    /// All blocks L (encoder and decoder together for an encoder-decoder).
    pub layers: u64,
    /// Decoder blocks of an encoder-decoder (they carry cross-attention).
    pub decoder_layers: u64,
    /// Vocabulary size v (0 for vision models).
    pub vocab: u64,
    pub embedding: EmbeddingPart,
    pub attention: AttentionPart,
    pub norm: NormPart,
    /// The dense feed-forward (every block of a dense model; the dense blocks of an MoE).
    pub mlp: MlpPart,
    pub moe: Option<MoePart>,
    pub vision: VisionPart,
    /// Hybrid and state-space stacks: the non-attention mixer and which blocks hold what
    /// (`mixer.rs`); `None` for a stack of attention blocks.
    pub hybrid: Option<Box<HybridPart>>,
    /// A vision-language model's vision tower and projector (`tower.rs`); this stack is then
    /// its language model.
    pub tower: Option<Box<VisionTower>>,
    /// Gemma 3n's and Gemma 4's per-layer inputs, AltUp, LAuReL and shared-KV layers
    /// (`per_layer.rs`).
    pub per_layer: Option<Box<PerLayerInputs>>,
    /// Llama 3.2 Vision's cross-attention layers (`cross_attention.rs`), which replace the
    /// self-attention of as many blocks.
    pub vision_cross: Option<VisionCrossAttention>,
    /// `config.use_cache`: transformers builds a KV cache in every forward, training
    /// included, unless this is false or gradient checkpointing is on (`parts_report.md` §1).
    pub use_cache: bool,
}

impl Default for TransformerArch {
    /// Llama-3-8B shapes: a sane default for a partially written `arch`.
    fn default() -> Self {
        TransformerArch {
            stack: Stack::Decoder,
            hidden: 4096,
            layers: 32,
            decoder_layers: 0,
            vocab: 128256,
            embedding: EmbeddingPart::default(),
            attention: AttentionPart::default(),
            norm: NormPart::default(),
            mlp: MlpPart::default(),
            moe: None,
            vision: VisionPart::default(),
            hybrid: None,
            tower: None,
            per_layer: None,
            vision_cross: None,
            use_cache: true,
        }
    }
}

impl TransformerArch {
    pub(super) fn check(&self) -> Result<(), InputError> {
        check_dim("hidden", self.hidden)?;
        check_dim("layers", self.layers)?;
        self.attention.check()?;
        self.mlp.check()?;
        if let Some(moe) = &self.moe {
            moe.check()?;
        }
        if let Some(hy) = &self.hybrid {
            hy.check(self.layers)?;
        }
        if let Some(tower) = &self.tower {
            tower.check()?;
        }
        if let Some(pl) = &self.per_layer {
            pl.check(self.layers)?;
        }
        match self.stack {
            Stack::Vision => {
                let v = &self.vision;
                check_dim("patch", v.patch)?;
                check_dim("image_size", v.image_size)?;
                check_dim("channels", v.channels)?;
                check_dim("classes", v.classes)?;
                if v.patch > v.image_size {
                    return Err(InputError::new("patch", "is larger than image_size"));
                }
                Ok(())
            }
            Stack::EncoderDecoder => {
                if self.decoder_layers == 0 || self.decoder_layers >= self.layers {
                    return Err(InputError::new("decoder_layers", "must be at least 1 and fewer than layers"));
                }
                check_dim("vocab", self.vocab)
            }
            _ => check_dim("vocab", self.vocab),
        }
    }

    /// Blocks that hold a tensor of this scope (1 for the edges).
    pub fn blocks(&self, scope: Scope) -> u64 {
        let l = self.layers.max(1);
        if let Some(hy) = &self.hybrid {
            return match scope {
                Scope::Input | Scope::Output | Scope::Tower | Scope::Vae | Scope::TextEncoder => 1,
                Scope::Layer | Scope::KvLayer => l,
                Scope::Subset(subset) => self.subset_blocks(subset),
                Scope::Attention => hy.attention_layers.min(l),
                Scope::Mixer => hy.mixer_layers.min(l),
                Scope::Shared => hy.shared.as_ref().map_or(0, |s| s.distinct_blocks(hy.attention_layers)),
                Scope::SharedAdapter => hy.shared.as_ref().map_or(0, |s| s.adapter_sets(hy.attention_layers)),
                Scope::DenseMlp => hy.dense_layers.min(l),
                Scope::MoeLayer | Scope::Expert if self.moe.is_some() => hy.moe_layers.min(l),
                Scope::MoeLayer | Scope::Expert | Scope::Cross => 0,
            };
        }
        let moe = self.moe.as_ref().map_or(0, |m| m.moe_blocks(l));
        let cross = self.vision_cross.map_or(0, |x| x.layers.min(l));
        match scope {
            Scope::Attention => l - cross,
            Scope::Mixer | Scope::Shared | Scope::SharedAdapter => 0,
            Scope::Input | Scope::Output | Scope::Tower | Scope::Vae | Scope::TextEncoder => 1,
            Scope::Layer => l,
            Scope::KvLayer => self.per_layer.as_ref().map_or(l, |pl| pl.kv_layers(l)),
            Scope::Subset(subset) => self.subset_blocks(subset),
            Scope::DenseMlp if self.moe.as_ref().is_some_and(|m| m.beside_dense) => l,
            Scope::DenseMlp => l - moe,
            Scope::MoeLayer | Scope::Expert => moe,
            Scope::Cross if self.stack == Stack::EncoderDecoder => self.decoder_layers.min(l),
            Scope::Cross => cross,
        }
    }

    /// Blocks of a [`BlockSubset`]: the sliding ones are `attention.sliding_layers`, the
    /// shared-KV ones the last `num_kv_shared_layers` (`kv_shared_sliding` of them sliding).
    fn subset_blocks(&self, subset: BlockSubset) -> u64 {
        let l = self.layers.max(1);
        let sliding = self.attention.sliding_layers.min(l);
        let (shared, shared_sliding) = self.per_layer.as_ref().map_or((0, 0), |pl| (pl.kv_shared_layers.min(l), pl.kv_shared_sliding.min(sliding)));
        let count = |full: bool| {
            let (all, reused) = if full { (l - sliding, shared.saturating_sub(shared_sliding)) } else { (sliding, shared_sliding) };
            match subset.own_kv {
                None => all,
                Some(true) => all.saturating_sub(reused),
                Some(false) => reused.min(all),
            }
        };
        match subset.full {
            Some(full) => count(full),
            None => count(true) + count(false),
        }
    }

    /// Every parameter tensor, following the module trees of transformers'
    /// `*ForCausalLM`, `BertForMaskedLM`/`RobertaForMaskedLM`, `T5ForConditionalGeneration`
    /// and `ViTForImageClassification`. Closed forms in memory-formulas.md §A4
    /// (e.g. GPT-2: v·h + n_ctx·h + L·(12h² + 13h) + 2h).
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        let mut out = Vec::with_capacity(48);
        self.input_tensors(&mut out);
        match &self.hybrid {
            Some(hy) if hy.one_sublayer => self.norm.push("norm", self.hidden, Scope::Layer, &mut out),
            _ => self.norm.block_tensors(self.hidden, &mut out),
        }
        let shared = self.hybrid.as_ref().and_then(|hy| hy.shared.as_ref());
        match shared {
            // Zamba2: attention and MLP live in the shared blocks (`shared.rs`).
            Some(sh) => sh.param_tensors(self.hidden, &self.attention, &self.mlp, &mut out),
            None => match self.attention.full_layers {
                // Gemma 4: each attention kind in its own blocks, with its own shape.
                Some(_) => {
                    for (full, part) in self.attention.kinds() {
                        part.param_tensors(self.hidden, Scope::Subset(BlockSubset { full, own_kv: None }), &mut out);
                    }
                }
                None => self.attention.param_tensors(self.hidden, self.attention_scope(), &mut out),
            },
        }
        if let Some(hy) = &self.hybrid {
            hy.mixer.param_tensors(self.hidden, &mut out);
        }
        if self.stack == Stack::EncoderDecoder {
            self.attention.param_tensors(self.hidden, Scope::Cross, &mut out);
            self.norm.push("cross_attention_norm", self.hidden, Scope::Cross, &mut out);
        }
        if let Some(cross) = &self.vision_cross {
            cross.param_tensors(&self.attention, self.hidden, &mut out);
        }
        if shared.is_none() {
            self.mlp.param_tensors(self.hidden, self.mlp.ffn, Scope::DenseMlp, &mut out);
        }
        if let Some(moe) = &self.moe {
            moe.param_tensors(&self.mlp, self.hidden, &mut out);
            for t in out.iter_mut().filter(|t| t.scope != Scope::Expert && t.linear.is_some() && moe.peft.drops_linear(t.name)) {
                t.peft = PeftReach::Unreached;
            }
            if moe.beside_dense {
                for name in ["pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"] {
                    self.norm.push(name, self.hidden, Scope::MoeLayer, &mut out);
                }
            }
        }
        self.output_tensors(&mut out);
        if let Some(tower) = &self.tower {
            tower.param_tensors(&mut out);
        }
        if let Some(pl) = &self.per_layer {
            pl.param_tensors(self.hidden, self.layers, &mut out);
            PerLayerInputs::scope_kv(&mut out);
            pl.widen_shared_mlp(&self.mlp, self.hidden, &mut out);
        }
        out
    }

    fn input_tensors(&self, out: &mut Vec<ParamTensor>) {
        use TpSplit::*;
        let h = self.hidden;
        let e = &self.embedding;
        let v = &self.vision;
        match self.stack {
            Stack::Vision => {
                out.push(ParamTensor::new("patch_embeddings.weight", &[h, v.channels, v.patch, v.patch], Scope::Input, Replicated));
                out.push(ParamTensor::vector("patch_embeddings.bias", h, Scope::Input, Replicated));
                out.push(ParamTensor::vector("cls_token", h, Scope::Input, Replicated));
                out.push(ParamTensor::table("position_embeddings", vit_patches(v.image_size, v.patch) + 1, h, Scope::Input, Replicated));
            }
            _ => {
                out.push(ParamTensor::table("embed_tokens", self.vocab + e.extra_rows, h, Scope::Input, Sharded));
                if e.max_positions > 0 {
                    out.push(ParamTensor::table("position_embeddings", e.max_positions, h, Scope::Input, Replicated));
                }
                if e.token_types > 0 {
                    out.push(ParamTensor::table("token_type_embeddings", e.token_types, h, Scope::Input, Replicated));
                }
                if self.stack == Stack::Encoder {
                    self.norm.push("embeddings.LayerNorm", h, Scope::Input, out);
                }
                let buckets = self.attention.relative_buckets;
                if buckets > 0 {
                    // One relative-position bias in the first block of each stack (T5).
                    let stacks = if self.stack == Stack::EncoderDecoder { 2 } else { 1 };
                    for _ in 0..stacks {
                        out.push(ParamTensor::table("relative_attention_bias", buckets, self.attention.heads, Scope::Input, Sharded));
                    }
                }
            }
        }
    }

    fn output_tensors(&self, out: &mut Vec<ParamTensor>) {
        use TpSplit::*;
        let (h, v) = (self.hidden, self.vocab);
        let e = &self.embedding;
        match self.stack {
            Stack::Decoder | Stack::EncoderDecoder => {
                if self.stack == Stack::EncoderDecoder {
                    self.norm.push("encoder.final_norm", h, Scope::Output, out);
                }
                self.norm.push("final_norm", h, Scope::Output, out);
                if !e.tied {
                    out.push(ParamTensor::new("lm_head", &[v, h], Scope::Output, Sharded));
                }
                if e.head_bias {
                    out.push(ParamTensor::vector("lm_head.bias", v, Scope::Output, Sharded));
                }
            }
            Stack::Encoder => {
                // BertForMaskedLM / RobertaForMaskedLM: a transform (dense + LayerNorm) and a
                // decoder whose weight is tied to the word embeddings but whose bias is its own.
                out.push(ParamTensor::new("mlm.transform.dense", &[h, h], Scope::Output, Replicated));
                out.push(ParamTensor::vector("mlm.transform.dense.bias", h, Scope::Output, Replicated));
                self.norm.push("mlm.transform.LayerNorm", h, Scope::Output, out);
                if !e.tied {
                    out.push(ParamTensor::new("mlm.decoder", &[v, h], Scope::Output, Sharded));
                }
                out.push(ParamTensor::vector("mlm.decoder.bias", v, Scope::Output, Sharded));
            }
            Stack::Vision => {
                self.norm.push("final_norm", h, Scope::Output, out);
                out.push(ParamTensor::new("classifier", &[self.vision.classes, h], Scope::Output, Replicated));
                out.push(ParamTensor::vector("classifier.bias", self.vision.classes, Scope::Output, Replicated));
            }
        }
    }

    /// Tokens (or patches + [CLS]) of one sample at this sequence length / image side; a
    /// vision-language model's language model reads the text and the image tokens.
    pub fn sample_tokens(&self, seq_len: u64, image_size: Option<u64>, visual: super::tower::Visual) -> u64 {
        match self.stack {
            Stack::Vision => vit_patches(image_size.unwrap_or(self.vision.image_size).max(1), self.vision.patch) + 1,
            _ => seq_len.max(1) + self.tower.as_ref().map_or(0, |tower| tower.sample_tokens(visual).1),
        }
    }

    /// The vision tokens mllama's cross-attention layers read as keys and values for one sample
    /// (every tile of every image, `mllama_vision.rs`); 0 without cross-attention layers or a
    /// tower (the layers are then skipped).
    pub fn vision_kv_tokens(&self, visual: super::tower::Visual) -> u64 {
        match (&self.vision_cross, &self.tower) {
            (Some(_), Some(tower)) if tower.kind == super::tower::TowerKind::Mllama => visual.images.max(1) * visual.frames.max(1) * tower.mllama_vision_tokens(),
            _ => 0,
        }
    }

    /// The scope of the attention's tensors and saved activations: every block, or in a
    /// hybrid stack (or beside mllama's cross-attention layers) the blocks with self-attention.
    pub fn attention_scope(&self) -> Scope {
        if self.hybrid.is_some() || self.vision_cross.is_some() {
            Scope::Attention
        } else {
            Scope::Layer
        }
    }

    /// Features the q/k/v projections read: the hidden size, or twice it where shared blocks
    /// read the hidden state concatenated with the embeddings (Zamba2, `shared.rs`).
    pub fn attention_input_width(&self) -> u64 {
        match self.hybrid.as_ref().and_then(|hy| hy.shared.as_ref()) {
            Some(_) => 2 * self.hidden,
            None => self.hidden,
        }
    }

    /// Blocks with attention (all of them unless the stack is hybrid).
    pub fn attention_layers(&self) -> u64 {
        self.blocks(Scope::Attention)
    }

    /// Tokens the KV cache keeps per sequence, averaged over blocks
    /// ([`AttentionPart::mean_cached_tokens`]); Gemma 3n's shared-KV layers keep none
    /// (`DynamicCache` holds no keys or values for them: `per_layer.rs`, measured in
    /// `gemma3n.json`), and the sliding layers among the others keep their window.
    pub fn mean_cached_tokens(&self, tokens: f64) -> f64 {
        let l = self.layers.max(1);
        match &self.per_layer {
            Some(pl) if pl.kv_shared_layers > 0 => {
                let own = pl.kv_layers(l);
                let attention = AttentionPart { sliding_layers: self.attention.sliding_layers.saturating_sub(pl.kv_shared_sliding), ..self.attention.clone() };
                attention.mean_cached_tokens(tokens, own) * own as f64 / l as f64
            }
            _ => self.attention.mean_cached_tokens(tokens, l),
        }
    }

    /// The blocks that cache keys and values, by attention shape: (the attention part with its
    /// sliding layers among them, the blocks of that shape that keep their own cache). One group
    /// for a stack of one shape; one per kind where the full-attention blocks have their own
    /// shape (Gemma 4).
    pub fn cache_groups(&self) -> Vec<(AttentionPart, u64)> {
        if self.attention.full_layers.is_none() {
            // Gemma 3n: the shared-KV blocks (and their sliding ones) keep nothing.
            let (shared, shared_sliding) = self.per_layer.as_ref().map_or((0, 0), |pl| (pl.kv_shared_layers, pl.kv_shared_sliding));
            let sliding_layers = self.attention.sliding_layers.saturating_sub(shared_sliding);
            return vec![(AttentionPart { sliding_layers, ..self.attention.clone() }, self.attention_layers().saturating_sub(shared))];
        }
        self.attention
            .kinds()
            .into_iter()
            .map(|(full, part)| {
                let own = self.subset_blocks(BlockSubset { full, own_kv: Some(true) });
                let sliding_layers = if full == Some(false) { own } else { 0 };
                (AttentionPart { sliding_layers, ..part }, own)
            })
            .collect()
    }

    /// The blocks' attention in groups of one shape and one key/value source: (the attention
    /// part, its sliding layers counted within the group; the group's blocks; whether they
    /// compute their own keys and values). One group for a stack of one shape without
    /// shared-KV blocks (hybrid stacks too: all `layers`, as their activations count them).
    pub fn attention_groups(&self) -> Vec<(AttentionPart, u64, bool)> {
        if self.attention.full_layers.is_none() && self.per_layer.as_ref().is_none_or(|pl| pl.kv_shared_layers == 0) {
            return vec![(self.attention.clone(), self.layers, true)];
        }
        let sliding = self.attention.sliding_layers.min(self.layers);
        let shared_sliding = self.per_layer.as_ref().map_or(0, |pl| pl.kv_shared_sliding.min(sliding));
        let mut groups = Vec::new();
        for (full, part) in self.attention.kinds() {
            for own in [true, false] {
                let blocks = self.subset_blocks(BlockSubset { full, own_kv: Some(own) });
                if blocks == 0 {
                    continue;
                }
                let sliding_layers = match full {
                    Some(true) => 0,
                    Some(false) => blocks,
                    None if own => sliding - shared_sliding,
                    None => shared_sliding,
                };
                groups.push((AttentionPart { sliding_layers, ..part.clone() }, blocks, own));
            }
        }
        groups
    }

    /// The dense MLP's width averaged over the blocks: the shared-KV blocks' is twice as wide
    /// with Gemma 4's `use_double_wide_mlp` (`per_layer.rs`).
    pub fn mean_dense_ffn(&self) -> f64 {
        let f = self.mlp.ffn as f64;
        match &self.per_layer {
            Some(pl) if pl.wide_shared_mlp => f * (1.0 + pl.kv_shared_layers.min(self.layers) as f64 / self.layers.max(1) as f64),
            _ => f,
        }
    }

    /// Whether the model uses rotary position embeddings.
    pub fn rotary(&self) -> bool {
        self.attention.rotary_dim > 0
    }
}

/// Patches of a square image: (image / patch)² (Dosovitskiy et al. 2021, §3.1).
pub fn vit_patches(image_size: u64, patch: u64) -> u64 {
    if patch == 0 {
        return 0;
    }
    (image_size / patch).pow(2)
}

#[cfg(test)]
mod tests {
    use super::super::{Architecture, AttentionPart, MoePart};
    use super::*;

    fn llama(h: u64, l: u64, a: u64, g: u64, f: u64, v: u64) -> TransformerArch {
        TransformerArch {
            hidden: h,
            layers: l,
            vocab: v,
            attention: AttentionPart { heads: a, kv_heads: g, head_dim: h / a, rotary_dim: h / a, ..AttentionPart::default() },
            mlp: MlpPart { ffn: f, ..MlpPart::default() },
            ..TransformerArch::default()
        }
    }

    /// memory-formulas.md §A4: published totals for Llama-3-8B and Llama-2-7B.
    #[test]
    fn llama_counts_match_published_totals() {
        assert_eq!(Architecture::Transformer(llama(4096, 32, 32, 8, 14336, 128256)).param_count(), 8_030_261_248.0);
        assert_eq!(Architecture::Transformer(llama(4096, 32, 32, 32, 11008, 32000)).param_count(), 6_738_415_616.0);
    }

    /// Mixtral-8x7B: 46.7B total, 12.9B active (two of eight experts).
    #[test]
    fn mixtral_active_params_count_two_experts() {
        let mut t = llama(4096, 32, 32, 8, 14336, 32000);
        t.moe = Some(MoePart { experts: 8, top_k: 2, expert_ffn: 14336, ..MoePart::default() });
        let m = Architecture::Transformer(t);
        assert_eq!(m.param_count(), 46_702_792_704.0);
        assert_eq!(m.active_param_count(), 12_879_925_248.0);
    }

    /// DeepSeek-style dense-first layers: 3 dense blocks of 61, MoE in the rest.
    #[test]
    fn dense_first_blocks_are_counted_apart() {
        let mut t = llama(7168, 61, 128, 128, 18432, 129280);
        t.moe = Some(MoePart { experts: 256, top_k: 8, expert_ffn: 2048, shared_ffn: 2048, first_dense: 3, ..MoePart::default() });
        assert_eq!(t.blocks(Scope::DenseMlp), 3);
        assert_eq!(t.blocks(Scope::Expert), 58);
    }

    /// Qwen2-MoE's `decoder_sparse_step = 2`: blocks 1, 3, 5, … are MoE.
    #[test]
    fn moe_every_second_block() {
        let moe = MoePart { every: 2, ..MoePart::default() };
        assert_eq!(moe.moe_blocks(24), 12);
        assert_eq!(MoePart::default().moe_blocks(24), 24);
    }

    /// The closed form counts the blocks transformers makes MoE: `layer_idx >=
    /// first_k_dense_replace and (layer_idx + 1) % decoder_sparse_step == 0`.
    #[test]
    fn moe_block_count_follows_transformers_rule() {
        for layers in 0..40u64 {
            for first_dense in 0..6 {
                for every in 1..5 {
                    let moe = MoePart { first_dense, every, ..MoePart::default() };
                    let by_rule = (0..layers).filter(|i| *i >= first_dense && (i + 1) % every == 0).count() as u64;
                    assert_eq!(moe.moe_blocks(layers), by_rule, "L {layers}, first {first_dense}, every {every}");
                }
            }
        }
    }
}
