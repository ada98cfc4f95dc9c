#!/usr/bin/env python3
"""Hybrid and state-space models measured with transformers on CPU
(tests/fixtures/measured/hybrid_params.json, hybrid_states.json, hybrid_activations.json).

No network, nothing downloaded: every model is built from a configuration class.

params: parameter counts (sum(p.numel()) on torch.device("meta")) of variants of each
family's config that take the branches its default config does not (attention layers in
a Mamba-2 hybrid, short-conv layers in LFM2, Granite-4.0-H without experts, Nemotron-H's
hybrid_override_pattern, Jamba with 8 layers, Qwen3-Next with a dense layer list, ...).
The config recorded is config.to_dict() of the config the model was built from.

states: the bytes of transformers' own cache object after a prefill of a tiny config
(model(input_ids, use_cache=True) in fp32 and bf16, batch 2): per layer, the conv state and
the recurrent state tensors of LinearAttentionLayer (cache_utils.py) and the K/V of the
attention layers, summed over the model; with each state's dtype.

activations: the tensors saved for backward inside the first mixer block's token mixer
(every module under it, its input projections included), counted once per storage with
saved_tensors_hooks (common.SavedTensorRecorder), in fp32 on CPU, train mode, batch 2, at
two sequence lengths. Without mamba_ssm / causal_conv1d / fla (not installable here),
transformers runs its torch fallbacks (named per case in "path"): Headroom models the fused
CUDA kernels, so the fixture shows how far the fallback is from that model.

Versions of torch and transformers are written into each fixture.
Run: /work/venv/bin/python tests/measure/hybrids.py
"""
import json
import math
import os

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

from common import ModuleStack, SavedTensorRecorder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured")


def build(config, dtype=torch.float32, meta=False):
    cls = AutoConfig.for_model(config["model_type"]).__class__
    c = cls(**config)
    if meta:
        with torch.device("meta"):
            return AutoModelForCausalLM.from_config(c), c
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(c, dtype=dtype), c


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


