//! Model architectures in Headroom's own terms, and the exact list of parameter tensors
//! each one builds.
//!
//! Every count here mirrors the module tree that Hugging Face transformers builds for the
//! same `config.json` (`LlamaForCausalLM`, `GPT2LMHeadModel`, `BertForMaskedLM`,
//! `ViTForImageClassification`, `ResNetForImageClassification`, …); the native tests check
//! the totals against `tests/fixtures/measured/param_counts.json`, measured with
//! transformers on the `meta` device. This module knows nothing of precision, optimizers
//! or parallelism: it only says which tensors exist, their shapes, and how they may be split.

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// A model: a transformer stack (decoder, encoder or vision) or a convolutional ResNet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum Architecture {
    Transformer(TransformerArch),
    Resnet(ResNetArch),
}

/// Which way a transformer stack is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stack {
    /// Causal language model (GPT-2, Llama, Mistral, Qwen2, Mixtral).
    Decoder,
    /// Bidirectional encoder with a masked-LM head (BERT).
    Encoder,
    /// Vision Transformer over image patches with a classification head (ViT).
    Vision,
}

/// Normalisation layer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Norm {
    /// LayerNorm with weight and bias (2h parameters).
    Layernorm,
    /// RMSNorm with weight only (h parameters).
    Rmsnorm,
}

/// Feed-forward block type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mlp {
    /// Two matrices with exact GELU between (BERT, ViT).
    Gelu,
    /// Two matrices with the tanh-approximated GELU written out op by op (GPT-2's `gelu_new`).
    GeluTanh,
    /// Gated SiLU: gate, up and down matrices (Llama family).
    Swiglu,
}

/// A transformer, in the quantities the memory formulas use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransformerArch {
    pub stack: Stack,
    /// Model width h.
    pub hidden: u64,
    /// Number of transformer blocks L.
    pub layers: u64,
    /// Query heads a.
    pub heads: u64,
    /// Key/value heads g (g = a without grouped-query attention).
    pub kv_heads: u64,
    /// Per-head width d (usually h / a).
    pub head_dim: u64,
    /// Feed-forward width f (per expert for mixtures of experts).
    pub ffn: u64,
    /// Vocabulary size v (0 for vision models).
    pub vocab: u64,
    /// Learned absolute position embeddings (GPT-2, BERT); 0 for rotary models.
    pub max_positions: u64,
    /// BERT segment ("token type") embeddings.
    pub token_types: u64,
    pub norm: Norm,
    pub mlp: Mlp,
    /// GPT-2 keeps Q, K and V in one `c_attn` matrix.
    pub fused_qkv: bool,
    pub qkv_bias: bool,
    /// Bias on the attention output projection.
    pub out_bias: bool,
    /// Biases on the feed-forward matrices.
    pub mlp_bias: bool,
    /// LM head shares the token-embedding matrix.
    pub tied_embeddings: bool,
    /// Experts per MoE layer (0 or 1: a dense model).
    pub experts: u64,
    /// Experts each token is routed to (top-k).
    pub experts_per_token: u64,
    /// Classifier outputs (ViT).
    pub classes: u64,
    /// Patch side in pixels (ViT).
    pub patch: u64,
    /// Image side the position embeddings were trained for (ViT).
    pub image_size: u64,
    /// Input channels (ViT).
    pub channels: u64,
}

impl Default for TransformerArch {
    fn default() -> Self {
        // Llama-3-8B shapes: a sane default for a partially written `arch`.
        TransformerArch {
            stack: Stack::Decoder,
            hidden: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 14336,
            vocab: 128256,
            max_positions: 0,
            token_types: 0,
            norm: Norm::Rmsnorm,
            mlp: Mlp::Swiglu,
            fused_qkv: false,
            qkv_bias: false,
            out_bias: false,
            mlp_bias: false,
            tied_embeddings: false,
            experts: 0,
            experts_per_token: 0,
            classes: 0,
            patch: 0,
            image_size: 0,
            channels: 0,
        }
    }
}

