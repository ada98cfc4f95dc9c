#!/usr/bin/env python3
"""The dtype of the softmax each decoder family's eager attention saves, in a pure bf16 run.

For every family of `tests/fixtures/measured/family_sweep.json` (its default config, depth shrunk to 2
layers where the config allows it), transformers builds the `*ForCausalLM` in bf16 under
`FakeTensorMode` (CPU fake tensors: shapes and dtypes, no memory), `attn_implementation="eager"`,
and runs one forward (micro-batch 1, 16 tokens, labels = inputs) under `saved_tensors_hooks`. Every saved
tensor made by a softmax (`SoftmaxBackward0`) whose last two dims are 16 × 16 (the attention
probabilities, not a router's) is recorded with its dtype: fp32 where the family's eager code runs
`softmax(..., dtype=torch.float32)` (Llama's `eager_attention_forward`), bf16 where it runs the softmax
in the model's dtype (Falcon, GPT-2, …). Families whose forward fails under fake tensors are listed
with the error.

Writes tests/fixtures/measured/eager_softmax.json (with name substrings as arguments: measures the
matching families only and updates their entries, keeping the others).
Run: /work/venv/bin/python tests/measure/eager_softmax.py
"""
import json, os, sys, traceback, warnings

import torch
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "tests", "fixtures", "measured", "family_sweep.json")
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "eager_softmax.json")
S = 16


def run(name, config_dict):
    d = {k: v for k, v in config_dict.items() if not k.startswith("_")}
    mt = d.pop("model_type")
    for k in ("time_step_limit",):
        if isinstance(d.get(k), str):
            d.pop(k)
    config = transformers.AutoConfig.for_model(mt, **d)
    if hasattr(config, "text_config") and mt in ("llama4", "mistral3"):
        config = config.text_config
    config._attn_implementation = "eager"
    if hasattr(config, "use_cache"):
        config.use_cache = False
    found = []

    def pack(t):
        fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        if fn and "Softmax" in fn and t.dim() >= 2 and t.shape[-1] in (S, S + 1) and t.shape[-2] == S:
            found.append(str(t.dtype).replace("torch.", ""))
        return t

    with FakeTensorMode(allow_non_fake_inputs=True):
        prev = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            model = transformers.AutoModelForCausalLM.from_config(config)
        finally:
            torch.set_default_dtype(prev)
        model.train()
        vocab = getattr(config, "vocab_size", 1000) or 1000
        ids = torch.randint(0, min(vocab, 1000), (1, S))
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(input_ids=ids, labels=ids)
    return sorted(set(found))


def main():
    sweep = json.load(open(SWEEP))["families"]
    only = sys.argv[1:]
    results, errors = {}, {}
    for name, entry in sweep.items():
        if only and not any(o in name for o in only):
            continue
        try:
            dtypes = run(name, entry["config"])
            results[name] = dtypes
            print(f"{name:32} {dtypes}", flush=True)
        except Exception as e:  # noqa
            errors[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            print(f"{name:32} ERROR {errors[name]}", flush=True)
    if only and os.path.exists(OUT):
        # A partial run updates the families it measured and keeps the others.
        old = json.load(open(OUT))
        for name in results:
            old["errors"].pop(name, None)
        for name in errors:
            old["softmax_dtypes"].pop(name, None)
        results = {**old["softmax_dtypes"], **results}
        errors = {**old["errors"], **errors}
    out = {"torch": torch.__version__, "transformers": transformers.__version__, "precision": "bf16 (pure)",
           "attention": "eager", "tokens": S, "softmax_dtypes": results, "errors": errors}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
