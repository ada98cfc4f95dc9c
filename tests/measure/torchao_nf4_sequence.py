#!/usr/bin/env python3
"""What torchao allocates when it quantises one bf16 weight to NF4 (`to_nf4`, what torchtune's `LoRALinear(quantize_base=True)`
calls at build, and what `NF4Tensor.copy_` calls when `load_state_dict` copies a bf16 tensor into an NF4 parameter), and
when it clones an NF4 tensor (`aten.clone` on an NF4Tensor = `to_nf4(get_original_weight())`, what `copy.deepcopy` of a
module holding one runs). torchao's NF4 code is plain torch ops (torchao/quantization/quantize_/workflows/nf4/
nf4_tensor.py: `from_tensor`, `double_quantize_scalers`, `convert_to_norm_float_weight` with its 1 Mi-element chunks,
`get_original_weight`), so the sequence on the CPU is the sequence the CUDA caching allocator sees.

Each case lists the steps in order: ["a", bytes] for an allocation, ["f", k] for the free of the allocation made at step k
(the c10 CPU allocator's events matched by address; torch.profiler, profile_memory=True), and the bytes of the
allocations still held when the call returns. The input weight is the caller's and is not in the list.

Output: tests/fixtures/measured/torchao_nf4_sequence.json
Run: /work/venv/bin/python tests/measure/torchao_nf4_sequence.py   (about a minute)
"""
import importlib, json, os

import torch
import torchao
from torch.profiler import ProfilerActivity, profile

from common import allocation_events
from torchao.quantization import to_nf4

nf4_module = importlib.import_module("torchao.quantization.quantize_.workflows.nf4.nf4_tensor")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "measured", "torchao_nf4_sequence.json")
# Llama-3-8B's block linears, and one under a chunk (1 Mi elements), one of 1.5 chunks.
SHAPES = [(1024, 4096), (4096, 4096), (14336, 4096), (4096, 14336), (1792, 512), (1536, 1024)]


def steps_of(call):
    call()  # warm-up
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = call()
    steps, open_at = [], {}
    for _, ptr, b in allocation_events(prof):
        if b > 0:
            open_at[ptr] = len(steps)
            steps.append(["a", int(b)])
        elif ptr in open_at:
            steps.append(["f", open_at.pop(ptr)])
    kept = sorted((steps[k][1] for k in open_at.values()), reverse=True)
    return steps, kept, result


def main():
    cases = []
    for n, k in SHAPES:
        w = torch.randn(n, k, dtype=torch.bfloat16)
        steps, kept, q = steps_of(lambda: to_nf4(w))
        inner = sorted((t.numel() * t.element_size() for t in (q.quantized_data, q.quantized_scalers, q.quantization_factor, q.scaler_mean, q.nf4)), reverse=True)
        cases.append({"op": "to_nf4", "shape": [n, k], "steps": steps, "kept": kept, "nf4_tensor_bytes": inner})
        print("to_nf4", [n, k], len(steps), "steps, kept", kept, flush=True)
        steps, kept, _ = steps_of(lambda: q.clone())
        cases.append({"op": "clone", "shape": [n, k], "steps": steps, "kept": kept})
        print("clone ", [n, k], len(steps), "steps, kept", kept, flush=True)
    out = {"generator": "tests/measure/torchao_nf4_sequence.py", "torch": torch.__version__, "torchao": torchao.__version__,
           "block_size": 64, "scaler_block_size": 256, "chunk_elements": nf4_module.CHUNK_SIZE,
           "tool": "c10 CPU allocator allocation events with addresses (torch.profiler, profile_memory=True)", "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
