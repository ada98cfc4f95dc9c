#!/usr/bin/env python3
"""Llama 4's vision side against transformers 5.x (tests/fixtures/measured/llama4_vision.json).

No network, nothing downloaded.
- params: Llama4ForConditionalGeneration built on torch.device("meta") from Llama4Config's
  default (stored as its to_dict()) and from a small variant. Parts: vision_tower = model.vision_model (the unfold patch
  embedding, class token, positions, blocks, pre/post LayerNorms and the pixel-shuffle MLP
  `vision_adapter`, which transformers builds inside the vision model), projector =
  model.multi_modal_projector, language_model = everything else.
- image_tokens: Llama4ImageProcessor (torchvision backend) on random images of several sizes,
  tiles of `size` px (the tower's image_size) and `max_patches` tiles at most: the tiles it
  returns (pixel_values' first dimension: the grid and, when the grid has more than one tile, a
  global tile) and the language-model tokens, tiles × (size / patch)² / round(1 / ratio²)
  (`processing_llama4.py` `_get_num_multimodal_tokens` and `replace_image_token`).
- activations: a tiny Llama4ForConditionalGeneration on CPU (fp32, eager SDPA), one image
  through the real image processor, the saved tensors of the vision model and the projector
  (each storage once; common.SavedTensorRecorder), tower trained and frozen; the processor returns
  bfloat16 pixels, cast to fp32 here.
Run: /work/venv/bin/python tests/measure/llama4_vision.py
"""
import json
import os
import sys

import torch
import transformers
from transformers import Llama4Config, Llama4ForConditionalGeneration, Llama4ImageProcessor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "llama4_vision.json")

TINY_TEXT = {"vocab_size": 512, "hidden_size": 64, "intermediate_size": 96, "intermediate_size_mlp": 128, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 2, "model_type": "llama4_text"}
# A 32-px tile of 4 × 4 patches and a class token; the pixel shuffle (ratio 0.5) makes 4 tokens of
# 4 · 64 = 256 = intermediate_size values each (the adapter's fc1 reads intermediate_size).
TINY = {"model_type": "llama4", "image_token_index": 500, "text_config": TINY_TEXT,
        "vision_config": {"hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
                          "image_size": 32, "patch_size": 8, "projector_input_dim": 128, "projector_output_dim": 128,
                          "vision_output_dim": 128, "pixel_shuffle_ratio": 0.5, "model_type": "llama4_vision_model"}}


# Llama-4-Scout-17B-16E's shapes as a stored public repository document prints its Llama4Config
# (find_string "\"model_type\": \"llama4_vision_model\"", a "# Llama 4" notes file citing
# huggingface.co/meta-llama/Llama-4-Scout-17B-16E; it elides moe_layers as "0..47", which
# interleave_moe_layer_step 1 gives): a printed config, not the Hub config.json, so a shape case
# here, not a catalogue entry. The same document prints "Total Trainable Params: 109,676,279,296".
SCOUT_SHAPES = {
    "model_type": "llama4", "image_token_index": 200092, "tie_word_embeddings": False,
    "text_config": {"model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
                    "interleave_moe_layer_step": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
                    "no_rope_layers": [1, 1, 1, 0] * 12, "num_attention_heads": 40, "num_experts_per_tok": 1,
                    "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16, "use_qk_norm": True,
                    "vocab_size": 202048},
    "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408, "image_size": 336, "intermediate_size": 5632,
                      "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14,
                      "pixel_shuffle_ratio": 0.5, "projector_input_dim": 4096, "projector_output_dim": 4096,
                      "vision_output_dim": 4096, "vision_feature_select_strategy": "default"},
}


def build(cfg):
    return Llama4Config.from_dict(cfg) if cfg else Llama4Config()


def params(cfg):
    with torch.device("meta"):
        m = Llama4ForConditionalGeneration(build(cfg))
    total = sum(p.numel() for p in m.parameters())
    tower = sum(p.numel() for p in m.vision_model.parameters())
    projector = sum(p.numel() for p in m.multi_modal_projector.parameters())
    config = cfg if cfg else Llama4Config().to_dict()
    return {"config": config, "param_count": total,
            "param_count_by_part": {"vision_tower": tower, "projector": projector, "language_model": total - tower - projector}}


def tiles(height, width, size, max_patches):
    proc = Llama4ImageProcessor(size={"height": size, "width": size}, max_patches=max_patches)
    image = torch.randint(1, 255, (3, height, width), dtype=torch.uint8)
    out = proc(images=[image], return_tensors="pt")
    return out["pixel_values"], [int(r) for r in out["aspect_ratios"][0]]


def image_tokens():
    cases = []
    for size, patch, max_patches in ((448, 14, 16), (336, 14, 16), (336, 14, 4)):
        per_tile = (size // patch) ** 2 // round(1 / 0.5 ** 2)
        for h, w in ((336, 336), (448, 448), (500, 375), (1024, 1024), (768, 1344), (200, 1600), (1600, 200), (100, 80), (2000, 1500), (700, 900)):
            pv, ratio = tiles(h, w, size, max_patches)
            n = int(pv.shape[0])
            cases.append({"height": h, "width": w, "tile_size": size, "patch_size": patch, "max_patches": max_patches,
                          "aspect_ratio": ratio, "tiles": n, "image_tokens": n * per_tile})
    return cases


def activations():
    from common import ModuleStack, SavedTensorRecorder
    out = {}
    for frozen in (False, True):
        for (h, w) in ((32, 32), (64, 32)):
            torch.manual_seed(0)
            m = Llama4ForConditionalGeneration(build(TINY))
            m.train()
            if frozen:
                m.vision_model.requires_grad_(False)
            pv, ratio = tiles(h, w, 32, 16)
            image_tokens = int(pv.shape[0]) * 4
            ids = torch.cat([torch.full((1, image_tokens), 500), torch.randint(0, 400, (1, 32))], dim=1)
            stack = ModuleStack(m)
            rec = SavedTensorRecorder(m, stack)
            with rec.hooks():
                loss = m(input_ids=ids, labels=ids, pixel_values=pv.float()).loss

            def part(pred):
                return sum(e["nbytes"] for e in rec.entries.values() if e["module"] and pred(e["module"]))
            key = f"llama4@{w}x{h}-{'frozen' if frozen else 'trained'}"
            out[key] = {"config": TINY, "resolution": [w, h], "tiles": int(pv.shape[0]), "text_tokens": 32, "image_tokens": image_tokens,
                        "micro_batch": 1, "precision": "fp32", "frozen_tower": frozen,
                        "attention": str(m.config.vision_config._attn_implementation),
                        "tower_saved_bytes": part(lambda mod: "vision_model" in mod),
                        "projector_saved_bytes": part(lambda mod: "multi_modal_projector" in mod),
                        "by_module": {k: v for k, v in sorted(by_module(rec).items()) if "vision_model" in k or "multi_modal" in k}}
            print(key, out[key]["tiles"], out[key]["tower_saved_bytes"], out[key]["projector_saved_bytes"])
            loss.backward()
            stack.remove()
    return out


def by_module(rec):
    agg = {}
    for e in rec.entries.values():
        if e["module"]:
            agg[e["module"]] = agg.get(e["module"], 0) + e["nbytes"]
    return agg


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__,
            "params": {"llama4@default": params(None), "llama4@tiny": params(TINY), "llama4@scout-shapes": params(SCOUT_SHAPES)},
            "image_tokens": image_tokens(), "activations": activations()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
