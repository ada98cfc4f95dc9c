#!/usr/bin/env python3
"""Real GPU peaks of whole training steps, for `headroom check` and the overhead terms.

NOT RUN in this repository's CI or on the development machine (it has no GPU): this script is
prepared to run on one CUDA GPU (H100 / H200 / A100 ...) and finishes in well under 5 minutes
on an H100 or H200 (about 15-40 s per case, most of it importing torch and transformers).

For each case it runs, in a fresh Python process (so that every case starts with an empty
caching allocator and its own CUDA context, and `used` is that process's footprint):

    model built from its config class on the GPU (no Hub download), torch.optim.AdamW (foreach,
    the CUDA default), random token batches, attention "sdpa", dropout 0;
    step = zero_grad(set_to_none=True); loss = model(input_ids, labels).loss; loss.backward();
           optimizer.step()
    2 warm-up steps (optimizer state, cuBLAS/cuDNN workspaces, kernel choice), synchronize,
    torch.cuda.reset_peak_memory_stats(), 1 measured step, synchronize, then
      max_memory_allocated  = torch.cuda.max_memory_allocated()
      max_memory_reserved   = torch.cuda.max_memory_reserved()
      used, total           = total - free, total from torch.cuda.mem_get_info()  (driver/NVML view)
    plus the real torch.cuda.memory_summary() text and, when nvidia-smi exists, its
    `--query-gpu=memory.used,memory.total --format=csv` output (parser fixtures from a real GPU).

Cases (the scenario JSON of each is written beside its numbers, same shape as peaks.json):
  gpt2-124m-fp32-adamw-b4-s512             GPT-2 small (catalogue config), fp32, b4 s512
  llama-3.2-1b-bf16-adamw-b1-s2048         Llama-3.2-1B config, model.to(bfloat16), b1 s2048
  llama-3.2-1b-bf16-adamw-b1-s2048-ckpt    the same with gradient checkpointing (non-reentrant)
  llama-3.2-1b-bf16mixed-adamw-b1-s2048    fp32 weights under torch.autocast(bfloat16)
  llama-3.2-1b-lora16-bf16mixed-b1-s2048   bf16 base + peft LoRA r=16 on all 7 linears (fp32
                                           adapters), autocast bf16 -- only if peft is installed

Output: tests/fixtures/measured/gpu_peaks.json  ("measured" of each case is exactly the JSON
        `headroom check --measured` reads; compare with
        `headroom check <(jq .cases[0].scenario gpu_peaks.json) --measured <(jq .cases[0].measured ...)`)
Run:    python tests/measure/gpu_peaks.py [case-name-substring ...]
        (with arguments only the matching cases are run and the fixture holds only those)
Needs:  torch with CUDA, transformers; peft for the LoRA case. Nothing else may use the GPU
        (`used` counts every process; the script records what was in use before each case).
"""
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gpu_peaks.json")
CATALOGUE = os.path.join(ROOT, "src", "import", "catalogue")
CASE_TIMEOUT_S = 150
TOTAL_BUDGET_S = 270  # cases not started by then are recorded as skipped (the whole run stays < 5 min)


def catalogue_config(file_name):
    with open(os.path.join(CATALOGUE, file_name)) as f:
        cfg = json.load(f)
    cfg.pop("_headroom", None)
    return cfg


def gpt2_config():
    cfg = catalogue_config("openai-community--gpt2.json")
    for key in ("attn_pdrop", "embd_pdrop", "resid_pdrop", "summary_first_dropout"):
        cfg[key] = 0.0
    return cfg


def llama_config():
    return catalogue_config("meta-llama--Llama-3.2-1B.json")


CLASS = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM"}
ALL_LINEARS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def C(name, cfg, b, s, precision, ckpt="none", lora=None):
    return dict(name=name, cfg=cfg, b=b, s=s, precision=precision, ckpt=ckpt, lora=lora)