/// A ResNet as Hugging Face's `ResNetConfig` describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResNetArch {
    /// Channels after the 7×7 stem.
    pub stem_width: u64,
    /// Output channels of each stage.
    pub widths: Vec<u64>,
    /// Blocks per stage.
    pub depths: Vec<u64>,
    /// Bottleneck blocks (ResNet-50 and up) or basic blocks (ResNet-18/34).
    pub bottleneck: bool,
    pub channels: u64,
    pub classes: u64,
    /// Resolution the model is usually trained at (the default input size).
    pub image_size: u64,
}

impl Default for ResNetArch {
    fn default() -> Self {
        ResNetArch {
            stem_width: 64,
            widths: vec![256, 512, 1024, 2048],
            depths: vec![3, 4, 6, 3],
            bottleneck: true,
            channels: 3,
            classes: 1000,
            image_size: 224,
        }
    }
}

/// Where a parameter tensor sits, which decides how many copies exist and which pipeline
/// stage holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Before the first block (embeddings, patch projection, ResNet stem): first stage.
    Input,
    /// Once per transformer block.
    Layer,
    /// Once per expert per block.
    Expert,
    /// After the last block (final norm, LM head, classifier): last stage.
    Output,
}

/// How tensor parallelism (Megatron-LM, Shoeybi et al. 2019 §3) splits a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpSplit {
    /// Split across TP ranks (column- or row-parallel linear, vocab-parallel embedding).
    Sharded,
    /// Every TP rank holds a full copy (norms, row-parallel biases, positions, router).
    Replicated,
}

/// The linear layers LoRA can adapt, by their usual Hugging Face names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinearKind {
    Q,
    K,
    V,
    O,
    Gate,
    Up,
    Down,
}

impl LinearKind {
    pub const ALL: [LinearKind; 7] = [
        LinearKind::Q,
        LinearKind::K,
        LinearKind::V,
        LinearKind::O,
        LinearKind::Gate,
        LinearKind::Up,
        LinearKind::Down,
    ];
}

/// One parameter tensor of the model (or one per block / per expert, see `scope`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamTensor {
    pub name: &'static str,
    /// Shape as PyTorch stores it (Linear weights are `[out, in]`), in the first `ndim`
    /// entries (a fixed array: building the tensor list allocates nothing per tensor).
    shape: [u64; 4],
    ndim: usize,
    pub scope: Scope,
    pub tp: TpSplit,
    /// Set for the matrices of transformer linear layers (LoRA / QLoRA targets).
    pub linear: Option<LinearKind>,
    /// For a LoRA target: `(in_features, out_features)` of the whole linear (GPT-2's fused
    /// `c_attn` is one linear of width 3h).
    pub lora_dims: Option<(u64, u64)>,
}

impl ParamTensor {
    /// A tensor of up to four dimensions (extra dimensions are ignored).
    pub fn new(name: &'static str, dims: &[u64], scope: Scope, tp: TpSplit) -> Self {
        let mut shape = [1; 4];
        let ndim = dims.len().min(4);
        shape[..ndim].copy_from_slice(&dims[..ndim]);
        ParamTensor { name, shape, ndim, scope, tp, linear: None, lora_dims: None }
    }

    fn linear(name: &'static str, kind: LinearKind, out: u64, inp: u64, scope: Scope) -> Self {
        ParamTensor { linear: Some(kind), lora_dims: Some((inp, out)), ..ParamTensor::new(name, &[out, inp], scope, TpSplit::Sharded) }
    }

    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[u64] {
        &self.shape[..self.ndim]
    }

    /// Elements in one copy.
    pub fn numel(&self) -> f64 {
        self.shape().iter().map(|&d| d as f64).product()
    }
}

/// Upper bound on any one dimension of an architecture given in our own fields.
const MAX_DIM: u64 = 1 << 24;

