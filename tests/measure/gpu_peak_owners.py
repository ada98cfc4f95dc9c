#!/usr/bin/env python3
"""Who holds the memory at a training step's allocated peak, on a real GPU.

Prepared for one CUDA GPU (run on an H200 of this workplace; NOT run in CI). For each named case
of gpu_hybrid_vlm.py / gpu_peaks.py it builds the same model and batch, runs 2 warm-up steps,
then records the CUDA caching allocator's history (`torch.cuda.memory._record_memory_history`,
Python stacks) over one step, replays the trace to the moment the allocated bytes peak, and groups
the blocks live then by the innermost frame in transformers / peft / torch.nn / torch.optim
(file:line function), printing and saving the largest groups. This is what the plan's terms are
compared against when a real run and the plan disagree.

Output: tests/fixtures/measured/gpu_peak_owners.json
Run:    python tests/measure/gpu_peak_owners.py CASE [CASE ...]   (names of gpu_hybrid_vlm.py cases)
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_hybrid_vlm  # noqa: E402
import gpu_new_families  # noqa: E402,F401  (its cases join gpu_hybrid_vlm's)
from gpu_peaks import ROOT  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gpu_peak_owners.json")
OWNERS = ("transformers/", "peft/", "torch/nn/", "torch/optim/", "torch/utils/checkpoint", "gpu_hybrid_vlm")
TOP = 40


def owner(frames):
    """The innermost frame in the model's libraries, else the innermost Python frame."""
    for f in frames:
        if any(o in f["filename"] for o in OWNERS):
            return f"{f['filename'].split('site-packages/')[-1]}:{f['line']} {f['name']}"
    return f"{frames[0]['filename'].split('site-packages/')[-1]}:{frames[0]['line']} {frames[0]['name']}" if frames else "?"


def live_at_peak(trace):
    """Replays the allocator's trace; returns (peak bytes above the step's start, live blocks then)."""
    live, total, peak, at = {}, 0, 0, 0
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = e
            total += e["size"]
        elif e["action"] == "free_completed" and e["addr"] in live:
            total -= live.pop(e["addr"])["size"]
        if total > peak:
            peak, at = total, i
    live = {}
    for e in trace[: at + 1]:
        if e["action"] == "alloc":
            live[e["addr"]] = e
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    return peak, list(live.values())


def run_one(name):
    import torch

    captured = {}

    def report(step, model, params, t0, extra=None):
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python", max_entries=400000)
        step()
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        trace = snap["device_traces"][0]
        peak, live = live_at_peak(trace)
        groups = {}
        for e in live:
            key = owner(e.get("frames") or [])
            n, b = groups.get(key, (0, 0))
            groups[key] = (n + 1, b + e["size"])
        top = sorted(groups.items(), key=lambda kv: -kv[1][1])[:TOP]
        captured.update({
            "allocated_before_step": start, "peak_above_start": peak, "peak_allocated": start + peak,
            "trace_events": len(trace),
            "owners_at_peak": [{"owner": k, "blocks": n, "bytes": b} for k, (n, b) in top],
            "seconds": round(time.time() - t0, 1),
        })
        print("RESULT " + json.dumps(captured), flush=True)

    gpu_hybrid_vlm.report = report
    gpu_hybrid_vlm.run_one(name)


def main():
    names = sys.argv[1:]
    results = {}
    for name in names:
        t = time.time()
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name], capture_output=True, text=True,
                           timeout=150)
        line = next((l for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            results[name] = {"failed": p.stderr[-3000:]}
            print(name, "FAILED", p.stderr[-1500:], flush=True)
            continue
        r = json.loads(line[len("RESULT "):])
        results[name] = r
        print(f"== {name}: step start {r['allocated_before_step']:,} + peak {r['peak_above_start']:,} "
              f"({time.time() - t:.0f} s)", flush=True)
        for o in r["owners_at_peak"][:25]:
            print(f"  {o['bytes']:>14,d} {o['blocks']:>5d}  {o['owner']}", flush=True)
        with open(OUT, "w") as f:
            json.dump({"generator": "tests/measure/gpu_peak_owners.py", "cases": results}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        run_one(sys.argv[2])
    else:
        main()
