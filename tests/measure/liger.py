#!/usr/bin/env python3
"""What Liger's autograd Functions save for backward on a whole tiny Llama, with their Triton kernels replaced.

Liger's kernels are Triton and do not run on a CPU (nor on fake tensors). What a Function saves for backward is
decided by its Python `forward` (`ctx.save_for_backward(...)`), not by the kernel, so this script keeps Liger's
real Functions and monkey patch (liger-kernel 0.8.5: `apply_liger_kernel_to_llama(model=..., rope=True,
rms_norm=True, swiglu=True, fused_linear_cross_entropy=False)`) and replaces only the three launcher functions
the Functions call with PyTorch ops returning the same tensors (same shapes, dtypes, views and in-place writes):
  * ops/rms_norm.py `rms_norm_forward` -> (Y, X viewed as rows, RSTD fp32 per row, ...);
  * ops/swiglu.py `swiglu_forward` -> (a, b viewed as rows, c = silu(a) * b);
  * ops/rope.py `rope_forward` -> q and k rotated in place in their (contiguous) storage, cos, sin.
The loss stays transformers' (the fused linear cross-entropy is a separate switch, `loss: fused-linear`).
Measured as activations_parts.py measures (fake CUDA tensors, its SDPA selector, recorder and module stack):
llama-tiny (h512, 4 layers, GQA 8/2, ffn 1792, vocab 32000), micro-batch 2 x 256, SDPA, fp32 / bf16 / bf16 autocast.

Output: tests/fixtures/measured/liger.json
Run: /work/venv/bin/python tests/measure/liger.py   (liger-kernel 0.8.5 and triton importable; no GPU needed)
"""
import copy, json, os, sys, time, warnings

import torch
import torch.nn.functional as F
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import activations_parts as AP  # noqa: E402  (installs the SDPA selector and the fake-CUDA patches)
from common import ModuleStack, ParamCastTracker, fake_cuda_autocast  # noqa: E402
import liger_kernel  # noqa: E402
import liger_kernel.ops.rms_norm as LR  # noqa: E402
import liger_kernel.ops.swiglu as LS  # noqa: E402
import liger_kernel.ops.rope as LP  # noqa: E402
from liger_kernel.transformers.monkey_patch import apply_liger_kernel_to_llama  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
AP.CLASS.setdefault("llama", "LlamaForCausalLM")

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "liger.json")
LLAMA_TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512,
              "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
              "intermediate_size": 1792, "vocab_size": 32000, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
              "attention_dropout": 0.0, "tie_word_embeddings": False, "rope_theta": 500000.0}
B, S = 2, 256


# ---------------------------------------------------------------- the launchers, in PyTorch
def rms_norm_forward(X, W, eps, offset, casting_mode, row_mode):
    shape = X.shape
    X = X.view(-1, shape[-1])
    RSTD = torch.rsqrt(X.float().pow(2).mean(-1) + eps)           # fp32 per row (llama / gemma casting)
    Y = (X.float() * RSTD[:, None]).to(X.dtype)
    if W is not None:
        Y = Y * (W + offset).to(X.dtype)
    return Y.view(*shape), X, RSTD, 0, 0, casting_mode


def swiglu_forward(a, b, gate_multiplier=1.0):
    shape = a.shape
    a = a.view(-1, shape[-1])
    b = b.view(-1, shape[-1])
    c = F.silu(a * gate_multiplier) * b
    return a, b, c.view(*shape)


def rope_forward(q, k, cos, sin, position_ids=None, unsqueeze_dim=1, rotary_dim=None):
    q = q.transpose(1, 2).contiguous()
    k = k.transpose(1, 2).contiguous()
    cos, sin = cos.contiguous(), sin.contiguous()
    c, s = cos.unsqueeze(2), sin.unsqueeze(2)

    def rot(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)
    q.copy_(q * c + rot(q) * s)      # in place, as the kernel writes q and k
    k.copy_(k * c + rot(k) * s)
    return q.transpose(1, 2), k.transpose(1, 2), cos, sin


