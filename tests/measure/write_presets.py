#!/usr/bin/env python3
"""Write Headroom's preset model configs (src/model/presets/models/<id>.json).

Each file is the Hugging Face config.json as published on the Hub for that model
(hyperparameters copied from the public config.json), plus a "_headroom" block.
Only the id2label/label2id tables of the vision models (1000 ImageNet class names)
are replaced by the equivalent "num_labels": 1000 (transformers' PretrainedConfig
accepts num_labels and builds the same 1000-way classifier head).
No network access is needed; nothing is downloaded.
"""
import json, os, copy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "src", "model", "presets", "models")

def gpt2(n_embd, n_layer, n_head, extra=None):
    d = {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": 50256,
        "embd_pdrop": 0.1,
        "eos_token_id": 50256,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": 1024,
        "n_embd": n_embd,
        "n_head": n_head,
        "n_inner": None,
        "n_layer": n_layer,
        "n_positions": 1024,
        "resid_pdrop": 0.1,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "tie_word_embeddings": True,
        "vocab_size": 50257,
    }
    if extra:
        d.update(extra)
    return d

def llama(h, L, a, kv, f, v, maxpos, eps, tie, theta, extra=None):
    d = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "hidden_act": "silu",
        "hidden_size": h,
        "initializer_range": 0.02,
        "intermediate_size": f,
        "max_position_embeddings": maxpos,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": a,
        "num_hidden_layers": L,
        "num_key_value_heads": kv,
        "pretraining_tp": 1,
        "rms_norm_eps": eps,
        "rope_scaling": None,
        "rope_theta": theta,
        "tie_word_embeddings": tie,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "vocab_size": v,
    }
    if extra:
        d.update(extra)
    return d

LLAMA3_ROPE = {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
               "original_max_position_embeddings": 8192, "rope_type": "llama3"}

def qwen2(h, L, a, kv, f, v, tie, max_window_layers):
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151643,
        "hidden_act": "silu",
        "hidden_size": h,
        "initializer_range": 0.02,
        "intermediate_size": f,
        "max_position_embeddings": 131072,
        "max_window_layers": max_window_layers,
        "model_type": "qwen2",
        "num_attention_heads": a,
        "num_hidden_layers": L,
        "num_key_value_heads": kv,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "sliding_window": 131072,
        "tie_word_embeddings": tie,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": v,
    }

def bert(h, L, a, f):
    return {
        "architectures": ["BertForMaskedLM"],
        "attention_probs_dropout_prob": 0.1,
        "gradient_checkpointing": False,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": h,
        "initializer_range": 0.02,
        "intermediate_size": f,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 512,
        "model_type": "bert",
        "num_attention_heads": a,
        "num_hidden_layers": L,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "tie_word_embeddings": True,
        "type_vocab_size": 2,
        "use_cache": True,
        "vocab_size": 30522,
    }

def vit(h, L, a, f):
    return {
        "architectures": ["ViTForImageClassification"],
        "attention_probs_dropout_prob": 0.0,
        "encoder_stride": 16,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "hidden_size": h,
        "image_size": 224,
        "initializer_range": 0.02,
        "intermediate_size": f,
        "layer_norm_eps": 1e-12,
        "model_type": "vit",
        "num_attention_heads": a,
        "num_channels": 3,
        "num_hidden_layers": L,
        "num_labels": 1000,
        "patch_size": 16,
        "qkv_bias": True,
        "torch_dtype": "float32",
    }

def resnet(depths, hidden_sizes, layer_type):
    return {
        "architectures": ["ResNetForImageClassification"],
        "depths": depths,
        "downsample_in_first_stage": False,
        "embedding_size": 64,
        "hidden_act": "relu",
        "hidden_sizes": hidden_sizes,
        "layer_type": layer_type,
        "model_type": "resnet",
        "num_channels": 3,
        "num_labels": 1000,
        "torch_dtype": "float32",
    }

