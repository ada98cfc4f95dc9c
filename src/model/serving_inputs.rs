//! What a serving run asks for (`training.mode: "inference"` with `training.serving`): the
//! engine, the weights' and the KV cache's storage formats and the engine's own settings, as
//! the model takes them (re-exported by `inputs`).

use serde::{Deserialize, Serialize};

/// Storage format of the weights of linear layers when serving. Embeddings, norms and the
/// output head stay 16-bit: bitsandbytes quantises `nn.Linear` only and transformers keeps
/// the output layer out (`get_keys_to_not_convert`), as GPTQ/AWQ and vLLM's FP8 do. The GGUF
/// types (llama.cpp) quantise the embedding and the output head too (`gguf.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightFormat {
    /// bf16 / fp16.
    #[serde(rename = "bf16")]
    Half,
    /// FP8 E4M3 with a per-tensor scale (vLLM `quantization="fp8"`, TensorRT-LLM).
    Fp8,
    /// LLM.int8(): int8 weights and an fp32 scale per output row (bitsandbytes `Int8Params`,
    /// Dettmers et al. 2022).
    Int8,
    /// 4-bit with a 16-bit scale and a 4-bit zero point per group of 128 inputs (GPTQ /
    /// AutoAWQ `WQLinear_GEMM`: packed `qweight`, fp16 `scales`, packed `qzeros`).
    Int4,
    /// bitsandbytes NF4 (QLoRA), with or without double quantisation.
    Nf4,
    /// OCP MXFP4 for the routed experts (gpt-oss's checkpoints: `quantization_config`
    /// `mxfp4`, attention, router and embeddings kept in bf16): 32 e2m1 values and one e8m0
    /// scale per block, 17 bytes per 32 weights (OCP Microscaling Formats spec v1.0 §5).
    Mxfp4,
    /// GGUF `Q8_0` (llama.cpp): 32 int8 weights and one fp16 scale per block.
    #[serde(rename = "q8_0")]
    GgufQ8_0,
    /// GGUF `Q6_K`: super-blocks of 256 weights, 210 bytes.
    #[serde(rename = "q6_k")]
    GgufQ6K,
    /// GGUF `Q5_K_M`: `Q5_K` with `Q6_K` for half the `attn_v` / `ffn_down` matrices and the head.
    #[serde(rename = "q5_k_m")]
    GgufQ5KM,
    /// GGUF `Q4_K_M`: `Q4_K` with `Q6_K` for half the `attn_v` / `ffn_down` matrices and the head.
    #[serde(rename = "q4_k_m")]
    GgufQ4KM,
    /// GGUF `Q4_0`: 32 4-bit weights and one fp16 scale per block.
    #[serde(rename = "q4_0")]
    GgufQ4_0,
}

impl WeightFormat {
    pub const ALL: [WeightFormat; 11] = [
        WeightFormat::Half,
        WeightFormat::Fp8,
        WeightFormat::Int8,
        WeightFormat::Int4,
        WeightFormat::Nf4,
        WeightFormat::Mxfp4,
        WeightFormat::GgufQ8_0,
        WeightFormat::GgufQ6K,
        WeightFormat::GgufQ5KM,
        WeightFormat::GgufQ4KM,
        WeightFormat::GgufQ4_0,
    ];

    /// A llama.cpp GGUF quantisation type.
    pub fn is_gguf(self) -> bool {
        matches!(self, WeightFormat::GgufQ8_0 | WeightFormat::GgufQ6K | WeightFormat::GgufQ5KM | WeightFormat::GgufQ4KM | WeightFormat::GgufQ4_0)
    }
}

/// The serving engine whose memory plan is followed (`serving/`): each reserves memory its
/// own way and prints its KV-cache size at startup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// A transformers `generate` over the whole batch at once: weights, a contiguous KV cache
    /// of the batch and the prefill workspace (`inference.rs`).
    #[default]
    Transformers,
    /// vLLM: a fraction of the GPU, a profiled activation peak, the rest a paged KV cache.
    Vllm,
    /// SGLang: `mem_fraction_static` of the GPU for weights and the token pool.
    Sglang,
    /// Hugging Face text-generation-inference: warm-up prefill, then blocks from free memory.
    Tgi,
    /// llama.cpp: GGUF weights, a KV cache of `n_ctx` cells and the compute buffer.
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
}

impl Engine {
    pub const ALL: [Engine; 5] = [Engine::Transformers, Engine::Vllm, Engine::Sglang, Engine::Tgi, Engine::LlamaCpp];

    /// The engine's name as its project writes it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Transformers => "transformers",
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
            Engine::Tgi => "TGI",
            Engine::LlamaCpp => "llama.cpp",
        }
    }
}

/// Element type of the inference KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KvCacheFormat {
    /// The activations' dtype (bf16 / fp16; fp32 in fp32 runs).
    #[serde(rename = "bf16")]
    Half,
    /// FP8 (vLLM `kv_cache_dtype="fp8"`): one byte per element.
    Fp8,
}

/// Inference storage choices and the engine's settings, named as each engine names them.
/// `None` keeps the run's own dtype (and QLoRA's NF4 base) or the engine's default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Serving {
    pub engine: Engine,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<WeightFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache: Option<KvCacheFormat>,
    /// NF4 double quantisation (`bnb_4bit_use_double_quant`).
    pub double_quant: bool,
    /// vLLM `--gpu-memory-utilization` (TGI's `--cuda-memory-fraction` too); default 0.9.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization: Option<f64>,
    /// SGLang `--mem-fraction-static`; default from the GPU's memory (`serving/sglang.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_fraction_static: Option<f64>,
    /// Longest sequence (prompt + output) one request may reach; default `training.seq_len`.
    /// llama.cpp's `n_ctx`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u64>,
    /// Requests scheduled at once (vLLM `--max-num-seqs`, SGLang `--max-running-requests`);
    /// default the engine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<u64>,
    /// Tokens in one scheduled batch, the chunked-prefill size the engine profiles (vLLM
    /// `--max-num-batched-tokens`, SGLang `--chunked-prefill-size`, TGI
    /// `--max-batch-prefill-tokens`, llama.cpp `--ubatch-size`); default the engine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_batched_tokens: Option<u64>,
    /// No CUDA graphs (vLLM `--enforce-eager`, SGLang `--disable-cuda-graph`).
    pub enforce_eager: bool,
    /// Tokens per KV-cache block (vLLM `--block-size`, SGLang `--page-size`); default the engine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
}

impl Default for Serving {
    fn default() -> Self {
        Serving {
            engine: Engine::Transformers,
            weights: None,
            kv_cache: None,
            double_quant: true,
            gpu_memory_utilization: None,
            mem_fraction_static: None,
            max_model_len: None,
            max_num_seqs: None,
            max_num_batched_tokens: None,
            enforce_eager: false,
            block_size: None,
        }
    }
}
