#!/usr/bin/env python3
"""Gemma 3n's text model measured with transformers on CPU (tests/fixtures/measured/gemma3n.json).

No network, nothing downloaded: every model is built from Gemma3nTextConfig / Gemma3nConfig.

params: sum(p.numel()) of Gemma3nForCausalLM on torch.device("meta") for the class default
(Gemma3nTextConfig(), the E4B-shaped defaults of transformers 5.25) and variants: no shared
KV layers, untied LM head, two AltUp inputs, another laurel rank and per-layer width, a
uniform intermediate_size list; and the text model of the Gemma3nConfig wrapper's default
(`text_config`; the towers need timm, which is not installed).

lora: PEFT's trainable parameters with r = 4 on every attention and MLP linear of a tiny
config (its two shared-KV layers have no k_proj / v_proj).

states: the bytes of the DynamicCache transformers 5.25 builds (`Gemma3nTextModel.forward`:
`DynamicCache(config=self.config)`) after a prefill of a tiny config, fp32 and bf16, batch
2, 24 tokens (shorter and longer than its sliding window of 16): shared-KV layers
(`kv_sharing_modes` "reuse") keep no cache of their own.

activations: the tensors saved for backward by the whole model (every module's, counted once
per storage with saved_tensors_hooks, common.SavedTensorRecorder), fp32 on CPU, train mode,
use_cache=False, batch 2, two sequence lengths, eager and sdpa attention; the bytes by module
path (layer indices dropped) beside the total. The tiny config has 6 layers, fewer than 10,
so `activation_sparsity_pattern` defaults to all zeros (`__post_init__`): no Gaussian top-k;
the "_sparse" cases set it in three layers.

Run: /work/venv/bin/python tests/measure/gemma3n.py
"""
import json
import os

import torch
import transformers
from common import ModuleStack, SavedTensorRecorder
from transformers import Gemma3nConfig, Gemma3nForCausalLM, Gemma3nTextConfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gemma3n.json")

TINY = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
        "num_hidden_layers": 6, "vocab_size": 256, "vocab_size_per_layer_input": 128, "hidden_size_per_layer_input": 8,
        "laurel_rank": 4, "num_kv_shared_layers": 2, "sliding_window": 16,
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"]}

PARAM_CASES = {
    "default": {},
    "default@no_shared_kv": {"num_kv_shared_layers": 0},
    "default@untied": {"tie_word_embeddings": False},
    "default@altup2_laurel32_ple128": {"altup_num_inputs": 2, "laurel_rank": 32, "hidden_size_per_layer_input": 128, "vocab_size_per_layer_input": 1000},
    "default@ffn_list": {"num_hidden_layers": 30, "intermediate_size": [8192] * 30, "num_kv_shared_layers": 10},
    "tiny": TINY,
    "tiny@bias_gqa1": {**TINY, "attention_bias": True, "num_key_value_heads": 1, "num_kv_shared_layers": 3},
}


def record(c):
    return json.loads(json.dumps(c.to_dict(), default=str))


def count(m):
    return sum(p.numel() for p in m.parameters())


def params():
    out = {}
    for name, kw in PARAM_CASES.items():
        c = Gemma3nTextConfig(**kw)
        with torch.device("meta"):
            m = Gemma3nForCausalLM(c)
        n = count(m)
        out[name] = {"config": record(c), "param_count": n, "kv_sharing_modes": c.kv_sharing_modes}
        print(name, n)
    # The wrapper's text config (its towers need timm, not installed: the text model is
    # Gemma3nForCausalLM of `Gemma3nConfig().text_config`, as the wrapper builds it).
    wc = Gemma3nConfig()
    with torch.device("meta"):
        m = Gemma3nForCausalLM(wc.text_config)
    out["wrapper_default_text"] = {"config": record(wc), "param_count": count(m)}
    print("wrapper text", count(m))
    return out


def lora():
    """PEFT LoRA (r = 4) on q/k/v/o and the MLP: the shared-KV layers have no k_proj or v_proj
    to adapt."""
    from peft import LoraConfig, get_peft_model
    c = Gemma3nTextConfig(**TINY)
    torch.manual_seed(0)
    m = Gemma3nForCausalLM(c)
    base = count(m)
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    modules = sum(1 for n, _ in m.named_modules() if n.split(".")[-1] in targets)
    p = get_peft_model(m, LoraConfig(r=4, lora_alpha=8, target_modules=targets, lora_dropout=0.0))
    trainable = sum(t.numel() for t in p.parameters() if t.requires_grad)
    print("lora", base, modules, trainable)
    return {"tiny@r4": {"config": record(c), "rank": 4, "targets": targets, "base_params": base, "adapted_modules": modules, "trainable_params": trainable}}


def states():
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        for tokens in (12, 24):
            c = Gemma3nTextConfig(**TINY)
            torch.manual_seed(0)
            m = Gemma3nForCausalLM(c).to(dtype).eval()
            ids = torch.randint(0, TINY["vocab_size"], (2, tokens))
            with torch.no_grad():
                res = m(input_ids=ids, use_cache=True)
            cache = res.past_key_values
            kv = 0
            per_layer = []
            for layer in cache.layers:
                b = 0
                for attr in ("keys", "values"):
                    t = getattr(layer, attr, None)
                    if isinstance(t, torch.Tensor):
                        b += t.numel() * t.element_size()
                per_layer.append(b)
                kv += b
            key = f"tiny@{str(dtype).replace('torch.', '')}_t{tokens}"
            out[key] = {"config": record(c), "batch": 2, "tokens": tokens, "kv_bytes": kv, "per_layer_bytes": per_layer,
                        "cache": type(cache).__name__, "layer_classes": [type(l).__name__ for l in cache.layers]}
            print(key, kv, per_layer)
    return out


def activations():
    out = {}
    runs = [(impl, seq, "") for impl in ("eager", "sdpa") for seq in (64, 128)]
    # Gaussian top-k in three of six layers (`activation_sparsity_pattern` > 0).
    runs += [("sdpa", seq, "_sparse") for seq in (64, 128)]
    for impl, seq, variant in runs:
        kw = {**TINY, "activation_sparsity_pattern": [0.95, 0.95, 0.0, 0.0, 0.5, 0.0]} if variant else TINY
        c = Gemma3nTextConfig(**{**kw, "use_cache": False}, attn_implementation=impl)
        torch.manual_seed(0)
        m = Gemma3nForCausalLM(c)
        m.train()
        stack = ModuleStack(m)
        rec = SavedTensorRecorder(m, stack)
        ids = torch.randint(0, TINY["vocab_size"], (2, seq))
        with rec.hooks():
            loss = m(input_ids=ids, labels=ids).loss
        entries = list(rec.entries.values())
        total, _, _ = rec.totals()
        by_module = {}
        for e in entries:
            key = ".".join(p for p in (e["module"] or "").split(".") if not p.isdigit())
            by_module[key] = by_module.get(key, 0) + e["nbytes"]
        out[f"tiny@{impl}{variant}_s{seq}"] = {"config": record(c), "batch": 2, "seq_len": seq, "precision": "fp32", "attention": impl,
                                      "model_saved_bytes": total, "by_module": by_module}
        print(impl, seq, total)
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
