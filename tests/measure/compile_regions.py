#!/usr/bin/env python3
"""torch.compile by region on a tiny Llama (compile.py's LLAMA config, b=2, s=256, pure bf16 and fp32, sdpa,
transformers' ForCausalLMLoss): the allocator's peak over `loss.backward()` above its start, the bytes alive
after forward, and the forward's peak, per compiled region:
  * eager: nothing compiled;
  * blocks: every decoder layer `layer.compile(backend="inductor")`, head and loss eager (torchtune with
    `compile_loss`'s return value unused; `model.model.layers[i].compile()`);
  * blocks+loss: blocks as above and the loss function `torch.compile`d (torchtitan; compile.py's "compiled");
  (the whole model compiled, `model.compile()`, is measured by compile_whole.py: with forward and backward in one
  profiler, which sees what backward frees; two profilers, as here, cannot see the frees of tensors allocated
  before the second started, so the figures here are the bytes backward allocates and keeps up to its peak, an upper
  bound of its net peak.)
Measured on the second step (the first compiles), with the c10 CPU allocator's [memory] events from
torch.profiler(profile_memory=True) (Inductor allocates through empty_strided_cpu, which a TorchDispatchMode
does not see), as compile.py does. The AOTAutograd cache is off.

Output: tests/fixtures/measured/compile_regions.json
Run: /work/venv/bin/python tests/measure/compile_regions.py   (a few minutes on 2 cores)
"""
import contextlib, copy, gc, json, os, sys, time, warnings

import torch
import transformers
from torch.profiler import profile, ProfilerActivity

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile as C  # noqa: E402  LLAMA, causal_lm_loss, allocator_peak, allocator_live, build

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "measured", "compile_regions.json")
REGIONS = ("eager", "blocks", "blocks+loss")


def run(precision, region):
    torch._dynamo.reset()
    cfg, model = C.build(dict(name="x", model="llama", cfg=C.LLAMA, precision=precision, loss="standard", mode=region))
    V = cfg["vocab_size"]
    if region in ("blocks", "blocks+loss"):
        for layer in model.model.layers:
            layer.compile(backend="inductor")
    loss_fn = torch.compile(C.causal_lm_loss, backend="inductor") if region == "blocks+loss" else C.causal_lm_loss
    torch.manual_seed(1)
    ids = torch.randint(0, V, (C.B, C.S))

    def forward():
        h = model.model(input_ids=ids, use_cache=False).last_hidden_state
        return loss_fn(model.lm_head(h), ids, V)

    loss = forward()
    loss.backward()
    model.zero_grad(set_to_none=True)
    del loss
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as pf:
        loss = forward()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as pb:
        loss.backward()
    out = {"name": f"llama-{precision}-{region}", "precision": precision, "region": region,
           "measured": {"forward_allocator_peak": C.allocator_peak(pf),
                        "allocator_live_after_forward": C.allocator_live(pf),
                        "backward_allocator_peak_above_start": C.allocator_peak(pb)}}
    logits = C.B * C.S * V * (2 if precision == "bf16" else 4)
    m = out["measured"]
    print(f"{out['name']:28s} live {m['allocator_live_after_forward']:>11,d} bwd peak "
          f"{m['backward_allocator_peak_above_start']:>11,d} (= {m['backward_allocator_peak_above_start'] / logits:.2f} x logits)",
          flush=True)
    return out


def main():
    cases = [run(p, r) for p in ("bf16", "fp32") for r in REGIONS]
    out = {"generator": "tests/measure/compile_regions.py", "torch": torch.__version__,
           "transformers": transformers.__version__, "batch": C.B, "seq_len": C.S, "config": C.LLAMA,
           "tool": "c10 CPU allocator [memory] events (torch.profiler, profile_memory=True)", "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
