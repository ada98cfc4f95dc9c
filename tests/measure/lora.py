#!/usr/bin/env python3
"""What LoRA adapters save for backward, with and without PEFT's adapter dropout, and what QLoRA's
preparation does to the parameters (saved_tensors_hooks; real PEFT, real bitsandbytes where it runs).

Part 1 -- LoRA saved tensors (fake CUDA tensors, as activations_parts.py: its SDPA kernel selector, module
stack and recorder are imported and reused). llama-tiny (activations.py's LLAMA_TINY: h512, 4 layers, GQA
8/2, head 64, ffn 1792, vocab 32000), micro-batch 2 x 256, PEFT LoraConfig(r=16, lora_alpha=32, all seven
projections, bias="none") with lora_dropout 0 and 0.05, fp32 / pure bf16 / bf16 autocast, SDPA, no
checkpointing. Fake CUDA is needed for the dropout: on CUDA, F.dropout runs aten::native_dropout (fused kernel:
p in (0, 1), CUDA) and saves a bool mask; on CPU it runs input * (bernoulli noise / (1 - p)) and saves a float
mask of the input's dtype. Counted as activations.py counts: every storage packed by autograd once, parameters,
buffers and autocast's weight copies excluded.

Part 2 -- QLoRA parameters (real CPU tensors, bitsandbytes 4-bit on CPU): the same llama-tiny saved in bf16,
loaded with BitsAndBytesConfig(load_in_4bit, nf4, double quant, bf16 compute) on the CPU, then PEFT's
prepare_model_for_kbit_training (peft/utils/other.py: every 16-bit parameter that is not a Params4bit is cast
to fp32; with a k-bit model and checkpointing, enable_input_require_grads) and get_peft_model. Recorded: bytes
of parameters by kind and dtype before and after; whether the input embeddings' output requires grad; and the
transient of one Linear4bit matmul (forward and backward): a dispatch mode counts the live bytes of the storages
made inside the call (peak above what the call returns) and lists the largest (the dequantised weight first). On
the CPU the forward runs bitsandbytes' default gemm_4bit kernel (called directly so its inner ops are seen).
The same preparation on the non-quantised bf16 model (prepare_model_for_kbit_training is also called on
16-bit models) casts every parameter to fp32 and leaves the embeddings' output without grad (not k-bit).

Output: tests/fixtures/measured/lora.json
Run: /work/venv/bin/python tests/measure/lora.py   (peft 0.21.2, bitsandbytes 0.50.2, torch 2.15, transformers 5.24)
"""
import copy, json, os, sys, tempfile, time, warnings, weakref

import torch
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import activations_parts as AP  # noqa: E402  (installs the SDPA selector and the fake-CUDA patches)
from common import ModuleStack, ParamCastTracker, fake_cuda_autocast  # noqa: E402
import peft  # noqa: E402

AP.CLASS.setdefault("llama", "LlamaForCausalLM")

# PEFT moves each new adapter (and each replaced module) to its base layer's device and dtype with
# module.to(), which swaps FakeTensor parameters (torch.utils.swap_tensors) and fails on them. While PEFT builds
# the adapters under FakeTensorMode, Module.to on fake parameters is done as the in-place cast it amounts to
# (the device is already the fake CUDA device); PEFT's own steps (autocast_adapter_dtype: 16-bit adapters -> fp32)
# run unchanged.
_orig_to = torch.nn.Module.to


def _to_in_place(self, *args, **kwargs):
    params = list(self.parameters())
    if not params or not all(isinstance(p, torch._subclasses.fake_tensor.FakeTensor) for p in params):
        return _orig_to(self, *args, **kwargs)
    dtype = kwargs.get("dtype") or next((a for a in args if isinstance(a, torch.dtype)), None)
    if dtype is not None:
        for p in params:
            if p.dtype.is_floating_point and p.dtype != dtype:
                p.data = p.data.to(dtype)
    return self

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "lora.json")
LLAMA_TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512,
              "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
              "intermediate_size": 1792, "vocab_size": 32000, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
              "attention_dropout": 0.0, "tie_word_embeddings": False, "rope_theta": 500000.0}
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
RANK = 16
B, S = 2, 256


def lora_case(name, precision, dropout):
    return dict(name=name, cfg=LLAMA_TINY, b=B, s=S, precision=precision, attention="sdpa", dropout=0.0,
                lora_dropout=dropout, ckpt="none", run="fake", experts=None, notes="", part="LoRA")


LORA_CASES = [lora_case(f"llama-tiny-lora16-{p.replace('-', '')}-drop{d}", p, d)
              for p in ("fp32", "bf16", "bf16-mixed") for d in (0.0, 0.05)]


