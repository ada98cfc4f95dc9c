#!/usr/bin/env python3
"""Measure the bytes autograd saves for backward in HF transformers training steps.

For each case: build the model from an explicit config (never from_pretrained), run
forward + the model's own loss under torch.autograd.graph.saved_tensors_hooks, and
count every saved tensor once per untyped storage, excluding parameter and buffer
storages. Storages produced by casting a parameter (autocast's bf16 weight copies,
detected with a TorchDispatchMode that watches aten._to_copy applied to a parameter
storage) are reported separately as param_copy_bytes.

Most cases run under FakeTensorMode on device "cuda" (no memory, no GPU needed):
forward ops dispatch as on CUDA (dropout masks are 1-byte bools). Since SDPA's
backend choice cannot run without a GPU (fake CUDA falls back to the math kernel),
torch.nn.functional.scaled_dot_product_attention is replaced by a selector that
mirrors torch 2.15's CUDA dispatch (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp)
and calls the chosen aten kernel directly (common.cuda_sdpa, shared with
activations_parts.py; cuDNN attention is not modelled):
  - no attn_mask, fp16/bf16, q/k/v head dims equal, <= 256 -> _scaled_dot_product_flash_attention
  - else, q/k head dims equal and aligned                 -> _scaled_dot_product_efficient_attention
    (a boolean mask first becomes a new float mask in q's dtype, which the kernel saves)
  - else                                                  -> math (aten composite, as a GPU would)
  Flash and efficient both need valid heads: equal, MQA (one k/v head), or enable_gqa with
  n_kv dividing n_heads (grouped-query k/v keep n_kv heads); otherwise math.
Non-reentrant activation checkpointing (transformers' default) keeps the checkpointed
function's tensor inputs alive in a closure instead of saving them through autograd,
so the wrapper records those inputs too ("via": "checkpoint-input").
Some cases run for real on CPU (backend says so): the MoE per-expert token counts and
the fake-vs-real agreement checks.

Outputs: tests/fixtures/measured/activations.json (the fixture) and
tests/measure/saved_tensors_detail.json (per-tensor listing of every case, used by
report.py to write saved_tensors_report.md).
Run: .venv/bin/python tests/measure/activations.py [case-name-substring ...]
"""
import copy, json, os, sys, time, math, warnings
import torch
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SavedTensorRecorder, ParamCastTracker, ModuleStack, fake_cuda_autocast, sref, cuda_sdpa, hold_checkpoint_inputs  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "activations.json")
DETAIL = os.path.join(ROOT, "tests", "measure", "saved_tensors_detail.json")

# ---------------------------------------------------------------- SDPA selection
KERNEL_LOG = []


def forced_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    kernel, out = cuda_sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                            scale=scale, enable_gqa=enable_gqa)
    KERNEL_LOG.append(kernel)
    return out


torch.nn.functional.scaled_dot_product_attention = forced_sdpa

# Under fake tensors transformers cannot look at position_ids and assumes a packed
# sequence, building a 4D mask. A real run with no attention_mask and default
# position_ids (0..s-1) finds no packing and passes no mask: reproduce that.
import transformers.masking_utils as _mu  # noqa: E402
_mu.find_packed_sequence_indices = lambda position_ids: None

# No GPU here: transformers asks for the device capability before choosing grouped_mm
# for MoE experts. Answer as an H100 (sm90) would.
torch.cuda.get_device_capability = lambda *a, **k: (9, 0)

# torch.nn.init.trunc_normal_ has a data-dependent loop (`if not mask.any()`), which fake
# tensors cannot run; initial values do not matter for memory, so use normal_ under fake.
import transformers.initialization as _tinit  # noqa: E402
_ORIG_TRUNC = _tinit.TORCH_INIT_FUNCTIONS["trunc_normal_"]