def cases():
    gpt2, llama = gpt2_config(), llama_config()
    return [
        C("gpt2-124m-fp32-adamw-b4-s512", gpt2, 4, 512, "fp32"),
        C("llama-3.2-1b-bf16-adamw-b1-s2048", llama, 1, 2048, "bf16"),
        C("llama-3.2-1b-bf16-adamw-b1-s2048-ckpt", llama, 1, 2048, "bf16", ckpt="full"),
        C("llama-3.2-1b-bf16mixed-adamw-b1-s2048", llama, 1, 2048, "bf16-mixed"),
        C("llama-3.2-1b-lora16-bf16mixed-b1-s2048", llama, 1, 2048, "bf16-mixed", lora=16),
    ]


def device_preset(name, total):
    """Headroom's device preset id for torch.cuda.get_device_name()."""
    n = name.upper()
    if "GH200" in n:
        return "gh200-96gb"
    if "H200" in n:
        return "h200-141gb"
    if "H100" in n:
        return "h100-pcie-80gb" if "PCIE" in n else "h100-sxm-80gb"
    if "B200" in n:
        return "b200-192gb"
    if "A100" in n:
        return "a100-80gb" if total > 60e9 else "a100-40gb"
    if "L40S" in n:
        return "l40s-48gb"
    if "L4" in n:
        return "l4-24gb"
    return None


def scenario(case, preset):
    training = {"micro_batch": case["b"], "seq_len": case["s"], "grad_accum": 1, "precision": case["precision"],
                "optimizer": "adamw", "checkpointing": case["ckpt"], "attention": "sdpa", "dropout": 0.0,
                "mode": "train"}
    if case["lora"]:
        training["lora"] = {"rank": case["lora"], "targets": ["q", "k", "v", "o", "gate", "up", "down"], "base": "bf16"}
    return {"model": {"hf_config": case["cfg"]}, "training": training, "parallel": {},
            "device": {"preset": preset or "h100-sxm-80gb"}}


def nvidia_smi():
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    index = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
    try:
        return subprocess.run([exe, "-i", index, "--query-gpu=memory.used,memory.total", "--format=csv"],
                              capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None


# ---------------------------------------------------------------- one case (child process)
def run_one(name):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: this script measures real GPU memory (see the docstring)")
    case = next(c for c in cases() if c["name"] == name)
    t0 = time.time()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    cfg = dict(case["cfg"])
    mt = cfg.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **cfg)
    config._attn_implementation = "sdpa"
    with dev:
        model = getattr(transformers, CLASS[mt])(config)
    model.set_attn_implementation("sdpa")
    if case["precision"] == "bf16" or case["lora"]:
        model = model.to(torch.bfloat16)
    if case["ckpt"] == "full":
        model.config.use_cache = False
        if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.2x
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case["lora"]:
        import peft
        lcfg = peft.LoraConfig(r=case["lora"], lora_alpha=2 * case["lora"], lora_dropout=0.0, bias="none",
                               target_modules=ALL_LINEARS, task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lcfg)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (case["b"], case["s"]), device=dev)
    autocast = case["precision"] == "bf16-mixed"

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()

    report(step, model, params, t0)


def report(step, model, params, t0, extra=None):
    """Two warm-up steps, then one measured step after reset_peak_memory_stats(); prints the
    RESULT line the driver reads. `extra` is merged into the result (case-specific facts)."""
    import torch
    import transformers

    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # a run loads its weights in their dtype: no cached build-time blocks
    torch.cuda.reset_peak_memory_stats()
    peak_first = None
    for i in range(2):
        step()
        if i == 0:
            torch.cuda.synchronize()
            peak_first = {"max_memory_allocated": torch.cuda.max_memory_allocated(),
                          "max_memory_reserved": torch.cuda.max_memory_reserved()}
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    measured = {"max_memory_allocated": torch.cuda.max_memory_allocated(),
                "max_memory_reserved": torch.cuda.max_memory_reserved(),
                "used": total - free, "total": total}
    name_ = torch.cuda.get_device_name()
    result = {
        "measured": measured,
        "first_step_peaks": peak_first,
        "after_step": {"memory_allocated": torch.cuda.memory_allocated(), "memory_reserved": torch.cuda.memory_reserved()},
        "param_count": sum(p.numel() for p in model.parameters()),
        "trainable_params": sum(p.numel() for p in params),
        "param_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
        "memory_summary": torch.cuda.memory_summary(),
        "nvidia_smi_csv": nvidia_smi(),
        "device": {"name": name_, "capability": list(torch.cuda.get_device_capability()), "total": total,
                   "preset": device_preset(name_, total)},
        "versions": {"torch": torch.__version__, "cuda": torch.version.cuda, "transformers": transformers.__version__,
                     "peft": __import__("peft").__version__ if have_module("peft") else None},
        "env": {k: os.environ.get(k) for k in ("PYTORCH_CUDA_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG",
                                                 "TORCH_CUBLAS_WORKSPACE_CACHE", "CUBLASLT_WORKSPACE_SIZE")},
        "seconds": round(time.time() - t0, 1),
    }
    result.update(extra or {})
    print("RESULT " + json.dumps(result), flush=True)


