"""Prefill workspace of inference: the live bytes of a no-grad forward beyond the weights and
the KV cache, measured with MemTracker on CPU (torch 2.15, transformers 5.24).

For each tiny config: build the model in bf16, run `model.model(input_ids, use_cache=True)`
under `torch.no_grad()` inside `torch.distributed._tools.mem_tracker.MemTracker`, and take
the peak of all tracked bytes minus parameters, buffers, the final KV cache and the inputs.
SDPA on CPU (its math/flash CPU kernels allocate no tracked workspace beyond their outputs).
Writes tests/fixtures/measured/prefill_workspace.json; `tests/serving_and_cluster.rs` checks
the model's "prefill workspace" term against it.
"""
import json
import os

import torch
from torch.distributed._tools.mem_tracker import MemTracker
from transformers import AutoConfig, AutoModelForCausalLM

CASES = [
    ("llama-gqa", dict(model_type="llama", hidden_size=256, intermediate_size=704, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2, vocab_size=1000), 2, 512),
    ("llama-mha", dict(model_type="llama", hidden_size=128, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, vocab_size=1000), 4, 256),
    ("qwen3", dict(model_type="qwen3", hidden_size=256, intermediate_size=768, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=4, head_dim=32, vocab_size=1000), 2, 512),
    ("mixtral", dict(model_type="mixtral", hidden_size=128, intermediate_size=448, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=8, num_experts_per_tok=2, vocab_size=1000), 2, 512),
    ("gpt-neox", dict(model_type="gpt_neox", hidden_size=128, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, vocab_size=1000), 2, 512),
]


def measure(config_dict, batch, seq):
    config = AutoConfig.for_model(**config_dict)
    config._attn_implementation = "sdpa"
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16).eval()
    ids = torch.randint(0, config_dict["vocab_size"], (batch, seq))
    body = model.base_model
    tracker = MemTracker()
    tracker.track_external(body, ids)
    with torch.no_grad(), tracker:
        out = body(input_ids=ids, use_cache=True)
    peak = tracker.get_tracker_snapshot("peak")
    total = sum(v.get("Total", 0) for v in peak.values())
    weights = sum(p.numel() * p.element_size() for p in body.parameters()) + sum(b.numel() * b.element_size() for b in body.buffers())
    cache = 0
    for layer in out.past_key_values.layers:
        for t in (layer.keys, layer.values):
            cache += t.numel() * t.element_size()
    inputs = ids.numel() * ids.element_size()
    return total - weights - cache - inputs, total, weights, cache


def main():
    results = []
    for name, cfg, batch, seq in CASES:
        workspace, total, weights, cache = measure(cfg, batch, seq)
        results.append({"name": name, "config": cfg, "batch": batch, "seq": seq, "workspace_bytes": workspace, "peak_bytes": total, "weights_bytes": weights, "kv_cache_bytes": cache})
        print(name, workspace, total, weights, cache)
    meta = {"torch": torch.__version__, "transformers": __import__("transformers").__version__, "tool": "MemTracker peak, bf16, CPU SDPA, no_grad"}
    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "measured", "prefill_workspace.json")
    with open(path, "w") as f:
        json.dump({"meta": meta, "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
