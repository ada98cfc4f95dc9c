#!/usr/bin/env python3
"""LoRA adapters on vision towers' linears, measured with PEFT on CPU
(tests/fixtures/measured/tower_lora.json).

No network, nothing downloaded: the tiny VLMs of vlm.py (TINY_VLM, vlm_inputs: Qwen2.5-VL, Qwen3-VL,
Gemma 3 with SigLIP, LLaVA with CLIP), in fp32.

PEFT LoraConfig(r=8, lora_alpha=16, lora_dropout=0, target_modules=<a regex for the tower
blocks' linears only>): Qwen2.5-VL's `attn.qkv`, `attn.proj` and `mlp.gate_proj/up_proj/
down_proj`; Qwen3-VL's `attn.qkv`, `attn.proj`, `mlp.linear_fc1/linear_fc2`; SigLIP's and CLIP's `self_attn.q_proj/k_proj/v_proj/out_proj` and `mlp.fc1/fc2`.
Everything else is frozen (PEFT), the language model and the projector included.
Recorded: the adapter parameters PEFT adds, and the bytes saved for backward (saved_tensors_hooks,
each storage once, common.SavedTensorRecorder) by modules under the tower and under the
projector, one sample with one image, train mode; with the adapted modules' names.

Run: /work/venv/bin/python tests/measure/tower_lora.py
"""
import json
import os

import peft
import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, AutoModelForImageTextToText

from common import ModuleStack, SavedTensorRecorder
from vlm import TINY_VLM, vlm_inputs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "tower_lora.json")
RANK = 8

TOWER_LINEARS = (r".*(visual\.blocks|vision_tower\.encoder\.layers)\.\d+\."
                 r"(attn\.qkv|attn\.proj|self_attn\.(q|k|v|out)_proj|mlp\.(gate_proj|up_proj|down_proj|fc1|fc2|linear_fc1|linear_fc2))")


def measure(name):
    cfg = TINY_VLM[name]
    config = AutoConfig.for_model(cfg["model_type"]).__class__.from_dict(cfg)
    torch.manual_seed(0)
    m = AutoModelForImageTextToText.from_config(config)
    pm = get_peft_model(m, LoraConfig(r=RANK, lora_alpha=16, lora_dropout=0.0, target_modules=TOWER_LINEARS))
    adapted = sorted({n.split(".lora_A")[0].split(".")[-1] for n, _ in pm.named_modules() if n.endswith("lora_A")})
    modules = sum(1 for n, _ in pm.named_modules() if n.endswith("lora_A"))
    params = sum(p.numel() for n, p in pm.named_parameters() if "lora_" in n)
    pm.train()
    ids, extra, resolution, image_tokens = vlm_inputs(name, cfg)
    stack = ModuleStack(pm)
    rec = SavedTensorRecorder(pm, stack)
    with rec.hooks():
        loss = pm(input_ids=ids, labels=ids, **extra).loss

    def part(pred):
        return sum(e["nbytes"] for e in rec.entries.values() if e["module"] and pred(e["module"]))

    is_projector = lambda mod: "merger" in mod or "multi_modal_projector" in mod or "connector" in mod
    is_tower = lambda mod: ("visual" in mod or "vision_tower" in mod or "vision_model" in mod) and not is_projector(mod)
    total, _, _ = rec.totals()
    loss.backward()
    no_grad = sum(1 for n, p in pm.named_parameters() if "lora_" in n and p.grad is None)
    stack.remove()
    case = {"config": cfg, "resolution": resolution, "text_tokens": 32, "image_tokens": image_tokens, "micro_batch": 1, "precision": "fp32",
            "rank": RANK, "adapted_modules": adapted, "adapted_module_count": modules, "adapter_params": params,
            "adapter_tensors_without_gradient": no_grad,
            "tower_saved_bytes": part(is_tower), "projector_saved_bytes": part(is_projector), "model_saved_bytes": total}
    print(name, {k: v for k, v in case.items() if k != "config"})
    return case


def main():
    out = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__}, "cases": {}}
    for name in ("qwen2_5_vl", "qwen3_vl", "gemma3", "llava"):
        out["cases"][name] = measure(name)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
