#!/usr/bin/env python3
"""Trainable LoRA parameters of the published runs in tests/fixtures/published/multimodal_hybrid.json,
as transformers and PEFT's `target_modules="all-linear"` would make them.

No network: the model is built on torch.device("meta") from the catalogue's copy of its Hub
config.json (src/import/catalogue/), then every torch.nn.Linear but the LM head is counted as
PEFT's "all-linear" adapts it (peft/tuners/tuners_utils.py `_maybe_include_all_linear_layers`:
Linear and Conv1D modules, the output layer excluded), r x (in_features + out_features) each.

Qwen3-Next-80B-A3B in transformers 5.x keeps its routed experts as fused 3-D nn.Parameters
(`Qwen3NextExperts.gate_up_proj`, `.down_proj`), which no `target_modules` entry matches, so
only the attention, Gated DeltaNet, shared-expert and shared-expert-gate linears are adapted.

Usage: python tests/measure/published_lora_counts.py  (prints one JSON object)
"""
import json
import pathlib

import torch
import transformers
from transformers import AutoConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = {"Qwen/Qwen3-Next-80B-A3B-Instruct": ("Qwen--Qwen3-Next-80B-A3B-Instruct.json", 8)}


def count(config_file: str, rank: int) -> dict:
    cfg = json.loads((ROOT / "src/import/catalogue" / config_file).read_text())
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}
    conf = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(conf)
    lora, modules = 0, {}
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and not name.endswith("lm_head"):
            lora += rank * (module.in_features + module.out_features)
            leaf = name.split(".")[-1]
            modules[leaf] = modules.get(leaf, 0) + 1
    return {"rank": rank, "all_linear_lora_params": lora, "linear_modules": modules, "param_count": sum(p.numel() for p in model.parameters())}


if __name__ == "__main__":
    out = {"transformers": transformers.__version__}
    out.update({hub_id: count(f, r) for hub_id, (f, r) in CASES.items()})
    print(json.dumps(out, indent=1))
