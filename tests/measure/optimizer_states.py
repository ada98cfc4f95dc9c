#!/usr/bin/env python3
"""Gradient and optimizer-state bytes after one real training step on CPU.

Small real models (llama-tiny, gpt2-tiny, resnet-18) are built from configs, run one
forward/backward and optimizer.step(); then we sum the bytes of every .grad and of
every tensor in optimizer.state (step counters reported separately as
optimizer_step_scalar_bytes). Rewrites tests/fixtures/measured/optimizer_states.json.
"""
import copy, json, os, sys, warnings
import torch
import transformers

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "optimizer_states.json")

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 256,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
         "intermediate_size": 704, "vocab_size": 32000, "max_position_embeddings": 2048,
         "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
         "attention_dropout": 0.0, "tie_word_embeddings": False, "rope_theta": 500000.0}
GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "activation_function": "gelu_new",
        "n_embd": 256, "n_layer": 2, "n_head": 4, "n_inner": None, "n_positions": 1024, "n_ctx": 1024,
        "vocab_size": 50257, "layer_norm_epsilon": 1e-5, "attn_pdrop": 0.0, "embd_pdrop": 0.0,
        "resid_pdrop": 0.0, "summary_first_dropout": 0.0, "tie_word_embeddings": True}
with open(os.path.join(ROOT, "src", "import", "catalogue", "microsoft--resnet-18.json")) as f:
    RESNET18 = json.load(f)
    RESNET18.pop("_headroom")
CLASS = {"llama": "LlamaForCausalLM", "gpt2": "GPT2LMHeadModel", "resnet": "ResNetForImageClassification"}


def optimizers():
    opts = [
        ("adamw", "torch.optim.AdamW(lr=1e-3, foreach=default)", lambda ps: torch.optim.AdamW(ps, lr=1e-3)),
        ("adam", "torch.optim.Adam(lr=1e-3, foreach=default)", lambda ps: torch.optim.Adam(ps, lr=1e-3)),
        ("sgd", "torch.optim.SGD(lr=1e-2, momentum=0)", lambda ps: torch.optim.SGD(ps, lr=1e-2)),
        ("sgd-momentum", "torch.optim.SGD(lr=1e-2, momentum=0.9)",
         lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9)),
    ]
    if hasattr(torch.optim, "Adafactor"):
        opts.append(("adafactor", "torch.optim.Adafactor(lr=1e-2) [torch's own]",
                     lambda ps: torch.optim.Adafactor(ps, lr=1e-2)))
    from transformers.optimization import Adafactor as HFAdafactor
    opts.append(("adafactor", "transformers.optimization.Adafactor() [defaults: lr=None, relative_step=True, "
                              "scale_parameter=True, warmup_init=False, beta1=None]",
                 lambda ps: HFAdafactor(ps)))
    try:
        from lion_pytorch import Lion
        opts.append(("lion", "lion_pytorch.Lion(lr=1e-4)", lambda ps: Lion(ps, lr=1e-4)))
    except Exception as e:  # noqa
        SKIPPED.append(f"lion: lion_pytorch not importable ({e!r})")
    try:
        import bitsandbytes as bnb
        opts.append(("adamw-8bit", "bitsandbytes.optim.AdamW8bit(lr=1e-3) [min_8bit_size=4096]",
                     lambda ps: bnb.optim.AdamW8bit(ps, lr=1e-3)))
    except Exception as e:  # noqa
        SKIPPED.append(f"adamw-8bit: bitsandbytes not importable ({e!r})")
    return opts


SKIPPED = []


def tensor_bytes(t):
    return t.numel() * t.element_size()


def run(model_name, cfg, precision, opt_key, opt_desc, make_opt):
    torch.manual_seed(0)
    d = dict(cfg)
    mt = d.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **d)
    if mt != "resnet":
        config._attn_implementation = "eager"
    model = getattr(transformers, CLASS[mt])(config)
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    if mt == "resnet":
        b, s, res = 2, 0, 64
        x = torch.randn(b, 3, res, res, dtype=next(model.parameters()).dtype)
        out = model(pixel_values=x, labels=torch.randint(0, 1000, (b,)))
    else:
        b, s = 2, 32
        ids = torch.randint(0, cfg["vocab_size"], (b, s))
        out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    opt = make_opt(model.parameters())
    opt.step()
    params = list(model.parameters())
    param_bytes = sum(tensor_bytes(p) for p in params)
    grad_bytes = sum(tensor_bytes(p.grad) for p in params if p.grad is not None)
    state_bytes, step_bytes, by_key, dtypes = 0, 0, {}, {}
    for p, st in opt.state.items():
        for k, v in st.items():
            if isinstance(v, torch.Tensor):
                nb = tensor_bytes(v)
                if k == "step":
                    step_bytes += nb
                else:
                    state_bytes += nb
                    by_key[k] = by_key.get(k, 0) + nb
                    dtypes.setdefault(k, set()).add(str(v.dtype).replace("torch.", ""))
    n_params = sum(p.numel() for p in params)
    scenario = {"model": {"hf_config": cfg},
                "training": {"micro_batch": b, "seq_len": s, "precision": precision, "optimizer": opt_key,
                             "checkpointing": "none", "attention": "eager", "dropout": 0.0, "mode": "train"},
                "parallel": {}, "device": {"preset": "h100-sxm-80gb"}}
    if mt == "resnet":
        scenario["training"]["image_size"] = 64
    name = f"{model_name}-{precision}-{opt_key}" + ("-hf" if opt_desc.startswith("transformers") else "")
    res = {"name": name, "scenario": scenario, "optimizer_impl": opt_desc,
           "measured": {"param_count": n_params, "param_bytes": param_bytes, "grad_bytes": grad_bytes,
                        "optimizer_state_bytes": state_bytes, "optimizer_step_scalar_bytes": step_bytes,
                        "state_bytes_by_key": by_key,
                        "state_dtypes": {k: sorted(v) for k, v in dtypes.items()},
                        "state_bytes_per_param": round(state_bytes / n_params, 6)}}
    print(f"{name:40s} params={param_bytes:>11,d} grads={grad_bytes:>11,d} state={state_bytes:>11,d} "
          f"step={step_bytes} {by_key}", flush=True)
    return res


def main():
    cases = []
    opts = optimizers()
    for model_name, cfg in (("llama-tiny", LLAMA), ("gpt2-tiny", GPT2), ("resnet-18", RESNET18)):
        for precision in ("fp32", "bf16"):
            for key, desc, mk in opts:
                try:
                    cases.append(run(model_name, cfg, precision, key, desc, mk))
                except Exception as e:
                    msg = f"{model_name} {precision} {desc}: failed: {e!r}"[:400]
                    print(msg, flush=True)
                    SKIPPED.append(msg)
                out = {"generator": "tests/measure/optimizer_states.py", "torch": torch.__version__,
                       "transformers": transformers.__version__, "device": "cpu (real tensors)",
                       "skipped": SKIPPED, "cases": cases}
                with open(OUT, "w") as f:
                    json.dump(out, f, indent=1)
                    f.write("\n")


if __name__ == "__main__":
    main()