def _trunc_normal_any(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    if isinstance(tensor, torch._subclasses.fake_tensor.FakeTensor):
        with torch.no_grad():
            return tensor.normal_(mean, std)
    return _ORIG_TRUNC(tensor, mean=mean, std=std, a=a, b=b, generator=generator)


_tinit.TORCH_INIT_FUNCTIONS["trunc_normal_"] = _trunc_normal_any

# ---------------------------------------------------------------- configs
DROPOUT_KEYS = ["attn_pdrop", "embd_pdrop", "resid_pdrop", "summary_first_dropout", "attention_dropout",
                "hidden_dropout_prob", "attention_probs_dropout_prob", "hidden_dropout", "classifier_dropout"]


def with_dropout(cfg, p):
    cfg = copy.deepcopy(cfg)
    for k in DROPOUT_KEYS:
        if k in cfg:
            cfg[k] = p
    return cfg


def load_preset(pid):
    """hf_config of the catalogue model whose _headroom.aliases contain pid (the old short
    preset id is the first alias), without the _headroom key."""
    cat = os.path.join(ROOT, "src", "import", "catalogue")
    found = []
    for fn in sorted(os.listdir(cat)):
        if not fn.endswith(".json"):
            continue
        with open(os.path.join(cat, fn)) as f:
            d = json.load(f)
        if pid in d.get("_headroom", {}).get("aliases", []):
            found.append(d)
    if len(found) != 1:
        raise KeyError(f"{len(found)} catalogue entries in {cat} have alias {pid!r}")
    d = found[0]
    d.pop("_headroom")
    return d


GPT2_TINY = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "activation_function": "gelu_new",
             "n_embd": 768, "n_layer": 4, "n_head": 12, "n_inner": None, "n_positions": 1024, "n_ctx": 1024,
             "vocab_size": 50257, "layer_norm_epsilon": 1e-5, "attn_pdrop": 0.1, "embd_pdrop": 0.1,
             "resid_pdrop": 0.1, "summary_first_dropout": 0.1, "tie_word_embeddings": True,
             "bos_token_id": 50256, "eos_token_id": 50256}
LLAMA_TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512,
              "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
              "intermediate_size": 1792, "vocab_size": 32000, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
              "attention_dropout": 0.0, "tie_word_embeddings": False, "rope_theta": 500000.0}
LLAMA_MHA_TINY = dict(LLAMA_TINY, num_key_value_heads=8)
MISTRAL_TINY = {"model_type": "mistral", "architectures": ["MistralForCausalLM"], "hidden_size": 512,
                "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
                "intermediate_size": 1792, "vocab_size": 32000, "max_position_embeddings": 32768,
                "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_dropout": 0.0,
                "sliding_window": 4096, "tie_word_embeddings": False, "rope_theta": 10000.0}
QWEN2_TINY = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896,
              "num_hidden_layers": 4, "num_attention_heads": 14, "num_key_value_heads": 2,
              "intermediate_size": 4864, "vocab_size": 151936, "max_position_embeddings": 131072,
              "rms_norm_eps": 1e-6, "hidden_act": "silu", "attention_dropout": 0.0, "rope_theta": 1000000.0,
              "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": 131072,
              "max_window_layers": 4}
MIXTRAL_TINY = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "hidden_size": 512,
                "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
                "intermediate_size": 1024, "num_local_experts": 4, "num_experts_per_tok": 2,
                "vocab_size": 32000, "max_position_embeddings": 32768, "rms_norm_eps": 1e-5,
                "hidden_act": "silu", "attention_dropout": 0.0, "sliding_window": None,
                "tie_word_embeddings": False, "rope_theta": 1000000.0, "output_router_logits": False,
                "router_aux_loss_coef": 0.02}
BERT_TINY = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768,
             "num_hidden_layers": 4, "num_attention_heads": 12, "intermediate_size": 3072,
             "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2,
             "hidden_act": "gelu", "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
             "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute", "pad_token_id": 0,
             "tie_word_embeddings": True}
VIT_TINY = {"model_type": "vit", "architectures": ["ViTForImageClassification"], "hidden_size": 768,
            "num_hidden_layers": 4, "num_attention_heads": 12, "intermediate_size": 3072,
            "hidden_act": "gelu", "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.0,
            "attention_probs_dropout_prob": 0.0, "image_size": 224, "patch_size": 16, "num_channels": 3,
            "qkv_bias": True, "encoder_stride": 16, "num_labels": 1000}

CLASS = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
         "qwen2": "Qwen2ForCausalLM", "mixtral": "MixtralForCausalLM", "bert": "BertForMaskedLM",
         "vit": "ViTForImageClassification", "resnet": "ResNetForImageClassification"}


