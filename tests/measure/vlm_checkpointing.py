#!/usr/bin/env python3
"""What a trained vision tower keeps for backward under full activation checkpointing
(tests/fixtures/measured/vlm_checkpointing.json), against the same run without it.

transformers' `gradient_checkpointing_enable()` sets `gradient_checkpointing` on every
`GradientCheckpointingLayer` of the model, the vision tower's blocks included
(`modeling_utils.py` `_set_gradient_checkpointing`), so each tower block keeps only the inputs
its non-reentrant checkpoint holds. The tiny configs and inputs are vlm.py's (`TINY_VLM`,
`vlm_inputs`); fp32 on CPU, train mode, the tower trained; the checkpoints' held inputs are
recorded as activations.py records them (the callable's tensor arguments, once per storage).

Run: /work/venv/bin/python tests/measure/vlm_checkpointing.py
"""
import json
import os

import torch
import transformers
from transformers import AutoConfig, AutoModelForImageTextToText

from common import ModuleStack, SavedTensorRecorder, hold_checkpoint_inputs
from vlm import ROOT, TINY_VLM, vlm_inputs


def main():
    out = {}
    for name in ("qwen2_5_vl", "llava", "gemma3"):
        cfg = TINY_VLM[name]
        for checkpointing in ("none", "full"):
            config = AutoConfig.for_model(cfg["model_type"]).__class__.from_dict(cfg)
            torch.manual_seed(0)
            m = AutoModelForImageTextToText.from_config(config)
            m.train()
            if checkpointing == "full":
                m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            ids, extra, resolution, image_tokens = vlm_inputs(name, cfg)
            stack = ModuleStack(m)
            rec = SavedTensorRecorder(m, stack)
            if checkpointing == "full":
                hold_checkpoint_inputs(m, rec, stack)
            with rec.hooks():
                loss = m(input_ids=ids, labels=ids, **extra).loss
            is_projector = lambda mod: "merger" in mod or "multi_modal_projector" in mod or "connector" in mod
            is_tower = lambda mod: ("visual" in mod or "vision_tower" in mod or "vision_model" in mod) and not is_projector(mod)
            tower = sum(e["nbytes"] for e in rec.entries.values() if e["module"] and is_tower(e["module"]))
            total, _, _ = rec.totals()
            key = f"{name}@{checkpointing}"
            out[key] = {"config": cfg, "resolution": resolution, "text_tokens": 32, "image_tokens": image_tokens, "micro_batch": 1, "precision": "fp32",
                        "checkpointing": checkpointing, "tower_saved_bytes": tower, "model_saved_bytes": total,
                        "tower_listing": [{"module": e["module"], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "via": e["via"]}
                                          for e in rec.entries.values() if e["module"] and is_tower(e["module"])]}
            print(key, tower, total)
            loss.backward()
            stack.remove()
    path = os.path.join(ROOT, "tests", "fixtures", "measured", "vlm_checkpointing.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "cases": out}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
