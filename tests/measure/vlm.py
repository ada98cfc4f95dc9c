#!/usr/bin/env python3
"""Vision-language models' parameter counts by part (tests/fixtures/measured/vlm_params.json).

No network, nothing downloaded: each model is built on torch.device("meta") from its config
with AutoModelForImageTextToText (Qwen2_5_VLForConditionalGeneration,
Gemma3ForConditionalGeneration, LlavaForConditionalGeneration).

Parts: vision_tower = the tower module's parameters (model.visual without its merger for
Qwen2.5-VL, model.vision_tower otherwise); projector = Qwen2.5-VL's model.visual.merger or
model.multi_modal_projector; language_model = everything else (embeddings, blocks, final
norm, LM head). param_count = sum(p.numel()) of the whole model (tied weights once).

Configs: each family's configuration-class default, and the Hub config.json of
Qwen/Qwen2.5-VL-7B-Instruct (flat, as published), google/gemma-3-4b-it (the catalogue's
copy, src/import/catalogue/google--gemma-3-4b-it.json) and llava-hf/llava-1.5-7b-hf (as
published: the text_config lists only the keys that differ from LlamaConfig's defaults).
Run: /work/venv/bin/python tests/measure/vlm.py
"""
import json
import os

import torch
import transformers
from transformers import AutoConfig, AutoModelForImageTextToText

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "vlm_params.json")

QWEN25_VL_7B = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "image_token_id": 151655, "initializer_range": 0.02,
    "intermediate_size": 18944, "max_position_embeddings": 128000, "max_window_layers": 28, "model_type": "qwen2_5_vl",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
    "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"}, "rope_theta": 1000000.0,
    "sliding_window": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
    "use_sliding_window": False, "video_token_id": 151656,
    "vision_config": {"depth": 32, "fullatt_block_indexes": [7, 15, 23, 31], "hidden_act": "silu", "hidden_size": 1280,
                      "in_channels": 3, "initializer_range": 0.02, "intermediate_size": 3420, "model_type": "qwen2_5_vl",
                      "num_heads": 16, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
                      "spatial_patch_size": 14, "temporal_patch_size": 2, "tokens_per_second": 2, "torch_dtype": "float32",
                      "window_size": 112},
    "vision_end_token_id": 151653, "vision_start_token_id": 151652, "vision_token_id": 151654, "vocab_size": 152064,
}

LLAVA_15_7B = {
    "architectures": ["LlavaForConditionalGeneration"], "ignore_index": -100, "image_token_index": 32000,
    "model_type": "llava", "pad_token_id": 32001, "projector_hidden_act": "gelu",
    "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5", "architectures": ["LlamaForCausalLM"],
                    "max_position_embeddings": 4096, "model_type": "llama", "rms_norm_eps": 1e-05,
                    "torch_dtype": "float16", "vocab_size": 32064},
    "tie_word_embeddings": False, "torch_dtype": "float16",
    "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096, "model_type": "clip_vision_model",
                      "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768,
                      "vocab_size": 32000},
    "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "vocab_size": 32064,
}


def gemma3_4b():
    with open(os.path.join(ROOT, "src", "import", "catalogue", "google--gemma-3-4b-it.json")) as f:
        c = json.load(f)
    c.pop("_headroom")
    return c


def count(config):
    cfg = AutoConfig.for_model(**config) if False else AutoConfig.for_model(config["model_type"]).__class__.from_dict(config)
    with torch.device("meta"):
        m = AutoModelForImageTextToText.from_config(cfg)
    total = sum(p.numel() for p in m.parameters())
    inner = m.model
    if hasattr(inner, "visual"):
        projector = sum(p.numel() for p in inner.visual.merger.parameters())
        tower = sum(p.numel() for p in inner.visual.parameters()) - projector
    else:
        projector = sum(p.numel() for p in inner.multi_modal_projector.parameters())
        tower = sum(p.numel() for p in inner.vision_tower.parameters())
    return {"config": config, "class": type(m).__name__, "param_count": total,
            "param_count_by_part": {"vision_tower": tower, "projector": projector, "language_model": total - tower - projector}}


def default(model_type):
    d = AutoConfig.for_model(model_type).to_dict()
    return d


def main():
    cases = {
        "qwen2_5_vl@7b-instruct": QWEN25_VL_7B,
        "qwen2_5_vl@default": default("qwen2_5_vl"),
        "gemma3@4b-it": gemma3_4b(),
        "gemma3@default": default("gemma3"),
        "llava@1.5-7b": LLAVA_15_7B,
        "llava@default": default("llava"),
    }
    out = {"torch": torch.__version__, "transformers": transformers.__version__, "cases": {}}
    for name, cfg in cases.items():
        out["cases"][name] = count(json.loads(json.dumps(cfg, default=str)))
        print(name, out["cases"][name]["param_count"], out["cases"][name]["param_count_by_part"])
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
