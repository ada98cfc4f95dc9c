#!/usr/bin/env python3
"""The hybrid mixers' torch fallback measured with transformers on CPU
(tests/fixtures/measured/mixer_torch.json), for `training.mixer_kernels: "torch"`.

Without mamba_ssm / causal_conv1d / fla or the hub kernels (none installable here),
transformers 5.25 runs each mixer's torch implementation (Mamba's `slow_forward`, Mamba-2's
chunked SSD `torch_forward`, `torch_chunk_gated_delta_rule`, LFM2's `slow_forward`), which is
what a CUDA run executes when those packages are missing.

For each family's tiny config: the tensors saved for backward in the whole model (counted
once per storage with saved_tensors_hooks, common.SavedTensorRecorder), the bytes of every
mixer block together and the listing of the first block's mixer; train mode, batch 2, fp32 and
pure bf16 (the model built in bfloat16), at sequence lengths 40 and 100 (neither a multiple of
Mamba-2's chunk of 32 nor of the delta rule's chunk of 64, so the chunk padding shows), and
Gated DeltaNet also at 150 (three chunks); and under bf16 autocast over the fp32 model
(`bf16-mixed`). Tensors saved only by a branch the forward drops
(no node reachable from the loss keeps them) are listed apart (`*_unreachable_bytes`).
No network, nothing downloaded: every model is built from a configuration class.
Run: /work/venv/bin/python tests/measure/mixer_torch.py
"""
import contextlib
import json
import math
import os

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

from common import ModuleStack, ParamCastTracker, SavedTensorRecorder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "mixer_torch.json")

