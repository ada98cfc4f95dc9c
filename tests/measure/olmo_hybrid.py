#!/usr/bin/env python3
"""OLMo-Hybrid measured with transformers on CPU (tests/fixtures/measured/olmo_hybrid.json).

No network, nothing downloaded: every model is built from OlmoHybridConfig
(transformers 5.25 `models/olmo_hybrid/configuration_olmo_hybrid.py`, `modeling_olmo_hybrid.py`).

params: sum(p.numel()) of OlmoHybridForCausalLM on torch.device("meta") for the class default
config and variants: tied head, grouped KV heads and attention biases, explicit linear-attention
heads and widths, a given layer list.

states: the bytes of the DynamicCache transformers builds after a prefill of a tiny config, fp32
and bf16, batch 2, 24 tokens: conv and recurrent state tensors of the Gated DeltaNet layers and
the K/V of the attention layers.

activations: the tensors saved for backward by the whole model except the loss (once per
storage, common.SavedTensorRecorder), fp32 on CPU, train mode, use_cache=False, batch 2, two
sequence lengths. Without fla / causal_conv1d the Gated DeltaNet runs transformers' torch
fallbacks (`torch_chunk_gated_delta_rule`, `causal_conv1d_fn`'s F.conv1d), named in each case's
"path"; the mixers' and the rest's bytes are recorded apart.

Run: /work/venv/bin/python tests/measure/olmo_hybrid.py
"""
import json
import os

import torch
import transformers
from transformers import OlmoHybridConfig, OlmoHybridForCausalLM

from common import ModuleStack, SavedTensorRecorder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "olmo_hybrid.json")

SMALL = {"hidden_size": 256, "num_attention_heads": 8, "vocab_size": 1000, "pad_token_id": 0, "intermediate_size": 512, "num_hidden_layers": 8}

PARAM_CASES = {
    "default": {},
    "default@tied": {"tie_word_embeddings": True},
    "small@gqa_bias": {**SMALL, "num_key_value_heads": 2, "attention_bias": True},
    "small@linear_heads": {**SMALL, "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 32, "linear_value_head_dim": 48, "linear_conv_kernel_dim": 3},
    "small@layer_list": {**SMALL, "num_hidden_layers": 5, "layer_types": ["linear_attention", "full_attention", "linear_attention", "linear_attention", "full_attention"]},
    # Fewer than 4 layers: the last one becomes attention.
    "small@three_layers": {**SMALL, "num_hidden_layers": 3},
}

TINY = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, "pad_token_id": 0, "intermediate_size": 128, "num_hidden_layers": 4}


def record(c):
    return json.loads(json.dumps(c.to_dict(), default=str))


def params():
    out = {}
    for name, kw in PARAM_CASES.items():
        c = OlmoHybridConfig(**kw)
        with torch.device("meta"):
            m = OlmoHybridForCausalLM(c)
        n = sum(p.numel() for p in m.parameters())
        out[name] = {"config": record(c), "param_count": n, "attention_layers": c.layer_types.count("full_attention")}
        print(name, n, out[name]["attention_layers"])
    return out


def states():
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        c = OlmoHybridConfig(**TINY)
        torch.manual_seed(0)
        m = OlmoHybridForCausalLM(c).to(dtype).eval()
        ids = torch.randint(0, TINY["vocab_size"], (2, 24))
        with torch.no_grad():
            res = m(input_ids=ids, use_cache=True)
        cache = res.past_key_values
        sums = {"conv": 0, "recurrent": 0, "kv": 0}
        dtypes = set()
        for layer in cache.layers:
            for attr, kind in (("conv_states", "conv"), ("recurrent_states", "recurrent"), ("keys", "kv"), ("values", "kv")):
                held = getattr(layer, attr, None)
                held = list(held.values()) if isinstance(held, dict) else held if isinstance(held, list) else [held]
                for t in held:
                    if isinstance(t, torch.Tensor) and t.numel() > 0:
                        sums[kind] += t.numel() * t.element_size()
                        dtypes.add(f"{kind}:{t.dtype}")
        key = f"tiny@{str(dtype).replace('torch.', '')}"
        out[key] = {"config": record(c), "batch": 2, "tokens": 24, "conv_state_bytes": sums["conv"], "recurrent_state_bytes": sums["recurrent"],
                    "kv_bytes": sums["kv"], "dtypes": sorted(dtypes), "cache": type(cache).__name__,
                    "layer_classes": sorted({type(l).__name__ for l in cache.layers})}
        print(key, sums, sorted(dtypes), out[key]["cache"], out[key]["layer_classes"])
    return out


def activations():
    out = {}
    for seq in (64, 128):
        c = OlmoHybridConfig(**{**TINY, "use_cache": False})
        torch.manual_seed(0)
        m = OlmoHybridForCausalLM(c)
        m.train()
        stack = ModuleStack(m)
        rec = SavedTensorRecorder(m, stack)
        ids = torch.randint(0, TINY["vocab_size"], (2, seq))
        with rec.hooks():
            loss = m(input_ids=ids, labels=ids).loss
        entries = list(rec.entries.values())
        # Every module under an OlmoHybridGatedDeltaNet (named "linear_attn" in its layers).
        mixer = [e for e in entries if e["module"] and "linear_attn" in e["module"].split(".")]
        total, _, _ = rec.totals()
        listing = [{"module": e["module"], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in entries]
        out[f"tiny@s{seq}"] = {
            "config": record(c), "batch": 2, "seq_len": seq, "precision": "fp32",
            "path": "torch fallbacks of OlmoHybridGatedDeltaNet (no fla / causal_conv1d): causal_conv1d_fn's F.conv1d and "
                    "torch_chunk_gated_delta_rule, OlmoHybridRMSNormGated in torch",
            "model_saved_bytes": total,
            "mixer_saved_bytes": sum(e["nbytes"] for e in mixer),
            "listing": listing,
        }
        print(seq, total, out[f"tiny@s{seq}"]["mixer_saved_bytes"])
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
