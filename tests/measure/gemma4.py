#!/usr/bin/env python3
"""Gemma 4's text model measured with transformers on CPU (tests/fixtures/measured/gemma4.json).

No network, nothing downloaded: every model is built from Gemma4TextConfig / Gemma4Config.

params: sum(p.numel()) of Gemma4ForCausalLM on torch.device("meta") for the class default
(Gemma4TextConfig() of transformers 5.25: per-layer inputs, 512-wide heads on the full-attention
layers, no shared KV, no MoE) and variants: keys as values on the full layers
(`attention_k_eq_v` with `num_global_key_value_heads`), shared-KV layers with the double-wide
MLP, the MoE block beside the dense MLP, no per-layer inputs with an untied head, another
`global_head_dim`, a config saved by `to_dict` (its `per_layer_config`); and the text model
of the Gemma4Config wrapper's default (`text_config`; its vision and audio towers are not
counted here).

lora: PEFT's trainable parameters with r = 4 on every attention and MLP linear of a tiny
config with shared-KV layers, keys as values and the MoE block (the shared layers have no
k_proj / v_proj, the full layers no v_proj; the experts are 3-D parameters, not linears).

states: the bytes of the DynamicCache transformers builds (`Gemma4TextModel.forward`:
`DynamicCache(config=self.config)`) after a prefill of tiny configs, fp32 and bf16, batch 2,
12 and 24 tokens (shorter and longer than the sliding window of 16).

activations: the tensors saved for backward by the whole model (common.SavedTensorRecorder:
once per storage), fp32 on CPU, train mode, use_cache=False, batch 2, two sequence lengths,
eager and sdpa attention, with and without the MoE block; the bytes by module path (layer
indices dropped) beside the total.

lora_activations: the same whole-model count under PEFT LoRA (r = 4, lora_dropout 0, every
attention and MLP linear targeted), fp32, sdpa, s = 64 and 128, on the shared-KV config (no
k/v projections to adapt in its shared layers, no v projection in its full layers) and the
MoE config (the experts are not adapted).

mixed_activations: the whole-model count under CPU autocast to bf16 (eager attention, whose ops
autocast treats as on CUDA; autocast's bf16 weight copies are not counted,
common.ParamCastTracker), s = 64 and 128, the dense and the shared-KV configs. The MoE config
is left out: CPU autocast keeps the experts' grouped matmuls in fp32 (the same bytes as in an
fp32 run), which says nothing of a CUDA run.

Run: /work/venv/bin/python tests/measure/gemma4.py
"""
import json
import os

import torch
import transformers
from common import ModuleStack, ParamCastTracker, SavedTensorRecorder, cache_bytes
from transformers import Gemma4Config, Gemma4ForCausalLM, Gemma4TextConfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gemma4.json")

TYPES = ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"]
TINY = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 32,
        "intermediate_size": 128, "num_hidden_layers": 6, "vocab_size": 256, "vocab_size_per_layer_input": 128,
        "hidden_size_per_layer_input": 8, "sliding_window": 16, "layer_types": TYPES}
TINY_MOE = {**TINY, "enable_moe_block": True, "num_experts": 4, "top_k_experts": 2, "moe_intermediate_size": 32}
TINY_SHARED = {**TINY, "num_kv_shared_layers": 2, "use_double_wide_mlp": True, "attention_k_eq_v": True, "num_global_key_value_heads": 1}

PARAM_CASES = {
    "default": {},
    "default@k_eq_v": {"attention_k_eq_v": True, "num_global_key_value_heads": 1},
    "default@shared_kv_wide": {"num_kv_shared_layers": 12, "use_double_wide_mlp": True},
    "default@moe": {"enable_moe_block": True, "num_experts": 16, "top_k_experts": 4, "moe_intermediate_size": 704},
    "default@no_ple_untied": {"hidden_size_per_layer_input": 0, "tie_word_embeddings": False},
    "default@global_hd256_softcap": {"global_head_dim": 256, "final_logit_softcapping": 30.0},
    "default@bias": {"attention_bias": True},
    "default@moe_k_eq_v_no_ple": {"enable_moe_block": True, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 512,
                                  "attention_k_eq_v": True, "num_global_key_value_heads": 2, "hidden_size_per_layer_input": 0},
    "tiny": TINY,
    "tiny@moe": TINY_MOE,
    "tiny@shared_kv_wide_k_eq_v": TINY_SHARED,
}


