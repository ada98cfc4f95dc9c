#!/usr/bin/env python3
"""Tiles and image tokens of the tiling vision-language families, from transformers' own
image processors and model code on CPU (tests/fixtures/measured/vlm_image_tokens.json).

No network, nothing downloaded; random images of each size go through the real processors
(the PIL backends, torchvision not installed):

- Idefics3 / SmolVLM: Idefics3ImageProcessorPil with its defaults (size.longest_edge 1456,
  364-px tiles: Idefics3-8B's tower, 26 × 26 patches of 14 px, scale_factor 2) and
  SmolVLMImageProcessorPil at size.longest_edge 2048 and 512-px tiles (SmolVLM2's
  preprocessor values; 32 × 32 patches of 16 px, scale_factor 4). tiles = the real images in
  pixel_values; tokens per tile = the model's own image_seq_len (Idefics3Model /
  SmolVLMModel built on the meta device from that tower config).
- InternVL: GotOcr2ImageProcessorPil as InternVLProcessor runs it (crop_to_patches, 448-px
  tiles, max_patches 12, thumbnail); tiles = pixel_values' rows; tokens per tile =
  (448 / 14)² · 0.5² = 256, InternVLConfig's image_seq_length (the tiny model in
  vlm_activations.json runs the same pixel shuffle on real tiles).
- LLaVA-NeXT: LlavaNextImageProcessorPil (shortest_edge 336, 336-px crops, the default
  image_grid_pinpoints) for the tower's tiles (pixel_values' second dimension: the base
  image and the grid's crops); the language model's tokens from
  LlavaNextModel.pack_image_features itself (CLIP 336 px, 14-px patches, a tiny width: the
  count does not depend on it) on features of the processor's tile count, with
  image_newline, as the model packs them before they replace the image tokens.

Run: /work/venv/bin/python tests/measure/vlm_image_tokens.py
"""
import json
import os

import torch
import transformers
from transformers import (AutoConfig, GotOcr2ImageProcessorPil, Idefics3ImageProcessorPil, LlavaNextImageProcessorPil,
                          SmolVLMImageProcessorPil)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "vlm_image_tokens.json")

# (width, height) in pixels.
SIZES = [(224, 224), (336, 336), (448, 448), (512, 512), (640, 480), (480, 640), (800, 600), (1024, 1024), (1100, 1000),
         (1280, 720), (720, 1280), (1920, 1080), (500, 300), (2000, 3000), (4000, 100), (100, 4000), (1000, 333), (3000, 3000)]

TINY_TEXT = {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
             "intermediate_size": 16, "vocab_size": 64}


def image(width, height):
    return torch.randint(1, 255, (3, height, width), dtype=torch.uint8)


def seq_len(model_type, vision, scale):
    from transformers import AutoModel
    cfg = AutoConfig.for_model(model_type).__class__.from_dict(
        {"model_type": model_type, "scale_factor": scale, "text_config": {**TINY_TEXT, "model_type": "llama"},
         "vision_config": {"hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, **vision}})
    with torch.device("meta"):
        return AutoModel.from_config(cfg).image_seq_len


def idefics3_cases():
    out = {}
    setups = {
        "idefics3": (Idefics3ImageProcessorPil(), {"image_size": 364, "patch_size": 14}, 2, 1456),
        "smolvlm": (SmolVLMImageProcessorPil(size={"longest_edge": 2048}, max_image_size={"longest_edge": 512}),
                    {"image_size": 512, "patch_size": 16}, 4, 2048),
    }
    for name, (proc, vision, scale, longest) in setups.items():
        per_tile = seq_len(name, vision, scale)
        config = {"model_type": name, "scale_factor": scale, "vision_config": {**vision, "size": {"longest_edge": longest}}}
        rows = []
        for w, h in SIZES:
            pv = proc(images=[[image(w, h)]], return_tensors="pt")["pixel_values"]
            tiles = int(((pv[0] != 0).flatten(1).any(dim=1)).sum())
            rows.append({"resolution": [w, h], "tiles": tiles, "image_tokens": tiles * per_tile})
        out[name] = {"config": config, "tokens_per_tile": per_tile, "sizes": rows}
        print(name, per_tile, [(r["resolution"], r["tiles"]) for r in rows])
    return out


def internvl_cases():
    proc = GotOcr2ImageProcessorPil(size={"height": 448, "width": 448}, crop_to_patches=True, min_patches=1, max_patches=12)
    rows = []
    for w, h in SIZES:
        tiles = proc(images=[image(w, h)], return_tensors="pt")["pixel_values"].shape[0]
        rows.append({"resolution": [w, h], "tiles": tiles, "image_tokens": tiles * 256})
    print("internvl", [(r["resolution"], r["tiles"]) for r in rows])
    return {"internvl": {"config": {"model_type": "internvl", "downsample_ratio": 0.5, "vision_config": {"image_size": [448, 448], "patch_size": [14, 14]}},
                         "tokens_per_tile": 256, "sizes": rows}}


def llava_next_cases():
    from transformers import LlavaNextConfig
    from transformers.models.llava_next.modeling_llava_next import LlavaNextModel
    cfg = LlavaNextConfig(text_config={**TINY_TEXT, "model_type": "llama"},
                          vision_config={"model_type": "clip_vision_model", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
                                         "num_attention_heads": 2, "image_size": 336, "patch_size": 14, "projection_dim": 8})
    model = LlavaNextModel(cfg)
    proc = LlavaNextImageProcessorPil(size={"shortest_edge": 336}, crop_size={"height": 336, "width": 336},
                                      image_grid_pinpoints=cfg.image_grid_pinpoints)
    rows = []
    for w, h in SIZES:
        out = proc(images=[image(w, h)], return_tensors="pt")
        tiles = out["pixel_values"].shape[1]
        # The tower's output after the projector, "default" strategy: 576 patch features per tile.
        feats = [torch.zeros(tiles, 576, 8)]
        with torch.no_grad():
            packed, lens = model.pack_image_features(feats, out["image_sizes"], "default", image_newline=model.image_newline)
        rows.append({"resolution": [w, h], "tiles": tiles, "image_tokens": int(lens[0])})
    print("llava_next", [(r["resolution"], r["tiles"], r["image_tokens"]) for r in rows])
    return {"llava_next": {"config": {"model_type": "llava_next", "image_grid_pinpoints": cfg.image_grid_pinpoints,
                                      "vision_config": {"image_size": 336, "patch_size": 14}},
                           "sizes": rows}}


def main():
    torch.manual_seed(0)
    cases = {**idefics3_cases(), **internvl_cases(), **llava_next_cases()}
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
