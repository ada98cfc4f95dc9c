#!/usr/bin/env python3
"""Measure the bytes autograd saves for backward for the structural parts of newer
transformer families (q/k norms, sandwich norms, soft-capping, fused projections,
partial rotary, parallel residual, MLA, shared experts, attention sinks, T5
relative bias, ...), with tiny configs (2-4 layers, h 512-768, b=2, s=256).

Same method and same case schema as activations.py (this script imports it as a
module: importing it installs its patches -- the CUDA SDPA kernel selector, the
packed-sequence fix for fake tensors, the sm90 device-capability answer and the
trunc_normal_ replacement -- and this script reuses KERNEL_LOG; the recorder,
the cast tracker and the module stack come from common.py).

SDPA kernel selection is common.cuda_sdpa, shared with activations.py (flash first,
then memory-efficient, else math; cuDNN attention is not modelled; see its docstring:
flash needs equal q/k/v head dims, the efficient kernel accepts a different value head
dim -- DeepSeek MLA -- and, like flash, grouped heads with enable_gqa or MQA; a boolean
mask becomes a per-call float mask of q's dtype that the efficient kernel saves). This
script wraps it to record which module called it, so the backend string says which
layers ran which kernel.

Differences from activations.py, all additive:
  * Activation checkpointing: besides the tensor arguments of the checkpointed call,
    the tensors inside the functools.partial that transformers checkpoints (the
    layer's keyword arguments: position_embeddings cos/sin, masks, position ids)
    are recorded as "checkpoint-input" too: non-reentrant checkpointing keeps the
    partial alive until backward. They are shared by all layers (counted once).
  * Per-case detail (every saved storage with module, producer, savers, shape, dtype)
    is kept in memory and written straight into tests/measure/parts_report.md.

Outputs: tests/fixtures/measured/activations_parts.json, tests/measure/parts_report.md
Run: /work/venv/bin/python tests/measure/activations_parts.py [case-name-substring ...]
(with arguments only the matching cases are run and both outputs hold only those).
"""
import copy, json, os, re, sys, time, warnings
from fractions import Fraction

import torch
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import activations as A  # noqa: E402  (installs the SDPA / masking / capability / init patches)
from common import SavedTensorRecorder, ParamCastTracker, ModuleStack, fake_cuda_autocast, sref, cuda_sdpa, hold_checkpoint_inputs  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "activations_parts.json")
REPORT = os.path.join(HERE, "parts_report.md")

# ---------------------------------------------------------------- SDPA selection (common.cuda_sdpa + caller log)
KERNEL_LOG = A.KERNEL_LOG
CALLS = []          # (module, kernel) per SDPA call in the current case
CUR_MS = [None]     # module stack of the current case


def parts_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    where = CUR_MS[0].current() if CUR_MS[0] is not None else "?"
    k, out = cuda_sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                       scale=scale, enable_gqa=enable_gqa)
    KERNEL_LOG.append(k)
    CALLS.append((where, k))
    return out


torch.nn.functional.scaled_dot_product_attention = parts_sdpa

# ---------------------------------------------------------------- configs (config.json style keys)
DROPOUT_KEYS = A.DROPOUT_KEYS + ["dropout_rate", "residual_dropout", "embedding_dropout"]

QWEN3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
         "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 2304,
         "vocab_size": 151936, "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "hidden_act": "silu",
         "attention_bias": False, "attention_dropout": 0.0, "rope_theta": 1000000.0, "tie_word_embeddings": True,
         "use_sliding_window": False, "sliding_window": None, "max_window_layers": 4}
