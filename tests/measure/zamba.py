#!/usr/bin/env python3
"""Zamba (v1) measured with transformers on CPU (tests/fixtures/measured/zamba.json).

No network, nothing downloaded: every model is built from ZambaConfig
(transformers 5.25 `models/zamba/configuration_zamba.py`, `modeling_zamba.py`).

params: sum(p.numel()) of ZambaForCausalLM on torch.device("meta") (parameters() yields each
tied parameter once: `ZambaModel.__init__` ties every hybrid layer's `shared_transf` to the
first one's through `_tied_weights_keys`, which `get_expanded_tied_weights_keys` applies only
with `tie_word_embeddings`) for the class default config and variants: untied head (one shared
block per hybrid layer), Mamba heads, grouped KV heads, biases, explicit dt rank and head dim.

states: the bytes of the cache transformers 5.25 builds for Zamba (`ZambaModel.forward`:
`DynamicCache(config=self.config)`) after a prefill of a tiny config, fp32 and bf16, batch 2,
24 tokens: conv and recurrent state tensors of every layer and the K/V of the hybrid layers.

activations: the tensors saved for backward by the whole model except the loss (once per
storage, common.SavedTensorRecorder), fp32 on CPU, train mode, use_cache=False, batch 2, two
sequence lengths. Without mamba_ssm / causal_conv1d the mixer runs transformers' torch
fallbacks of `causal_conv1d_fn` and `mamba_selective_scan` (the sequential loop: the
associative scan is taken only under torch.compile), named in each case's "path"; the mixers'
and the rest's bytes are recorded apart.

Run: /work/venv/bin/python tests/measure/zamba.py
"""
import json
import os

import torch
import transformers
from transformers import ZambaConfig, ZambaForCausalLM

from common import ModuleStack, SavedTensorRecorder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "zamba.json")

SMALL = {"hidden_size": 256, "num_attention_heads": 8, "num_key_value_heads": 8, "n_mamba_heads": 4, "mamba_d_state": 16, "vocab_size": 1000,
         "intermediate_size": 512, "num_hidden_layers": 8}

PARAM_CASES = {
    "default": {},
    # tie_word_embeddings=False unties the shared blocks as well (modeling_utils.py
    # get_expanded_tied_weights_keys returns {}): one block per hybrid layer.
    "default@untied": {"tie_word_embeddings": False},
    "small@gqa_bias": {**SMALL, "num_key_value_heads": 4, "mamba_proj_bias": True, "mamba_conv_bias": False},
    "small@dt_rank_head_dim": {**SMALL, "mamba_dt_rank": 24, "attention_head_dim": 48, "n_mamba_heads": 1, "mamba_expand": 3},
    "small@layer_list": {**SMALL, "num_hidden_layers": 5, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "hybrid"]},
    "small@layer_list_untied": {**SMALL, "num_hidden_layers": 5, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "hybrid"], "tie_word_embeddings": False},
}

TINY = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4, "n_mamba_heads": 2, "mamba_d_state": 16, "vocab_size": 256,
        "intermediate_size": 128, "num_hidden_layers": 5, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "hybrid"]}


def record(c):
    return json.loads(json.dumps(c.to_dict(), default=str))


def params():
    out = {}
    for name, kw in PARAM_CASES.items():
        c = ZambaConfig(**kw)
        with torch.device("meta"):
            m = ZambaForCausalLM(c)
        n = sum(p.numel() for p in m.parameters())
        # parameters() names a tied parameter once, under the first layer holding it.
        shared = {k.split(".shared_transf")[0] for k, _ in m.named_parameters() if ".shared_transf." in k}
        out[name] = {"config": record(c), "param_count": n, "hybrid_layers": c.layers_block_type.count("hybrid"), "distinct_shared_blocks": len(shared)}
        print(name, n, out[name]["hybrid_layers"], out[name]["distinct_shared_blocks"])
    return out


def lora():
    """PEFT LoRA (r = 4) on the shared block's q_proj, v_proj, gate_proj, up_proj and the mixers'
    in_proj: transformers ties the block's parameters, not its modules, so PEFT adapts every
    invocation's module."""
    from peft import LoraConfig, get_peft_model
    c = ZambaConfig(**TINY)
    torch.manual_seed(0)
    m = ZambaForCausalLM(c)
    base = sum(p.numel() for p in m.parameters())
    targets = ["q_proj", "v_proj", "gate_proj", "up_proj", "in_proj"]
    modules = sum(1 for n, _ in m.named_modules() if n.split(".")[-1] in targets)
    p = get_peft_model(m, LoraConfig(r=4, lora_alpha=8, target_modules=targets, lora_dropout=0.0))
    trainable = sum(t.numel() for t in p.parameters() if t.requires_grad)
    print("lora", base, modules, trainable)
    return {"tiny@r4": {"config": record(c), "rank": 4, "targets": targets, "base_params": base, "adapted_modules": modules, "trainable_params": trainable}}


def states():
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        c = ZambaConfig(**TINY)
        torch.manual_seed(0)
        m = ZambaForCausalLM(c).to(dtype).eval()
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
        c = ZambaConfig(**{**TINY, "use_cache": False})
        torch.manual_seed(0)
        m = ZambaForCausalLM(c)
        m.train()
        stack = ModuleStack(m)
        rec = SavedTensorRecorder(m, stack)
        ids = torch.randint(0, TINY["vocab_size"], (2, seq))
        with rec.hooks():
            loss = m(input_ids=ids, labels=ids).loss
        entries = list(rec.entries.values())
        # Every module under a ZambaMambaMixer (named "mamba" in each Mamba decoder layer).
        mixer = [e for e in entries if e["module"] and "mamba" in e["module"].split(".")]
        total, _, _ = rec.totals()
        listing = [{"module": e["module"], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in entries]
        out[f"tiny@s{seq}"] = {
            "config": record(c), "batch": 2, "seq_len": seq, "precision": "fp32",
            "path": "torch fallbacks of ZambaMambaMixer (no mamba_ssm / causal_conv1d): causal_conv1d_fn's F.conv1d and "
                    "mamba_selective_scan's sequential loop, per Mamba head",
            "model_saved_bytes": total,
            "mixer_saved_bytes": sum(e["nbytes"] for e in mixer),
            "listing": listing,
        }
        print(seq, total, out[f"tiny@s{seq}"]["mixer_saved_bytes"])
        loss.backward()
        stack.remove()
    return out


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__, "params": params(), "lora": lora(), "states": states(), "activations": activations()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
