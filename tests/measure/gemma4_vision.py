#!/usr/bin/env python3
"""Gemma 4's vision side against transformers 5.25 (tests/fixtures/measured/gemma4_vision.json).

No network, nothing downloaded.
- params: Gemma4ForConditionalGeneration built on torch.device("meta"). Gemma4Config's own
  default has no vision_config (`Gemma4Model.vision_tower` is then None), so the "default" case is
  Gemma4Config with a default Gemma4VisionConfig (`vision_config: {}`); then the shapes of the
  E2B-sized and 31B-sized towers (768 wide with clipped linears; 1152 wide, head_dim 72, 16 heads,
  standardize), a tiny one, and one with an audio tower (counted apart: Headroom leaves it out).
  Each config is stored as Gemma4Config's to_dict(). Parts: vision_tower = model.vision_tower (Gemma4VisionModel), projector = model.embed_vision
  (Gemma4MultimodalEmbedder), audio = model.audio_tower + model.embed_audio, language_model =
  the rest (the tied LM head counted once).
- image_tokens: Gemma4ImageProcessor (torchvision backend) on random images of several sizes and
  max_soft_tokens: the real patches, the padded patches the tower reads (pixel_values' second
  dimension, max_soft_tokens * pooling_kernel_size**2) and the soft tokens per image.
- activations: a tiny Gemma4ForConditionalGeneration on CPU (fp32, SDPA), one image through the
  real image processor (max_soft_tokens 70, kernel 3: 630 padded patches), the saved tensors of
  the vision tower and of embed_vision (each storage once; common.SavedTensorRecorder; a
  checkpointed block's arguments counted when one of them requires grad), at two image sizes, for:
  full fine-tuning, a frozen tower (its weights; embed_vision trained), PEFT LoRA on the language
  model's linears (the tower and embed_vision frozen), PEFT LoRA on the tower's linears too; each
  without and with gradient checkpointing (use_reentrant False); and, at 96 x 96, full fine-tuning
  and tower LoRA at max_soft_tokens 140 (1260 padded patches), and in pure bf16.
- peft_targets: PEFT LoraConfig with target_modules ["q_proj", "k_proj", "v_proj", "o_proj"]
  (refused: the tower's are Gemma4ClippableLinear wrappers) and "all-linear" (the tower's
  linears adapted, its patch embedder's input_proj included).
Run: /work/venv/bin/python tests/measure/gemma4_vision.py
"""
import json
import os
import re
import sys

import peft
import torch
import transformers
from transformers import Gemma4Config, Gemma4ForConditionalGeneration
from transformers.models.gemma4.image_processing_gemma4 import Gemma4ImageProcessor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ModuleStack, SavedTensorRecorder  # noqa: E402
from vlm_frozen_checkpointing import hold_checkpoint_inputs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gemma4_vision.json")

TINY_TEXT = {"model_type": "gemma4_text", "vocab_size": 512, "vocab_size_per_layer_input": 512, "hidden_size": 64,
             "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
             "head_dim": 16, "global_head_dim": 16, "hidden_size_per_layer_input": 0, "sliding_window": 64,
             "pad_token_id": 0}
# 4-px patches, a 3 x 3 pooling kernel; 630 padded patches per image at max_soft_tokens 70
# (`default_output_length`, as the Hub configs carry the processor's max_soft_tokens).
MAX_SOFT_TOKENS = 70
TINY_VISION = {"model_type": "gemma4_vision", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "patch_size": 4,
               "pooling_kernel_size": 3, "position_embedding_size": 64,
               "default_output_length": MAX_SOFT_TOKENS}
TINY = {"model_type": "gemma4", "text_config": TINY_TEXT, "vision_config": TINY_VISION,
        "image_token_id": 500, "boi_token_id": 501, "eoi_token_id": 502, "video_token_id": 503,
        "audio_token_id": 504, "boa_token_id": 505, "eoa_token_index": 506}

# The E2B-sized tower's keys as public conversion scripts write its vision_config (find_string
# "gemma4_vision"); a 1152-wide variant with the 31B-sized tower's width, head_dim, heads and
# switches from the same scripts, its depth and MLP width varied here (not a Hub shape), over a
# 5376-wide text model.
E2B_VISION = {"model_type": "gemma4_vision", "hidden_size": 768, "head_dim": 64, "num_attention_heads": 12,
              "num_key_value_heads": 12, "standardize": False, "use_clipped_linears": True}
