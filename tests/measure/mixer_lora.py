#!/usr/bin/env python3
"""LoRA adapters on the linears of hybrid models' token mixers, measured with PEFT on CPU
(tests/fixtures/measured/mixer_lora.json).

No network, nothing downloaded: every model is built from a configuration class, tiny, in fp32.

params: PEFT LoraConfig(r=8, target_modules=<the mixer's linears>) on the tiny model's mixer blocks:
the adapter parameters PEFT adds (its lora_A / lora_B tensors), and after one forward/backward
(torch fallback kernels) which of them got no gradient (the forward reads the base weight
directly: Mamba's dt_proj, `self.dt_proj.weight @ time_step`).

activations: what the adapters of ONE mixer block add to the tensors saved for backward:
the whole model's saved bytes (saved_tensors_hooks, each storage once; common.SavedTensorRecorder)
with adapters on the first two mixer blocks, minus those with adapters on the first only. The
second block's input then needs a gradient as it does in a LoRA run (nothing before the first
adapter does). Base weights frozen in both (PEFT). fp32, and bf16 autocast on CPU
(torch.autocast("cpu", torch.bfloat16); PEFT keeps fp32 adapters; autocast's bf16 copies of
the weights, common.ParamCastTracker, are not counted), batch 2, lora_dropout 0.
Only the adapters that also run on the CUDA path transformers takes in training are targeted
here (Mamba: in_proj; Mamba-2: in_proj; the fused kernels read x_proj/out_proj weights directly).

Versions of torch, transformers and PEFT are written into the fixture.
Run: /work/venv/bin/python tests/measure/mixer_lora.py
"""
import json
import math
import os

import peft
import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, AutoModelForCausalLM

from common import ParamCastTracker, SavedTensorRecorder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured")

RANK = 8

