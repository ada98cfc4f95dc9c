#!/usr/bin/env python3
"""Zamba2 measured with transformers on CPU (tests/fixtures/measured/zamba2.json).

No network, nothing downloaded: every model is built from Zamba2Config.

params: sum(p.numel()) of Zamba2ForCausalLM on torch.device("meta") (parameters() yields
each tied parameter once: the shared attention+MLP blocks, `num_mem_blocks` of them, are
tied across the hybrid layers by `Zamba2Model.get_layers`' `_tied_weights_keys`) for the
class default config and variants: the per-invocation q/k/v adapters on and off
(`use_shared_attention_adapter`), `num_mem_blocks` 1 and 2, untied LM head, biases,
grouped KV heads, a layer list given as `layers_block_type`.

states: the bytes of the DynamicCache transformers 5.25 builds for Zamba2
(`Zamba2Model.forward`: `DynamicCache(config=self.config)`; its "hybrid" layers are
`LinearAttentionAndFullAttentionLayer`, cache_utils.py) after a prefill of a tiny config,
fp32 and bf16, batch 2, 24 tokens: conv and recurrent state tensors of every layer and the
K/V of the hybrid layers (one per invocation of a shared block).

activations: the tensors saved for backward by the whole model except the loss (every
module's, counted once per storage with saved_tensors_hooks, common.SavedTensorRecorder),
fp32 on CPU, train mode, use_cache=False, batch 2, two sequence lengths. Without mamba_ssm /
causal_conv1d the Mamba-2 mixer runs transformers' torch fallback (`torch_forward`), named
in each case's "path"; the mixer's and the rest's bytes are recorded apart.

Run: /work/venv/bin/python tests/measure/zamba2.py
"""
import json
import os

import torch
import transformers
from transformers import Zamba2Config, Zamba2ForCausalLM

from common import ModuleStack, SavedTensorRecorder, cache_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "zamba2.json")

SMALL = {"hidden_size": 256, "num_attention_heads": 8, "n_mamba_heads": 4, "mamba_d_state": 16, "vocab_size": 1000, "adapter_rank": 16,
         "num_hidden_layers": 8,
         "layers_block_type": ["mamba", "hybrid", "mamba", "mamba", "hybrid", "mamba", "hybrid", "mamba"]}