def C(name, cfg, b, s, precision, attention, dropout, ckpt="none", image_size=None, run="fake",
      experts=None, notes=""):
    return dict(name=name, cfg=cfg, b=b, s=s, precision=precision, attention=attention, dropout=dropout,
                ckpt=ckpt, image_size=image_size, run=run, experts=experts, notes=notes)


CASES = [
    # ---- GPT-2 style (h768, 4 layers, vocab 50257), b2 s256
    C("gpt2-tiny-eager-fp32-drop0.1", GPT2_TINY, 2, 256, "fp32", "eager", 0.1),
    C("gpt2-tiny-eager-fp32-drop0", GPT2_TINY, 2, 256, "fp32", "eager", 0.0),
    C("gpt2-tiny-sdpa-fp32-drop0.1", GPT2_TINY, 2, 256, "fp32", "sdpa", 0.1),
    C("gpt2-tiny-sdpa-fp32-drop0", GPT2_TINY, 2, 256, "fp32", "sdpa", 0.0),
    C("gpt2-tiny-sdpa-bf16-drop0.1", GPT2_TINY, 2, 256, "bf16", "sdpa", 0.1),
    C("gpt2-tiny-sdpa-bf16-drop0", GPT2_TINY, 2, 256, "bf16", "sdpa", 0.0),
    C("gpt2-tiny-sdpa-bf16mixed-drop0.1", GPT2_TINY, 2, 256, "bf16-mixed", "sdpa", 0.1),
    C("gpt2-tiny-eager-bf16mixed-drop0.1", GPT2_TINY, 2, 256, "bf16-mixed", "eager", 0.1),
    C("gpt2-tiny-eager-bf16-drop0.1", GPT2_TINY, 2, 256, "bf16", "eager", 0.1),
    C("gpt2-tiny-sdpa-fp32-drop0.1-ckpt", GPT2_TINY, 2, 256, "fp32", "sdpa", 0.1, ckpt="full"),
    C("gpt2-tiny-sdpa-bf16-drop0-ckpt", GPT2_TINY, 2, 256, "bf16", "sdpa", 0.0, ckpt="full"),
    C("gpt2-tiny-eager-fp32-drop0.1-s1024", GPT2_TINY, 1, 1024, "fp32", "eager", 0.1),
    C("gpt2-tiny-sdpa-bf16-drop0.1-s1024", GPT2_TINY, 1, 1024, "bf16", "sdpa", 0.1),
    # ---- Llama style (GQA 8q/2kv, SwiGLU 3.5h), b2 s256
    C("llama-tiny-sdpa-fp32", LLAMA_TINY, 2, 256, "fp32", "sdpa", 0.0),
    C("llama-tiny-sdpa-bf16", LLAMA_TINY, 2, 256, "bf16", "sdpa", 0.0),
    C("llama-tiny-sdpa-bf16mixed", LLAMA_TINY, 2, 256, "bf16-mixed", "sdpa", 0.0),
    C("llama-tiny-eager-fp32", LLAMA_TINY, 2, 256, "fp32", "eager", 0.0),
    C("llama-tiny-eager-bf16", LLAMA_TINY, 2, 256, "bf16", "eager", 0.0),
    C("llama-tiny-sdpa-bf16-ckpt", LLAMA_TINY, 2, 256, "bf16", "sdpa", 0.0, ckpt="full"),
    C("llama-mha-tiny-sdpa-fp32", LLAMA_MHA_TINY, 2, 256, "fp32", "sdpa", 0.0,
      notes="num_key_value_heads = num_attention_heads, so fp32 SDPA can use the memory-efficient kernel"),
    C("llama-tiny-sdpa-bf16-s1024", LLAMA_TINY, 1, 1024, "bf16", "sdpa", 0.0),
    # ---- Mistral, Qwen2
    C("mistral-tiny-sdpa-bf16", MISTRAL_TINY, 2, 256, "bf16", "sdpa", 0.0),
    C("qwen2-tiny-sdpa-bf16", QWEN2_TINY, 2, 256, "bf16", "sdpa", 0.0),
    C("qwen2-tiny-sdpa-bf16mixed", QWEN2_TINY, 2, 256, "bf16-mixed", "sdpa", 0.0),
    C("qwen2-tiny-eager-fp32", QWEN2_TINY, 2, 256, "fp32", "eager", 0.0),
    # ---- Mixtral-style MoE (4 experts, top-2)
    C("mixtral-tiny-sdpa-bf16-groupedmm", MIXTRAL_TINY, 2, 128, "bf16", "sdpa", 0.0, experts="grouped_mm"),
    C("mixtral-tiny-sdpa-fp32-groupedmm", MIXTRAL_TINY, 2, 128, "fp32", "sdpa", 0.0, experts="grouped_mm"),
    C("mixtral-tiny-eager-fp32-eagerexperts-realcpu", MIXTRAL_TINY, 2, 128, "fp32", "eager", 0.0,
      run="real-cpu", experts="eager"),
    C("mixtral-tiny-eager-fp32-groupedmm-realcpu", MIXTRAL_TINY, 2, 128, "fp32", "eager", 0.0,
      run="real-cpu", experts="grouped_mm"),
    # ---- BERT MLM (h768, 4 layers), b2 s256
    C("bert-tiny-eager-fp32-drop0.1", BERT_TINY, 2, 256, "fp32", "eager", 0.1),
    C("bert-tiny-sdpa-fp32-drop0.1", BERT_TINY, 2, 256, "fp32", "sdpa", 0.1),
    C("bert-tiny-sdpa-bf16mixed-drop0.1", BERT_TINY, 2, 256, "bf16-mixed", "sdpa", 0.1),
    C("bert-tiny-sdpa-bf16-drop0.1", BERT_TINY, 2, 256, "bf16", "sdpa", 0.1),
    # ---- ViT (h768, 4 layers, patch 16), b4
    C("vit-tiny-eager-fp32-224", VIT_TINY, 4, 0, "fp32", "eager", 0.0, image_size=224),
    C("vit-tiny-sdpa-fp32-224", VIT_TINY, 4, 0, "fp32", "sdpa", 0.0, image_size=224),
    C("vit-tiny-sdpa-fp32-384", VIT_TINY, 4, 0, "fp32", "sdpa", 0.0, image_size=384),
    C("vit-tiny-sdpa-bf16mixed-224", VIT_TINY, 4, 0, "bf16-mixed", "sdpa", 0.0, image_size=224),
    C("vit-tiny-eager-fp32-224-drop0.1", VIT_TINY, 4, 0, "fp32", "eager", 0.1, image_size=224),
    # ---- ResNet (real presets), b4
    C("resnet-18-fp32-224", "resnet-18", 4, 0, "fp32", "eager", 0.0, image_size=224),
    C("resnet-50-fp32-224", "resnet-50", 4, 0, "fp32", "eager", 0.0, image_size=224),
    C("resnet-50-fp32-160", "resnet-50", 4, 0, "fp32", "eager", 0.0, image_size=160),
    C("resnet-50-bf16mixed-224", "resnet-50", 4, 0, "bf16-mixed", "eager", 0.0, image_size=224),
    C("resnet-50-bf16-224", "resnet-50", 4, 0, "bf16", "eager", 0.0, image_size=224),
    # ---- large shapes (real preset configs), fake tensors only
    C("llama-3-8b-flash-bf16-b1-s2048", "llama-3-8b", 1, 2048, "bf16", "flash", 0.0,
      notes="run through transformers' sdpa attention with the CUDA flash kernel (FlashAttention-2 "
            "algorithm, same saved tensors as flash_attention_2: q, k, v, out, fp32 logsumexp, rng state)"),
    C("llama-3-8b-flash-bf16-b1-s2048-ckpt", "llama-3-8b", 1, 2048, "bf16", "flash", 0.0, ckpt="full"),
    C("gpt2-xl-sdpa-bf16-drop0.1-b1-s1024", "gpt2-xl", 1, 1024, "bf16", "sdpa", 0.1),
    C("gpt2-xl-sdpa-bf16mixed-drop0.1-b1-s1024", "gpt2-xl", 1, 1024, "bf16-mixed", "sdpa", 0.1),
    # ---- fake vs real agreement (same config measured both ways)
    C("gpt2-tiny-eager-fp32-drop0-realcpu", GPT2_TINY, 2, 256, "fp32", "eager", 0.0, run="real-cpu"),
    C("llama-tiny-eager-fp32-realcpu", LLAMA_TINY, 2, 256, "fp32", "eager", 0.0, run="real-cpu"),
    C("resnet-18-fp32-224-realcpu", "resnet-18", 4, 0, "fp32", "eager", 0.0, image_size=224, run="real-cpu"),
]