GEMMA2 = {"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 256, "intermediate_size": 3072,
          "vocab_size": 256000, "max_position_embeddings": 8192, "rms_norm_eps": 1e-6,
          "hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh", "attention_bias": False,
          "attention_dropout": 0.0, "rope_theta": 10000.0, "query_pre_attn_scalar": 256, "sliding_window": 4096,
          "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "tie_word_embeddings": True,
          "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2}
GEMMA3 = {"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"], "hidden_size": 768,
          "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
          "intermediate_size": 3072, "vocab_size": 262144, "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
          "hidden_activation": "gelu_pytorch_tanh", "attention_bias": False, "attention_dropout": 0.0,
          "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "query_pre_attn_scalar": 256,
          "sliding_window": 1024,
          "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
          "attn_logit_softcapping": None, "final_logit_softcapping": None, "tie_word_embeddings": True,
          "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2}
GEMMA = {"model_type": "gemma", "architectures": ["GemmaForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
         "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 3072,
         "vocab_size": 256000, "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "hidden_act": "gelu_pytorch_tanh",
         "attention_bias": False, "attention_dropout": 0.0, "rope_theta": 10000.0, "tie_word_embeddings": True,
         "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2}
PHI3 = {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
        "num_attention_heads": 12, "num_key_value_heads": 4, "intermediate_size": 2048, "vocab_size": 32064,
        "max_position_embeddings": 4096, "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
        "hidden_act": "silu", "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attention_dropout": 0.0, "rope_theta": 10000.0,
        "sliding_window": None, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 32000,
        "pad_token_id": 32000}
PHI = {"model_type": "phi", "architectures": ["PhiForCausalLM"], "hidden_size": 640, "num_hidden_layers": 4,
       "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 2560, "vocab_size": 51200,
       "max_position_embeddings": 2048, "layer_norm_eps": 1e-5, "hidden_act": "gelu_new", "partial_rotary_factor": 0.4,
       "rope_theta": 10000.0, "qk_layernorm": False, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attention_dropout": 0.0,
       "tie_word_embeddings": False, "bos_token_id": 50256, "eos_token_id": 50256}
DSV3 = {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 640,
        "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 8, "q_lora_rank": 320,
        "kv_lora_rank": 128, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 48,
        "intermediate_size": 1792, "moe_intermediate_size": 192, "n_routed_experts": 16, "n_shared_experts": 1,
        "num_experts_per_tok": 3, "n_group": 4, "topk_group": 2, "first_k_dense_replace": 1, "norm_topk_prob": True,
        "routed_scaling_factor": 2.5, "topk_method": "noaux_tc", "scoring_func": "sigmoid", "vocab_size": 129280,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 10000.0,
        "rope_interleave": True, "attention_bias": False, "attention_dropout": 0.0, "tie_word_embeddings": False,
        "output_router_logits": False, "bos_token_id": 0, "eos_token_id": 1}
DSV2 = {"model_type": "deepseek_v2", "architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 640,
        "num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 8, "q_lora_rank": None,
        "kv_lora_rank": 128, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 48,
        "intermediate_size": 1792, "moe_intermediate_size": 192, "n_routed_experts": 16, "n_shared_experts": 2,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "topk_method": "greedy", "first_k_dense_replace": 1,
        "norm_topk_prob": False, "routed_scaling_factor": 1.0, "vocab_size": 102400, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 10000.0, "attention_bias": False,
        "attention_dropout": 0.0, "tie_word_embeddings": False, "output_router_logits": False,
        "bos_token_id": 100000, "eos_token_id": 100001}
QWEN2MOE = {"model_type": "qwen2_moe", "architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 768,
            "num_hidden_layers": 4, "num_attention_heads": 12, "num_key_value_heads": 12, "intermediate_size": 1408,
            "moe_intermediate_size": 320, "shared_expert_intermediate_size": 1024, "num_experts": 8,
            "num_experts_per_tok": 4, "decoder_sparse_step": 2, "mlp_only_layers": [], "norm_topk_prob": False,
            "qkv_bias": True, "vocab_size": 151936, "max_position_embeddings": 8192, "rms_norm_eps": 1e-6,
            "hidden_act": "silu", "rope_theta": 1000000.0, "attention_dropout": 0.0, "use_sliding_window": False,
            "sliding_window": None, "max_window_layers": 4, "tie_word_embeddings": False,
            "output_router_logits": False, "router_aux_loss_coef": 0.001}
QWEN3MOE = {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 768,
            "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
            "intermediate_size": 2304, "moe_intermediate_size": 320, "num_experts": 16, "num_experts_per_tok": 4,
            "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": True, "vocab_size": 151936,
            "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 1000000.0,
            "attention_bias": False, "attention_dropout": 0.0, "use_sliding_window": False, "sliding_window": None,
            "max_window_layers": 4, "tie_word_embeddings": False, "output_router_logits": False,
            "router_aux_loss_coef": 0.001}
GPTOSS = {"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"], "hidden_size": 640, "num_hidden_layers": 4,
          "num_attention_heads": 12, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 576,
          "num_local_experts": 8, "num_experts_per_tok": 2, "experts_per_token": 2, "sliding_window": 128,
          "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
          "vocab_size": 201088, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "hidden_act": "silu",
          "swiglu_limit": 7.0, "attention_bias": True, "attention_dropout": 0.0, "rope_theta": 150000,
          "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                           "truncate": False, "original_max_position_embeddings": 4096},
          "tie_word_embeddings": False, "output_router_logits": False, "router_aux_loss_coef": 0.9,
          "eos_token_id": 200002, "pad_token_id": 199999}
OLMO2 = {"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
         "num_attention_heads": 12, "num_key_value_heads": 12, "intermediate_size": 2048, "vocab_size": 100352,
         "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "hidden_act": "silu", "attention_bias": False,
         "attention_dropout": 0.0, "rope_theta": 500000, "tie_word_embeddings": False, "pad_token_id": 100277,
         "eos_token_id": 100257}
NEOX = {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
        "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 50304, "max_position_embeddings": 2048,
        "layer_norm_eps": 1e-5, "hidden_act": "gelu", "rotary_pct": 0.25, "rotary_emb_base": 10000,
        "use_parallel_residual": True, "attention_bias": True, "attention_dropout": 0.0, "hidden_dropout": 0.0,
        "classifier_dropout": 0.1, "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 0}
FALCON7B = {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
            "num_attention_heads": 12, "multi_query": True, "parallel_attn": True, "new_decoder_architecture": False,
            "bias": False, "alibi": False, "vocab_size": 65024, "layer_norm_epsilon": 1e-5, "hidden_dropout": 0.0,
            "attention_dropout": 0.0, "rope_theta": 10000.0, "max_position_embeddings": 2048,
            "tie_word_embeddings": True, "bos_token_id": 11, "eos_token_id": 11}
FALCON40B = {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": 768,
             "num_hidden_layers": 4, "num_attention_heads": 12, "num_kv_heads": 2, "new_decoder_architecture": True,
             "parallel_attn": True, "bias": False, "alibi": False, "vocab_size": 65024, "layer_norm_epsilon": 1e-5,
             "hidden_dropout": 0.0, "attention_dropout": 0.0, "rope_theta": 10000.0, "max_position_embeddings": 2048,
             "tie_word_embeddings": True, "bos_token_id": 11, "eos_token_id": 11}
T5_BASE = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 768, "d_kv": 64,
            "d_ff": 3072, "num_heads": 12, "num_layers": 2, "num_decoder_layers": 2,
            "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128, "dropout_rate": 0.1,
            "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0, "feed_forward_proj": "relu",
            "vocab_size": 32128, "tie_word_embeddings": True, "pad_token_id": 0, "eos_token_id": 1,
            "decoder_start_token_id": 0}
FLAN_T5 = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 768, "d_kv": 64,
           "d_ff": 2048, "num_heads": 10, "num_layers": 2, "num_decoder_layers": 2,
           "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128, "dropout_rate": 0.1,
           "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0, "feed_forward_proj": "gated-gelu",
           "vocab_size": 32128, "tie_word_embeddings": False, "pad_token_id": 0, "eos_token_id": 1,
           "decoder_start_token_id": 0}
ROBERTA = {"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "hidden_size": 768,
           "num_hidden_layers": 4, "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 50265,
           "max_position_embeddings": 514, "type_vocab_size": 1, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
           "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 1, "bos_token_id": 0,
           "eos_token_id": 2, "tie_word_embeddings": True}
STARCODER2 = {"model_type": "starcoder2", "architectures": ["Starcoder2ForCausalLM"], "hidden_size": 768,
              "num_hidden_layers": 4, "num_attention_heads": 12, "num_key_value_heads": 2, "intermediate_size": 3072,
              "vocab_size": 49152, "max_position_embeddings": 16384, "norm_epsilon": 1e-5,
              "hidden_act": "gelu_pytorch_tanh", "use_bias": True, "sliding_window": 4096, "rope_theta": 100000,
              "attention_dropout": 0.0, "residual_dropout": 0.0, "embedding_dropout": 0.0,
              "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 0}
COHERE = {"model_type": "cohere", "architectures": ["CohereForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
          "num_attention_heads": 12, "num_key_value_heads": 12, "intermediate_size": 2048, "vocab_size": 256000,
          "max_position_embeddings": 8192, "layer_norm_eps": 1e-5, "hidden_act": "silu", "logit_scale": 0.0625,
          "use_qk_norm": False, "attention_bias": False, "attention_dropout": 0.0, "rope_theta": 8000000.0,
          "tie_word_embeddings": True, "pad_token_id": 0, "bos_token_id": 5, "eos_token_id": 255001}
COHERE_QKNORM = dict(COHERE, num_key_value_heads=2, use_qk_norm=True, logit_scale=0.8333333333333334)
GRANITE = {"model_type": "granite", "architectures": ["GraniteForCausalLM"], "hidden_size": 768,
           "num_hidden_layers": 4, "num_attention_heads": 12, "num_key_value_heads": 4, "intermediate_size": 2048,
           "vocab_size": 49155, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "hidden_act": "silu",
           "embedding_multiplier": 12.0, "residual_multiplier": 0.22, "attention_multiplier": 0.015625,
           "logits_scaling": 8.0, "attention_bias": False, "mlp_bias": False, "attention_dropout": 0.0,
           "rope_theta": 10000.0, "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 0,
           "pad_token_id": 0}
MISTRAL_NEMO = {"model_type": "mistral", "architectures": ["MistralForCausalLM"], "hidden_size": 768,
                "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
                "intermediate_size": 2304, "vocab_size": 131072, "max_position_embeddings": 131072,
                "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_dropout": 0.0, "sliding_window": None,
                "rope_theta": 1000000.0, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2}

CLASS = {"qwen3": "Qwen3ForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
         "gemma": "GemmaForCausalLM", "phi3": "Phi3ForCausalLM", "phi": "PhiForCausalLM",
         "deepseek_v3": "DeepseekV3ForCausalLM", "deepseek_v2": "DeepseekV2ForCausalLM",
         "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM", "gpt_oss": "GptOssForCausalLM",
         "olmo2": "Olmo2ForCausalLM", "gpt_neox": "GPTNeoXForCausalLM", "falcon": "FalconForCausalLM",
         "t5": "T5ForConditionalGeneration", "roberta": "RobertaForMaskedLM",
         "starcoder2": "Starcoder2ForCausalLM", "cohere": "CohereForCausalLM", "granite": "GraniteForCausalLM",
         "mistral": "MistralForCausalLM"}
MOE_TYPES = ("deepseek_v3", "deepseek_v2", "qwen2_moe", "qwen3_moe", "gpt_oss")


def C(name, cfg, b, s, precision, attention, dropout=0.0, ckpt="none", run="fake", experts=None, notes="",
      part=""):
    return dict(name=name, cfg=cfg, b=b, s=s, precision=precision, attention=attention, dropout=dropout,
                ckpt=ckpt, run=run, experts=experts, notes=notes, part=part)


CASES = [
    # 1. qwen3: per-head q/k RMSNorm
    C("qwen3-tiny-sdpa-bf16", QWEN3, 2, 256, "bf16", "sdpa", part="q/k RMSNorm per head"),
    C("qwen3-tiny-eager-fp32", QWEN3, 2, 256, "fp32", "eager", part="q/k RMSNorm per head"),
    C("qwen3-tiny-sdpa-fp32", QWEN3, 2, 256, "fp32", "sdpa",
      notes="fp32 with GQA and no mask: transformers passes enable_gqa, so torch 2.15 can use the efficient kernel "
            "with 2 KV heads (activations.py's selector sent such calls to math)", part="q/k RMSNorm per head"),
    C("qwen3-tiny-sdpa-bf16mixed", QWEN3, 2, 256, "bf16-mixed", "sdpa", part="q/k RMSNorm per head"),
    # 2. gemma2: sandwich norms, Gemma RMSNorm, gelu-tanh gated MLP, soft-capping, embedding scale, sliding/global
    C("gemma2-tiny-eager-fp32", GEMMA2, 2, 512, "fp32", "eager", part="sandwich norms + soft-capping"),
    C("gemma2-tiny-eager-bf16", GEMMA2, 2, 512, "bf16", "eager", part="sandwich norms + soft-capping"),
    C("gemma2-tiny-eager-bf16mixed", GEMMA2, 2, 512, "bf16-mixed", "eager", part="sandwich norms + soft-capping"),
    # 3. gemma3 text: q/k norm + sandwich + sliding pattern
    C("gemma3-text-tiny-sdpa-bf16", GEMMA3, 2, 512, "bf16", "sdpa", part="q/k norm + sandwich + layer_types"),
    C("gemma3-text-tiny-eager-fp32", GEMMA3, 2, 512, "fp32", "eager", part="q/k norm + sandwich + layer_types"),
    C("gemma3-text-tiny-sdpa-bf16-b1-s2048", GEMMA3, 1, 2048, "bf16", "sdpa",
      notes="s = 2048 > sliding_window = 1024: the sliding layers get a 4D mask (no flash)",
      part="q/k norm + sandwich + layer_types"),
    # 4. gemma v1
    C("gemma-tiny-sdpa-bf16", GEMMA, 2, 512, "bf16", "sdpa", part="Gemma RMSNorm, gelu gated, head_dim 256"),
    # 5. phi3: fused qkv and gate_up
    C("phi3-tiny-sdpa-bf16", PHI3, 2, 256, "bf16", "sdpa", part="fused qkv_proj + gate_up_proj"),
    C("phi3-tiny-eager-fp32", PHI3, 2, 256, "fp32", "eager", part="fused qkv_proj + gate_up_proj"),
    C("phi3-tiny-sdpa-bf16-nocache", dict(PHI3, use_cache=False), 2, 256, "bf16", "sdpa",
      notes="hf_config use_cache false: no DynamicCache in the forward, so SDPA saves views of the fused qkv output",
      part="fused qkv_proj + gate_up_proj"),
    C("phi3-tiny-sdpa-bf16mixed", PHI3, 2, 256, "bf16-mixed", "sdpa", part="fused qkv_proj + gate_up_proj"),
    # 6. phi (phi-2 style)
    C("phi-tiny-sdpa-bf16", PHI, 2, 256, "bf16", "sdpa", part="partial rotary + parallel attn/MLP + LayerNorm"),
    C("phi-tiny-eager-fp32", PHI, 2, 256, "fp32", "eager", part="partial rotary + parallel attn/MLP + LayerNorm"),
    # 7. deepseek v3
    C("deepseek-v3-tiny-sdpa-bf16", DSV3, 2, 256, "bf16", "sdpa", experts="grouped_mm", part="MLA + MoE"),
    C("deepseek-v3-tiny-eager-fp32", DSV3, 2, 256, "fp32", "eager", experts="grouped_mm", part="MLA + MoE"),
    C("deepseek-v3-tiny-eager-fp32-groupedmm-realcpu", DSV3, 2, 256, "fp32", "eager", run="real-cpu",
      experts="grouped_mm", part="MLA + MoE"),
    C("deepseek-v3-tiny-eager-fp32-eagerexperts-realcpu", DSV3, 2, 256, "fp32", "eager", run="real-cpu",
      experts="eager", part="MLA + MoE"),
    # 8. deepseek v2 (q_lora_rank null)
    C("deepseek-v2-tiny-eager-fp32", DSV2, 2, 256, "fp32", "eager", experts="grouped_mm", part="MLA (no q LoRA) + MoE"),
    C("deepseek-v2-tiny-sdpa-bf16", DSV2, 2, 256, "bf16", "sdpa", experts="grouped_mm", part="MLA (no q LoRA) + MoE"),
    # 9-10. qwen MoE
    C("qwen2-moe-tiny-sdpa-bf16", QWEN2MOE, 2, 256, "bf16", "sdpa", experts="grouped_mm",
      part="MoE + gated shared expert, decoder_sparse_step 2"),
    C("qwen3-moe-tiny-sdpa-bf16", QWEN3MOE, 2, 256, "bf16", "sdpa", experts="grouped_mm", part="MoE + q/k norm"),
    # 11. gpt-oss (transformers: _supports_sdpa = False)
    C("gpt-oss-tiny-eager-bf16", GPTOSS, 2, 256, "bf16", "eager", experts="grouped_mm",
      part="attention sinks + MoE with biases and clamped swiglu"),
    C("gpt-oss-tiny-eager-fp32", GPTOSS, 2, 256, "fp32", "eager", experts="grouped_mm",
      part="attention sinks + MoE with biases and clamped swiglu"),
    # 12. olmo2
    C("olmo2-tiny-sdpa-bf16", OLMO2, 2, 256, "bf16", "sdpa", part="post-norm + full-width q/k norm"),
    C("olmo2-tiny-eager-fp32", OLMO2, 2, 256, "fp32", "eager", part="post-norm + full-width q/k norm"),
    # 13. gpt-neox
    C("gpt-neox-tiny-sdpa-bf16", NEOX, 2, 256, "bf16", "sdpa", part="parallel residual + partial rotary + fused qkv"),
    C("gpt-neox-tiny-sdpa-bf16-nocache", dict(NEOX, use_cache=False), 2, 256, "bf16", "sdpa",
      notes="hf_config use_cache false: no DynamicCache in the forward, so SDPA saves views of the fused qkv output",
      part="parallel residual + partial rotary + fused qkv"),
    C("gpt-neox-tiny-eager-fp32", NEOX, 2, 256, "fp32", "eager", part="parallel residual + partial rotary + fused qkv"),
    # 14. falcon
    C("falcon-7b-style-tiny-sdpa-bf16", FALCON7B, 2, 256, "bf16", "sdpa", part="multi-query, parallel attn, 1 LN"),
    C("falcon-40b-style-tiny-sdpa-bf16", FALCON40B, 2, 256, "bf16", "sdpa",
      part="new decoder architecture (GQA, 2 LNs)"),
    # 15. t5
    C("t5-base-tiny-eager-fp32-drop0.1", T5_BASE, 2, 256, "fp32", "eager", 0.1, part="encoder-decoder, relu"),
    C("t5-base-tiny-eager-fp32-drop0", T5_BASE, 2, 256, "fp32", "eager", 0.0, part="encoder-decoder, relu"),
    C("t5-base-tiny-eager-bf16-drop0.1", T5_BASE, 2, 256, "bf16", "eager", 0.1, part="encoder-decoder, relu"),
    C("t5-base-tiny-sdpa-bf16-drop0.1", T5_BASE, 2, 256, "bf16", "sdpa", 0.1, part="encoder-decoder, relu"),
    C("flan-t5-tiny-eager-fp32-drop0.1", FLAN_T5, 2, 256, "fp32", "eager", 0.1, part="encoder-decoder, gated-gelu"),
    C("flan-t5-tiny-eager-bf16-drop0", FLAN_T5, 2, 256, "bf16", "eager", 0.0, part="encoder-decoder, gated-gelu"),
    # 16. roberta
    C("roberta-tiny-eager-fp32-drop0.1", ROBERTA, 2, 256, "fp32", "eager", 0.1, part="post-LN encoder (MLM)"),
    C("roberta-tiny-sdpa-bf16-drop0.1", ROBERTA, 2, 256, "bf16", "sdpa", 0.1, part="post-LN encoder (MLM)"),
    # 17-20
    C("starcoder2-tiny-sdpa-bf16", STARCODER2, 2, 256, "bf16", "sdpa",
      part="LayerNorm with bias, non-gated gelu MLP with bias, sliding window"),
    C("cohere-tiny-sdpa-bf16", COHERE, 2, 256, "bf16", "sdpa", part="parallel attn+MLP, one bias-free LayerNorm"),
    C("cohere-qknorm-tiny-sdpa-bf16", COHERE_QKNORM, 2, 256, "bf16", "sdpa",
      part="parallel attn+MLP, per-head q/k LayerNorm"),
    C("granite-tiny-sdpa-bf16", GRANITE, 2, 256, "bf16", "sdpa", part="embedding/residual/attention/logit multipliers"),
    C("mistral-nemo-tiny-sdpa-bf16", MISTRAL_NEMO, 2, 256, "bf16", "sdpa", part="explicit head_dim 128 with h 768 (a·d = 1024 ≠ h)"),
    # activation checkpointing
    C("qwen3-tiny-sdpa-bf16-ckpt", QWEN3, 2, 256, "bf16", "sdpa", ckpt="full", part="checkpointing"),
    C("gemma2-tiny-eager-bf16-ckpt", GEMMA2, 2, 512, "bf16", "eager", ckpt="full", part="checkpointing"),
    C("deepseek-v3-tiny-sdpa-bf16-ckpt", DSV3, 2, 256, "bf16", "sdpa", ckpt="full", experts="grouped_mm",
      part="checkpointing"),
]


def with_dropout(cfg, p):
    cfg = copy.deepcopy(cfg)
    for k in DROPOUT_KEYS:
        if k in cfg and k != "classifier_dropout":
            cfg[k] = p
    return cfg


def make_model(cfg, case):
    d = copy.deepcopy(cfg)
    mt = d.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **d)
    attn = case["attention"]
    config._attn_implementation = attn
    if case["experts"]:
        config._experts_implementation = case["experts"]
    model = getattr(transformers, CLASS[mt])(config)
    model.set_attn_implementation(attn)
    if case["experts"]:
        model.set_experts_implementation(case["experts"])
    return model


class PartsRecorder(SavedTensorRecorder):
    """SavedTensorRecorder that also remembers every module in which a storage was packed,
    so that tensors shared by several blocks (rotary cos/sin, masks) can be reported apart."""

    def __init__(self, model, module_stack=None):
        super().__init__(model, module_stack)
        self.where = {}

    def pack(self, t):
        r = sref(t)
        if r not in self.param_refs and self.module_stack is not None:
            self.where.setdefault(r, [])
            cur = self.module_stack.current()
            if cur not in self.where[r]:
                self.where[r].append(cur)
        new = r not in self.entries
        out = super().pack(t)
        if new and r in self.entries:
            base = t._base
            self.entries[r]["base_shape"] = (list(base.shape) if base is not None and
                                             base.numel() * base.element_size() == self.entries[r]["nbytes"]
                                             else None)
        return out

    def dead_refs(self):
        """Storages packed by autograd nodes that are not reachable from the loss (no saver found by
        annotate_from_graph): dead branches such as the values of a topk whose indices are used. Those
        nodes, and their saved tensors, are freed during the forward as soon as Python drops the output."""
        return {r for r, e in self.entries.items() if e["via"] == "saved_tensors_hooks" and not e["savers"]}

    def add_external(self, t, module, via):
        r = sref(t)
        if r not in self.param_refs:
            self.where.setdefault(r, [])
            if module not in self.where[r]:
                self.where[r].append(module)
        super().add_external(t, module, via)

    def listing(self, cast_refs=()):
        out = super().listing(cast_refs)
        for r, e in zip(self.order, out):
            e["packed_in"] = self.where.get(r, [e["module"]])
        return out


LAYER_RX = re.compile(r"^(.*?\.(?:layers|layer|h|block))\.(\d+)(?:\.|$)")


def layer_of(module):
    m = LAYER_RX.match(module or "")
    return (m.group(1), int(m.group(2))) if m else None


def short_layer(where):
    lo = layer_of(where)
    if not lo:
        return where
    tag = "enc" if "encoder" in lo[0] else "dec" if "decoder" in lo[0] else ""
    return f"{tag}{lo[1]}"


def run_case(case):
    cfg = copy.deepcopy(case["cfg"])
    cfg = with_dropout(cfg, case["dropout"])
    mt = cfg["model_type"]
    fake = case["run"] == "fake"
    dev = "cuda" if fake else "cpu"
    torch.manual_seed(0)
    KERNEL_LOG.clear()
    CALLS.clear()
    fm = FakeTensorMode(allow_non_fake_inputs=True) if fake else None
    if fm:
        fm.__enter__()
    try:
        prev_dtype = torch.get_default_dtype()
        if case["precision"] == "bf16":
            torch.set_default_dtype(torch.bfloat16)
        try:
            with torch.device(dev):
                model = make_model(cfg, case)
        finally:
            torch.set_default_dtype(prev_dtype)
        not_bf16 = []
        if case["precision"] == "bf16":
            not_bf16 = [f"{n} {str(p.dtype).replace('torch.', '')}" for n, p in model.named_parameters()
                        if p.dtype != torch.bfloat16]
        model.train()
        if case["ckpt"] == "full":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        b, s = case["b"], case["s"]
        ids = torch.randint(0, cfg["vocab_size"], (b, s), device=dev)
        if mt == "t5":
            labels = torch.randint(0, cfg["vocab_size"], (b, s), device=dev)
            inputs = {"input_ids": ids, "labels": labels}
        else:
            inputs = {"input_ids": ids, "labels": ids}

        rec = PartsRecorder(model)
        ms = ModuleStack(model)
        rec.module_stack = ms
        CUR_MS[0] = ms
        if case["ckpt"] == "full":
            hold_checkpoint_inputs(model, rec, ms, partials=True)
        expert_counts = []
        if mt in MOE_TYPES:
            n_exp = cfg.get("n_routed_experts") or cfg.get("num_experts") or cfg.get("num_local_experts")

            def router_hook(mod, args, out):
                if not fake:
                    idx = out[2] if isinstance(out, tuple) and len(out) >= 3 else out[1]
                    expert_counts.append(torch.bincount(idx.reshape(-1), minlength=n_exp).tolist())
            for n, m in model.named_modules():
                cn = m.__class__.__name__
                if cn.endswith("TopKRouter") or cn.endswith("TopkRouter"):
                    m.register_forward_hook(router_hook)
        tracker = ParamCastTracker(rec.param_refs)
        t0 = time.time()
        with rec.hooks(), tracker:
            if case["precision"] == "bf16-mixed":
                if fake:
                    with fake_cuda_autocast(torch.bfloat16):
                        out = model(**inputs)
                else:
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        out = model(**inputs)
            else:
                out = model(**inputs)
        loss = out.loss
        rec.annotate_from_graph(loss.grad_fn)
        ms.remove()
        CUR_MS[0] = None
        dead = rec.dead_refs()
        dead_bytes = sum(rec.entries[r]["nbytes"] for r in dead)
        for r in dead:
            rec.entries[r]["dead"] = True
        act, pc, n = rec.totals(set(tracker.cast_refs) | dead)
        pc = sum(rec.entries[r]["nbytes"] for r in tracker.cast_refs if r in rec.entries and r not in dead)
        pshapes = {tuple(p.shape) for p in model.parameters()} | {tuple(p.shape[::-1]) for p in model.parameters()}
        shape_match = sum(e["nbytes"] for r, e in rec.entries.items()
                          if tuple(e["shape"]) in pshapes and e["dtype"] != "float32"
                          and case["precision"] == "bf16-mixed")
        elapsed = time.time() - t0
        if not fake:
            loss.backward()
        kernels = sorted(set(KERNEL_LOG))
        backend = ("fake-cuda" if fake else "real-cpu") + ", attention " + case["attention"]
        if case["attention"] != "eager":
            # which layers ran which kernel
            per = {}
            for where, k in CALLS:
                per.setdefault(k, []).append(short_layer(where))
            if len(per) == 1:
                desc = next(iter(per))
            else:
                desc = "; ".join(f"{k} in layers {','.join(v)}" for k, v in per.items())
            backend += " -> kernels " + desc + (" (forced: CUDA dispatch rules)" if fake else " (CPU SDPA)")
        if case["experts"]:
            backend += ", experts " + model.config._experts_implementation
        scenario = {
            "model": {"hf_config": cfg},
            "training": {"micro_batch": b, "seq_len": s, "precision": case["precision"], "optimizer": "adamw",
                         "checkpointing": case["ckpt"], "attention": case["attention"], "dropout": case["dropout"],
                         "mode": "train"},
            "parallel": {}, "device": {"preset": "h100-sxm-80gb"},
        }
        notes = [case["notes"]] if case["notes"] else []
        if case["part"]:
            notes.append("part: " + case["part"])
        if mt == "t5":
            notes.append(f"encoder input length {s}, labels (decoder length) {s}")
        if not_bf16:
            notes.append("parameters left in another dtype by the model code under default dtype bf16: "
                         + ", ".join(sorted(set(re.sub(r"\.\d+\.", ".N.", x) for x in not_bf16))))
        if case["precision"] == "bf16-mixed":
            notes.append(f"param copies found by the _to_copy(parameter) tracker: {pc} B; saved non-fp32 tensors "
                         f"whose shape equals a parameter's (or its transpose): {shape_match} B")
        if case["ckpt"] == "full":
            ck = sum(e["nbytes"] for e in rec.entries.values() if e["via"] == "checkpoint-input")
            notes.append(f"checkpoint inputs (layer hidden-state inputs + the shared keyword tensors of the "
                         f"checkpointed partial): {ck} B, included in saved_bytes")
        if dead:
            notes.append(f"excluded from saved_bytes: {dead_bytes} B in {len(dead)} storages packed by autograd nodes "
                         f"not reachable from the loss (dead branches freed during the forward: "
                         + ", ".join(sorted({f"{rec.entries[r]['module'].split('.')[-1]} {tuple(rec.entries[r]['shape'])} "
                                             f"{rec.entries[r]['dtype']}" for r in dead})) + ")")
        if expert_counts:
            notes.append("per-MoE-layer tokens routed to each expert (T*top_k slots): " + json.dumps(expert_counts))
        if not fake:
            notes.append("real CPU run; loss.backward() completed")
        result = {
            "name": case["name"], "hf_class": CLASS[mt], "backend": backend, "scenario": scenario,
            "measured": {"saved_bytes": act, "param_copy_bytes": pc, "saved_tensor_count": n,
                         "peak_allocated_bytes": None},
            "notes": "; ".join(notes),
        }
        if expert_counts:
            result["measured"]["tokens_per_expert"] = expert_counts
        detail = {"name": case["name"], "b": b, "s": s, "cfg": cfg, "precision": case["precision"],
                  "attention": case["attention"], "ckpt": case["ckpt"], "part": case["part"],
                  "tensors": rec.listing(tracker.cast_refs), "kernels": kernels, "backend": backend,
                  "calls": list(CALLS), "saved_bytes": act, "dead_bytes": dead_bytes, "param_copy_bytes": pc, "count": n,
                  "tokens_per_expert": expert_counts, "notes": result["notes"]}
        print(f"{case['name']:50s} saved={act:>13,d} param_copy={pc:>11,d} n={n:4d} kernels={kernels} "
              f"{elapsed:.1f}s", flush=True)
        return result, detail
    finally:
        CUR_MS[0] = None
        if fm:
            fm.__exit__(None, None, None)


# ---------------------------------------------------------------- per-block formulas (checked against the measurement)
# x = bytes per element of the activation dtype (bf16 2, fp32 4); every formula is in bytes for one block.
def _nL(D, w, x):      # Llama-style RMSNorm: fp32 copy of the input, fp32 rsqrt, normalized in dtype
    return (4 + x) * D["T"] * w + 4 * D["T"]


def _nG(D, w):         # Gemma RMSNorm: fp32 copy, rsqrt, fp32 (1+w), fp32 normalized (weight applied in fp32)
    return 8 * D["T"] * w + 4 * D["T"] + 4 * w


def _nF(D, w, rows):   # RMSNorm whose weight multiplies in fp32 (OLMo2, GPT-OSS): fp32 copy, rsqrt, fp32 normalized
    return 8 * D["T"] * w + 4 * rows


def _flash(D, a, g, d, x):   # q, out (a heads), k, v (g heads), fp32 logsumexp, rng_state 16 B + unused 8 B
    return x * D["T"] * d * (2 * a + 2 * g) + 4 * D["T"] * a + 24


def _eff(D, a, g, d, x, dv=None):   # efficient kernel: same plus philox seed/offset 16 B
    dv = d if dv is None else dv
    return x * D["T"] * (a * d + g * d + g * dv + a * dv) + 4 * D["T"] * a + 16


def _llama(D, x, a=None, g=None, d=None):
    a, g, d = a or D["a"], g or D["g"], d or D["d"]
    T, h, f = D["T"], D["h"], D["f"]
    return _nL(D, h, x) + x * T * h + _flash(D, a, g, d, x) + _nL(D, h, x) + x * T * h + 4 * x * T * f


def _routed(D, x, wx, nidx, gate_elems):   # grouped_mm routed experts: gathered x, gate_up out, act outputs, down out
    T, h, k, fe, E = D["T"], D["h"], D["k"], D["fe"], D["E"]
    return 2 * x * T * k * h + x * T * k * 2 * fe + gate_elems * x * T * k * fe + wx * T * k + 8 * nidx * T * k + 4 * E


FORMULAS = [
    ("llama baseline (reference)", "granite-tiny-sdpa-bf16", 0,
     "nL(h) + x·T·h + flash[x·T·d·(2a+2g) + 4·T·a + 24] + nL(h) + x·T·h + 4x·T·f,  nL(w) = (4+x)·T·w + 4·T",
     lambda D, x: _llama(D, x)),
    ("qwen3 q/k RMSNorm", "qwen3-tiny-sdpa-bf16", 0,
     "llama + (4+x)·T·(a+g)·d + 4·T·(a+g)",
     lambda D, x: _llama(D, x) + (4 + x) * D["T"] * (D["a"] + D["g"]) * D["d"] + 4 * D["T"] * (D["a"] + D["g"])),
    ("qwen3 eager fp32", "qwen3-tiny-eager-fp32", 0,
     "nL(h)·2 + 2·x·T·h + 4x·T·a·d (q, k and v after repeat_kv, o_proj input) + 4·b·a·s² (softmax fp32) + 4x·T·f "
     "+ q/k norms 8·T·(a+g)·d + 4·T·(a+g)",
     lambda D, x: 2 * _nL(D, D["h"], x) + 2 * x * D["T"] * D["h"] + 4 * x * D["T"] * D["a"] * D["d"]
     + 4 * D["b"] * D["a"] * D["s"] ** 2 + 4 * x * D["T"] * D["f"] + 8 * D["T"] * (D["a"] + D["g"]) * D["d"]
     + 4 * D["T"] * (D["a"] + D["g"])),
    ("qwen3 sdpa fp32 (efficient, GQA)", "qwen3-tiny-sdpa-fp32", 0,
     "as bf16 with x = 4 and eff[...] + 16 instead of flash + 24",
     lambda D, x: _llama(D, x) - _flash(D, D["a"], D["g"], D["d"], x) + _eff(D, D["a"], D["g"], D["d"], x)
     + 8 * D["T"] * (D["a"] + D["g"]) * D["d"] + 4 * D["T"] * (D["a"] + D["g"])),
    ("gemma2 sandwich + softcap (eager)", "gemma2-tiny-eager-bf16", 0,
     "4·nG(h) + 2·x·T·h + 4x·T·a·d + 8·b·a·s² + 4x·T·f,  nG(w) = 8·T·w + 4·T + 4·w (any dtype); "
     "8·b·a·s² = tanh (x) + softmax fp32 (4) + probs cast (x) in bf16, tanh (4) + softmax (4) in fp32",
     lambda D, x: 4 * _nG(D, D["h"]) + 2 * x * D["T"] * D["h"] + 4 * x * D["T"] * D["a"] * D["d"]
     + 8 * D["b"] * D["a"] * D["s"] ** 2 + 4 * x * D["T"] * D["f"]),
    ("gemma2 fp32", "gemma2-tiny-eager-fp32", 0, "same formula, x = 4",
     lambda D, x: 4 * _nG(D, D["h"]) + 2 * x * D["T"] * D["h"] + 4 * x * D["T"] * D["a"] * D["d"]
     + 8 * D["b"] * D["a"] * D["s"] ** 2 + 4 * x * D["T"] * D["f"]),
    ("gemma3 q/k Gemma norm + sandwich (flash)", "gemma3-text-tiny-sdpa-bf16", 0,
     "4·nG(h) + 2·x·T·h + 8·T·(a+g)·d + 4·T·(a+g) + 8·d + flash + 4x·T·f",
     lambda D, x: 4 * _nG(D, D["h"]) + 2 * x * D["T"] * D["h"] + 8 * D["T"] * (D["a"] + D["g"]) * D["d"]
     + 4 * D["T"] * (D["a"] + D["g"]) + 8 * D["d"] + _flash(D, D["a"], D["g"], D["d"], x) + 4 * x * D["T"] * D["f"]),
    ("gemma3 sliding layer, s > window", "gemma3-text-tiny-sdpa-bf16-b1-s2048", 0,
     "as above with eff (k, v repeated to a heads by transformers: a view when g = 1) + per-layer float mask b·s²·x",
     lambda D, x: 4 * _nG(D, D["h"]) + 2 * x * D["T"] * D["h"] + 8 * D["T"] * (D["a"] + D["g"]) * D["d"]
     + 4 * D["T"] * (D["a"] + D["g"]) + 8 * D["d"] + _eff(D, D["a"], D["g"], D["d"], x)
     + D["b"] * D["s"] ** 2 * x + 4 * x * D["T"] * D["f"]),
    ("gemma v1", "gemma-tiny-sdpa-bf16", 0, "2·nG(h) + 2·x·T·h + flash + 4x·T·f",
     lambda D, x: 2 * _nG(D, D["h"]) + 2 * x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x)
     + 4 * x * D["T"] * D["f"]),
    ("phi3 fused qkv / gate_up", "phi3-tiny-sdpa-bf16", 0,
     "llama + x·T·a·d (o_proj input is a separate copy: rotary by cat gives a head-major q, so the flash output "
     "is head-major and transpose().contiguous() copies); gate_up costs the same 4x·T·f",
     lambda D, x: _llama(D, x) + x * D["T"] * D["a"] * D["d"]),
    ("phi3 without KV cache", "phi3-tiny-sdpa-bf16-nocache", 0,
     "phi3 − x·T·g·d + x·T·(a+2g)·d (v saved as a view of the whole fused qkv output)",
     lambda D, x: _llama(D, x) + x * D["T"] * D["a"] * D["d"] - x * D["T"] * D["g"] * D["d"]
     + x * D["T"] * (D["a"] + 2 * D["g"]) * D["d"]),
    ("phi partial rotary + parallel", "phi-tiny-sdpa-bf16", 0,
     "LN[x·T·h + 8·T] + x·T·h (shared by q,k,v,fc1) + flash + x·T·a·d (output copy) + 5x·T·f (gelu_new 4 + fc2 input)",
     lambda D, x: x * D["T"] * D["h"] + 8 * D["T"] + x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x)
     + x * D["T"] * D["a"] * D["d"] + 5 * x * D["T"] * D["f"]),
    ("deepseek-v3 MLA + dense MLP (layer < first_k_dense_replace)", "deepseek-v3-tiny-sdpa-bf16", 0,
     "nL(h) + x·T·h + nL(rq) + x·T·rq + nL(rkv) + x·T·rkv + eff[q,k: x·T·a·qk each, out x·T·a·dv, lse 4·T·a, 16] "
     "+ x·T·a·(dn+dv) (v = view of kv_b_proj output) + nL(h) + x·T·h + 4x·T·f",
     lambda D, x: _mla(D, x, True) + _nL(D, D["h"], x) + x * D["T"] * D["h"] + 4 * x * D["T"] * D["f"]),
    ("deepseek-v3 MoE layer", "deepseek-v3-tiny-sdpa-bf16", 1,
     "MLA + nL(h) + router[4·T·h fp32 input + 4·T·E sigmoid + 8·T·k + 4·T + 4·T·k] + routed[2x·T·k·h + x·T·k·2fe "
     "+ 2x·T·k·fe + 4·T·k + 24·T·k + 4·E] + shared[x·T·h + 4x·T·fs]",
     lambda D, x: _mla(D, x, True) + _nL(D, D["h"], x) + 4 * D["T"] * D["h"] + 4 * D["T"] * D["E"] + 8 * D["T"] * D["k"]
     + 4 * D["T"] + 4 * D["T"] * D["k"] + _routed(D, x, 4, 3, 2) + x * D["T"] * D["h"] + 4 * x * D["T"] * D["fs"]),
    ("deepseek-v2 MLA without q LoRA, MoE layer", "deepseek-v2-tiny-sdpa-bf16", 1,
     "MLA without the q_a part + nL(h) + router[4·T·h + 4·T·E softmax + 8·T·k] + routed + shared",
     lambda D, x: _mla(D, x, False) + _nL(D, D["h"], x) + 4 * D["T"] * D["h"] + 4 * D["T"] * D["E"]
     + 8 * D["T"] * D["k"] + _routed(D, x, 4, 3, 2) + x * D["T"] * D["h"] + 4 * x * D["T"] * D["fs"]),
    ("qwen2-moe MoE layer (gated shared expert)", "qwen2-moe-tiny-sdpa-bf16", 1,
     "attention as llama + nL(h) + x·T·h + 4x·T·fs + x·T (sigmoid gate) + x·T·h (shared output) + 4·T·E + 8·T·k "
     "+ routed (weights in dtype: x·T·k)",
     lambda D, x: _nL(D, D["h"], x) + x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x) + _nL(D, D["h"], x)
     + x * D["T"] * D["h"] + 4 * x * D["T"] * D["fs"] + x * D["T"] + x * D["T"] * D["h"] + 4 * D["T"] * D["E"]
     + 8 * D["T"] * D["k"] + _routed(D, x, x, 3, 2)),
    ("qwen3-moe", "qwen3-moe-tiny-sdpa-bf16", 0,
     "attention as qwen3 + nL(h) + x·T·h + 4·T·E + 8·T·k + 4·T + 4·T·k (norm_topk_prob) + routed",
     lambda D, x: _nL(D, D["h"], x) + x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x)
     + (4 + x) * D["T"] * (D["a"] + D["g"]) * D["d"] + 4 * D["T"] * (D["a"] + D["g"]) + _nL(D, D["h"], x)
     + x * D["T"] * D["h"] + 4 * D["T"] * D["E"] + 8 * D["T"] * D["k"] + 4 * D["T"] + 4 * D["T"] * D["k"]
     + _routed(D, x, x, 3, 2)),
    ("gpt-oss sinks + clamped swiglu experts (eager)", "gpt-oss-tiny-eager-bf16", 0,
     "2·nF(h) + x·T·h + 4x·T·a·d + x·b·a·s·(s+1) (softmax incl. sink column) + 8·b·a·s (max indices) + x·T·h "
     "+ 8·T·k + x·T·k + routed[2x·T·k·h + x·T·k·2fe + 5x·T·k·fe + x·T·k + 32·T·k + 4·E],  nF(w) = 8·T·w + 4·T",
     lambda D, x: 2 * _nF(D, D["h"], D["T"]) + 2 * x * D["T"] * D["h"] + 4 * x * D["T"] * D["a"] * D["d"]
     + x * D["b"] * D["a"] * D["s"] * (D["s"] + 1) + 8 * D["b"] * D["a"] * D["s"] + 8 * D["T"] * D["k"]
     + x * D["T"] * D["k"] + _routed(D, x, x, 4, 5)),
    ("olmo2 post-norm + full-width q/k norm", "olmo2-tiny-sdpa-bf16", 0,
     "x·T·h + nF(a·d) + nF(g·d) + flash + nF(h) + x·T·h + 4x·T·f + nF(h)",
     lambda D, x: x * D["T"] * D["h"] + _nF(D, D["a"] * D["d"], D["T"]) + _nF(D, D["g"] * D["d"], D["T"])
     + _flash(D, D["a"], D["g"], D["d"], x) + 2 * _nF(D, D["h"], D["T"]) + x * D["T"] * D["h"] + 4 * x * D["T"] * D["f"]),
    ("gpt-neox parallel residual", "gpt-neox-tiny-sdpa-bf16", 0,
     "LN input x·T·h + 2·8·T (two LNs, one input) + x·T·h + flash + x·T·a·d (output copy) + x·T·h + 2x·T·f",
     lambda D, x: x * D["T"] * D["h"] + 16 * D["T"] + x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x)
     + x * D["T"] * D["a"] * D["d"] + x * D["T"] * D["h"] + 2 * x * D["T"] * D["f"]),
    ("falcon-7b style (MQA, 1 LN)", "falcon-7b-style-tiny-sdpa-bf16", 0,
     "x·T·h + 8·T + x·T·h + 16 + eff(mask, MQA)[x·T·d·(2a+2) + 4·T·a + 16] + b·s²·x (per-layer float mask) + 2x·T·f",
     lambda D, x: 2 * x * D["T"] * D["h"] + 8 * D["T"] + 16 + _eff(D, D["a"], 1, D["d"], x)
     + D["b"] * D["s"] ** 2 * x + 2 * x * D["T"] * D["f"]),
    ("falcon-40b style (2 LNs, k/v broadcast to a heads)", "falcon-40b-style-tiny-sdpa-bf16", 0,
     "x·T·h + 16·T + x·T·h + 16 + eff(mask)[x·T·d·4a + 4·T·a + 16] + b·s²·x + x·T·h + 2x·T·f",
     lambda D, x: 3 * x * D["T"] * D["h"] + 16 * D["T"] + 16 + _eff(D, D["a"], D["a"], D["d"], x)
     + D["b"] * D["s"] ** 2 * x + 2 * x * D["T"] * D["f"]),
    ("t5 encoder block (eager, dropout p > 0)", "t5-base-tiny-eager-bf16-drop0.1", 1,
     "2·n5(h) + attn[x·T·h + 3x·T·a·d + 2x·b·a·s² + b·a·s² (mask) + x·T·a·d + T·h (mask)] + ff[x·T·h + 2x·T·f + T·f + T·h];"
     " n5 = fp32: 8·T·h + 4·T, bf16: (4+2x)·T·h + 4·T; p = 0 drops the masks and one copy each of b·a·s² and T·f",
     lambda D, x: 2 * ((4 + 2 * x) * D["T"] * D["h"] + 4 * D["T"]) + x * D["T"] * D["h"]
     + 3 * x * D["T"] * D["a"] * D["d"] + 2 * x * D["b"] * D["a"] * D["s"] ** 2 + D["b"] * D["a"] * D["s"] ** 2 + x * D["T"] * D["a"] * D["d"]
     + D["T"] * D["h"] + x * D["T"] * D["h"] + 2 * x * D["T"] * D["f"] + D["T"] * D["f"] + D["T"] * D["h"]),
    ("t5 encoder block (sdpa, efficient + per-layer bias mask)", "t5-base-tiny-sdpa-bf16-drop0.1", 1,
     "2·n5(h) + x·T·h + eff + a·s²·x (position-bias mask, batch-broadcast) + T·h + ff",
     lambda D, x: 2 * ((4 + 2 * x) * D["T"] * D["h"] + 4 * D["T"]) + x * D["T"] * D["h"]
     + _eff(D, D["a"], D["a"], D["d"], x) + D["a"] * D["s"] ** 2 * x + D["T"] * D["h"] + x * D["T"] * D["h"]
     + 2 * x * D["T"] * D["f"] + D["T"] * D["f"] + D["T"] * D["h"]),
    ("flan-t5 gated-gelu encoder block (fp32, p > 0)", "flan-t5-tiny-eager-fp32-drop0.1", 1,
     "as t5 with ff[x·T·h + 7x·T·f + T·f + T·h] (gelu_new saves 4 T·f, wi_1 out, gelu out, wo input)",
     lambda D, x: 2 * (8 * D["T"] * D["h"] + 4 * D["T"]) + x * D["T"] * D["h"] + 3 * x * D["T"] * D["a"] * D["d"]
     + 2 * x * D["b"] * D["a"] * D["s"] ** 2 + D["b"] * D["a"] * D["s"] ** 2 + x * D["T"] * D["a"] * D["d"]
     + D["T"] * D["h"] + x * D["T"] * D["h"] + 7 * x * D["T"] * D["f"] + D["T"] * D["f"] + D["T"] * D["h"]),
    ("roberta (post-LN, sdpa, dropout)", "roberta-tiny-sdpa-bf16-drop0.1", 0,
     "x·T·h + flash + T·h + LN[x·T·h + 8·T] + x·T·h + 2x·T·f + T·h + LN (flash regenerates its dropout mask)",
     lambda D, x: x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x) + 2 * D["T"] * D["h"]
     + 2 * (x * D["T"] * D["h"] + 8 * D["T"]) + x * D["T"] * D["h"] + 2 * x * D["T"] * D["f"]),
    ("starcoder2 (LN with bias, non-gated MLP)", "starcoder2-tiny-sdpa-bf16", 0,
     "2·LN[x·T·h + 8·T] + x·T·h + flash + x·T·h + 2x·T·f",
     lambda D, x: 2 * (x * D["T"] * D["h"] + 8 * D["T"]) + 2 * x * D["T"] * D["h"]
     + _flash(D, D["a"], D["g"], D["d"], x) + 2 * x * D["T"] * D["f"]),
    ("cohere (parallel, one LayerNorm)", "cohere-tiny-sdpa-bf16", 0,
     "nC(h) + x·T·h + flash + 4x·T·f,  nC(w) = 12·T·w + 4·T (two fp32 x−mean, fp32 normalized; + 4·w fp32 weight "
     "copy counted in param_copy_bytes even in pure bf16)",
     lambda D, x: 12 * D["T"] * D["h"] + 4 * D["T"] + x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x)
     + 4 * x * D["T"] * D["f"]),
    ("cohere use_qk_norm", "cohere-qknorm-tiny-sdpa-bf16", 0,
     "cohere + 12·T·(a+g)·d + 4·T·(a+g)",
     lambda D, x: 12 * D["T"] * D["h"] + 4 * D["T"] + x * D["T"] * D["h"] + _flash(D, D["a"], D["g"], D["d"], x)
     + 4 * x * D["T"] * D["f"] + 12 * D["T"] * (D["a"] + D["g"]) * D["d"] + 4 * D["T"] * (D["a"] + D["g"])),
    ("granite multipliers", "granite-tiny-sdpa-bf16", 0, "exactly llama (scalar multipliers save nothing)",
     lambda D, x: _llama(D, x)),
    ("mistral explicit head_dim", "mistral-nemo-tiny-sdpa-bf16", 0, "llama with a·d ≠ h (q, out: x·T·a·d)",
     lambda D, x: _llama(D, x)),
]