LR.rms_norm_forward = rms_norm_forward
LS.swiglu_forward = swiglu_forward
LP.rope_forward = rope_forward

CASES = [dict(name=f"llama-tiny-liger-sdpa-{p.replace('-', '')}", cfg=LLAMA_TINY, b=B, s=S, precision=p,
              attention="sdpa", dropout=0.0, ckpt="none", run="fake", experts=None, notes="", part="Liger")
         for p in ("fp32", "bf16", "bf16-mixed")]


def run(case):
    cfg = copy.deepcopy(case["cfg"])
    torch.manual_seed(0)
    AP.KERNEL_LOG.clear()
    AP.CALLS.clear()
    fm = FakeTensorMode(allow_non_fake_inputs=True)
    fm.__enter__()
    try:
        prev = torch.get_default_dtype()
        if case["precision"] == "bf16":
            torch.set_default_dtype(torch.bfloat16)
        try:
            with torch.device("cuda"):
                model = AP.make_model(cfg, case)
        finally:
            torch.set_default_dtype(prev)
        apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, cross_entropy=False,
                                    fused_linear_cross_entropy=False, model=model)
        patched = sorted({type(m).__name__ + "." + m.forward.__func__.__qualname__
                          for m in model.modules() if hasattr(m.forward, "__func__")
                          and "Liger" in m.forward.__func__.__qualname__})
        model.train()
        ids = torch.randint(0, cfg["vocab_size"], (case["b"], case["s"]), device="cuda")
        rec = AP.PartsRecorder(model)
        ms = ModuleStack(model)
        rec.module_stack = ms
        AP.CUR_MS[0] = ms
        tracker = ParamCastTracker(rec.param_refs)
        with rec.hooks(), tracker:
            if case["precision"] == "bf16-mixed":
                with fake_cuda_autocast(torch.bfloat16):
                    out = model(input_ids=ids, labels=ids)
            else:
                out = model(input_ids=ids, labels=ids)
        rec.annotate_from_graph(out.loss.grad_fn)
        ms.remove()
        AP.CUR_MS[0] = None
        dead = rec.dead_refs()
        act, pc, n = rec.totals(set(tracker.cast_refs) | dead)
        savers = {}
        for r, e in rec.entries.items():
            if r in dead or r in tracker.cast_refs:
                continue
            for sv in e["savers"][:1] or ["?"]:
                key = f"{sv.split('.')[0]} {e['dtype']}"
                savers[key] = savers.get(key, 0) + e["nbytes"]
        scenario = {"model": {"hf_config": cfg},
                    "training": {"micro_batch": case["b"], "seq_len": case["s"], "precision": case["precision"],
                                 "attention": "sdpa", "checkpointing": "none", "mode": "train",
                                 "techniques": {"liger_kernels": True}},
                    "parallel": {}, "device": {"preset": "h100-sxm-80gb"}}
        print(f"{case['name']:36s} saved={act:>12,d} n={n:4d}", flush=True)
        return {"name": case["name"], "scenario": scenario,
                "measured": {"saved_bytes": act, "saved_tensor_count": n, "param_copy_bytes": pc,
                             "by_saver_dtype": dict(sorted(savers.items()))},
                "notes": f"liger-kernel {liger_kernel.__version__ if hasattr(liger_kernel, '__version__') else '0.8.5'} "
                         f"Functions with the Triton launchers replaced by PyTorch ops; patched forwards: {patched}; "
                         f"kernels {sorted(set(AP.KERNEL_LOG))}; fake CUDA tensors"}
    finally:
        AP.CUR_MS[0] = None
        fm.__exit__(None, None, None)


def main():
    t0 = time.time()
    cases = [run(c) for c in CASES]
    doc = {"description": __doc__.strip().splitlines()[0],
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
           "cases": cases, "elapsed_s": round(time.time() - t0, 1)}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