impl Architecture {
    /// Reject shapes no model has (zero sizes, heads that do not group), naming the field.
    pub fn check(&self) -> Result<(), InputError> {
        let positive = |field: &str, v: u64| {
            if v == 0 || v > MAX_DIM {
                Err(InputError::new(field, format!("must be between 1 and {MAX_DIM}, got {v}")))
            } else {
                Ok(())
            }
        };
        match self {
            Architecture::Transformer(t) => {
                positive("hidden", t.hidden)?;
                positive("layers", t.layers)?;
                positive("heads", t.heads)?;
                positive("kv_heads", t.kv_heads)?;
                positive("head_dim", t.head_dim)?;
                positive("ffn", t.ffn)?;
                if t.heads % t.kv_heads != 0 {
                    return Err(InputError::new("kv_heads", format!("{} must divide heads ({})", t.kv_heads, t.heads)));
                }
                if t.experts_per_token > t.experts.max(1) {
                    return Err(InputError::new("experts_per_token", "exceeds experts"));
                }
                match t.stack {
                    Stack::Vision => {
                        positive("patch", t.patch)?;
                        positive("image_size", t.image_size)?;
                        positive("channels", t.channels)?;
                        positive("classes", t.classes)?;
                        if t.patch > t.image_size {
                            return Err(InputError::new("patch", "is larger than image_size"));
                        }
                        Ok(())
                    }
                    _ => positive("vocab", t.vocab),
                }
            }
            Architecture::Resnet(r) => {
                positive("stem_width", r.stem_width)?;
                positive("channels", r.channels)?;
                positive("classes", r.classes)?;
                positive("image_size", r.image_size)?;
                if r.widths.is_empty() || r.widths.len() != r.depths.len() || r.widths.len() > 64 {
                    return Err(InputError::new("depths", "needs 1 to 64 stages, as many as widths"));
                }
                for (&w, &d) in r.widths.iter().zip(&r.depths) {
                    positive("widths", w)?;
                    if d > 1024 {
                        return Err(InputError::new("depths", format!("{d} blocks in one stage is too many")));
                    }
                }
                Ok(())
            }
        }
    }

    /// Every parameter tensor, with `scope` saying how often it repeats.
    pub fn param_tensors(&self) -> Vec<ParamTensor> {
        match self {
            Architecture::Transformer(t) => transformer_tensors(t),
            Architecture::Resnet(r) => resnet_tensors(r),
        }
    }

    /// Transformer blocks (1 for a ResNet, whose stages are not split by pipeline stage).
    pub fn layers(&self) -> u64 {
        match self {
            Architecture::Transformer(t) => t.layers.max(1),
            Architecture::Resnet(_) => 1,
        }
    }

    /// Experts per MoE block (1 for dense models).
    pub fn experts(&self) -> u64 {
        match self {
            Architecture::Transformer(t) => t.experts.max(1),
            Architecture::Resnet(_) => 1,
        }
    }

    /// How many copies of a tensor with this scope the whole model holds.
    pub fn multiplicity(&self, scope: Scope) -> f64 {
        match scope {
            Scope::Input | Scope::Output => 1.0,
            Scope::Layer => self.layers() as f64,
            Scope::Expert => (self.layers() * self.experts()) as f64,
        }
    }

    /// Total parameters, counting tied weights once (as `sum(p.numel())` in PyTorch).
    pub fn param_count(&self) -> f64 {
        self.param_tensors().iter().map(|p| p.numel() * self.multiplicity(p.scope)).sum()
    }

    /// Parameters one token uses: like `param_count`, but only `experts_per_token` experts
    /// per MoE block (Fedus et al. 2021; Mixtral's "12.9B active").
    pub fn active_param_count(&self) -> f64 {
        let (per_token, experts) = match self {
            Architecture::Transformer(t) if t.experts > 1 => (t.experts_per_token.max(1), t.experts),
            _ => return self.param_count(),
        };
        let expert_params: f64 = self
            .param_tensors()
            .iter()
            .filter(|p| p.scope == Scope::Expert)
            .map(|p| p.numel() * self.layers() as f64)
            .sum();
        self.param_count() - expert_params * (experts - per_token.min(experts)) as f64
    }