def _mla(D, x, q_lora):
    T, h, a = D["T"], D["h"], D["a"]
    out = _nL(D, h, x) + x * T * h + _nL(D, D["rkv"], x) + x * T * D["rkv"]
    if q_lora:
        out += _nL(D, D["rq"], x) + x * T * D["rq"]
    out += 2 * x * T * a * D["qk"] + x * T * a * (D["dn"] + D["dv"]) + x * T * a * D["dv"] + 4 * T * a + 16
    return out


# ---------------------------------------------------------------- report
ELSIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "bool": 1, "uint64": 8, "int32": 4,
          "uint8": 1, "float64": 8, "int8": 1}


def dims_of(c):
    cfg, b, s = c["cfg"], c["b"], c["s"]
    mt = cfg["model_type"]
    g = lambda *ks, default=None: next((cfg[k] for k in ks if cfg.get(k) is not None), default)  # noqa: E731
    h = g("hidden_size", "d_model")
    a = g("num_attention_heads", "num_heads")
    kv = g("num_key_value_heads", "num_kv_heads", default=a)
    if mt == "falcon" and cfg.get("multi_query") and not cfg.get("new_decoder_architecture"):
        kv = 1
    d = g("head_dim", "d_kv", default=h // a)
    f = g("intermediate_size", "d_ff", "ffn_hidden_size", default=4 * h)
    T = b * s
    D = {"T": T, "b": b, "s": s, "h": h, "a": a, "g": kv, "d": d, "f": f, "V": cfg["vocab_size"]}
    units = [("T*h", T * h), ("T*f", T * f), ("T*a*d", T * a * d), ("T*g*d", T * kv * d),
             ("b*a*s^2", b * a * s * s), ("b*a*s", b * a * s), ("T*a", T * a), ("T*g", T * kv), ("T", T),
             ("T*V", T * cfg["vocab_size"]), ("b*s^2", b * s * s), ("s*d", s * d), ("s*d/2", s * d // 2), ("s^2", s * s), ("h", h), ("d", d)]
    if mt in ("deepseek_v3", "deepseek_v2"):
        D.pop("g")  # MLA: key/value heads = a after kv_b_proj
        D.pop("d")
        qk = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"]
        D.update(qk=qk, dn=cfg["qk_nope_head_dim"], dr=cfg["qk_rope_head_dim"], dv=cfg["v_head_dim"],
                 rq=cfg["q_lora_rank"], rkv=cfg["kv_lora_rank"])
        units = [("T*a*qk", T * a * qk), ("T*a*dv", T * a * cfg["v_head_dim"]),
                 ("T*a*(dn+dv)", T * a * (cfg["qk_nope_head_dim"] + cfg["v_head_dim"])),
                 ("T*a*dr", T * a * cfg["qk_rope_head_dim"]), ("T*a*dr/2", T * a * cfg["qk_rope_head_dim"] // 2),
                 ("T*rkv", T * cfg["kv_lora_rank"]), ("T*(rkv+dr)", T * (cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"])),
                 ("s*dr", s * cfg["qk_rope_head_dim"]), ("s*dr/2", s * cfg["qk_rope_head_dim"] // 2),
                 ("T*dr", T * cfg["qk_rope_head_dim"]), ("T*dr/2", T * cfg["qk_rope_head_dim"] // 2)] + \
            ([("T*rq", T * cfg["q_lora_rank"])] if cfg.get("q_lora_rank") else []) + \
            [u for u in units if not ({"d", "g"} & set(u[0].split("*")))]
    if mt in MOE_TYPES:
        k = cfg["num_experts_per_tok"]
        E = cfg.get("n_routed_experts") or cfg.get("num_experts") or cfg.get("num_local_experts")
        fm = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
        D.update(k=k, E=E, fe=fm)
        if cfg.get("n_group") and cfg["n_group"] > 1:
            D["ng"] = cfg["n_group"]
            D["tg"] = cfg["topk_group"]
            units = [("T*ng*2", T * cfg["n_group"] * 2), ("T*ng", T * cfg["n_group"]),
                     ("T*tg", T * cfg["topk_group"])] + units
        units = [("E", E), ("T*k*h", T * k * h), ("T*k*fe", T * k * fm), ("T*k*2fe", T * k * 2 * fm), ("T*E", T * E),
                 ("T*k", T * k), ("T*fe", T * fm)] + units
        if cfg.get("shared_expert_intermediate_size"):
            D["fs"] = cfg["shared_expert_intermediate_size"]
            units = [("T*fs", T * D["fs"])] + units
        if cfg.get("n_shared_experts"):
            D["fs"] = cfg["n_shared_experts"] * fm
            units = [("T*fs", T * D["fs"])] + units
        if mt == "gpt_oss":
            units = [("b*a*s*(s+1)", b * a * s * (s + 1))] + units
    if mt in ("phi", "gpt_neox"):
        pr = cfg.get("partial_rotary_factor") or cfg.get("rotary_pct")
        r = int(d * pr)
        D["r"] = r
        units = [("s*r", s * r), ("T*a*r", T * a * r), ("T*a*r/2", T * a * r // 2), ("T*a*(d-r)", T * a * (d - r))] + units
    if mt == "falcon":
        units = [("T*(a+2g)*d", T * (a + 2 * kv) * d)] + units
    if mt == "phi3":
        units = [("T*(a+2g)*d", T * (a + 2 * kv) * d), ("T*2f", T * 2 * f)] + units
    if mt == "gemma2" or mt == "gemma3_text":
        units = [("s*s", s * s)] + units
    if mt == "t5":
        units = [("a*s^2", a * s * s)] + units
    return D, units


def atoms(name, D, split_T=True):
    """Numeric factors of a unit name like 'T*a*d' or 'b*a*s^2' (T = b, s or one dim b*s)."""
    out = []
    for tok in name.split("*"):
        tok = tok.split("/")[0]
        if tok == "T":
            out += [D["b"], D["s"]] if split_T else [D["T"]]
        elif tok.endswith("^2") and tok[:-2] in D:
            out += [D[tok[:-2]]] * 2
        elif isinstance(D.get(tok), int):
            out.append(D[tok])
        else:
            out.append(None)
    return out


def shape_match(shape, name, D):
    """Fraction of the unit's factors found in the tensor shape."""
    best = 0.0
    for split_T in (True, False):
        at = atoms(name, D, split_T)
        pool = list(shape)
        hit = 0
        for x in at:
            if x is not None and x in pool:
                pool.remove(x)
                hit += 1
        best = max(best, hit / max(len(at), 1))
    return best


def express(nelem, units, shape=(), D=None):
    if nelem < 8:
        return ""
    best = None
    for name, val in units:
        if val == 0:
            continue
        r = Fraction(nelem, val)
        if r.denominator <= 8 and r >= Fraction(1, 8) and r.numerator <= (64 if r.denominator == 1 else 8):
            sm = shape_match(shape, name, D) if D else 0.0
            score = (0 if r == 1 else 1, -sm, len(name.split("*")), r.denominator, 0 if r >= 1 else 1)
            if best is None or score < best[0]:
                best = (score, f"{r}·{name}" if r != 1 else name)
    return best[1] if best else ""


def rel(module, prefix):
    if module is None:
        return ""
    if prefix and module.startswith(prefix):
        r = module[len(prefix):].lstrip(".")
        return r or "(layer)"
    return module or "(top)"


def sig(ts, prefix):
    return [(rel(t["module"], prefix), tuple(t["shape"]), t["dtype"], t["param_copy"]) for t in ts]


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def compress_used(mods):
    out = []
    for m in mods:
        lo = layer_of(m)
        out.append(f"{lo[0]}.{lo[1]}" if lo else (m or "(top)"))
    seen = []
    for x in out:
        if x not in seen:
            seen.append(x)
    return ", ".join(seen)


def table(ts, prefix, units, used_in=False, D=None):
    lines = ["| # | module | producer (grad_fn) | saved by | shape | dtype | bytes | size |"
             + (" used in |" if used_in else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|" if used_in else "")]
    for i, t in enumerate(ts):
        nel = t["nbytes"] // ELSIZE.get(t["dtype"], 1)
        bshape = t.get("base_shape")
        view = bshape is not None and _prod(bshape) != _prod(t["shape"])
        size = "param copy" if t["param_copy"] else express(nel, units, tuple(bshape if view else t["shape"]), D)
        if t.get("via") == "checkpoint-input":
            size = (size + " " if size else "") + "(checkpoint input)"
        savers = ", ".join(x.replace("Backward0", "Bw").replace("Backward1", "Bw1") for x in t["savers"][:4])
        lines.append(f"| {i + 1} | {rel(t['module'], prefix)} | {t['grad_fn'] or ''} | {savers} | "
                     f"{tuple(t['shape'])}{' view of ' + str(tuple(bshape)) if view else ''} | {t['dtype']} | {t['nbytes']:,} | {size} |"
                     + (f" {compress_used(t.get('packed_in', []))} |" if used_in else ""))
    return lines


def block_totals(c):
    """{stack: {index: bytes}} for the blocks of one case (shared and dead tensors excluded)."""
    out = {}
    for t in c["tensors"]:
        if t.get("dead") or t["param_copy"]:
            continue
        spots = {layer_of(m) for m in t.get("packed_in", [t["module"]])}
        lo = layer_of(t["module"])
        if lo and len(spots) == 1:
            out.setdefault(lo[0], {}).setdefault(lo[1], 0)
            out[lo[0]][lo[1]] += t["nbytes"]
    return out


def formula_section(details):
    byname = {c["name"]: c for c in details}
    L = ["## Per-part block formulas", "",
         "Bytes saved by ONE block, x = bytes per element of the activation dtype (bf16 2, fp32 4). Each formula is "
         "evaluated with the case's dims and compared with the measured block (blocks are numbered from 0 in their "
         "stack; tensors shared by several blocks — rotary cos/sin, the T5 encoder output — are not in a block). "
         "flash = x·T·d·(2a+2g) + 4·T·a + 24 (q, out with a heads; k, v with g heads; fp32 logsumexp; rng state); "
         "eff = same with 16 B of philox seed/offset instead of 24 (and the value/out head dim where it differs).", "",
         "| part | case [block] | formula | formula B | measured B | |", "|---|---|---|---|---|---|"]
    for part, name, blk, text, fn in FORMULAS:
        c = byname.get(name)
        if c is None:
            continue
        D, _ = dims_of(c)
        x = 2 if c["precision"] == "bf16" else 4
        bt = block_totals(c)
        stack = sorted(bt, key=lambda k: ("decoder" in k, k))[0]
        meas = bt[stack][blk]
        val = fn(D, x)
        L.append(f"| {part} | {name} [{blk}] | {text} | {val:,} | {meas:,} | {'ok' if val == meas else 'DIFF'} |")
    L.append("")
    return L


NOTES = [
    "**KV cache in training.** transformers builds a `DynamicCache` in the forward whenever `config.use_cache` is "
    "true (the default) and gradient checkpointing is off, even in train mode. The k and v that attention saves are "
    "then the cache's `torch.cat` copies (producer `CatBackward0`): x·T·g·d each. Same bytes as the projections for "
    "separate k_proj/v_proj; for a fused qkv projection (phi3, gpt_neox, falcon) `use_cache: false` makes SDPA save "
    "v as a view of the fused output, keeping the whole x·T·(a+2g)·d storage (cases `-nocache`: +1,048,576 B per "
    "phi3 block, +1,572,864 B per gpt-neox block).",
    "**Rotary by `cat` changes the layout.** phi, phi3 and gpt_neox build q/k with `torch.cat([rot, pass])`, which "
    "is contiguous head-major (b, a, s, d); flash allocates its output like q, so the output is head-major too and "
    "transformers' `transpose(1, 2).contiguous()` copies it: the o_proj/dense input is a separate x·T·a·d (Llama-"
    "style `q*cos + rotate_half(q)*sin` keeps the (b, s, a, d) layout and o_proj reuses the flash output).",
    "**Rotary cos/sin** are computed once per forward and saved once for all layers: 2·s·r·x (r = rotary dims: d, "
    "partial-rotary r = d·factor, GPT-OSS d/2 via `chunk`, DeepSeek interleaved keeps the full s·dr storage behind "
    "its `[..., :dr/2]` views). Gemma-3 has one pair for sliding layers and one for global layers (different theta); "
    "with a single global layer its pair shows up as that layer's difference.",
    "**Dead autograd branches are excluded.** DeepSeek-V3's group-limited routing packs tensors in nodes that are "
    "not reachable from the loss (the `topk` of group scores whose values are discarded, the masked_fill of "
    "scores_for_choice): T·(16·ng + 8·tg + E) bytes per MoE layer. They are freed during the forward, so they are "
    "listed apart and not in `saved_bytes` (activations.py would have counted them; it had no such case).",
    "**SDPA kernel choice** (fake CUDA; selector in this script): flash first as in activations.py. Flash needs equal "
    "q/k/v head dims, so DeepSeek MLA (qk = dn+dr ≠ dv) runs the efficient kernel. Efficient accepts GQA with "
    "`enable_gqa` and MQA (one k/v head) in torch 2.15 (sdp_utils: `supports_gqa`, `supports_mqa`), so fp32 GQA "
    "without mask is efficient (qwen3-tiny-sdpa-fp32), not math as activations.py assumed, and falcon-7b's MQA with "
    "a mask is efficient with one k/v head. Masks: transformers passes no mask when it can (no padding, s < sliding "
    "window), otherwise a bool mask that aten converts to a **new float mask in q's dtype per call** (b·s²·x when "
    "the bool mask is batch-expanded), which the efficient kernel saves: per layer, not shared. Falcon always "
    "materializes its mask (`allow_is_causal_skip=False`), so it never gets flash. T5's position bias becomes a "
    "per-layer (1, a, s, s) float mask (a·s²·x). GPT-OSS (sinks) and Gemma-2 (soft-capping) refuse sdpa in "
    "transformers 5.24 (`does not support an attention implementation through "
    "torch.nn.functional.scaled_dot_product_attention`), so only eager was measured.",
    "**Not modelled: cuDNN attention.** torch 2.15 built for CUDA 13 prefers cuDNN attention on sm90/sm100 when the "
    "cuDNN runtime is newer than 9.15 (check_prefer_cudnn_attention; this wheel ships cuDNN 9.26), before flash. "
    "cuDNN saves q, k, v, out, fp32 softmax stats (b·a·s) and philox seed/offset, i.e. the flash bytes, but it also "
    "accepts masks (then it would replace the efficient-kernel cases above). No GPU was available to confirm.",
    "**Norm variants** (per normalized width w, T rows): Llama RMSNorm (4+x)·T·w + 4·T; Gemma RMSNorm 8·T·w + 4·T "
    "+ 4·w in any dtype (the `(1+w)` multiply happens in fp32, so the normalized tensor kept for the weight grad "
    "is fp32); OLMo2/GPT-OSS RMSNorm 8·T·w + 4·T (weight applied in fp32); T5 LayerNorm fp32 8·T·w + 4·T, bf16 "
    "(4+2x)·T·w + 4·T (fp32 copy only for the variance, the bf16 input and bf16 normalized are saved); Cohere "
    "LayerNorm 12·T·w + 4·T (two fp32 x−mean tensors + fp32 normalized) plus an fp32 copy of the weight that "
    "counts as a param copy even in pure bf16; nn.LayerNorm x·T·w + 8·T (input + fp32 mean and rstd), and two "
    "LayerNorms on the same input (gpt_neox, falcon-40b) share the input: + 8·T only.",
    "**Loss.** `ForCausalLMLoss` upcasts logits, saving a 4·T·V fp32 log-softmax; T5 and RoBERTa-MLM call "
    "CrossEntropyLoss on the logits in the model dtype: x·T·V (bf16: half). Gemma-2's final soft-capping adds the "
    "tanh result x·T·V. Scalar multipliers (Granite's embedding/residual/attention/logits multipliers, Cohere's "
    "logit_scale, Gemma's embedding normalizer buffer) save nothing.",
    "**bf16 models built under default dtype bf16** keep parameters declared with an explicit dtype in fp32: the "
    "DeepSeek routers' weight, so the router input is copied to fp32 (4·T·h per MoE layer). In bf16-mixed "
    "(autocast) cases the bf16 weight copies are in `param_copy_bytes`.",
    "**Activation checkpointing** (non-reentrant, use_reentrant=False): each layer keeps its hidden-state input "
    "x·T·h; the checkpointed `partial` also keeps the layer's keyword tensors until backward — cos/sin and "
    "position_ids (shared by all layers) and, with eager attention, the 4D float masks (Gemma-2: one b·s²·x mask "
    "for sliding layers and one for global layers). The DynamicCache is disabled under checkpointing.",
    "**MoE routing is data dependent only for eager experts' tensor shapes, not their sum.** grouped_mm (default) "
    "sizes depend on T·k only (fake = real CPU: 370,768,004 B both). The eager per-expert loop saves, per expert "
    "with n_e tokens, tensors linear in n_e; since Σ n_e = T·k the block total is the same whatever the routing "
    "(real CPU eager experts: both MoE layers 37,775,360 B): T·k·(16 + 3x·h + 4x·fe + 4) for the routed experts, "
    "i.e. T·k·(x·h − 8) − 4·E more than grouped_mm (the index_add source x·T·k·h; one int64 index per slot instead "
    "of three; no offsets).",
]


def report(details):
    L = ["# Tensors saved for backward: structural parts of newer architectures", "",
         "Generated by `tests/measure/activations_parts.py` (same method as `activations.py`: fake CUDA, "
         "saved_tensors_hooks, one row per untyped storage the first time it is saved, parameters and buffers "
         "excluded, autocast weight copies marked `param copy` and counted in `param_copy_bytes`, not in "
         "`saved_bytes`). Fixture: `tests/fixtures/measured/activations_parts.json`.", "",
         "How to read: `module` is the innermost module running when the storage was first saved, relative to the "
         "layer (`(layer)` = the decoder-layer forward itself, e.g. a residual add; the loss rows have module "
         "`(top)`). A storage saved first by one op and later by others appears once (all savers listed, at most "
         "4). `size` expresses the element count in units: T = b·s tokens, h hidden, a heads, g KV heads, d head "
         "dim, f intermediate, V vocab; MoE: k top-k, E routed experts, fe expert intermediate, fs shared-expert "
         "intermediate; MLA: qk = dn+dr (q/k head dim), dn nope, dr rope, dv value head dim, rq q_lora_rank, "
         "rkv kv_lora_rank; partial rotary: r rotary dims per head. Bytes = elements × dtype size.", "",
         "A saved view counts its whole base storage (`shape view of base` in the shape column, e.g. a "
         "`chunk` half of a fused gate_up output keeps T·2f alive). A tensor produced by one block and first saved "
         "by the next (the residual stream entering a norm) is listed in the block that saves it.", ""]
    L += ["## Conventions and findings that matter for modelling", ""] + [f"{i + 1}. {t}" for i, t in enumerate(NOTES)] + [""]
    L += formula_section(details)
    L += ["## Summary", "", "| case | precision | attention kernel(s) | b×s | saved_bytes | param_copy_bytes | tensors |",
          "|---|---|---|---|---|---|---|"]
    for c in details:
        k = c["backend"].split("-> kernels ")[-1].replace(" (forced: CUDA dispatch rules)", "") \
            if "-> kernels" in c["backend"] else "eager"
        k = k.split(", experts")[0]
        L.append(f"| {c['name']} | {c['precision']} | {k} | {c['b']}×{c['s']} | {c['saved_bytes']:,} | "
                 f"{c['param_copy_bytes']:,} | {c['count']} |")
    L.append("")
    for c in details:
        D, units = dims_of(c)
        L += [f"## {c['name']}", "",
              f"{c['part']}. precision {c['precision']}, attention {c['attention']}, checkpointing {c['ckpt']}; "
              f"backend: {c['backend']}", "",
              "dims: " + ", ".join(f"{k}={v}" for k, v in D.items()), ""]
        coll = {}
        for k, v in D.items():
            if isinstance(v, int) and v > 2:
                coll.setdefault(v, []).append(k)
        coll = [" = ".join(ks) for v, ks in coll.items() if len(ks) > 1]
        if coll:
            L += ["equal dims (the `size` column picks one by shape; check against the shape): " + "; ".join(coll), ""]
        if c["notes"]:
            L += ["notes: " + c["notes"], ""]
        dead = [t for t in c["tensors"] if t.get("dead")]
        ts = [t for t in c["tensors"] if not t.get("dead")]
        groups = {}
        outside = []
        shared = []
        for t in ts:
            lo = layer_of(t["module"])
            spots = {layer_of(m) for m in t.get("packed_in", [t["module"]])}
            if len(spots) > 1:
                shared.append(t)
            elif lo:
                groups.setdefault(lo[0], {}).setdefault(lo[1], []).append(t)
            else:
                outside.append(t)
        grand = 0
        for stack, layers in groups.items():
            idxs = sorted(layers)
            first = idxs[0]
            pfx0 = f"{stack}.{first}"
            L.append(f"### {stack}.{first} (one block): "
                     f"{sum(t['nbytes'] for t in layers[first] if not t['param_copy']):,} B"
                     + (f" + {sum(t['nbytes'] for t in layers[first] if t['param_copy']):,} B param copies"
                        if any(t['param_copy'] for t in layers[first]) else ""))
            L.append("")
            L += table(layers[first], pfx0, units, D=D)
            L.append("")
            base = sig(layers[first], pfx0)
            shown = {first}
            per = []
            for i in idxs:
                tot = sum(t["nbytes"] for t in layers[i] if not t["param_copy"])
                grand += tot
                same = sig(layers[i], f"{stack}.{i}") == base
                per.append(f"{i}: {tot:,} B" + ("" if same else " (differs)"))
            L.append(f"Per-block totals ({stack}): " + "; ".join(per))
            L.append("")
            # show each distinct differing block once
            seen_sigs = [base]
            for i in idxs:
                sg = sig(layers[i], f"{stack}.{i}")
                if sg in seen_sigs:
                    continue
                seen_sigs.append(sg)
                L.append(f"#### {stack}.{i} differs from {stack}.{first}: "
                         f"{sum(t['nbytes'] for t in layers[i] if not t['param_copy']):,} B")
                L.append("")
                L += table(layers[i], f"{stack}.{i}", units, D=D)
                L.append("")
        if shared:
            sh_tot = sum(t["nbytes"] for t in shared if not t["param_copy"])
            grand += sh_tot
            L.append(f"### shared by several blocks (saved once, listed apart from the blocks): {sh_tot:,} B")
            L.append("")
            L.append("Module = where first saved; `used in` = every module that saved it.")
            L.append("")
            L += table(shared, "", units, used_in=True, D=D)
            L.append("")
        out_tot = sum(t["nbytes"] for t in outside if not t["param_copy"])
        out_pc = sum(t["nbytes"] for t in outside if t["param_copy"])
        L.append(f"### outside the blocks: {out_tot:,} B" + (f" + {out_pc:,} B param copies" if out_pc else ""))
        L.append("")
        L += table(outside, "", units, D=D)
        L.append("")
        if dead:
            L.append(f"### packed but not held (dead autograd branches, not in saved_bytes): "
                     f"{sum(t['nbytes'] for t in dead):,} B")
            L.append("")
            L += table(dead, "", units, used_in=True, D=D)
            L.append("")
        L.append(f"Check: blocks (+ shared) {grand:,} + outside {out_tot:,} = {grand + out_tot:,} B = saved_bytes "
                 f"{c['saved_bytes']:,} ({'ok' if grand + out_tot == c['saved_bytes'] else 'MISMATCH'})")
        L.append("")
    with open(REPORT, "w") as fh:
        fh.write("\n".join(L) + "\n")


def main():
    sel = sys.argv[1:]
    results, details = [], []
    for case in CASES:
        if sel and not any(x in case["name"] for x in sel):
            continue
        try:
            r, d = run_case(case)
        except Exception as e:
            import traceback
            traceback.print_exc()
            print("FAILED", case["name"], repr(e), flush=True)
            continue
        results.append(r)
        details.append(d)
    out = {"generator": "tests/measure/activations_parts.py", "torch": torch.__version__,
           "transformers": transformers.__version__,
           "method": "bytes of untyped storages saved for backward (saved_tensors_hooks) during forward + "
                     "loss, each storage once, parameters and buffers excluded; autocast weight copies "
                     "reported as param_copy_bytes",
           "cases": results}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    report(details)


if __name__ == "__main__":
    main()
