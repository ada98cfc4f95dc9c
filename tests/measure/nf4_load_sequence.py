#!/usr/bin/env python3
"""What bitsandbytes allocates when it quantises one 16-bit weight to NF4 at load, in order: the allocator events of
`bitsandbytes.functional.quantize_4bit(w, blocksize=64, quant_type="nf4", compress_statistics=...)` (what
`Params4bit._quantize` calls, bitsandbytes 0.50.2 nn/modules.py 381-395) on the CPU, for a few Llama-shaped weights,
with and without double quantisation. Each event is (+bytes) for an allocation or (-bytes) for a free, from the c10
CPU allocator's events with their addresses (torch.profiler, profile_memory=True), so the sequence the CUDA caching
allocator sees at load can be replayed (`src/model/allocator.rs`, `src/model/load.rs`). The 16-bit weight itself is
allocated before and freed after (the caller's), and is not in the list.

Output: tests/fixtures/measured/nf4_load_sequence.json
Run: /work/venv/bin/python tests/measure/nf4_load_sequence.py   (under a minute)
"""
import json, os

import bitsandbytes
import bitsandbytes.functional as F
import torch
from torch.profiler import ProfilerActivity, profile

from common import allocation_events

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "measured", "nf4_load_sequence.json")
SHAPES = [(1024, 4096), (4096, 4096), (14336, 4096), (4096, 14336), (1792, 512)]


def run(n, k, double):
    w = torch.randn(n, k, dtype=torch.bfloat16)
    F.quantize_4bit(w, blocksize=64, quant_type="nf4", compress_statistics=double)  # warm-up
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        packed, state = F.quantize_4bit(w, blocksize=64, quant_type="nf4", compress_statistics=double)
    seq, live = [], {}
    for _, ptr, b in allocation_events(prof):
        seq.append(int(b))
        if b > 0:
            live[ptr] = b
        else:
            live.pop(ptr, None)
    kept = sorted((int(b) for b in live.values()), reverse=True)
    # What the returned objects hold: the packed weight, and the quant state's tensors.
    held = [packed.numel() * packed.element_size(), state.absmax.numel() * state.absmax.element_size()]
    if double:
        held += [state.state2.absmax.numel() * state.state2.absmax.element_size(), state.state2.code.numel() * 4]
    else:
        held += [state.code.numel() * 4]
    case = {"shape": [n, k], "double_quant": double, "sequence": seq, "kept": kept, "returned_tensor_bytes": held}
    print(case["shape"], double, "sequence", seq, "kept", kept, flush=True)
    return case


def main():
    cases = [run(n, k, d) for (n, k) in SHAPES for d in (True, False)]
    out = {"generator": "tests/measure/nf4_load_sequence.py", "torch": torch.__version__,
           "bitsandbytes": bitsandbytes.__version__, "blocksize": 64, "quant_type": "nf4",
           "tool": "c10 CPU allocator allocation events with addresses (torch.profiler, profile_memory=True)",
           "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