# Tiny configs whose first two mixer blocks are `first` and `second` (layer indices); `mixer`:
# the mixer module's name in a block; `linears`: the mixer's nn.Linear names (all, for the
# parameter count); `run`: those whose adapters run on the CUDA training path too (measured).
CASES = {
    "mamba": {
        "config": {"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256, "state_size": 8, "intermediate_size": 128, "time_step_rank": 8},
        "mixer": "mixer", "first": 0, "second": 1,
        "linears": ["in_proj", "x_proj", "dt_proj"], "run": ["in_proj"],
    },
    "mamba2": {
        "config": {"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256, "num_heads": 4, "head_dim": 32, "n_groups": 2, "state_size": 16, "chunk_size": 32},
        "mixer": "mixer", "first": 0, "second": 1,
        "linears": ["in_proj"], "run": ["in_proj"],
    },
    "bamba": {
        "config": {"model_type": "bamba", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "attn_layer_indices": [1], "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 2, "mamba_chunk_size": 32},
        "mixer": "mamba", "first": 0, "second": 2,
        "linears": ["in_proj", "out_proj"], "run": ["in_proj"],
    },
    "jamba": {
        "config": {"model_type": "jamba", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "num_experts": 1, "attn_layer_period": 2, "attn_layer_offset": 1, "mamba_d_state": 8, "mamba_dt_rank": 8, "use_mamba_kernels": False},
        "mixer": "mamba", "first": 0, "second": 2,
        "linears": ["in_proj", "x_proj", "dt_proj", "out_proj"], "run": ["in_proj", "x_proj", "out_proj"],
    },
    "qwen3_next": {
        "config": {"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16, "layer_types": ["linear_attention", "full_attention", "linear_attention"]},
        "mixer": "linear_attn", "first": 0, "second": 2,
        "linears": ["in_proj_qkvz", "in_proj_ba", "out_proj"], "run": ["in_proj_qkvz", "in_proj_ba", "out_proj"],
    },
    "qwen3_5_text": {
        "config": {"model_type": "qwen3_5_text", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16, "layer_types": ["linear_attention", "full_attention", "linear_attention"]},
        "mixer": "linear_attn", "first": 0, "second": 2,
        "linears": ["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj"], "run": ["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj"],
    },
    "lfm2": {
        "config": {"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 192, "vocab_size": 256, "full_attn_idxs": [1]},
        "mixer": "conv", "first": 0, "second": 2,
        "linears": ["in_proj", "out_proj"], "run": ["in_proj", "out_proj"],
    },
}


def build(config):
    cls = AutoConfig.for_model(config["model_type"]).__class__
    c = cls(**{**config, "use_cache": False})
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(c, dtype=torch.float32), c


def jsonable(d):
    def fix(v):
        if isinstance(v, float) and math.isinf(v):
            return "Infinity"
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v
    return fix(d)


def peft_model(case, layers, names):
    """PEFT's LoRA on the linears `names` of the blocks `layers` (`layers_to_transform`: PEFT
    0.21 rewrites a regex `target_modules` into plain names for some model types, which then
    match every block)."""
    m, c = build(case["config"])
    config = LoraConfig(r=RANK, lora_alpha=16, lora_dropout=0.0, target_modules=names, layers_to_transform=list(layers), layers_pattern="layers")
    return get_peft_model(m, config), c


def refusal(name, case):
    """PEFT's own check (peft/tuners/tuners_utils.py, _check_lora_target_modules_mamba) refuses
    out_proj in the Mamba-based model types it lists: recorded as PEFT words it."""
    try:
        peft_model(case, [case["first"], case["second"]], ["out_proj"])
    except ValueError as e:
        return str(e)
    return None


def params(name, case):
    pm, c = peft_model(case, [case["first"], case["second"]], case["linears"])
    lora = {n: p for n, p in pm.named_parameters() if "lora_" in n}
    pm.train()
    ids = torch.randint(0, case["config"]["vocab_size"], (2, 16))
    pm(input_ids=ids, labels=ids).loss.backward()
    no_grad = sorted({n.split(".lora_")[0].rsplit(".", 1)[-1] for n, p in lora.items() if p.grad is None})
    count = sum(p.numel() for p in lora.values())
    print(name, "adapter params", count, "no gradient on CPU:", no_grad)
    refused = refusal(name, case)
    print(name, "out_proj refused:", refused)
    return {"config": jsonable(c.to_dict()), "rank": RANK, "target_modules": case["linears"], "adapter_params": count, "no_gradient_on_cpu": no_grad, "out_proj_refused": refused}


def saved_bytes(case, layers, seq, autocast):
    pm, _ = peft_model(case, layers, case["run"])
    pm.train()
    rec = SavedTensorRecorder(pm)
    tracker = ParamCastTracker(rec.param_refs)
    torch.manual_seed(1)
    ids = torch.randint(0, case["config"]["vocab_size"], (2, seq))
    with rec.hooks(), tracker, torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        loss = pm(input_ids=ids, labels=ids).loss
    # Autocast's 16-bit copies of the weights (the adapters' own included) are not activations.
    total, _, _ = rec.totals(tracker.cast_refs)
    loss.backward()
    return total


def activations(name, case):
    out = {}
    for autocast in (False, True):
        for seq in (32, 64):
            one = saved_bytes(case, [case["first"]], seq, autocast)
            two = saved_bytes(case, [case["first"], case["second"]], seq, autocast)
            precision = "bf16-mixed" if autocast else "fp32"
            key = f"{name}@{precision}@s{seq}"
            out[key] = {"config": jsonable(build(case["config"])[1].to_dict()), "family": name, "precision": precision, "batch": 2, "seq_len": seq, "rank": RANK,
                        "target_modules": case["run"], "adapter_saved_bytes": two - one, "saved_first_adapted": one, "saved_both_adapted": two}
            print(key, two - one)
    return out


def main():
    fixture = {
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__},
        "method": __doc__.strip().split("\n\n")[1],
        "params": {},
        "activations": {},
    }
    for name, case in CASES.items():
        fixture["params"][name] = params(name, case)
        fixture["activations"].update(activations(name, case))
    with open(os.path.join(OUT, "mixer_lora.json"), "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