def run_lora(case):
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
                lcfg = peft.LoraConfig(r=RANK, lora_alpha=2 * RANK, lora_dropout=case["lora_dropout"], bias="none",
                                       target_modules=TARGETS, task_type="CAUSAL_LM")
                torch.nn.Module.to = _to_in_place
                try:
                    model = peft.get_peft_model(model, lcfg)
                finally:
                    torch.nn.Module.to = _orig_to
        finally:
            torch.set_default_dtype(prev)
        adapter_dtypes = sorted({str(p.dtype) for n, p in model.named_parameters() if "lora_" in n})
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
        # Bytes by what saved them, for the notes.
        groups = {}
        for r, e in rec.entries.items():
            if r in dead or r in tracker.cast_refs:
                continue
            mod = e["module"] or ""
            leaf = mod.split(".")[-1]
            key = ("lora_dropout " if "lora_dropout" in mod else "lora_A/B " if "lora_" in mod else "") + leaf
            key = f"{key} {e['dtype']}"
            groups[key] = groups.get(key, 0) + e["nbytes"]
        scenario = {
            "model": {"hf_config": cfg},
            "training": {"micro_batch": case["b"], "seq_len": case["s"], "precision": case["precision"],
                         "attention": "sdpa", "checkpointing": "none", "mode": "train",
                         "lora": {"rank": RANK, "targets": ["q", "k", "v", "o", "gate", "up", "down"],
                                  "base": "bf16", "dropout": case["lora_dropout"]}},
            "parallel": {}, "device": {"preset": "h100-sxm-80gb"},
        }
        notes = (f"PEFT {peft.__version__} LoraConfig(r={RANK}, lora_alpha={2 * RANK}, lora_dropout={case['lora_dropout']}, "
                 f"all seven projections); adapter dtypes {adapter_dtypes}; kernels {sorted(set(AP.KERNEL_LOG))}; "
                 "fake CUDA tensors (bool dropout masks as on a GPU)")
        print(f"{case['name']:44s} saved={act:>12,d} n={n:4d} autocast copies={pc:,d}", flush=True)
        return {"name": case["name"], "scenario": scenario,
                "measured": {"saved_bytes": act, "saved_tensor_count": n, "param_copy_bytes": pc,
                             "by_module_dtype": dict(sorted(groups.items()))},
                "notes": notes}
    finally:
        AP.CUR_MS[0] = None
        fm.__exit__(None, None, None)


# ---------------------------------------------------------------- part 2: QLoRA on CPU
def param_bytes(model):
    """Parameter bytes by kind (4-bit linears, norms, embeddings, head, LoRA adapters, other) and dtype."""
    out = {}
    for n, p in model.named_parameters():
        if "lora_" in n:
            kind = "lora"
        elif p.__class__.__name__ == "Params4bit":
            kind = "linear4bit"
        elif "embed_tokens" in n:
            kind = "embed_tokens"
        elif "lm_head" in n:
            kind = "lm_head"
        elif "norm" in n:
            kind = "norm"
        else:
            kind = "linear"
        key = f"{kind} {str(p.dtype).replace('torch.', '')}"
        out[key] = out.get(key, 0) + p.numel() * p.element_size()
    return dict(sorted(out.items()))


def quant_state_bytes(model):
    """Bytes of the bitsandbytes quantisation state tensors (absmax, nested absmax, code maps) of all 4-bit weights."""
    total, seen = 0, set()
    for m in model.modules():
        w = getattr(m, "weight", None)
        qs = getattr(w, "quant_state", None)
        if qs is None:
            continue
        ts = [qs.absmax, qs.code]
        if qs.nested:
            ts += [qs.state2.absmax, qs.state2.code, qs.offset]
        for t in ts:
            if isinstance(t, torch.Tensor) and t.data_ptr() not in seen:
                seen.add(t.data_ptr())
                total += t.numel() * t.element_size()
    return total