def record(c):
    return json.loads(json.dumps(c.to_dict(), default=str))


def count(m):
    return sum(p.numel() for p in m.parameters())


def params():
    out = {}
    for name, kw in PARAM_CASES.items():
        c = Gemma4TextConfig(**kw)
        with torch.device("meta"):
            m = Gemma4ForCausalLM(c)
        n = count(m)
        # The input as written (global_head_dim and friends are popped by __post_init__ and
        # not kept by to_dict, which writes per_layer_config instead).
        out[name] = {"input": {"model_type": "gemma4_text", **kw}, "config": record(c), "param_count": n,
                     "kv_sharing_modes": c.kv_sharing_modes}
        print(name, n)
    # A config as transformers saves it: `to_dict` keeps `per_layer_config`, not `global_head_dim`.
    c = Gemma4TextConfig(**PARAM_CASES["default@k_eq_v"])
    saved = record(c)
    with torch.device("meta"):
        n = count(Gemma4ForCausalLM(Gemma4TextConfig(**{k: v for k, v in saved.items() if k not in ("model_type", "transformers_version")})))
    out["default@k_eq_v_saved"] = {"input": saved, "config": saved, "param_count": n}
    print("saved", n)
    # The wrapper's text config: the text model is Gemma4ForCausalLM of `Gemma4Config().text_config`.
    wc = Gemma4Config()
    with torch.device("meta"):
        m = Gemma4ForCausalLM(wc.text_config)
    out["wrapper_default_text"] = {"input": record(wc), "config": record(wc), "param_count": count(m)}
    print("wrapper text", count(m))
    return out


def lora():
    from peft import LoraConfig, get_peft_model
    out = {}
    for name, kw in (("tiny_shared@r4", TINY_SHARED), ("tiny_moe@r4", TINY_MOE)):
        c = Gemma4TextConfig(**kw)
        torch.manual_seed(0)
        m = Gemma4ForCausalLM(c)
        base = count(m)
        targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        modules = sum(1 for n, _ in m.named_modules() if n.split(".")[-1] in targets)
        p = get_peft_model(m, LoraConfig(r=4, lora_alpha=8, target_modules=targets, lora_dropout=0.0))
        trainable = sum(t.numel() for t in p.parameters() if t.requires_grad)
        print("lora", name, base, modules, trainable)
        out[name] = {"input": {"model_type": "gemma4_text", **kw}, "rank": 4, "targets": targets, "base_params": base,
                     "adapted_modules": modules, "trainable_params": trainable}
    return out


def states():
    out = {}
    for cname, kw in (("tiny", TINY), ("tiny_shared", TINY_SHARED)):
        for dtype in (torch.float32, torch.bfloat16):
            for tokens in (12, 24):
                c = Gemma4TextConfig(**kw)
                torch.manual_seed(0)
                m = Gemma4ForCausalLM(c).to(dtype).eval()
                ids = torch.randint(0, kw["vocab_size_per_layer_input"], (2, tokens))  # both tables must hold the ids
                with torch.no_grad():
                    res = m(input_ids=ids, use_cache=True)
                cache = res.past_key_values
                total, dtypes = cache_bytes(cache)
                per_layer = []
                for layer in cache.layers:
                    b = 0
                    for attr in ("keys", "values"):
                        t = getattr(layer, attr, None)
                        if isinstance(t, torch.Tensor):
                            b += t.numel() * t.element_size()
                    per_layer.append(b)
                key = f"{cname}@{str(dtype).replace('torch.', '')}_t{tokens}"
                out[key] = {"input": {"model_type": "gemma4_text", **kw}, "batch": 2, "tokens": tokens, "kv_bytes": total["kv"],
                            "per_layer_bytes": per_layer, "cache": type(cache).__name__,
                            "layer_classes": [type(l).__name__ for l in cache.layers]}
                print(key, total["kv"], per_layer)
    return out


