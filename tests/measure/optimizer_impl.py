#!/usr/bin/env python3
"""The optimizer step's own transient memory per implementation, on the CPU.

A tiny Llama (fp32 and pure bf16) runs two training steps with torch.optim.AdamW (and Adam
with weight decay) as for-loop (foreach=False), foreach (foreach=True) and fused (fused=True,
the CPU kernel torch has had since 2.4). (bitsandbytes' AdamW8bit is left out: on the CPU
bitsandbytes 0.50.2 runs a PyTorch fallback that dequantises the states, 160-200 MB here, not the
in-place blockwise CUDA kernel the model describes.)
The second step's optimizer.step() runs under torch.profiler (profile_memory=True): the
running sum of the c10 CPU allocator's [memory] events from the start of step() is the bytes
the step allocates on top of what exists (parameters, gradients, states); its maximum is the
step's transient peak. The same sum at the end (net) must be ~0 (the states exist already).

What the model predicts (src/model/states.rs, `optimizer_step_intermediates`):
  foreach  : one parameter-sized list per (device, dtype) group, `_foreach_sqrt(exp_avg_sqs)`
             (torch/optim/adam.py `_multi_tensor_adam`), in the states' dtype;
  for-loop : `(exp_avg_sq.sqrt() / bias_correction2_sqrt)`: two tensors of the largest
             parameter alive at once (`_single_tensor_adam`);
  fused    : nothing parameter-sized (`torch._fused_adamw_`, in place).

Writes tests/fixtures/measured/optimizer_impl.json.
"""
import json, os, sys, warnings
import torch
import transformers
from torch.profiler import profile, ProfilerActivity

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "optimizer_impl.json")

# Two shapes: the first's largest tensors (embedding, head) are most of the model; the second's
# (small vocabulary, more blocks) are a small part, which separates for-loop from foreach.
LLAMA = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
             intermediate_size=704, vocab_size=32000, max_position_embeddings=2048, rms_norm_eps=1e-5,
             hidden_act="silu", attention_bias=False, mlp_bias=False, attention_dropout=0.0,
             tie_word_embeddings=False, rope_theta=500000.0)


SHAPES = {"llama-tiny": LLAMA,
          "llama-tiny-v1k": dict(LLAMA, vocab_size=1024, num_hidden_layers=6)}


def optimizers():
    out = []
    for name, cls, wd in [("adamw", torch.optim.AdamW, 0.01), ("adam", torch.optim.Adam, 0.0)]:
        out.append((name, "for-loop", f"torch.optim.{cls.__name__}(lr=1e-4, weight_decay={wd}, foreach=False)",
                    lambda ps, cls=cls, wd=wd: cls(ps, lr=1e-4, weight_decay=wd, foreach=False)))
        out.append((name, "foreach", f"torch.optim.{cls.__name__}(lr=1e-4, weight_decay={wd}, foreach=True)",
                    lambda ps, cls=cls, wd=wd: cls(ps, lr=1e-4, weight_decay=wd, foreach=True)))
        out.append((name, "fused", f"torch.optim.{cls.__name__}(lr=1e-4, weight_decay={wd}, fused=True)",
                    lambda ps, cls=cls, wd=wd: cls(ps, lr=1e-4, weight_decay=wd, fused=True)))
    return out


def step_peak(opt):
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        opt.step()
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"
           and str(e.device_type()).endswith("CPU")]
    evs.sort(key=lambda e: e.start_ns())
    run, peak = 0, 0
    for e in evs:
        run += e.nbytes()
        peak = max(peak, run)
    return peak, run


def run_case(shape, precision, opt_name, impl, desc, make):
    torch.manual_seed(0)
    cfg = SHAPES[shape]
    config = transformers.LlamaConfig(**cfg)
    model = transformers.LlamaForCausalLM(config)
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    opt = make(model.parameters())
    ids = torch.randint(0, cfg["vocab_size"], (2, 64))
    for i in range(2):
        opt.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        del loss
        if i == 0:
            opt.step()
    params = [p for p in model.parameters() if p.requires_grad]
    peak, net = step_peak(opt)
    return {
        "name": f"{shape}-{precision}-{opt_name}-{impl}",
        "model": {"model_type": "llama", **cfg},
        "precision": precision,
        "optimizer": opt_name,
        "implementation": impl,
        "constructor": desc,
        "trainable_elements": sum(p.numel() for p in params),
        "largest_tensor_elements": max(p.numel() for p in params),
        "param_dtype_bytes": params[0].element_size(),
        "state_bytes": sum(v.numel() * v.element_size() for st in opt.state.values() for k, v in st.items()
                           if isinstance(v, torch.Tensor) and k != "step"),
        "step_peak_above_start": int(peak),
        "step_net": int(net),
    }


def main():
    cases = []
    for shape in SHAPES:
        for precision in ["fp32", "bf16"]:
            for opt_name, impl, desc, make in optimizers():
                c = run_case(shape, precision, opt_name, impl, desc, make)
                print(f"{c['name']:<40} peak {c['step_peak_above_start']:>12} net {c['step_net']:>8} "
                      f"trainable {c['trainable_elements']} largest {c['largest_tensor_elements']}")
                cases.append(c)
    out = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": "cpu",
        "tool": "torch.profiler profile_memory=True: running sum of the CPU allocator's [memory] events over "
                "the second step's optimizer.step(), its maximum (peak) and its end (net)",
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
