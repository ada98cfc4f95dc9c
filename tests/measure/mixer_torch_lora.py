#!/usr/bin/env python3
"""The hybrid mixers' torch fallback under PEFT LoRA, measured on CPU
(tests/fixtures/measured/mixer_torch_lora.json), for `training.mixer_kernels: "torch"` with
`training.lora`: the mixers' own tensors with their base weights frozen (Zamba's
`x_proj_weight` and `dt_proj_weight` among them, parameters PEFT cannot adapt), the
adapters on the mixers' input projections.

The tiny configs of tests/measure/mixer_torch.py (CASES), PEFT LoraConfig(r=8,
lora_dropout=0, target_modules=<the mixer's input projections>) on every block, fp32 and pure
bf16 (PEFT's adapters then fp32), batch 2, s = 40 and 100; the first mixer block's saved
tensors (saved_tensors_hooks, once per storage, common.SavedTensorRecorder), those only a
dropped branch keeps (as mixer_torch.py), and those of the adapters (modules `lora_*`).
No network, nothing downloaded.
Run: /work/venv/bin/python tests/measure/mixer_torch_lora.py
"""
import itertools
import json
import os

import peft
import torch
import transformers
from peft import LoraConfig, get_peft_model

from common import ModuleStack, SavedTensorRecorder
from mixer_torch import CASES, DTYPES, build, jsonable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "mixer_torch_lora.json")

RANK = 8
# The mixer's input projections (PEFT module names) and Headroom's target names for them.
TARGETS = {
    "mamba": (["in_proj"], ["mixer-in"]),
    "jamba": (["in_proj"], ["mixer-in"]),
    "zamba": (["in_proj"], ["mixer-in"]),
    "qwen3_next": (["in_proj_qkvz", "in_proj_ba"], ["mixer-in", "mixer-gates"]),
    "qwen3_5_text": (["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a"], ["mixer-in", "mixer-gates"]),
    "falcon_h1_ungated": (["in_proj"], ["mixer-in"]),
    "mamba2": (["in_proj"], ["mixer-in"]),
}


def main():
    cases = {}
    for name, (modules, targets) in TARGETS.items():
        cfg, attr = CASES[name]
        for (prec, dtype), seq in itertools.product(DTYPES.items(), (40, 100)):
            m, c = build(cfg, dtype)
            pm = get_peft_model(m, LoraConfig(r=RANK, lora_alpha=16, lora_dropout=0.0, target_modules=modules))
            pm.train()
            stack = ModuleStack(pm)
            rec = SavedTensorRecorder(pm, stack)
            torch.manual_seed(0)
            ids = torch.randint(0, cfg["vocab_size"], (2, seq))
            with rec.hooks():
                loss = pm(input_ids=ids, labels=ids).loss
            rec.annotate_from_graph(loss.grad_fn)
            entries = list(rec.entries.values())

            def layer(e):
                parts = (e["module"] or "").split(".")
                return parts[parts.index("layers") + 1] if attr in parts and "layers" in parts else None

            first_layer = str(min(int(layer(e)) for e in entries if layer(e) is not None))
            first = [e for e in entries if layer(e) == first_layer]
            key = f"{name}@lora@{prec}@s{seq}"
            cases[key] = {
                "config": json.loads(json.dumps(jsonable(c.to_dict()), default=str)),
                "batch": 2, "seq_len": seq, "precision": prec, "rank": RANK,
                "peft_target_modules": modules, "targets": targets,
                "first_mixer_saved_bytes": sum(e["nbytes"] for e in first),
                "first_mixer_unreachable_bytes": sum(e["nbytes"] for e in first if not e["savers"]),
                # What the adapters themselves keep (their input and lora_A's output).
                "first_mixer_adapter_bytes": sum(e["nbytes"] for e in first if ".lora_" in e["module"]),
                "first_mixer_listing": [{"module": e["module"].split(attr, 1)[-1] or "<mixer>", "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in first],
            }
            print(key, cases[key]["first_mixer_saved_bytes"], cases[key]["first_mixer_unreachable_bytes"])
            loss.backward()
            stack.remove()
    out = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__, "cases": cases}
    with open(os.environ.get("OUT_PATH", OUT), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
