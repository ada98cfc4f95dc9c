"""Are the output span's saved tensors (head input, logits, the loss's log-softmax) still alive
when autograd reaches the last block's backward (its recompute under checkpointing)?

`src/model/ledger.rs` counts them at the loss's and the head's moments but not at a block's
moment (one micro-batch in flight). This records, with real torch autograd and non-reentrant
`torch.utils.checkpoint`, which tensors saved by the head and the loss are alive at the moment
the last block's backward starts: a probe Function between the last block and the head runs
its backward right before it. The model runs inside a function, so only autograd holds its
activations, as in a training loop.

Usage: python tests/measure/output_span_freed.py  → tests/fixtures/measured/output_span_freed.json
"""
import json
import pathlib
import weakref

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

H, V, S, LAYERS = 64, 5000, 128, 3
OUT = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "measured" / "output_span_freed.json"


def run(checkpointing: bool) -> dict:
    torch.manual_seed(0)
    blocks = nn.ModuleList([nn.Sequential(nn.Linear(H, H), nn.GELU(), nn.Linear(H, H)) for _ in range(LAYERS)])
    head = nn.Linear(H, V, bias=False)
    saved = []  # (shape, weakref) of every tensor the head and the loss save for backward
    seen = {}

    def pack(t):
        if not isinstance(t, nn.Parameter):
            saved.append((list(t.shape), weakref.ref(t)))
        return t

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view_as(a)

        @staticmethod
        def backward(ctx, g):
            seen["alive"] = [{"shape": shape, "alive": r() is not None} for shape, r in saved]
            return g

    def loss_of(x, target):
        y = x
        for b in blocks:
            y = checkpoint(b, y, use_reentrant=False) if checkpointing else b(y)
        y = Probe.apply(y)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            logits = head(y)
            return torch.nn.functional.nll_loss(torch.log_softmax(logits.float(), -1), target)

    loss = loss_of(torch.randn(S, H, requires_grad=True), torch.randint(0, V, (S,)))
    loss.backward()
    return {"checkpointing": checkpointing, "saved_by_head_and_loss": seen["alive"]}


if __name__ == "__main__":
    cases = [run(True), run(False)]
    OUT.write_text(json.dumps({"torch": torch.__version__, "hidden": H, "vocab": V, "tokens": S, "cases": cases}, indent=1) + "\n")
    for c in cases:
        alive = [s for s in c["saved_by_head_and_loss"] if s["alive"]]
        print(f"checkpointing={c['checkpointing']}: {len(c['saved_by_head_and_loss'])} saved by head and loss, alive at the last block's backward: {alive}")
