#!/usr/bin/env python3
"""DistributedDataParallel's gradient buckets, measured: what is alive at each moment of a step.

Two CPU processes (gloo, world size 2, torch.multiprocessing) train a tiny Llama (fp32) wrapped in
`DistributedDataParallel` with `gradient_as_bucket_view` False (DDP's default) and True. The
reducer allocates its flat buckets in C++ (`Reducer::initialize_buckets`, `at::empty`), which
`torch.profiler` with `profile_memory=True` sees as the CPU allocator's [memory] events; the
running sum of those events from before `DDP(model)` is the live bytes on top of the model's
parameters. On rank 0, for the second step (`optimizer.zero_grad(set_to_none=True)`, forward,
`loss.backward()`, `optimizer.step()`; SGD without momentum and foreach=False, so the step makes
nothing of its own), the live bytes are read:
  * after DDP(model) is built (the buckets),
  * before the forward (after zero_grad: the `.grad`s freed),
  * after backward (gradients written and all-reduced),
  * the maximum during optimizer.step().
Everything is reported as bytes above the parameters, with the parameters' total for scale.

Writes tests/fixtures/measured/ddp_buckets.json.
"""
import json, os, sys, tempfile, time, warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import transformers
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import profile, ProfilerActivity

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "ddp_buckets.json")

LLAMA = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
             intermediate_size=704, vocab_size=4096, max_position_embeddings=2048, rms_norm_eps=1e-5,
             hidden_act="silu", attention_bias=False, mlp_bias=False, attention_dropout=0.0,
             tie_word_embeddings=False, rope_theta=500000.0)


def live_at(events, t):
    return sum(e.nbytes() for e in events if e.start_ns() <= t)


def max_between(events, t0, t1):
    run = live_at(events, t0)
    peak = run
    for e in events:
        if t0 < e.start_ns() <= t1:
            run += e.nbytes()
            peak = max(peak, run)
    return peak


def worker(rank, world, init_file, bucket_view, queue):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(**LLAMA)
    config._attn_implementation = "sdpa"
    model = transformers.LlamaForCausalLM(config)
    model.train()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    ids = torch.randint(0, LLAMA["vocab_size"], (2, 64), generator=torch.Generator().manual_seed(rank))
    marks = {}
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        marks["start"] = time.time_ns()
        ddp = DDP(model, gradient_as_bucket_view=bucket_view)
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3, foreach=False)
        marks["built"] = time.time_ns()
        for step in range(2):
            opt.zero_grad(set_to_none=True)
            marks[f"before_forward_{step}"] = time.time_ns()
            loss = ddp(input_ids=ids, labels=ids).loss
            loss.backward()
            del loss
            marks[f"after_backward_{step}"] = time.time_ns()
            opt.step()
            marks[f"after_step_{step}"] = time.time_ns()
    events = sorted((e for e in prof.profiler.kineto_results.events()
                     if e.name() == "[memory]" and str(e.device_type()).endswith("CPU")), key=lambda e: e.start_ns())
    events = [e for e in events if e.start_ns() >= marks["start"]]
    if rank == 0:
        queue.put({
            "name": f"llama-tiny-fp32-ddp2-bucket_view={bucket_view}",
            "gradient_as_bucket_view": bucket_view,
            "param_bytes": params,
            "after_ddp_built": live_at(events, marks["built"]),
            "before_forward": live_at(events, marks["before_forward_1"]),
            "after_backward": live_at(events, marks["after_backward_1"]),
            "optimizer_step_max": max_between(events, marks["after_backward_1"], marks["after_step_1"]),
        })
    dist.barrier()
    dist.destroy_process_group()


def run(bucket_view):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    init_file = tempfile.mktemp(prefix="ddp-init-")
    procs = [ctx.Process(target=worker, args=(r, 2, init_file, bucket_view, queue)) for r in range(2)]
    for p in procs:
        p.start()
    result = queue.get(timeout=300)
    for p in procs:
        p.join(timeout=120)
    return result


def main():
    cases = []
    for bucket_view in [False, True]:
        c = run(bucket_view)
        print(c, flush=True)
        cases.append(c)
    out = {
        "torch": torch.__version__, "transformers": transformers.__version__, "device": "cpu", "backend": "gloo",
        "world_size": 2, "model": {"model_type": "llama", **LLAMA}, "batch": {"micro_batch": 2, "seq_len": 64},
        "optimizer": "torch.optim.SGD(lr=1e-3, foreach=False) (no state, no intermediates)",
        "tool": "torch.profiler profile_memory=True on rank 0: running sum of the CPU allocator's [memory] events "
                "from before DDP(model); each figure is bytes alive above the parameters at that moment of step 2",
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