# ---------------------------------------------------------------- driver (never touches CUDA)
def have_module(name):
    try:
        import importlib.util
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False


def drive(case_list, scenario_of, script, out_path, generator, total_budget_s=TOTAL_BUDGET_S,
          case_timeout_s=CASE_TIMEOUT_S):
    """Runs each case of `case_list` in a fresh `script --one NAME` process and writes what they
    measured to `out_path` after every case (so a run cut short keeps what it finished).
    Each case dict has `name` and `needs` (modules that must be importable, else it is skipped)."""
    sel = [a for a in sys.argv[1:] if not a.startswith("--")]
    t_start = time.time()
    results, versions, device = [], None, None
    for case in case_list:
        if sel and not any(x in case["name"] for x in sel):
            continue
        entry = {"name": case["name"]}
        missing = [m for m in case.get("needs", []) if not have_module(m)]
        if time.time() - t_start > total_budget_s:
            entry["skipped"] = f"time budget ({total_budget_s} s) spent"
        elif missing:
            entry["skipped"] = f"{', '.join(missing)} not installed"
        if "skipped" in entry:
            print(f"{case['name']:46s} skipped ({entry['skipped']})", flush=True)
            results.append(entry)
            continue
        before = nvidia_smi()
        try:
            left = total_budget_s + 25 - (time.time() - t_start)
            p = subprocess.run([sys.executable, os.path.abspath(script), "--one", case["name"]], capture_output=True,
                               text=True, timeout=max(30, min(case_timeout_s, left)))
            line = next((l for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
            if line is None:
                raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip()[-2000:]}")
            r = json.loads(line[len("RESULT "):])
        except Exception as e:  # record and continue
            entry["failed"] = repr(e)[-2000:]
            print(f"{case['name']:46s} FAILED {e!r}"[:600], flush=True)
            results.append(entry)
            continue
        versions, device = r.pop("versions"), r["device"]
        entry["scenario"] = scenario_of(case, r["device"]["preset"])
        entry["measured"] = r.pop("measured")
        entry["nvidia_smi_before"] = before
        entry.update(r)
        m = entry["measured"]
        print(f"{case['name']:46s} allocated={m['max_memory_allocated']:>14,d} reserved={m['max_memory_reserved']:>14,d} "
              f"used={m['used']:>14,d} ({r['seconds']} s)", flush=True)
        results.append(entry)
        out = {"generator": generator, "versions": versions, "device": device,
               "method": "fresh process per case; 2 warm-up steps, reset_peak_memory_stats, 1 measured step; "
                         "max_memory_allocated / max_memory_reserved; used = total - free from mem_get_info "
                         "(every process on the GPU) right after the step",
               "cases": results}
        os.makedirs(os.path.dirname(out_path), exist_ok=True)
        with open(out_path, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    done = sum("measured" in r for r in results)
    print(f"total {time.time() - t_start:.0f} s; {done} case(s) measured" + (f" -> {out_path}" if done else ", nothing written"), flush=True)


def main():
    listed = [dict(c, needs=["peft"] if c["lora"] else []) for c in cases()]
    drive(listed, scenario, __file__, OUT, "tests/measure/gpu_peaks.py")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        run_one(sys.argv[2])
    else:
        main()