# The tiny configs of tests/measure/hybrids.py (TINY) and zamba2.py, plus Falcon-H1, Bamba
# and Granite-4.0-H at the same widths. Value: (config, the mixer module's attribute name).
CASES = {
    "mamba": ({"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256, "state_size": 8, "intermediate_size": 128, "time_step_rank": 8}, "mixer"),
    "mamba2": ({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256, "num_heads": 4, "head_dim": 32, "n_groups": 2, "state_size": 16, "chunk_size": 32}, "mixer"),
    "jamba": ({"model_type": "jamba", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "num_experts": 1, "attn_layer_period": 2, "attn_layer_offset": 1, "mamba_d_state": 8, "mamba_dt_rank": 8, "use_mamba_kernels": False}, "mamba"),
    "qwen3_next": ({"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16, "layer_types": ["linear_attention", "full_attention"]}, "linear_attn"),
    "nemotron_h": ({"model_type": "nemotron_h", "hidden_size": 64, "hybrid_override_pattern": "M*-", "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "mamba_num_heads": 4, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16, "chunk_size": 32}, "mixer"),
    "lfm2": ({"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 192, "vocab_size": 256, "full_attn_idxs": [1]}, "conv"),
    "zamba2": ({"model_type": "zamba2", "hidden_size": 64, "num_attention_heads": 4, "n_mamba_heads": 4, "mamba_d_state": 16, "mamba_ngroups": 1, "chunk_size": 32, "vocab_size": 256, "adapter_rank": 8, "intermediate_size": 128, "num_mem_blocks": 2, "use_shared_attention_adapter": True, "use_mem_rope": True, "num_hidden_layers": 5, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "hybrid"]}, "mamba"),
    "bamba": ({"model_type": "bamba", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "attn_layer_indices": [1], "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 2, "mamba_chunk_size": 32}, "mamba"),
    "falcon_h1": ({"model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "mamba_d_ssm": 128, "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 2, "mamba_chunk_size": 32, "mamba_rms_norm": True}, "mamba"),
    # Issue 23's remaining fallbacks: Qwen3.5's and OLMo-Hybrid's Gated DeltaNet (same widths
    # as qwen3_next; OLMo-Hybrid's tiny config of tests/measure/olmo_hybrid.py), Zamba v1's
    # multi-head Mamba (tests/measure/zamba.py's TINY) and Falcon-H1 without its gated norm
    # (`mamba_rms_norm` False, the class default).
    "qwen3_5_text": ({"model_type": "qwen3_5_text", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16, "layer_types": ["linear_attention", "full_attention"]}, "linear_attn"),
    "olmo_hybrid": ({"model_type": "olmo_hybrid", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, "pad_token_id": 0, "intermediate_size": 128, "num_hidden_layers": 4}, "linear_attn"),
    "zamba": ({"model_type": "zamba", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4, "n_mamba_heads": 2, "mamba_d_state": 16, "vocab_size": 256, "intermediate_size": 128, "num_hidden_layers": 5, "layers_block_type": ["mamba", "hybrid", "mamba", "hybrid", "hybrid"]}, "mamba"),
    "falcon_h1_ungated": ({"model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "mamba_d_ssm": 128, "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 2, "mamba_chunk_size": 32, "mamba_rms_norm": False}, "mamba"),
    "granitemoehybrid": ({"model_type": "granitemoehybrid", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "num_local_experts": 0, "shared_intermediate_size": 128, "layer_types": ["mamba", "attention"], "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 2, "mamba_chunk_size": 32, "position_embedding_type": "nope"}, "mamba"),
}
SEQS = (40, 100)
# Gated DeltaNet at a third length, three chunks of 64, so that the states carried from chunk
# to chunk (one per chunk after the first) are told apart from a constant.
EXTRA_SEQS = {"qwen3_next": (150,), "olmo_hybrid": (150,)}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# bf16 autocast over an fp32 model (torch.autocast("cpu", torch.bfloat16): matmuls, bmm and
# conv1d in bf16, as CUDA's autocast lists them); autocast's bf16 copies of the weights
# (common.ParamCastTracker) are not activations and are left out.
MIXED = {"bf16-mixed": torch.float32}


def jsonable(v):
    """JSON has no infinity (Mamba-2's `time_step_limit`): written as hybrids.py writes it."""
    if isinstance(v, float) and math.isinf(v):
        return "Infinity"
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def build(config, dtype):
    cls = AutoConfig.for_model(config["model_type"]).__class__
    c = cls(**{**config, "use_cache": False})
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(c, dtype=dtype), c


def main():
    only = os.environ.get("ONLY")
    cases = {}
    for name, (cfg, attr) in CASES.items():
        if only and name not in only.split(","):
            continue
        for prec, dtype in {**DTYPES, **MIXED}.items():
            for seq in SEQS + EXTRA_SEQS.get(name, ()):
                m, c = build(cfg, dtype)
                m.train()
                stack = ModuleStack(m)
                rec = SavedTensorRecorder(m, stack)
                mixed = prec in MIXED
                casts = ParamCastTracker(rec.param_refs) if mixed else contextlib.nullcontext()
                ids = torch.randint(0, cfg["vocab_size"], (2, seq))
                try:
                    with rec.hooks(), casts, torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
                        loss = m(input_ids=ids, labels=ids).loss
                except Exception as e:  # a fallback that does not run in this dtype on CPU
                    print(name, prec, seq, "failed:", repr(e)[:200])
                    stack.remove()
                    continue
                weight_casts = casts.cast_refs if mixed else set()
                entries = [e for r, e in rec.entries.items() if r not in weight_casts]
                def layer(e):
                    parts = (e["module"] or "").split(".")
                    return parts[parts.index("layers") + 1] if attr in parts and "layers" in parts else None
                # Nemotron-H names every block's sublayer "mixer": the first block is a Mamba-2 one.
                min_layer = str(min(int(layer(e)) for e in entries if layer(e) is not None))
                def in_mixer(e, first=False):
                    return layer(e) is not None and (not first or layer(e) == min_layer)
                layers = sorted({int(layer(e)) for e in entries if in_mixer(e)})
                first = [e for e in entries if in_mixer(e, True)]
                total, _, _ = rec.totals(weight_casts)
                # Storages no node reachable from the loss keeps: saved by a branch the forward
                # dropped (the delta rule's last state update when the final state is not
                # returned), freed with its nodes when the forward returns.
                rec.annotate_from_graph(loss.grad_fn)
                dropped = [e for e in entries if not e["savers"]]
                key = f"{name}@{prec}@s{seq}"
                cases[key] = {
                    "config": json.loads(json.dumps(jsonable(c.to_dict()), default=str)),
                    "batch": 2, "seq_len": seq, "precision": prec,
                    "mixer_layers": layers,
                    "model_saved_bytes": total,
                    "mixers_saved_bytes": sum(e["nbytes"] for e in entries if in_mixer(e)),
                    "first_mixer_saved_bytes": sum(e["nbytes"] for e in first),
                    "model_unreachable_bytes": sum(e["nbytes"] for e in dropped),
                    "first_mixer_unreachable_bytes": sum(e["nbytes"] for e in first if not e["savers"]),
                    "first_mixer_listing": [{"module": e["module"].split(attr, 1)[-1] or "<mixer>", "shape": e["shape"], "dtype": e["dtype"], "nbytes": e["nbytes"], "grad_fn": e["grad_fn"]} for e in first],
                }
                print(key, total, cases[key]["mixers_saved_bytes"], cases[key]["first_mixer_saved_bytes"], layers)
                loss.backward()
                stack.remove()
    out = {"torch": torch.__version__, "transformers": transformers.__version__, "cases": cases}
    path = os.environ.get("OUT_PATH", OUT)
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