    /// Default input resolution for vision models (0 for language models).
    pub fn default_image_size(&self) -> u64 {
        match self {
            Architecture::Transformer(t) if t.stack == Stack::Vision => t.image_size,
            Architecture::Resnet(r) => r.image_size,
            _ => 0,
        }
    }
}

/// Norm parameters: weight (+ bias for LayerNorm).
fn norm_tensors(name: &'static str, norm: Norm, h: u64, scope: Scope, out: &mut Vec<ParamTensor>) {
    out.push(ParamTensor::new(name, &[h], scope, TpSplit::Replicated));
    if norm == Norm::Layernorm {
        out.push(ParamTensor::new(name, &[h], scope, TpSplit::Replicated));
    }
}

fn bias(name: &'static str, n: u64, scope: Scope, tp: TpSplit) -> ParamTensor {
    ParamTensor::new(name, &[n], scope, tp)
}

/// Parameter tensors of a transformer, following the module trees of transformers'
/// `modeling_gpt2.py`, `modeling_llama.py`, `modeling_qwen2.py`, `modeling_mixtral.py`,
/// `modeling_bert.py` and `modeling_vit.py`. Closed forms in memory-formulas.md §A4
/// (e.g. GPT-2: v·h + n_ctx·h + L·(12h² + 13h) + 2h).
fn transformer_tensors(t: &TransformerArch) -> Vec<ParamTensor> {
    use Scope::*;
    use TpSplit::*;
    let (h, a, g, d, f, v) = (t.hidden, t.heads, t.kv_heads, t.head_dim, t.ffn, t.vocab);
    let mut out = Vec::with_capacity(32);

    // Inputs.
    match t.stack {
        Stack::Vision => {
            let patches = vit_patches(t.image_size, t.patch);
            out.push(ParamTensor::new("patch_embeddings.weight", &[h, t.channels, t.patch, t.patch], Input, Replicated));
            out.push(bias("patch_embeddings.bias", h, Input, Replicated));
            out.push(ParamTensor::new("cls_token", &[h], Input, Replicated));
            out.push(ParamTensor::new("position_embeddings", &[patches + 1, h], Input, Replicated));
        }
        _ => {
            out.push(ParamTensor::new("embed_tokens", &[v, h], Input, Sharded));
            if t.max_positions > 0 {
                out.push(ParamTensor::new("position_embeddings", &[t.max_positions, h], Input, Replicated));
            }
            if t.token_types > 0 {
                out.push(ParamTensor::new("token_type_embeddings", &[t.token_types, h], Input, Replicated));
            }
            if t.stack == Stack::Encoder {
                norm_tensors("embeddings.LayerNorm", t.norm, h, Input, &mut out);
            }
        }
    }

    // One block.
    norm_tensors("attention_norm", t.norm, h, Layer, &mut out);
    if t.fused_qkv {
        out.push(ParamTensor { lora_dims: Some((h, a * d + 2 * g * d)), ..ParamTensor::linear("c_attn", LinearKind::Q, a * d + 2 * g * d, h, Layer) });
        if t.qkv_bias {
            out.push(bias("c_attn.bias", a * d + 2 * g * d, Layer, Sharded));
        }
    } else {
        out.push(ParamTensor::linear("q_proj", LinearKind::Q, a * d, h, Layer));
        out.push(ParamTensor::linear("k_proj", LinearKind::K, g * d, h, Layer));
        out.push(ParamTensor::linear("v_proj", LinearKind::V, g * d, h, Layer));
        if t.qkv_bias {
            out.push(bias("q_proj.bias", a * d, Layer, Sharded));
            out.push(bias("k_proj.bias", g * d, Layer, Sharded));
            out.push(bias("v_proj.bias", g * d, Layer, Sharded));
        }
    }
    out.push(ParamTensor::linear("o_proj", LinearKind::O, h, a * d, Layer));
    if t.out_bias {
        out.push(bias("o_proj.bias", h, Layer, Replicated));
    }
    norm_tensors("mlp_norm", t.norm, h, Layer, &mut out);
    let mlp_scope = if t.experts > 1 { Expert } else { Layer };
    if t.experts > 1 {
        out.push(ParamTensor::new("router", &[t.experts, h], Layer, Replicated));
    }
    if t.mlp == Mlp::Swiglu {
        out.push(ParamTensor::linear("gate_proj", LinearKind::Gate, f, h, mlp_scope));
        if t.mlp_bias {
            out.push(bias("gate_proj.bias", f, mlp_scope, Sharded));
        }
    }
    out.push(ParamTensor::linear("up_proj", LinearKind::Up, f, h, mlp_scope));
    if t.mlp_bias {
        out.push(bias("up_proj.bias", f, mlp_scope, Sharded));
    }
    out.push(ParamTensor::linear("down_proj", LinearKind::Down, h, f, mlp_scope));
    if t.mlp_bias {
        out.push(bias("down_proj.bias", h, mlp_scope, Replicated));
    }

    // Outputs.
    match t.stack {
        Stack::Decoder => {
            norm_tensors("final_norm", t.norm, h, Output, &mut out);
            if !t.tied_embeddings {
                out.push(ParamTensor::new("lm_head", &[v, h], Output, Sharded));
            }
        }
        Stack::Encoder => {
            // BertForMaskedLM: cls.predictions.transform (dense + LayerNorm) and a decoder
            // whose weight is tied to the word embeddings but whose bias is its own.
            out.push(ParamTensor::new("mlm.transform.dense", &[h, h], Output, Replicated));
            out.push(bias("mlm.transform.dense.bias", h, Output, Replicated));
            norm_tensors("mlm.transform.LayerNorm", t.norm, h, Output, &mut out);
            if !t.tied_embeddings {
                out.push(ParamTensor::new("mlm.decoder", &[v, h], Output, Sharded));
            }
            out.push(bias("mlm.decoder.bias", v, Output, Sharded));
        }
        Stack::Vision => {
            norm_tensors("final_norm", t.norm, h, Output, &mut out);
            out.push(ParamTensor::new("classifier", &[t.classes, h], Output, Replicated));
            out.push(bias("classifier.bias", t.classes, Output, Replicated));
        }
    }
    out
}