PARAM_CASES = {
    "default": {},
    "default@attention_adapters": {"use_shared_attention_adapter": True},
    "default@mem_blocks2": {"num_mem_blocks": 2},
    "default@mem_blocks2_adapters": {"num_mem_blocks": 2, "use_shared_attention_adapter": True},
    # tie_word_embeddings=False unties the shared blocks as well (modeling_utils.py
    # get_expanded_tied_weights_keys returns {}): one block per hybrid layer.
    "default@mem_blocks2_adapters_untied": {"num_mem_blocks": 2, "use_shared_attention_adapter": True, "tie_word_embeddings": False},
    "small@mem_blocks2_gqa_bias": {**SMALL, "num_mem_blocks": 2, "num_key_value_heads": 4, "add_bias_linear": True, "use_conv_bias": False, "mamba_ngroups": 2, "intermediate_size": 384},
    "small@mem_blocks3_adapters": {**SMALL, "num_mem_blocks": 3, "use_shared_attention_adapter": True, "use_mem_rope": True},
    # More shared blocks than hybrid layers: only as many blocks as hybrid layers are built.
    "small@mem_blocks3_two_hybrid": {**SMALL, "num_mem_blocks": 3, "use_shared_attention_adapter": True, "num_hidden_layers": 4, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"]},
    # A hybrid_layer_ids given in the config outlives the layer list (transformers keeps it):
    # every block then holds adapter slots for each id.
    "small@given_hybrid_layer_ids": {**SMALL, "num_mem_blocks": 2, "num_hidden_layers": 4, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"], "hybrid_layer_ids": [1, 3, 5, 7, 9]},
    "small@mem_blocks3_adapters_untied": {**SMALL, "num_mem_blocks": 3, "use_shared_attention_adapter": True, "tie_word_embeddings": False},
    "small@given_hybrid_layer_ids_untied": {**SMALL, "num_mem_blocks": 2, "num_hidden_layers": 4, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"], "hybrid_layer_ids": [1, 3, 5, 7, 9], "tie_word_embeddings": False},
}

TINY = {"hidden_size": 64, "num_attention_heads": 4, "n_mamba_heads": 4, "mamba_d_state": 16, "mamba_ngroups": 1, "chunk_size": 32, "vocab_size": 256, "adapter_rank": 8,
        "intermediate_size": 128, "num_mem_blocks": 2, "use_shared_attention_adapter": True, "use_mem_rope": True,
        "num_hidden_layers": 5, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "hybrid"]}


def config(kw):
    return Zamba2Config(**kw)


def record(c):
    d = c.to_dict()
    # Keys the reader needs, as a Hub config.json has them (model_type included by to_dict).
    return json.loads(json.dumps(d, default=str))


def params():
    out = {}
    for name, kw in PARAM_CASES.items():
        c = config(kw)
        with torch.device("meta"):
            m = Zamba2ForCausalLM(c)
        n = sum(p.numel() for p in m.parameters())
        shared = {k.split(".shared_transformer")[0] for k, _ in m.named_parameters() if ".shared_transformer." in k}
        out[name] = {"config": record(c), "param_count": n, "hybrid_layers": c.layers_block_type.count("hybrid"), "hybrid_layer_ids": len(c.hybrid_layer_ids), "distinct_shared_blocks": len(shared)}
        print(name, n)
    return out


def lora():
    """PEFT LoRA (r = 4) on the shared blocks' q_proj, v_proj and gate_up_proj: transformers ties
    the blocks' parameters, not their modules, so PEFT adapts every invocation's module."""
    from peft import LoraConfig, get_peft_model
    out = {}
    c = config(TINY)
    torch.manual_seed(0)
    m = Zamba2ForCausalLM(c)
    base = sum(p.numel() for p in m.parameters())
    targets = ["q_proj", "v_proj", "gate_up_proj"]
    modules = sum(1 for n, _ in m.named_modules() if n.split(".")[-1] in targets)
    p = get_peft_model(m, LoraConfig(r=4, lora_alpha=8, target_modules=targets, lora_dropout=0.0))
    trainable = sum(t.numel() for t in p.parameters() if t.requires_grad)
    out["tiny@r4"] = {"config": record(c), "rank": 4, "targets": ["q_proj", "v_proj", "gate_up_proj"], "base_params": base, "adapted_modules": modules, "trainable_params": trainable}
    print("lora", base, modules, trainable)
    return out


def states():
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        c = config(TINY)
        torch.manual_seed(0)
        m = Zamba2ForCausalLM(c).to(dtype).eval()
        ids = torch.randint(0, TINY["vocab_size"], (2, 24))
        with torch.no_grad():
            res = m(input_ids=ids, use_cache=True)
        cache = res.past_key_values
        held, dtypes = cache_bytes(cache)
        conv, rec, kv = held["conv"], held["recurrent"], held["kv"]
        key = f"tiny@{str(dtype).replace('torch.', '')}"
        out[key] = {"config": record(c), "batch": 2, "tokens": 24, "conv_state_bytes": conv, "recurrent_state_bytes": rec, "kv_bytes": kv,
                    "dtypes": sorted(dtypes), "cache": type(cache).__name__, "layer_classes": sorted({type(l).__name__ for l in cache.layers})}
        print(key, conv, rec, kv, sorted(dtypes), out[key]["layer_classes"])
    return out


def activations():
    out = {}
    for seq in (64, 128):
        c = config({**TINY, "use_cache": False})
        torch.manual_seed(0)
        m = Zamba2ForCausalLM(c)
        m.train()
        stack = ModuleStack(m)
        rec = SavedTensorRecorder(m, stack)
        ids = torch.randint(0, TINY["vocab_size"], (2, seq))
        with rec.hooks():
            loss = m(input_ids=ids, labels=ids).loss
        entries = list(rec.entries.values())
        # Every module under a Zamba2MambaMixer (named "mamba" in each layer).
        mixer = [e for e in entries if e["module"] and "mamba" in e["module"].split(".")]
        total, _, _ = rec.totals()
        listing = [{"module": e["module"], "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in entries]
        out[f"tiny@s{seq}"] = {
            "config": record(c), "batch": 2, "seq_len": seq, "precision": "fp32",
            "path": "torch fallback of Zamba2MambaMixer (no mamba_ssm / causal_conv1d): torch_forward",
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