class LiveBytes(TorchDispatchMode):
    """Live bytes of the storages made by ops inside the mode (each counted once, freed when its storage is
    collected), and their peak: what the matmul allocates on top of what existed before it."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self.seen = set()
        self.sizes = []

    def _free(self, n):
        self.live -= n

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in (out if isinstance(out, (tuple, list)) else [out]):
            if isinstance(t, torch.Tensor) and not func.is_view:
                st = t.untyped_storage()
                key = (st.data_ptr(), st.nbytes())
                if st.nbytes() and key not in self.seen:
                    self.seen.add(key)
                    self.live += st.nbytes()
                    self.sizes.append((str(func), list(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes()))
                    weakref.finalize(st, self._free, st.nbytes())
                    self.peak = max(self.peak, self.live)
        return out


def matmul_transient(lin, x, backward):
    """Peak bytes made inside one Linear4bit forward (or its backward) above what it returns, and the largest
    tensors it made (the dequantised weight first)."""
    if backward:
        y = lin(x)
        g = torch.ones_like(y)
        x.grad = None
    # On the CPU, MatMul4Bit.forward's torch.ops.bitsandbytes.gemm_4bit runs bitsandbytes' "default" kernel
    # (backends/default/ops.py, _gemm_4bit_default_impl: nested absmax dequantised, the weight dequantised to
    # A's dtype, F.linear). A custom op hides its inner ops from a dispatch mode, so that same Python kernel is
    # called directly here, and its allocations are seen.
    from bitsandbytes.backends.default import ops as bnb_default
    ops_ns = torch.ops.bitsandbytes
    packet = ops_ns.gemm_4bit

    class _Direct:
        default = staticmethod(bnb_default._gemm_4bit_default_impl)
    with LiveBytes() as mode:
        ops_ns.gemm_4bit = _Direct
        if backward:
            torch.autograd.backward(y, g)
            kept = x.grad.untyped_storage().nbytes()
        else:
            y = lin(x)
            kept = y.untyped_storage().nbytes()
    ops_ns.gemm_4bit = packet
    big = sorted(mode.sizes, key=lambda r: -r[3])[:4]
    return {"peak_bytes": mode.peak, "returned_bytes": kept, "transient_bytes": mode.peak - kept, "largest": big}


def run_qlora():
    try:
        import bitsandbytes as bnb
    except Exception as e:  # pragma: no cover
        return {"error": f"bitsandbytes not importable: {e!r}"}
    cfg = copy.deepcopy(LLAMA_TINY)
    mt = cfg.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **cfg)
    torch.manual_seed(0)
    res = {"bitsandbytes": bnb.__version__, "peft": peft.__version__}
    with tempfile.TemporaryDirectory() as d:
        base = transformers.LlamaForCausalLM(config).to(torch.bfloat16)
        base.save_pretrained(d)
        # 16-bit model through the same preparation.
        m16 = transformers.LlamaForCausalLM.from_pretrained(d, dtype=torch.bfloat16)
        res["bf16_before"] = param_bytes(m16)
        m16 = peft.prepare_model_for_kbit_training(m16)
        res["bf16_after_prepare"] = param_bytes(m16)
        res["bf16_input_embeddings_require_grad"] = bool(
            m16.get_input_embeddings()(torch.zeros(1, 1, dtype=torch.long)).requires_grad)
        del m16
        q = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                                            bnb_4bit_compute_dtype=torch.bfloat16)
        m4 = transformers.LlamaForCausalLM.from_pretrained(d, dtype=torch.bfloat16, quantization_config=q,
                                                           device_map="cpu")
        res["nf4_before"] = param_bytes(m4)
        res["nf4_quant_state_bytes"] = quant_state_bytes(m4)
        m4 = peft.prepare_model_for_kbit_training(m4)
        res["nf4_after_prepare"] = param_bytes(m4)
        res["nf4_input_embeddings_require_grad"] = bool(
            m4.get_input_embeddings()(torch.zeros(1, 1, dtype=torch.long)).requires_grad)
        res["nf4_gradient_checkpointing"] = bool(getattr(m4, "is_gradient_checkpointing", False))
        lcfg = peft.LoraConfig(r=RANK, lora_alpha=2 * RANK, lora_dropout=0.05, bias="none", target_modules=TARGETS,
                               task_type="CAUSAL_LM")
        m4 = peft.get_peft_model(m4, lcfg)
        res["nf4_after_peft"] = param_bytes(m4)
        # One 4-bit linear's matmul: the MLP's gate projection (h x ffn = 512 x 1792).
        lin = m4.base_model.model.model.layers[0].mlp.gate_proj.base_layer
        n_out, n_in = lin.weight.quant_state.shape
        x = torch.randn(B * S, n_in, dtype=torch.bfloat16, requires_grad=True)
        res["linear4bit"] = {"name": "layers.0.mlp.gate_proj", "out_features": n_out, "in_features": n_in,
                             "tokens": B * S, "compute_dtype": str(lin.compute_dtype),
                             "quant_state_dtype": str(lin.weight.quant_state.dtype),
                             "forward": matmul_transient(lin, x, False),
                             "backward": matmul_transient(lin, x, True)}
    return res


def main():
    t0 = time.time()
    cases = [run_lora(c) for c in LORA_CASES] if "--qlora-only" not in sys.argv else []
    qlora = run_qlora()
    print(json.dumps(qlora, indent=1))
    doc = {"description": __doc__.strip().splitlines()[0],
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__},
           "cases": cases, "qlora_cpu": qlora, "elapsed_s": round(time.time() - t0, 1)}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