BIG_VISION = {"model_type": "gemma4_vision", "hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
              "head_dim": 72, "num_attention_heads": 16, "num_key_value_heads": 16, "standardize": True,
              "use_clipped_linears": False}
BIG_TEXT = {"model_type": "gemma4_text", "hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 60,
            "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 256, "global_head_dim": 512,
            "num_global_key_value_heads": 4, "attention_k_eq_v": True, "hidden_size_per_layer_input": 0}

LM_LINEARS = r"model\.language_model\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"
TOWER_LINEARS = r"model\.vision_tower\.encoder\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)\.linear"


def build(cfg):
    return Gemma4Config.from_dict(cfg)


def params(cfg):
    with torch.device("meta"):
        m = Gemma4ForConditionalGeneration(build(cfg))
    count = lambda mod: sum(p.numel() for p in mod.parameters()) if mod is not None else 0
    total = count(m)
    tower, projector = count(m.model.vision_tower), count(m.model.embed_vision)
    audio = count(m.model.audio_tower) + count(m.model.embed_audio)
    return {"config": build(cfg).to_dict(), "param_count": total, "audio_params": audio,
            "param_count_by_part": {"vision_tower": tower, "projector": projector,
                                    "language_model": total - tower - projector - audio}}


def process(height, width, patch, kernel, max_soft_tokens):
    proc = Gemma4ImageProcessor(patch_size=patch, pooling_kernel_size=kernel, max_soft_tokens=max_soft_tokens)
    image = torch.randint(1, 255, (3, height, width), dtype=torch.uint8)
    return proc(images=[image], return_tensors="pt")


def image_tokens():
    cases = []
    for patch, kernel, max_soft in ((16, 3, 280), (16, 3, 70), (16, 3, 1120), (4, 3, 70), (14, 2, 140)):
        for h, w in ((224, 224), (448, 448), (768, 1024), (1024, 768), (1080, 1920), (200, 1600), (1600, 120),
                     (96, 96), (48, 96), (30, 40)):
            try:
                out = process(h, w, patch, kernel, max_soft)
            except ValueError as e:
                cases.append({"height": h, "width": w, "patch_size": patch, "pooling_kernel_size": kernel,
                              "max_soft_tokens": max_soft, "error": str(e)[:120]})
                continue
            pos = out["image_position_ids"][0]
            real = int((pos != -1).all(dim=-1).sum())
            cases.append({"height": h, "width": w, "patch_size": patch, "pooling_kernel_size": kernel,
                          "max_soft_tokens": max_soft, "patches": int(out["pixel_values"].shape[1]),
                          "real_patches": real, "soft_tokens": int(out["num_soft_tokens_per_image"][0])})
    return cases


