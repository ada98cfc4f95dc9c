#!/usr/bin/env python3
"""The whole model under `torch.compile` (`model.compile(backend="inductor")`, as accelerate's `prepare_model`
compiles it for the transformers Trainer's `torch_compile=True`: accelerate 1.16 `accelerator.py` 2040-2045): what the
backward holds at its peak, on tiny Llamas whose sizes are all different (hidden 384, intermediate 1152, vocab V in
{4096, 8192, 12288}, T = b*s in {640, 896} tokens), so that a logits-sized (T*V), a weight-gradient-sized (V*h) and a
token-sized (T*h) buffer cannot be confused.

Per case, one profiler over forward and backward (the c10 CPU allocator's allocation events with their addresses,
torch.profiler profile_memory=True; Inductor allocates through empty_strided_cpu), measured on the second step (the
first compiles):
  * saved_after_forward: bytes alive after forward less those alive before it;
  * backward_peak_above_start: the highest live bytes during `loss.backward()` less the live bytes at its start, net
    of what backward frees (frees of tensors made before the profiler started are invisible to it, so the forward is
    inside the same profiler);
  * live_at_peak: the buffers alive at that peak that backward allocated, by size, and those alive at backward's
    start that it has freed by then.
Regions: "whole" (the model compiled, called with labels: its output holds the loss and the logits, both outputs of
the compiled graph) and "loss-output" (a function returning only `model(...).loss` compiled: the logits are not an
output of the graph), the control that names the second logits-sized buffer.

Output: tests/fixtures/measured/compile_whole.json
Run: /work/venv/bin/python tests/measure/compile_whole.py   (about 10 minutes on 2 cores)
"""
import copy, gc, json, os, sys, warnings

import torch
import transformers
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile as C  # noqa: E402  LLAMA, build

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "measured", "compile_whole.json")
H, FFN, LAYERS = 384, 1152, 2


def config(vocab):
    cfg = copy.deepcopy(C.LLAMA)
    cfg.update(hidden_size=H, num_attention_heads=6, num_key_value_heads=2, head_dim=64, intermediate_size=FFN,
               vocab_size=vocab, num_hidden_layers=LAYERS)
    return cfg


def allocations(prof):
    """(time, address, bytes) of every allocation (+) and free (-), in time order, and the BWD marker's start."""
    out, marker = [], []

    def walk(ev):
        f = ev.extra_fields
        if type(f).__name__ == "_ExtraFields_Allocation" and str(f.device).startswith("cpu"):
            out.append((ev.start_time_ns, f.ptr, f.alloc_size))
        if ev.name == "BWD":
            marker.append(ev.start_time_ns)
        for c in ev.children:
            walk(c)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root)
    out.sort()
    return out, marker[0]


def run(precision, region, vocab, batch, seq):
    torch._dynamo.reset()
    cfg = config(vocab)
    _, model = C.build(dict(name="x", model="llama", cfg=cfg, precision=precision, loss="standard", mode="compiled"))
    if region == "whole":
        model.compile(backend="inductor")
        step = lambda i: model(input_ids=i, labels=i, use_cache=False).loss  # noqa: E731
    else:
        step = torch.compile(lambda i: model(input_ids=i, labels=i, use_cache=False).loss, backend="inductor")
    torch.manual_seed(1)
    ids = torch.randint(0, vocab, (batch, seq))
    loss = step(ids)
    loss.backward()
    model.zero_grad(set_to_none=True)
    del loss
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        loss = step(ids)
        with record_function("BWD"):
            loss.backward()
    events, bwd = allocations(prof)
    live, run_bytes, start, peak, at_start, at_peak = {}, 0, None, -1, None, None
    for t, ptr, n in events:
        if start is None and t >= bwd:
            start, at_start, peak = run_bytes, dict(live), 0
        if n > 0:
            live[ptr] = (n, t >= bwd)
        else:
            live.pop(ptr, None)
        run_bytes += n
        if start is not None and run_bytes - start > peak:
            peak, at_peak = run_bytes - start, dict(live)
    new, freed = {}, {}
    for n, in_bwd in at_peak.values():
        if in_bwd:
            new[str(n)] = new.get(str(n), 0) + 1
    for ptr, (n, _) in at_start.items():
        if ptr not in at_peak:
            freed[str(n)] = freed.get(str(n), 0) + 1
    x = 2 if precision == "bf16" else 4
    T = batch * seq
    out = {"name": f"llama-{precision}-{region}-v{vocab}-t{T}", "precision": precision, "region": region,
           "vocab_size": vocab, "batch": batch, "seq_len": seq,
           "measured": {"saved_after_forward": start, "backward_peak_above_start": peak,
                        "allocated_in_backward_alive_at_peak": new, "alive_at_backward_start_freed_by_peak": freed}}
    print(f"{out['name']:36s} saved {start:>11,d} bwd peak {peak:>11,d} = {peak / (x * T * vocab):.3f} x (x*T*V); "
          f"alive at peak {new}", flush=True)
    return out


def main():
    cases = []
    for precision in ("fp32", "bf16"):
        for vocab in (4096, 8192, 12288):
            for batch, seq in ((2, 320), (2, 448)):
                cases.append(run(precision, "whole", vocab, batch, seq))
        for vocab, (batch, seq) in ((4096, (2, 320)), (12288, (2, 448))):
            cases.append(run(precision, "loss-output", vocab, batch, seq))
    out = {"generator": "tests/measure/compile_whole.py", "torch": torch.__version__,
           "transformers": transformers.__version__, "config": config(0) | {"vocab_size": None},
           "tool": "c10 CPU allocator allocation events with addresses (torch.profiler, profile_memory=True), "
                   "forward and backward in one profiler", "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
