#!/usr/bin/env python3
"""Load-time transients: FSDP1 wrapping with `sync_module_states`, and NF4 quantisation at load.

FSDP1 (`torch.distributed.fsdp.FullyShardedDataParallel`, torch 2.15) runs for real on CPU tensors on rank 0 of a
fake 2-rank group (`dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)`,
torch.testing._internal.distributed.fake_pg: every collective returns at once, allocating what it allocates).
Model: transformers LlamaForCausalLM, llama-tiny (peaks.py's LLAMA_TINY), fp32, built on CPU as rank 0 of a
rank-0-loading run holds it. Wrapped as accelerate's transformer-based policy does:
`FSDP(model, auto_wrap_policy=ModuleWrapPolicy({LlamaDecoderLayer}), device_id=cpu, sync_module_states=...)`.
The constructor is run under torch.distributed._tools.mem_tracker.MemTracker with the model's own tensors
tracked (`track_external`); `extra_bytes` = the tracker's peak less the bytes alive when it started (the
unsharded model). On a GPU the model starts on the CPU and `_move_module_to_device` (fsdp/_init_utils.py) moves
each unit's parameters to the GPU first; on CPU that move is a no-op, so what this measures is what follows it:
`_sync_module_params_and_buffers` (dist._broadcast_coalesced, 250 MiB buckets) and the FlatParamHandle's flatten
(`torch.cat`) and shard (a 1/world clone). FSDP1 refuses `sync_module_states=True` with CPU tensors
(`_check_module_states_for_sync_module_states`, a device check and nothing else); the script replaces that check
with a no-op so the broadcast runs on the fake group.
Why the CPU peak is the GPU's: the units are wrapped blocks first, root last. At the root's flatten the CPU holds
the blocks' shards, the root's original tensors, its flat copy and its shard clone; on a GPU the blocks' shards,
the root moved to the GPU, its flat copy and its shard clone: the same bytes (Psi*4/W + 2*root*4 here).

NF4 (bitsandbytes 0.50.2, which quantises on CPU): one llama-tiny MLP weight (1792 x 512) in bf16 turned into a
`Params4bit(quant_type="nf4", compress_statistics=True)` and quantised (`_quantize`, what `.to(device)` /
transformers' bnb 4-bit loader call per layer), under MemTracker: peak = the bf16 weight + its NF4 output
(packed uint8 + absmax + double-quantisation state).

Output: tests/fixtures/measured/load.json
Run: /work/venv/bin/python tests/measure/load.py
"""
import json, os, sys, warnings
import torch
import torch.distributed as dist
import transformers
from torch.distributed._tools.mem_tracker import MemTracker
from torch.testing._internal.distributed.fake_pg import FakeStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peaks as P  # noqa: E402  LLAMA_TINY

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
OUT = os.path.join(P.ROOT, "tests", "fixtures", "measured", "load.json")
CPU = torch.device("cpu")
WORLD = 2


def live(tr):
    return int(tr.get_tracker_snapshot()[CPU]["Total"])


def fsdp1_case(sync):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
    import torch.distributed.fsdp._init_utils as init_utils
    init_utils._check_module_states_for_sync_module_states = lambda states: None  # device check only (see above)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**P.LLAMA_TINY)).float()
    psi = sum(p.numel() for p in model.parameters())
    block = sum(p.numel() for p in model.model.layers[0].parameters())
    root = psi - block * len(model.model.layers)
    tr = MemTracker()
    tr.track_external(model)
    with tr:
        start = live(tr)
        wrapped = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({LlamaDecoderLayer}), device_id=CPU,
                       sync_module_states=sync)
        end = live(tr)
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    sharded = sum(p.numel() * p.element_size() for p in wrapped.parameters())
    out = {"name": f"llama-tiny-fsdp1-x{WORLD}-sync-{str(sync).lower()}", "world": WORLD, "sync_module_states": sync,
           "param_count": int(psi), "block_param_count": int(block), "root_param_count": int(root), "weight_bytes": 4,
           "scenario": {"model": {"hf_config": P.LLAMA_TINY}, "training": {"precision": "fp32"},
                        "parallel": {"dp": WORLD, "zero": "fsdp", "fsdp_version": 1}},
           "measured": {"start_bytes": start, "peak_bytes": peak, "end_bytes": end, "extra_bytes": peak - start,
                        "sharded_param_bytes": int(sharded)}}
    print(out["name"], out["measured"], "root*4", root * 4, "block*4", block * 4, flush=True)
    return out


def nf4_case():
    import bitsandbytes as bnb
    torch.manual_seed(0)
    w = torch.randn(P.LLAMA_TINY["intermediate_size"], P.LLAMA_TINY["hidden_size"], dtype=torch.bfloat16)
    tr = MemTracker()
    with tr:
        p = bnb.nn.Params4bit(w.clone(), requires_grad=False, quant_type="nf4", compress_statistics=True,
                              quant_storage=torch.uint8)
        q = p._quantize(CPU)
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    packed = q.data.numel() * q.data.element_size()
    out = {"name": "llama-tiny-mlp-weight-nf4-at-load", "shape": list(w.shape), "bnb": bnb.__version__,
           "measured": {"peak_bytes": peak, "bf16_bytes": w.numel() * 2, "packed_bytes": int(packed)}}
    print(out["name"], out["measured"], flush=True)
    return out


def main():
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD)
    cases = [fsdp1_case(True), fsdp1_case(False)]
    out = {"generator": "tests/measure/load.py", "torch": torch.__version__, "transformers": transformers.__version__,
           "tool": "torch.distributed._tools.mem_tracker.MemTracker (live untyped-storage bytes)",
           "fsdp1_cases": cases, "nf4_cases": [nf4_case()]}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