/// Patches of a square image: (image / patch)² (Dosovitskiy et al. 2021, §3.1).
pub fn vit_patches(image_size: u64, patch: u64) -> u64 {
    if patch == 0 {
        return 0;
    }
    (image_size / patch).pow(2)
}

/// One convolution's weight (no bias: HF `ResNetConvLayer` uses `bias=False`) and its
/// BatchNorm's weight and bias (running statistics are buffers, not parameters).
fn conv_bn(out: &mut Vec<ParamTensor>, name: &'static str, c_out: u64, c_in: u64, k: u64) {
    out.push(ParamTensor::new(name, &[c_out, c_in, k, k], Scope::Input, TpSplit::Replicated));
    out.push(ParamTensor::new("batchnorm", &[c_out], Scope::Input, TpSplit::Replicated));
    out.push(ParamTensor::new("batchnorm", &[c_out], Scope::Input, TpSplit::Replicated));
}

/// Parameter tensors of transformers' `ResNetForImageClassification` (He et al. 2016,
/// Table 1; identical counts to torchvision's resnet18/50/101, e.g. 25,557,032 for ResNet-50).
fn resnet_tensors(r: &ResNetArch) -> Vec<ParamTensor> {
    let mut out = Vec::new();
    conv_bn(&mut out, "embedder.conv", r.stem_width, r.channels, 7);
    for block in resnet_blocks(r) {
        if block.shortcut {
            conv_bn(&mut out, "shortcut.conv", block.c_out, block.c_in, 1);
        }
        if r.bottleneck {
            conv_bn(&mut out, "conv1x1a", block.mid, block.c_in, 1);
            conv_bn(&mut out, "conv3x3", block.mid, block.mid, 3);
            conv_bn(&mut out, "conv1x1b", block.c_out, block.mid, 1);
        } else {
            conv_bn(&mut out, "conv3x3a", block.c_out, block.c_in, 3);
            conv_bn(&mut out, "conv3x3b", block.c_out, block.c_out, 3);
        }
    }
    let last = r.widths.last().copied().unwrap_or(r.stem_width);
    out.push(ParamTensor::new("classifier", &[r.classes, last], Scope::Output, TpSplit::Replicated));
    out.push(bias("classifier.bias", r.classes, Scope::Output, TpSplit::Replicated));
    out
}