def activation_case(mode, checkpointing, size, soft_tokens=MAX_SOFT_TOKENS, bf16=False):
    h, w = size
    cfg = {**TINY, "vision_config": {**TINY_VISION, "default_output_length": soft_tokens}}
    torch.manual_seed(0)
    m = Gemma4ForConditionalGeneration(build(cfg))
    if bf16:
        m = m.to(torch.bfloat16)
    m.train()
    if checkpointing:
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if mode == "frozen":
        m.model.vision_tower.requires_grad_(False)
    elif mode == "lora":
        m = peft.get_peft_model(m, peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=LM_LINEARS))
    elif mode == "lora-tower":
        m = peft.get_peft_model(m, peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0,
                                                   target_modules=f"({LM_LINEARS})|({TOWER_LINEARS})"))
    out = process(h, w, TINY_VISION["patch_size"], TINY_VISION["pooling_kernel_size"], soft_tokens)
    soft = int(out["num_soft_tokens_per_image"][0])
    text = torch.randint(10, 400, (1, 32))
    ids = torch.cat([torch.tensor([[501]]), torch.full((1, soft), 500), torch.tensor([[502]]), text], dim=1)
    stack = ModuleStack(m)
    rec = SavedTensorRecorder(m, stack)
    if checkpointing:
        hold_checkpoint_inputs(m, rec, stack)
    with rec.hooks():
        pixels = out["pixel_values"].to(torch.bfloat16 if bf16 else torch.float32)
        loss = m(input_ids=ids, labels=ids, pixel_values=pixels, image_position_ids=out["image_position_ids"]).loss
    entries = [e for e in rec.entries.values() if e["module"]]
    tower = [e for e in entries if "vision_tower" in e["module"]]
    projector = [e for e in entries if "embed_vision" in e["module"]]
    pos = out["image_position_ids"][0]
    budget = "" if soft_tokens == MAX_SOFT_TOKENS else f"-soft{soft_tokens}"
    key = f"gemma4@{w}x{h}{budget}{'-bf16' if bf16 else ''}-{mode}{'-ckpt' if checkpointing else ''}"
    case = {"config": cfg, "resolution": [w, h], "max_soft_tokens": soft_tokens,
            "patches": int(out["pixel_values"].shape[1]), "real_patches": int((pos != -1).all(dim=-1).sum()),
            "image_tokens": soft, "text_tokens": int(ids.shape[1]) - soft, "micro_batch": 1, "precision": "bf16" if bf16 else "fp32",
            "mode": mode, "checkpointing": "full" if checkpointing else "none", "lora_rank": 4,
            "attention": str(m.config.vision_config._attn_implementation) if hasattr(m.config, "vision_config") else None,
            "tower_saved_bytes": sum(e["nbytes"] for e in tower), "projector_saved_bytes": sum(e["nbytes"] for e in projector),
            # Block 0's tensors and those outside the blocks (the other block repeats block 0's).
            "listing": [{"module": e["module"].split("model.", 1)[-1], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"],
                         "via": e["via"]} for e in tower + projector if not re.search(r"layers\.[1-9]", e["module"])]}
    print(key, case["patches"], case["real_patches"], soft, case["tower_saved_bytes"], case["projector_saved_bytes"], flush=True)
    loss.backward()
    stack.remove()
    return key, case


def peft_targets():
    """What PEFT does with plain target names and with "all-linear" on the tiny model: the
    tower's linears are Gemma4ClippableLinear wrappers around an nn.Linear (`.linear`)."""
    out = {}
    try:
        peft.get_peft_model(Gemma4ForConditionalGeneration(build(TINY)),
                            peft.LoraConfig(r=4, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
        out["plain_names"] = "accepted"
    except ValueError as e:
        out["plain_names"] = str(e).split("\n")[0]
    pm = peft.get_peft_model(Gemma4ForConditionalGeneration(build(TINY)), peft.LoraConfig(r=4, target_modules="all-linear"))
    tower = [n[:-len(".lora_A")] for n, _ in pm.named_modules() if n.endswith(".lora_A") and "vision_tower" in n]
    out["all_linear_tower_modules"] = len(tower)
    out["all_linear_tower_names"] = sorted({n.split("vision_tower.")[1].split(".", 1)[0] + ":" + n.rsplit(".", 2)[-2] + "." + n.rsplit(".", 1)[-1] for n in tower})
    return out


def activations():
    out = {}
    for size in ((96, 96), (48, 96)):
        for mode in ("full", "frozen", "lora", "lora-tower"):
            for checkpointing in (False, True):
                key, case = activation_case(mode, checkpointing, size)
                out[key] = case
    # A budget twice as large (1260 padded patches): the blocks' masks grow with its square.
    for mode in ("full", "lora-tower"):
        key, case = activation_case(mode, False, (96, 96), soft_tokens=140)
        out[key] = case
    # Pure bf16 (`model.to(torch.bfloat16)`, bf16 pixels): the norms' fp32 copies, a bf16 mask.
    for mode in ("full", "lora-tower"):
        key, case = activation_case(mode, False, (96, 96), bf16=True)
        out[key] = case
    return out


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
            "params": {"gemma4@default-vision": params({"model_type": "gemma4", "vision_config": {}}),
                       "gemma4@e2b-vision": params({"model_type": "gemma4", "vision_config": E2B_VISION}),
                       "gemma4@variant-1152": params({"model_type": "gemma4", "text_config": BIG_TEXT, "vision_config": BIG_VISION}),
                       "gemma4@tiny": params(TINY),
                       "gemma4@tiny-audio": params({**TINY, "audio_config": {"model_type": "gemma4_audio", "hidden_size": 32,
                                                                             "num_hidden_layers": 1, "num_attention_heads": 2,
                                                                             "output_proj_dims": 48}})},
            "image_tokens": image_tokens(), "peft_targets": peft_targets(), "activations": activations()}
    for k, v in data["params"].items():
        print(k, v["param_count"], v["param_count_by_part"], v["audio_params"])
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