PRESETS = {
    "gpt2": ("GPT-2 (124M)", "GPT2LMHeadModel", "openai-community/gpt2", gpt2(768, 12, 12)),
    "gpt2-medium": ("GPT-2 Medium (355M)", "GPT2LMHeadModel", "openai-community/gpt2-medium",
                    gpt2(1024, 24, 16, {"n_special": 0, "predict_special_tokens": True})),
    "gpt2-large": ("GPT-2 Large (774M)", "GPT2LMHeadModel", "openai-community/gpt2-large", gpt2(1280, 36, 20)),
    "gpt2-xl": ("GPT-2 XL (1.5B)", "GPT2LMHeadModel", "openai-community/gpt2-xl",
                gpt2(1600, 48, 25, {"output_past": True})),
    "llama-2-7b": ("Llama 2 7B", "LlamaForCausalLM", "meta-llama/Llama-2-7b-hf",
                   llama(4096, 32, 32, 32, 11008, 32000, 4096, 1e-05, False, 10000.0,
                         {"bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float16"})),
    "llama-2-13b": ("Llama 2 13B", "LlamaForCausalLM", "meta-llama/Llama-2-13b-hf",
                    llama(5120, 40, 40, 40, 13824, 32000, 4096, 1e-05, False, 10000.0,
                          {"bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float16"})),
    "llama-3-8b": ("Llama 3 8B", "LlamaForCausalLM", "meta-llama/Meta-Llama-3-8B",
                   llama(4096, 32, 32, 8, 14336, 128256, 8192, 1e-05, False, 500000.0,
                         {"bos_token_id": 128000, "eos_token_id": 128001})),
    "llama-3-70b": ("Llama 3 70B", "LlamaForCausalLM", "meta-llama/Meta-Llama-3-70B",
                    llama(8192, 80, 64, 8, 28672, 128256, 8192, 1e-05, False, 500000.0,
                          {"bos_token_id": 128000, "eos_token_id": 128001})),
    "llama-3.2-1b": ("Llama 3.2 1B", "LlamaForCausalLM", "meta-llama/Llama-3.2-1B",
                     llama(2048, 16, 32, 8, 8192, 128256, 131072, 1e-05, True, 500000.0,
                           {"bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64,
                            "rope_scaling": LLAMA3_ROPE})),
    "llama-3.2-3b": ("Llama 3.2 3B", "LlamaForCausalLM", "meta-llama/Llama-3.2-3B",
                     llama(3072, 28, 24, 8, 8192, 128256, 131072, 1e-05, True, 500000.0,
                           {"bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 128,
                            "rope_scaling": LLAMA3_ROPE})),
    "mistral-7b": ("Mistral 7B v0.1", "MistralForCausalLM", "mistralai/Mistral-7B-v0.1", {
        "architectures": ["MistralForCausalLM"],
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "model_type": "mistral",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "sliding_window": 4096,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "vocab_size": 32000,
    }),
    "qwen2-0.5b": ("Qwen2 0.5B", "Qwen2ForCausalLM", "Qwen/Qwen2-0.5B",
                   qwen2(896, 24, 14, 2, 4864, 151936, True, 24)),
    "qwen2-7b": ("Qwen2 7B", "Qwen2ForCausalLM", "Qwen/Qwen2-7B",
                 qwen2(3584, 28, 28, 4, 18944, 152064, False, 28)),
    "mixtral-8x7b": ("Mixtral 8x7B", "MixtralForCausalLM", "mistralai/Mixtral-8x7B-v0.1", {
        "architectures": ["MixtralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "model_type": "mixtral",
        "num_attention_heads": 32,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "output_router_logits": False,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.02,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "vocab_size": 32000,
    }),
    "bert-base": ("BERT base (uncased)", "BertForMaskedLM", "google-bert/bert-base-uncased", bert(768, 12, 12, 3072)),
    "bert-large": ("BERT large (uncased)", "BertForMaskedLM", "google-bert/bert-large-uncased", bert(1024, 24, 16, 4096)),
    "vit-base-16": ("ViT-B/16 (224)", "ViTForImageClassification", "google/vit-base-patch16-224", vit(768, 12, 12, 3072)),
    "vit-large-16": ("ViT-L/16 (224)", "ViTForImageClassification", "google/vit-large-patch16-224", vit(1024, 24, 16, 4096)),
    "resnet-18": ("ResNet-18", "ResNetForImageClassification", "microsoft/resnet-18",
                  resnet([2, 2, 2, 2], [64, 128, 256, 512], "basic")),
    "resnet-50": ("ResNet-50", "ResNetForImageClassification", "microsoft/resnet-50",
                  resnet([3, 4, 6, 3], [256, 512, 1024, 2048], "bottleneck")),
    "resnet-101": ("ResNet-101", "ResNetForImageClassification", "microsoft/resnet-101",
                   resnet([3, 4, 23, 3], [256, 512, 1024, 2048], "bottleneck")),
}

def main():
    os.makedirs(OUT, exist_ok=True)
    for pid, (name, cls, src, cfg) in PRESETS.items():
        d = copy.deepcopy(cfg)
        d["_headroom"] = {"name": name, "hf_class": cls, "source": src}
        with open(os.path.join(OUT, pid + ".json"), "w") as f:
            json.dump(d, f, indent=2, sort_keys=True)
            f.write("\n")
    print("wrote", len(PRESETS), "presets to", OUT)

if __name__ == "__main__":
    main()
