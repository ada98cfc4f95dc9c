#!/usr/bin/env python3
"""Real GPU peaks of training steps of a vision-language model and of hybrid / state-space models.

Prepared for one CUDA GPU (run on an H200 of this workplace; NOT run in CI). Same method as
gpu_peaks.py (whose driver and report it reuses): each case in a fresh process, the model built
from its catalogue config directly on the GPU in its training dtype (no Hub download, random
weights: memory does not depend on their values), the cache emptied after the build, 2 warm-up
steps, reset_peak_memory_stats(), 1 measured step; max_memory_allocated / max_memory_reserved.

Cases:
  qwen2.5-vl-7b-lora8-gc-644x476-t64     ms-swift's caption.sh setup without ms-swift: LoRA r 8,
                                         alpha 32, dropout 0.05 on every language-model linear
                                         (fp32 adapters), tower and projector frozen, bf16 weights
                                         under bf16 autocast, checkpointing (non-reentrant), SDPA,
                                         one 644 x 476 image (391 tokens) and 64 text tokens
  qwen2.5-vl-7b-lora8-gc-1024sq-t64      the same with a 1024 x 1024 image (smart_resize: 980 x 980)
  qwen2.5-vl-7b-lora8-644x476-t64        the first without checkpointing
  qwen3-next-4l-lora8-s2048              Qwen3-Next-80B-A3B's config cut to 4 layers (3 Gated
                                         DeltaNet, 1 attention), LoRA r 8 on q/k/v/o, bf16 + autocast
  jamba-mini-8l-lora8-s1024              AI21-Jamba-1.5-Mini cut to 8 layers (one period),
                                         LoRA r 8 on q/k/v/o, bf16 + autocast
  mamba-2.8b-bf16-adamw-s256             state-spaces/mamba-2.8b-hf, full fine-tuning, bf16, AdamW
The hybrid cases record which mixer path ran: without `mamba_ssm`, `causal_conv1d` and `fla`
installed, transformers runs its torch fallback, which is Headroom's `training.mixer_kernels:
"torch"` (the scenario says so).

Output: tests/fixtures/measured/gpu_hybrid_vlm.json (same shape as gpu_peaks.json; each case's
        "measured" is what `headroom check --measured` reads, its "scenario" the plan to compare).
Run:    python tests/measure/gpu_hybrid_vlm.py [case-name-substring ...]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_peaks import ROOT, catalogue_config, drive, have_module, report  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gpu_hybrid_vlm.json")
VLM = "Qwen--Qwen2.5-VL-7B-Instruct.json"
LM_LINEARS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"
ATTENTION = ["q_proj", "k_proj", "v_proj", "o_proj"]
MIXER_PACKAGES = ["mamba_ssm", "causal_conv1d", "fla"]
DEVICE = "cuda"  # a CPU smoke test of the cases' code sets "cpu" (and replaces `report`)


def cut(file_name, layers):
    cfg = catalogue_config(file_name)
    cfg["num_hidden_layers"] = layers
    return cfg


def C(name, cfg, s, lora, lora_targets=None, precision="bf16-mixed", ckpt="none", image=None, kind="text"):
    needs = ["peft"] if lora else []
    return dict(name=name, cfg=cfg, b=1, s=s, lora=lora, lora_targets=lora_targets, precision=precision,
                ckpt=ckpt, image=image, kind=kind, needs=needs)


def cases():
    vlm = catalogue_config(VLM)
    return [
        C("qwen2.5-vl-7b-lora8-gc-644x476-t64", vlm, 64, 8, LM_LINEARS, ckpt="full", image=(644, 476), kind="vlm"),
        C("qwen2.5-vl-7b-lora8-gc-1024sq-t64", vlm, 64, 8, LM_LINEARS, ckpt="full", image=(1024, 1024), kind="vlm"),
        C("qwen2.5-vl-7b-lora8-644x476-t64", vlm, 64, 8, LM_LINEARS, image=(644, 476), kind="vlm"),
        C("qwen3-next-4l-lora8-s2048", cut("Qwen--Qwen3-Next-80B-A3B-Instruct.json", 4), 2048, 8, ATTENTION,
          kind="hybrid"),
        C("jamba-mini-8l-lora8-s1024", cut("ai21labs--AI21-Jamba-1.5-Mini.json", 8), 1024, 8, ATTENTION,
          kind="hybrid"),
        C("mamba-2.8b-bf16-adamw-s256", catalogue_config("state-spaces--mamba-2.8b-hf.json"), 256, None,
          precision="bf16", kind="hybrid"),
    ]


def scenario(case, preset):
    training = {"micro_batch": case["b"], "seq_len": case["s"], "grad_accum": 1, "precision": case["precision"],
                "optimizer": "adamw", "checkpointing": case["ckpt"], "attention": "sdpa", "dropout": 0.0,
                "mode": "train"}
    if case["lora"]:
        targets = ["q", "k", "v", "o"] if case["lora_targets"] == ATTENTION else ["q", "k", "v", "o", "gate", "up", "down"]
        training["lora"] = {"rank": case["lora"], "targets": targets, "base": "bf16", "dropout": 0.05 if case["kind"] == "vlm" else 0.0}
    if case["image"]:
        training["resolution"] = list(case["image"])
        training["images_per_sample"] = 1
        training["frozen"] = {"vision_tower": True}
    if case["kind"] == "hybrid":
        training["mixer_kernels"] = "fused" if all(have_module(m) for m in MIXER_PACKAGES) else "torch"
    return {"model": {"hf_config": case["cfg"]}, "training": training, "parallel": {},
            "device": {"preset": preset or "h100-sxm-80gb"}}


def build(case, torch, transformers, dev):
    cfg = dict(case["cfg"])
    cfg.pop("_headroom", None)
    mt = cfg.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **cfg)
    attention = "eager" if mt == "mamba" else "sdpa"  # Mamba has no attention to dispatch
    cls = getattr(transformers, case.get("cls") or config.architectures[0])
    # bf16-mixed: fp32 master weights under autocast, except a LoRA run's frozen base (bf16).
    sixteen = case["precision"] == "bf16" or (case["precision"] == "bf16-mixed" and case["lora"])
    dtype = torch.bfloat16 if sixteen else torch.float32
    with dev:
        model = cls._from_config(config, dtype=dtype, attn_implementation=attention)
    return model, config


def vlm_inputs(case, config, torch, dev):
    """One image as Qwen2-VL's processor gives it (smart_resize, 14-px patches, 2 x 2 merge) inside
    the chat layout: text, <vision_start>, the image's tokens, <vision_end>, text; `s` text tokens."""
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

    w, h = case["image"]
    vc = config.vision_config
    rh, rw = smart_resize(h, w)  # the processor's defaults: factor 28, 56*56 <= pixels <= 28*28*1280
    gh, gw = rh // vc.patch_size, rw // vc.patch_size
    patches = gh * gw
    tokens = patches // (vc.spatial_merge_size ** 2)
    pixel_values = torch.randn(patches, 3 * vc.temporal_patch_size * vc.patch_size ** 2, device=dev)
    grid = torch.tensor([[1, gh, gw]], device=dev)
    text = case["s"] - 2
    head = torch.randint(0, 151000, (text // 2,), device=dev)
    tail = torch.randint(0, 151000, (text - text // 2,), device=dev)
    image = torch.full((tokens,), config.image_token_id, device=dev)
    ids = torch.cat([head, torch.tensor([config.vision_start_token_id], device=dev), image,
                     torch.tensor([config.vision_end_token_id], device=dev), tail]).unsqueeze(0)
    labels = ids.clone()
    labels[ids == config.image_token_id] = -100
    return dict(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=pixel_values,
                image_grid_thw=grid, labels=labels), {"resized": [rw, rh], "image_tokens": tokens,
                                                      "sequence": int(ids.shape[1])}


def run_one(name):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    if DEVICE == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: this script measures real GPU memory (see the docstring)")
    case = next(c for c in cases() if c["name"] == name)
    t0 = time.time()
    torch.manual_seed(0)
    dev = torch.device(DEVICE)
    model, config = build(case, torch, transformers, dev)
    if case["ckpt"] == "full":
        model.config.use_cache = False
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if case["lora"]:
        import peft
        for p in model.parameters():
            p.requires_grad_(False)
        lcfg = peft.LoraConfig(r=case["lora"], lora_alpha=4 * case["lora"] if case["kind"] == "vlm" else 2 * case["lora"],
                               lora_dropout=0.05 if case["kind"] == "vlm" else 0.0, bias="none",
                               target_modules=case["lora_targets"], task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lcfg)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5)
    if case["image"]:
        batch, facts = vlm_inputs(case, config, torch, dev)
    else:
        vocab = getattr(config, "vocab_size", None) or config.get_text_config().vocab_size
        ids = torch.randint(0, vocab, (case["b"], case["s"]), device=dev)
        batch, facts = dict(input_ids=ids, labels=ids), {}
    facts["mixer_packages"] = {m: have_module(m) for m in MIXER_PACKAGES}
    autocast = case["precision"] == "bf16-mixed"

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(DEVICE, dtype=torch.bfloat16, enabled=autocast):
            loss = model(**batch).loss
        loss.backward()
        opt.step()

    report(step, model, params, t0, {"inputs": facts})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        run_one(sys.argv[2])
    else:
        drive(cases(), scenario, __file__, OUT, "tests/measure/gpu_hybrid_vlm.py", total_budget_s=330,
              case_timeout_s=150)