def activations():
    out = {}
    runs = [(impl, seq, "", TINY) for impl in ("eager", "sdpa") for seq in (64, 128)]
    runs += [(impl, seq, "_moe", TINY_MOE) for impl in ("eager", "sdpa") for seq in (64, 128)]
    runs += [("sdpa", seq, "_shared", TINY_SHARED) for seq in (64, 128)]
    for impl, seq, variant, kw in runs:
        c = Gemma4TextConfig(**{**kw, "use_cache": False}, attn_implementation=impl)
        torch.manual_seed(0)
        m = Gemma4ForCausalLM(c)
        m.train()
        stack = ModuleStack(m)
        rec = SavedTensorRecorder(m, stack)
        ids = torch.randint(0, kw["vocab_size_per_layer_input"], (2, seq))
        with rec.hooks():
            loss = m(input_ids=ids, labels=ids).loss
        total, _, _ = rec.totals()
        by_module = {}
        for e in rec.entries.values():
            key = ".".join(p for p in (e["module"] or "").split(".") if not p.isdigit())
            by_module[key] = by_module.get(key, 0) + e["nbytes"]
        out[f"tiny@{impl}{variant}_s{seq}"] = {"input": {"model_type": "gemma4_text", **kw}, "batch": 2, "seq_len": seq,
                                               "precision": "fp32", "attention": impl, "model_saved_bytes": total,
                                               "by_module": by_module}
        print(impl, variant, seq, total)
        loss.backward()
        stack.remove()
    return out


def lora_activations():
    from peft import LoraConfig, get_peft_model
    out = {}
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    for cname, kw in (("tiny_shared", TINY_SHARED), ("tiny_moe", TINY_MOE)):
        for seq in (64, 128):
            c = Gemma4TextConfig(**{**kw, "use_cache": False}, attn_implementation="sdpa")
            torch.manual_seed(0)
            m = get_peft_model(Gemma4ForCausalLM(c), LoraConfig(r=4, lora_alpha=8, target_modules=targets, lora_dropout=0.0))
            m.train()
            rec = SavedTensorRecorder(m)
            ids = torch.randint(0, kw["vocab_size_per_layer_input"], (2, seq))
            with rec.hooks():
                loss = m(input_ids=ids, labels=ids).loss
            total, _, _ = rec.totals()
            key = f"{cname}@lora_r4_s{seq}"
            out[key] = {"input": {"model_type": "gemma4_text", **kw}, "batch": 2, "seq_len": seq, "precision": "fp32", "attention": "sdpa",
                        "rank": 4, "targets": targets, "model_saved_bytes": total}
            print(key, total)
            loss.backward()
    return out


def mixed_activations():
    out = {}
    for cname, kw in (("tiny", TINY), ("tiny_shared", TINY_SHARED)):
        for seq in (64, 128):
            c = Gemma4TextConfig(**{**kw, "use_cache": False}, attn_implementation="eager")
            torch.manual_seed(0)
            m = Gemma4ForCausalLM(c)
            m.train()
            rec = SavedTensorRecorder(m)
            tracker = ParamCastTracker(rec.param_refs)
            ids = torch.randint(0, kw["vocab_size_per_layer_input"], (2, seq))
            with rec.hooks(), tracker, torch.autocast("cpu", dtype=torch.bfloat16):
                loss = m(input_ids=ids, labels=ids).loss
            total, _, _ = rec.totals(tracker.cast_refs)
            key = f"{cname}@bf16_mixed_eager_s{seq}"
            out[key] = {"input": {"model_type": "gemma4_text", **kw}, "batch": 2, "seq_len": seq, "precision": "bf16-mixed", "attention": "eager",
                        "model_saved_bytes": total}
            print(key, total)
            loss.backward()
    return out


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__, "params": params(), "lora": lora(),
            "states": states(), "activations": activations(), "lora_activations": lora_activations(),
            "mixed_activations": mixed_activations()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
