#!/usr/bin/env python3
"""LFM2-MoE measured with transformers on CPU (tests/fixtures/measured/lfm2_moe.json).

No network, nothing downloaded: every model is built from Lfm2MoeConfig (its class default has no `layer_types`,
which the model indexes per layer, so every case gives one).

params: sum(p.numel()) of Lfm2MoeForCausalLM on torch.device("meta") (total), and the active count (dense
parameters + top-k of the experts' per layer), for LFM2-8B-A1B's shape with its class defaults (32 layers, 6
attention layers among short convolutions as `layer_types`) and variants: no expert bias, more dense layers,
untied head.

states: the bytes of the cache transformers builds after a prefill of a tiny config, fp32 and bf16, batch 2,
24 tokens: the conv states of the conv layers and the K/V of the attention layers.

activations: the tensors saved for backward by the whole model except the loss (every module's, counted once
per storage with saved_tensors_hooks, common.SavedTensorRecorder), fp32 on CPU, train mode, use_cache=False,
batch 2, two sequence lengths; with the expert bias and renormalised top-k (the class default) and without
both. The experts run the implementation transformers picks on CPU (recorded as "experts_implementation").

Run: /work/venv/bin/python tests/measure/lfm2_moe.py
"""
import json
import os

import torch
import transformers
from transformers import Lfm2MoeConfig, Lfm2MoeForCausalLM

from common import ModuleStack, SavedTensorRecorder, cache_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "lfm2_moe.json")

SCHEDULE_32 = ["attention" if i in (2, 6, 10, 14, 18, 21) else "conv" for i in range(32)]
PARAM_CASES = {
    "default": {"layer_types": SCHEDULE_32},
    "default@no_expert_bias": {"layer_types": SCHEDULE_32, "use_expert_bias": False},
    "default@dense4_untied": {"layer_types": SCHEDULE_32, "num_dense_layers": 4, "tie_word_embeddings": False},
    "small@experts16_top2": {"hidden_size": 512, "intermediate_size": 1536, "moe_intermediate_size": 384, "num_hidden_layers": 6, "num_attention_heads": 8,
                             "num_key_value_heads": 2, "num_experts": 16, "num_experts_per_tok": 2, "num_dense_layers": 1, "vocab_size": 4096, "conv_bias": True,
                             "layer_types": ["conv", "attention", "conv", "conv", "attention", "conv"]},
}

TINY = {"hidden_size": 64, "intermediate_size": 192, "moe_intermediate_size": 48, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_experts": 8, "num_experts_per_tok": 2, "num_dense_layers": 1, "vocab_size": 256, "layer_types": ["conv", "attention", "conv", "attention"]}


def record(c):
    return json.loads(json.dumps(c.to_dict(), default=str))


def params():
    out = {}
    for name, kw in PARAM_CASES.items():
        c = Lfm2MoeConfig(**kw)
        with torch.device("meta"):
            m = Lfm2MoeForCausalLM(c)
        total = sum(p.numel() for p in m.parameters())
        experts = sum(p.numel() for n, p in m.named_parameters() if ".experts." in n)
        active = total - experts + experts * c.num_experts_per_tok // c.num_experts
        out[name] = {"config": record(c), "param_count": total, "active_param_count": active}
        print(name, total, active)
    return out


def states():
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        c = Lfm2MoeConfig(**TINY)
        torch.manual_seed(0)
        m = Lfm2MoeForCausalLM(c).to(dtype).eval()
        ids = torch.randint(0, TINY["vocab_size"], (2, 24))
        with torch.no_grad():
            res = m(input_ids=ids, use_cache=True)
        cache = res.past_key_values
        held, _ = cache_bytes(cache)
        conv, kv = held["conv"], held["kv"]
        key = f"tiny@{str(dtype).replace('torch.', '')}"
        out[key] = {"config": record(c), "batch": 2, "tokens": 24, "conv_state_bytes": conv, "recurrent_state_bytes": 0, "kv_bytes": kv,
                    "cache": type(cache).__name__, "layer_classes": sorted({type(l).__name__ for l in cache.layers})}
        print(key, conv, kv, out[key]["layer_classes"])
    return out


def activations():
    out = {}
    for variant, extra in (("bias_norm", {}), ("plain", {"use_expert_bias": False, "norm_topk_prob": False})):
        for seq in (64, 96):
            c = Lfm2MoeConfig(**{**TINY, **extra, "use_cache": False})
            torch.manual_seed(0)
            m = Lfm2MoeForCausalLM(c)
            m.train()
            stack = ModuleStack(m)
            rec = SavedTensorRecorder(m, stack)
            ids = torch.randint(0, TINY["vocab_size"], (2, seq))
            with rec.hooks():
                loss = m(input_ids=ids, labels=ids).loss
            entries = list(rec.entries.values())
            total, _, _ = rec.totals()
            listing = [{"module": e["module"], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in entries]
            name = f"tiny_{variant}@s{seq}"
            out[name] = {"config": record(c), "batch": 2, "seq_len": seq, "precision": "fp32", "model_saved_bytes": total,
                         "experts_implementation": str(getattr(c, "_experts_implementation", None)), "listing": listing}
            print(name, total, out[name]["experts_implementation"])
            loss.backward()
            stack.remove()
    return out


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__, "params": params(), "states": states(), "activations": activations()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