/// One residual block of a ResNet, with the downsampling factor of its output relative to
/// the stem output (after the max-pool).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResNetBlock {
    pub c_in: u64,
    pub mid: u64,
    pub c_out: u64,
    /// Spatial stride of this block (2 in the first block of stages 2..).
    pub stride: u64,
    /// Downsampling of the block's output relative to the input image (4, 8, 16, 32).
    pub out_reduction: u64,
    pub shortcut: bool,
}

/// The blocks of a ResNet in order (HF `ResNetEncoder`: stage 0 keeps stride 1, the first
/// block of every later stage has stride 2; bottleneck reduction 4).
pub fn resnet_blocks(r: &ResNetArch) -> Vec<ResNetBlock> {
    let mut blocks = Vec::new();
    let mut c_in = r.stem_width;
    let mut reduction = 4;
    for (stage, (&width, &depth)) in r.widths.iter().zip(&r.depths).enumerate() {
        for i in 0..depth {
            let stride = if stage > 0 && i == 0 { 2 } else { 1 };
            reduction *= stride;
            let mid = if r.bottleneck { width / 4 } else { width };
            blocks.push(ResNetBlock {
                c_in,
                mid,
                c_out: width,
                stride,
                out_reduction: reduction,
                shortcut: c_in != width || stride != 1,
            });
            c_in = width;
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama(h: u64, l: u64, a: u64, g: u64, f: u64, v: u64, tied: bool) -> Architecture {
        Architecture::Transformer(TransformerArch {
            hidden: h,
            layers: l,
            heads: a,
            kv_heads: g,
            head_dim: h / a,
            ffn: f,
            vocab: v,
            tied_embeddings: tied,
            ..TransformerArch::default()
        })
    }

    /// memory-formulas.md §A4: published totals for Llama-3-8B and Llama-2-7B.
    #[test]
    fn llama_counts_match_published_totals() {
        assert_eq!(llama(4096, 32, 32, 8, 14336, 128256, false).param_count(), 8_030_261_248.0);
        assert_eq!(llama(4096, 32, 32, 32, 11008, 32000, false).param_count(), 6_738_415_616.0);
    }

    #[test]
    fn resnet50_matches_torchvision() {
        assert_eq!(Architecture::Resnet(ResNetArch::default()).param_count(), 25_557_032.0);
    }

    #[test]
    fn mixtral_active_params_count_two_experts() {
        let mut t = match llama(4096, 32, 32, 8, 14336, 32000, false) {
            Architecture::Transformer(t) => t,
            _ => unreachable!(),
        };
        t.experts = 8;
        t.experts_per_token = 2;
        let m = Architecture::Transformer(t);
        assert_eq!(m.param_count(), 46_702_792_704.0);
        assert_eq!(m.active_param_count(), 12_879_925_248.0);
    }
}