# Variants: (name, config). Small widths where the branch, not the size, is the point.
PARAM_CASES = {
    "mamba@bias": {"model_type": "mamba", "hidden_size": 256, "num_hidden_layers": 4, "vocab_size": 1000, "state_size": 8, "use_bias": True, "use_conv_bias": False, "time_step_rank": "auto", "tie_word_embeddings": False},
    "mamba2@small": {"model_type": "mamba2", "hidden_size": 256, "num_hidden_layers": 4, "vocab_size": 1000, "num_heads": 8, "head_dim": 64, "n_groups": 2, "state_size": 16, "use_bias": True, "tie_word_embeddings": True},
    "jamba@8layers": {"model_type": "jamba", "hidden_size": 256, "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "num_experts": 4, "num_experts_per_tok": 2, "attn_layer_period": 4, "attn_layer_offset": 2, "expert_layer_period": 2, "expert_layer_offset": 1, "mamba_d_state": 8, "mamba_dt_rank": 16, "mamba_proj_bias": True},
    "qwen3_next@dense_layers": {"model_type": "qwen3_next", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64, "shared_expert_intermediate_size": 64, "decoder_sparse_step": 2, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 32, "linear_value_head_dim": 32, "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"]},
    "qwen3_5_text@small": {"model_type": "qwen3_5_text", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 32, "linear_value_head_dim": 32},
    "nemotron_h@pattern": {"model_type": "nemotron_h", "hidden_size": 256, "hybrid_override_pattern": "M-M*-ME", "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000, "mamba_num_heads": 8, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 64, "moe_shared_expert_intermediate_size": 64, "mlp_bias": True, "attention_bias": True},
    "bamba@attention": {"model_type": "bamba", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "attn_layer_indices": [1, 3], "mamba_n_heads": 8, "mamba_d_head": 64, "mamba_d_state": 16, "mamba_n_groups": 2},
    "granitemoehybrid@dense": {"model_type": "granitemoehybrid", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "num_local_experts": 0, "shared_intermediate_size": 384, "layer_types": ["mamba", "attention", "mamba", "mamba"], "mamba_n_heads": 8, "mamba_d_head": 64, "mamba_d_state": 16, "position_embedding_type": "nope"},
    "granitemoehybrid@moe": {"model_type": "granitemoehybrid", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000, "num_local_experts": 4, "num_experts_per_tok": 2, "shared_intermediate_size": 384, "layer_types": ["mamba", "mamba", "attention", "mamba"], "mamba_n_heads": 8, "mamba_d_head": 64, "mamba_d_state": 16},
    "falcon_h1@norm": {"model_type": "falcon_h1", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "mamba_d_ssm": 512, "mamba_n_heads": 8, "mamba_d_head": 64, "mamba_d_state": 16, "mamba_rms_norm": True, "attention_bias": True, "mlp_bias": True},
    "lfm2@conv": {"model_type": "lfm2", "hidden_size": 256, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 768, "vocab_size": 1000, "full_attn_idxs": [2, 5], "conv_bias": True},
}

# Tiny configs whose states and saved activations are measured.
TINY = {
    "mamba": {"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256, "state_size": 8, "intermediate_size": 128, "time_step_rank": 8},
    "mamba2": {"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256, "num_heads": 4, "head_dim": 32, "n_groups": 2, "state_size": 16, "chunk_size": 32},
    "jamba": {"model_type": "jamba", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "num_experts": 1, "attn_layer_period": 2, "attn_layer_offset": 1, "mamba_d_state": 8, "mamba_dt_rank": 8, "use_mamba_kernels": False},
    "qwen3_next": {"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16, "layer_types": ["linear_attention", "full_attention"]},
    "nemotron_h": {"model_type": "nemotron_h", "hidden_size": 64, "hybrid_override_pattern": "M*-", "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "mamba_num_heads": 4, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16, "chunk_size": 32},
    "lfm2": {"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 192, "vocab_size": 256, "full_attn_idxs": [1]},
}

# The token mixer module of a block, by family (module path suffix after "layers.<i>.").
MIXER = {"mamba": "mixer", "mamba2": "mixer", "jamba": "mamba", "qwen3_next": "linear_attn", "nemotron_h": "mixer", "lfm2": "conv"}


def params():
    out = {}
    for name, cfg in PARAM_CASES.items():
        m, c = build(cfg, meta=True)
        out[name] = {"config": jsonable(c.to_dict()), "param_count": sum(p.numel() for p in m.parameters())}
        print(name, out[name]["param_count"])
    return out


def states():
    out = {}
    for name, cfg in TINY.items():
        for dtype in (torch.float32, torch.bfloat16):
            m, c = build(cfg, dtype=dtype)
            m.eval()
            ids = torch.randint(0, cfg["vocab_size"], (2, 24))
            with torch.no_grad():
                res = m(input_ids=ids, use_cache=True)
            cache = res.past_key_values
            conv = rec = kv = 0
            dtypes = set()
            for layer in cache.layers:
                for t in list(getattr(layer, "conv_states", {}).values()) if isinstance(getattr(layer, "conv_states", None), dict) else (getattr(layer, "conv_states", None) or []):
                    if isinstance(t, torch.Tensor):
                        conv += t.numel() * t.element_size()
                        dtypes.add(("conv", str(t.dtype)))
                for t in list(getattr(layer, "recurrent_states", {}).values()) if isinstance(getattr(layer, "recurrent_states", None), dict) else (getattr(layer, "recurrent_states", None) or []):
                    if isinstance(t, torch.Tensor):
                        rec += t.numel() * t.element_size()
                        dtypes.add(("recurrent", str(t.dtype)))
                for attr in ("keys", "values"):
                    t = getattr(layer, attr, None)
                    if isinstance(t, torch.Tensor):
                        kv += t.numel() * t.element_size()
            key = f"{name}@{str(dtype).replace('torch.', '')}"
            out[key] = {"config": jsonable(c.to_dict()), "batch": 2, "tokens": 24, "conv_state_bytes": conv, "recurrent_state_bytes": rec, "kv_bytes": kv, "dtypes": sorted(f"{a}:{b}" for a, b in dtypes), "cache": type(cache).__name__}
            print(key, conv, rec, kv, sorted(dtypes))
    return out


def activations():
    out = {}
    for name, cfg in TINY.items():
        for seq in (64, 128):
            m, c = build({**cfg, "use_cache": False})
            m.train()
            stack = ModuleStack(m)
            rec = SavedTensorRecorder(m, stack)
            ids = torch.randint(0, cfg["vocab_size"], (2, seq))
            with rec.hooks():
                loss = m(input_ids=ids, labels=ids).loss
            prefix = f"layers.0.{MIXER[name]}"
            mixer = [e for e in rec.entries.values() if e["module"] and prefix in e["module"]]
            listing = [{"module": e["module"].split(prefix)[-1] or "<mixer>", "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in mixer]
            total, _, _ = rec.totals()
            key = f"{name}@s{seq}"
            out[key] = {
                "config": jsonable(c.to_dict()),
                "batch": 2,
                "seq_len": seq,
                "precision": "fp32",
                "path": "torch fallback (no mamba_ssm / causal_conv1d / fla): " + ", ".join(sorted({e["grad_fn"] or "?" for e in mixer}))[:300],
                "mixer_saved_bytes": sum(e["nbytes"] for e in mixer),
                "model_saved_bytes": total,
                "mixer_listing": listing,
            }
            print(key, out[key]["mixer_saved_bytes"], total)
            loss.backward()
            stack.remove()
    return out


def main():
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}
    for fname, fn in (("hybrid_params.json", params), ("hybrid_states.json", states), ("hybrid_activations.json", activations)):
        data = {**versions, "cases": fn()}
        with open(os.path.join(OUT, fname), "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
