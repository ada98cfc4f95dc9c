#!/usr/bin/env python3
"""What a FROZEN vision tower keeps for backward when the language model is LoRA-trained with
full activation checkpointing (tests/fixtures/measured/vlm_frozen_checkpointing.json).

transformers' `gradient_checkpointing_enable()` ends with `enable_input_require_grads()`
(`modeling_utils.py`, transformers 5.25 lines 3192-3200), and so does PEFT's
`_prepare_model_for_gradient_checkpointing` (`peft_model.py` 728-735): a forward hook that makes
the output of `get_input_embeddings()` require grad, on EVERY `PreTrainedModel` inside the model
that exposes one (`enable_input_require_grads`, lines 2149-2182) -- the vision tower's patch
embedding too, where its class resolves one. The frozen tower then runs under autograd: its
checkpointed blocks hold their inputs and its frozen projector saves what its input's gradient
needs. Seen first on an H200 (`gpu_peak_owners.json`, Qwen2.5-VL-7B at 980 x 980: 31 tower
block inputs of 12.5 MB live at the step's peak).

Each tiny config of vlm.py (`TINY_VLM`, `vlm_inputs`), fp32 on CPU, train mode: PEFT LoRA r 4 on
the language model's q/k/v/o and MLP linears, every other weight frozen, with and without
checkpointing. Recorded: which PreTrainedModels got the hook, the tower's and the projector's
saved tensors (a checkpoint's held arguments counted only when one of them requires grad; the
checkpoint's own `_NoopSaveInputs` record of them is seen through the saved-tensor hooks).
`hooked_embeddings` names the modules `enable_input_require_grads` hooked: Qwen3-VL's vision
model resolves no input embedding, so its tower is not among them.

Run: /work/venv/bin/python tests/measure/vlm_frozen_checkpointing.py
"""
import json
import os

import peft
import torch
import transformers
from transformers import AutoConfig, AutoModelForImageTextToText

from common import ModuleStack, SavedTensorRecorder, hold_checkpoint_inputs
from vlm import ROOT, TINY_VLM, vlm_inputs

LM_LINEARS = r"(?!.*(visual|vision_tower|vision_model|merger|projector|connector|mlp1)).*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"


def is_projector(mod):
    return any(k in mod for k in ("merger", "multi_modal_projector", "connector", "mlp1"))


def is_tower(mod):
    return any(k in mod for k in ("visual", "vision_tower", "vision_model")) and not is_projector(mod)


def main():
    out = {}
    for name, cfg in TINY_VLM.items():
        for checkpointing in ("none", "full"):
            config = AutoConfig.for_model(cfg["model_type"]).__class__.from_dict(cfg)
            torch.manual_seed(0)
            m = AutoModelForImageTextToText.from_config(config)
            m.train()
            if checkpointing == "full":
                m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            m = peft.get_peft_model(m, peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=LM_LINEARS))
            hooked = [n for n, mod in m.named_modules()
                      if any(getattr(h, "__name__", "") == "make_inputs_require_grads" for h in mod._forward_hooks.values())]
            ids, extra, resolution, image_tokens = vlm_inputs(name, cfg)
            stack = ModuleStack(m)
            rec = SavedTensorRecorder(m, stack)
            if checkpointing == "full":
                hold_checkpoint_inputs(m, rec, stack, only_if_grad=True)
            with rec.hooks():
                loss = m(input_ids=ids, labels=ids, **extra).loss
            entries = [e for e in rec.entries.values() if e["module"]]
            tower = [e for e in entries if is_tower(e["module"])]
            projector = [e for e in entries if is_projector(e["module"])]
            key = f"{name}@{checkpointing}"
            out[key] = {"config": cfg, "resolution": resolution, "text_tokens": 32, "image_tokens": image_tokens,
                        "micro_batch": 1, "precision": "fp32", "checkpointing": checkpointing, "lora_rank": 4,
                        "hooked_embeddings": hooked, "tower_saved_bytes": sum(e["nbytes"] for e in tower),
                        "projector_saved_bytes": sum(e["nbytes"] for e in projector),
                        "tower_listing": [{"module": e["module"], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "via": e["via"]}
                                          for e in tower + projector]}
            print(key, hooked, out[key]["tower_saved_bytes"], out[key]["projector_saved_bytes"], flush=True)
            loss.backward()
            stack.remove()
    path = os.path.join(ROOT, "tests", "fixtures", "measured", "vlm_frozen_checkpointing.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
                   "cases": out}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