def build_config(case):
    cfg = case["cfg"]
    if isinstance(cfg, str):
        preset = cfg
        cfg = load_preset(cfg)
    else:
        preset = None
    cfg = copy.deepcopy(cfg)
    if case["dropout"] is not None:
        cfg = with_dropout(cfg, case["dropout"])
    if cfg["model_type"] == "vit":
        cfg["image_size"] = case["image_size"]
    return preset, cfg


def make_model(cfg, case):
    d = dict(cfg)
    mt = d.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **d)
    if mt != "resnet":
        attn = "sdpa" if case["attention"] in ("sdpa", "flash") else "eager"
        config._attn_implementation = attn
    if case["experts"]:
        config._experts_implementation = case["experts"]
    cls = getattr(transformers, CLASS[mt])
    model = cls(config)
    if mt != "resnet":
        model.set_attn_implementation("sdpa" if case["attention"] in ("sdpa", "flash") else "eager")
    if case["experts"]:
        model.set_experts_implementation(case["experts"])
    return model


def run_case(case):
    preset, cfg = build_config(case)
    mt = cfg["model_type"]
    fake = case["run"] == "fake"
    dev = "cuda" if fake else "cpu"
    torch.manual_seed(0)
    KERNEL_LOG.clear()
    fm = FakeTensorMode(allow_non_fake_inputs=True) if fake else None
    if fm:
        fm.__enter__()
    try:
        prev_dtype = torch.get_default_dtype()
        if case["precision"] == "bf16":
            torch.set_default_dtype(torch.bfloat16)  # pure bf16 model (as model.to(torch.bfloat16))
        try:
            with torch.device(dev):
                model = make_model(cfg, case)
        finally:
            torch.set_default_dtype(prev_dtype)
        if case["precision"] == "bf16":
            assert all(p.dtype == torch.bfloat16 for p in model.parameters()), "model not fully bf16"
        model.train()
        if case["ckpt"] == "full":
            model.gradient_checkpointing_enable()
        b, s = case["b"], case["s"]
        if mt in ("vit", "resnet"):
            res = case["image_size"]
            dtype = torch.bfloat16 if case["precision"] == "bf16" else torch.float32
            inputs = {"pixel_values": torch.randn(b, 3, res, res, device=dev, dtype=dtype),
                      "labels": torch.randint(0, 1000, (b,), device=dev)}
            if mt == "vit" and res != cfg.get("image_size", res):
                inputs["interpolate_pos_encoding"] = True
        else:
            ids = torch.randint(0, cfg["vocab_size"], (b, s), device=dev)
            inputs = {"input_ids": ids, "labels": ids}

        rec = SavedTensorRecorder(model)
        ms = ModuleStack(model)
        rec.module_stack = ms
        # non-reentrant checkpointing: the checkpointed callable's tensor inputs are held for backward
        if case["ckpt"] == "full":
            hold_checkpoint_inputs(model, rec, ms)
        # router hook for per-expert token counts
        expert_counts = []
        if mt == "mixtral":
            def router_hook(mod, args, out):
                idx = out[2]
                if not fake:
                    expert_counts.append(torch.bincount(idx.reshape(-1), minlength=cfg["num_local_experts"]).tolist())
            for n, m in model.named_modules():
                if m.__class__.__name__.endswith("TopKRouter"):
                    m.register_forward_hook(router_hook)
        tracker = ParamCastTracker(rec.param_refs)
        t0 = time.time()
        with rec.hooks(), tracker:
            if case["precision"] == "bf16-mixed":
                if fake:
                    with fake_cuda_autocast(torch.bfloat16):
                        out = model(**inputs)
                else:
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        out = model(**inputs)
            else:
                out = model(**inputs)
        loss = out.loss
        rec.annotate_from_graph(loss.grad_fn)
        ms.remove()
        act, pc, n = rec.totals(tracker.cast_refs)
        # cross-check of the cast tracker: saved storages whose shape matches a parameter (or its transpose)
        pshapes = {tuple(p.shape) for p in model.parameters()} | {tuple(p.shape[::-1]) for p in model.parameters()}
        shape_match = sum(e["nbytes"] for r, e in rec.entries.items()
                          if tuple(e["shape"]) in pshapes and e["dtype"] != "float32" and case["precision"] == "bf16-mixed")
        elapsed = time.time() - t0
        real_backward_ok = None
        if not fake:
            loss.backward()
            real_backward_ok = True
        kernels = sorted(set(KERNEL_LOG))
        backend = ("fake-cuda" if fake else "real-cpu") + ", " + (
            "attention " + case["attention"] if mt != "resnet" else "conv")
        if mt != "resnet" and case["attention"] != "eager":
            backend += " -> kernels " + "+".join(kernels) + (" (forced: CUDA dispatch rules)" if fake else " (CPU SDPA)")
        if case["experts"]:
            backend += ", experts " + model.config._experts_implementation
        scenario = {
            "model": {"hf_config": cfg},
            "training": {"micro_batch": b, "seq_len": case["s"], "precision": case["precision"],
                         "optimizer": "adamw", "checkpointing": case["ckpt"], "attention": case["attention"],
                         "dropout": case["dropout"], "mode": "train"},
            "parallel": {}, "device": {"preset": "h100-sxm-80gb"},
        }
        if mt in ("vit", "resnet"):
            scenario["training"]["image_size"] = case["image_size"]
        notes = case["notes"]
        if preset:
            notes = (notes + "; " if notes else "") + f"hf_config = preset {preset} (dropout set to {case['dropout']})"
        if case["precision"] == "bf16-mixed":
            notes = (notes + "; " if notes else "") + (
                f"param copies found by the _to_copy(parameter) tracker: {pc} B; saved non-fp32 tensors whose "
                f"shape equals a parameter's (or its transpose): {shape_match} B")
        if expert_counts:
            notes = (notes + "; " if notes else "") + "per-layer tokens routed to each expert (T*top_k slots): " + json.dumps(expert_counts)
        if not fake:
            notes = (notes + "; " if notes else "") + "real CPU run; loss.backward() completed"
        result = {
            "name": case["name"], "hf_class": CLASS[mt], "backend": backend, "scenario": scenario,
            "measured": {"saved_bytes": act, "param_copy_bytes": pc, "saved_tensor_count": n,
                         "peak_allocated_bytes": None},
            "notes": notes,
        }
        if expert_counts:
            result["measured"]["tokens_per_expert"] = expert_counts
        detail = {"name": case["name"], "b": b, "s": case["s"], "cfg": cfg, "precision": case["precision"],
                  "tensors": rec.listing(tracker.cast_refs), "kernels": kernels}
        print(f"{case['name']:50s} saved={act:>13,d} param_copy={pc:>11,d} n={n:4d} kernels={kernels} "
              f"{elapsed:.1f}s", flush=True)
        return result, detail
    finally:
        if fm:
            fm.__exit__(None, None, None)


def main():
    sel = sys.argv[1:]
    results, details = [], []
    for case in CASES:
        if sel and not any(x in case["name"] for x in sel):
            continue
        try:
            r, d = run_case(case)
        except Exception as e:  # record and continue
            import traceback
            traceback.print_exc()
            print("FAILED", case["name"], repr(e), flush=True)
            continue
        results.append(r)
        details.append(d)
        out = {"generator": "tests/measure/activations.py", "torch": torch.__version__,
               "transformers": transformers.__version__,
               "method": "bytes of untyped storages saved for backward (saved_tensors_hooks) during forward + "
                         "loss, each storage once, parameters and buffers excluded; autocast weight copies "
                         "reported as param_copy_bytes",
               "cases": results}
        with open(OUT, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        with open(DETAIL, "w") as f:
            json.dump({"cases": details}, f)


if __name__ == "__main__":
    main()
