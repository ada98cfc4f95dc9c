#!/usr/bin/env python3
"""Trainable LoRA parameters of the published runs in tests/fixtures/published/multimodal_hybrid.json,
as transformers and PEFT's `target_modules="all-linear"` would make them.

No network: the model is built on torch.device("meta") from the catalogue's copy of its Hub
config.json (src/import/catalogue/), then every torch.nn.Linear but the LM head is counted as
PEFT's "all-linear" adapts it (peft/tuners/tuners_utils.py `_maybe_include_all_linear_layers`:
Linear and Conv1D modules, the output layer excluded), r x (in_features + out_features) each.

With a list of target names, the Linear modules whose last name component is in it (PEFT's
suffix match). Qwen3-Next-80B-A3B (and Jamba) in transformers 5.x keep their routed experts as fused 3-D
nn.Parameters (`Qwen3NextExperts.gate_up_proj`, `.down_proj`), which this module count leaves out
(module_lora_params). PEFT 0.21.2 itself may still adapt them (peft/tuners/lora/layer.py
`ParamWrapper`, rank r per expert): peft_lora_params is what `get_peft_model` makes on the meta
device with the same targets.

Usage: python tests/measure/published_lora_counts.py  (prints one JSON object)
"""
import json
import pathlib

import torch
import transformers
from transformers import AutoConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Hub id: (catalogue file, rank, target module names or None for "all-linear").
CASES = {
    "Qwen/Qwen3-Next-80B-A3B-Instruct": ("Qwen--Qwen3-Next-80B-A3B-Instruct.json", 8, None),
    # The AI21-Jamba-1.5-Mini model card's LoRA example (its embed_tokens adapter left out).
    "ai21labs/AI21-Jamba-1.5-Mini": ("ai21labs--AI21-Jamba-1.5-Mini.json", 8, ["x_proj", "in_proj", "out_proj", "gate_proj", "up_proj", "down_proj", "q_proj", "k_proj", "v_proj", "o_proj"]),
}


def count(config_file: str, rank: int, targets) -> dict:
    cfg = json.loads((ROOT / "src/import/catalogue" / config_file).read_text())
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}
    conf = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(conf)
    lora, modules = 0, {}
    for name, module in model.named_modules():
        leaf = name.split(".")[-1]
        wanted = leaf != "lm_head" if targets is None else leaf in targets
        if isinstance(module, torch.nn.Linear) and wanted:
            lora += rank * (module.in_features + module.out_features)
            modules[leaf] = modules.get(leaf, 0) + 1
    from peft import LoraConfig, get_peft_model
    with torch.device("meta"):
        peft_model = get_peft_model(model, LoraConfig(r=rank, target_modules=targets or "all-linear"))
    peft_params = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    return {"rank": rank, "targets": targets or "all-linear", "module_lora_params": lora, "peft_lora_params": peft_params, "linear_modules": modules,
            "param_count": sum(p.numel() for n, p in peft_model.named_parameters() if "lora_" not in n)}


if __name__ == "__main__":
    out = {"transformers": transformers.__version__}
    out.update({hub_id: count(f, r, t) for hub_id, (f, r, t) in CASES.items()})
    print(json.dumps(out, indent=1))
