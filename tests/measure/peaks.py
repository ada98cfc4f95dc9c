#!/usr/bin/env python3
"""Peak live-tensor bytes of a whole training step (real small models, real CPU tensors).

For each case: build the model from an explicit config (never from_pretrained) and an
optimizer, then run two full training steps

    optimizer.zero_grad(set_to_none=True)
    for each micro-batch:  loss = model(**batch).loss / grad_accum ; loss.backward()
    optimizer.step()

and measure the SECOND step (optimizer state already exists). As in HF Trainer, only the
loss is kept from the forward's output (logits etc. are dropped before backward).

Tool: torch.distributed._tools.mem_tracker.MemTracker (a TorchDispatchMode that tracks every
untyped storage created by an op and frees it through a weakref callback; it categorises
parameters, buffers, gradients, activations (forward), temporaries (backward), optimizer
states (anything created inside optimizer.step, via the global optimizer hooks) and
"other" (tensors handed to track_external: here the input batches)). A subclass records
the phase (forward / backward / optimizer, micro-batch index) and the aten op at which the
global peak was reached. Parameters, buffers, optimizer state and the input batches are
registered with track_external before step 2, so the tracker's starting total is the
baseline.

Cross-check (every case): the same step 2 runs under torch.profiler with profile_memory=True;
the c10 CPU allocator's [memory] events (alloc_size, +/-) are summed in time order, giving the
allocator-level high-water mark above the baseline. It is an independent mechanism (allocator
reports, not Python weakrefs) and also sees non-tensor allocations made inside kernels.

CPU specifics (recorded per case): dropout 0 everywhere; attention "eager" unless the case says
sdpa (CPU SDPA runs the CPU flash kernel, not a CUDA one); autocast is torch.autocast("cpu",
bfloat16), whose op lists differ from CUDA's; optimizers are created with foreach=True (the
CUDA default; the CPU default is the per-parameter for-loop) except the case that says so.

Output: tests/fixtures/measured/peaks.json
Run: .venv/bin/python tests/measure/peaks.py [case-name-substring ...]
     (with arguments only the matching cases are run and the fixture holds only those)
"""
import copy, gc, json, os, sys, time, warnings
import torch
import transformers
from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType
from torch.profiler import profile, ProfilerActivity, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import sref  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
torch.set_num_threads(max(1, os.cpu_count() or 1))

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "peaks.json")
CPU = torch.device("cpu")

# ---------------------------------------------------------------- configs
# llama-tiny is the same config as activations.py's LLAMA_TINY (h512, 4 layers, GQA 8/2, vocab 32000).
LLAMA_TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512,
              "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
              "intermediate_size": 1792, "vocab_size": 32000, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
              "attention_dropout": 0.0, "tie_word_embeddings": False, "rope_theta": 500000.0}
GPT2_TINY = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "activation_function": "gelu_new",
             "n_embd": 512, "n_layer": 4, "n_head": 8, "n_inner": None, "n_positions": 1024, "n_ctx": 1024,
             "vocab_size": 32000, "layer_norm_epsilon": 1e-5, "attn_pdrop": 0.0, "embd_pdrop": 0.0,
             "resid_pdrop": 0.0, "summary_first_dropout": 0.0, "tie_word_embeddings": True,
             "bos_token_id": 0, "eos_token_id": 0}
BERT_TINY = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 512,
             "num_hidden_layers": 4, "num_attention_heads": 8, "intermediate_size": 2048,
             "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2,
             "hidden_act": "gelu", "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.0,
             "attention_probs_dropout_prob": 0.0, "position_embedding_type": "absolute", "pad_token_id": 0,
             "tie_word_embeddings": True}
with open(os.path.join(ROOT, "src", "import", "catalogue", "microsoft--resnet-18.json")) as _f:
    RESNET18 = json.load(_f)
    RESNET18.pop("_headroom")

CLASS = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "bert": "BertForMaskedLM",
         "resnet": "ResNetForImageClassification"}


def C(name, cfg, b, s, precision, optimizer="adamw", attention="eager", ckpt="none", ga=1, image_size=None,
      foreach=True, notes=""):
    return dict(name=name, cfg=cfg, b=b, s=s, precision=precision, optimizer=optimizer, attention=attention,
                ckpt=ckpt, ga=ga, image_size=image_size, foreach=foreach, notes=notes)


CASES = [
    C("llama-tiny-eager-fp32-adamw", LLAMA_TINY, 2, 256, "fp32"),
    C("llama-tiny-eager-bf16-adamw", LLAMA_TINY, 2, 256, "bf16"),
    C("llama-tiny-eager-bf16mixed-adamw", LLAMA_TINY, 2, 256, "bf16-mixed"),
    C("gpt2-tiny-eager-fp32-adamw", GPT2_TINY, 2, 256, "fp32"),
    C("bert-tiny-eager-fp32-adamw", BERT_TINY, 2, 256, "fp32"),
    C("llama-tiny-eager-fp32-adamw-ga2", LLAMA_TINY, 2, 256, "fp32", ga=2),
    C("llama-tiny-eager-fp32-adamw-ckpt", LLAMA_TINY, 2, 256, "fp32", ckpt="full"),
    C("llama-tiny-eager-fp32-sgd", LLAMA_TINY, 2, 256, "fp32", optimizer="sgd"),
    C("llama-tiny-eager-fp32-sgd-ckpt", LLAMA_TINY, 2, 256, "fp32", optimizer="sgd", ckpt="full",
      notes="SGD so that the optimizer phase does not hide the checkpointed backward peak"),
    C("llama-tiny-eager-fp32-adamw-forloop", LLAMA_TINY, 2, 256, "fp32", foreach=False,
      notes="AdamW(foreach=False): the per-parameter for-loop implementation (CPU's default)"),
    C("llama-tiny-sdpa-fp32-adamw", LLAMA_TINY, 2, 256, "fp32", attention="sdpa"),
    C("resnet-18-fp32-adamw-128", RESNET18, 4, 0, "fp32", image_size=128),
]


def make_model(cfg, case):
    d = dict(cfg)
    mt = d.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **d)
    if mt != "resnet":
        config._attn_implementation = case["attention"]
    model = getattr(transformers, CLASS[mt])(config)
    if mt != "resnet":
        model.set_attn_implementation(case["attention"])
    if case["precision"] == "bf16":
        model = model.to(torch.bfloat16)
        assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    return model


def make_optimizer(case, params):
    if case["optimizer"] == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, foreach=case["foreach"]), \
            f"torch.optim.AdamW(lr=1e-4, weight_decay=0.01, foreach={case['foreach']})"
    if case["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=1e-3, foreach=case["foreach"]), \
            f"torch.optim.SGD(lr=1e-3, momentum=0, foreach={case['foreach']})"
    raise ValueError(case["optimizer"])


def make_batches(case, cfg, model):
    mt = cfg["model_type"]
    out = []
    for _ in range(case["ga"]):
        if mt == "resnet":
            r = case["image_size"]
            dt = torch.bfloat16 if case["precision"] == "bf16" else torch.float32
            out.append({"pixel_values": torch.randn(case["b"], 3, r, r, dtype=dt),
                        "labels": torch.randint(0, cfg["num_labels"], (case["b"],))})
        else:
            ids = torch.randint(0, cfg["vocab_size"], (case["b"], case["s"]))
            out.append({"input_ids": ids, "labels": ids.clone()})
    return out


def unique_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        r = sref(t)
        if r in seen:
            continue
        seen.add(r)
        total += t.untyped_storage().nbytes()
    return total


# ---------------------------------------------------------------- tracker with phase of the peak
class PhaseMemTracker(MemTracker):
    def __init__(self):
        super().__init__()
        self.phase = "zero_grad"
        self.kernels = set()
        self.micro_batch = None
        self._cur_func = None
        self.peak_info = None
        self.phase_peaks = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self._cur_func = func
        if "scaled_dot_product" in str(func):
            self.kernels.add(str(func))
        return super().__torch_dispatch__(func, types, args, kwargs)

    def _update_peak_stats(self, peak_state):
        before = self._peak_mem.get(CPU, 0)
        super()._update_peak_stats(peak_state)
        cur = self._curr_mem_snap.get(CPU, {}).get("Total", 0)
        key = self.phase
        if cur > self.phase_peaks.get(key, {}).get("total", 0):
            snap = cat_snapshot(self._curr_mem_snap)
            snap["op"] = str(self._cur_func)
            snap["micro_batch"] = self.micro_batch
            self.phase_peaks[key] = snap
        if self._peak_mem.get(CPU, 0) > before:
            self.peak_info = {"phase": self.phase, "micro_batch": self.micro_batch, "op": str(self._cur_func),
                              "module_tracker_is_bw": bool(self._mod_tracker.is_bw),
                              "in_recompute": bool(self._in_ac),
                              "modules": sorted((p for p in self._mod_tracker.parents if p != "Global"),
                                              key=lambda p: (p.count("."), len(p)))[-1:]}


CAT = {_MemRefType.PARAM: "parameter", _MemRefType.BUFFER: "buffer", _MemRefType.GRAD: "gradient",
       _MemRefType.ACT: "activation", _MemRefType.TEMP: "temp", _MemRefType.OPT: "optimizer",
       _MemRefType.OTH: "other_inputs"}


def cat_snapshot(snap):
    dev = snap.get(CPU, {})
    out = {CAT[k]: int(v) for k, v in dev.items() if k in CAT}
    out["total"] = int(dev.get("Total", 0))
    return out


# ---------------------------------------------------------------- one case
def train_step(model, opt, batches, case, tracker=None, marks=None):
    ga = len(batches)

    def mark(name):
        if tracker is not None:
            tracker.phase = name
        if marks is not None:
            marks.append((name, time.time_ns()))

    opt.zero_grad(set_to_none=True)
    for i, mb in enumerate(batches):
        if tracker is not None:
            tracker.micro_batch = i
            if i > 0:
                tracker.reset_mod_stats()  # MemTracker refuses a 2nd root forward otherwise
        mark("forward")
        with record_function("phase:forward"):
            if case["precision"] == "bf16-mixed":
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = model(**mb).loss
            else:
                loss = model(**mb).loss
            if ga > 1:
                loss = loss / ga
        mark("backward")
        with record_function("phase:backward"):
            loss.backward()
        del loss
    mark("optimizer")
    if tracker is not None:
        tracker.micro_batch = None
    with record_function("phase:optimizer"):
        opt.step()
    mark("end")


def allocator_trace(prof, marks):
    """Allocator-level (c10 CPU allocator [memory] events) running sum, its maximum and phase."""
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"
           and str(e.device_type()).endswith("CPU")]
    evs.sort(key=lambda e: e.start_ns())
    run, peak, peak_t, n = 0, 0, None, 0
    for e in evs:
        run += e.nbytes()
        n += 1
        if run > peak:
            peak, peak_t = run, e.start_ns()
    phase = None
    if peak_t is not None:
        for name, t in marks:
            if t <= peak_t:
                phase = name
    return {"allocator_peak_above_baseline": int(peak), "allocator_net_at_end": int(run),
            "allocator_events": n, "allocator_peak_phase": phase}


def run_case(case):
    cfg = copy.deepcopy(case["cfg"])
    mt = cfg["model_type"]
    torch.manual_seed(0)
    model = make_model(cfg, case)
    model.train()
    if case["ckpt"] == "full":
        model.gradient_checkpointing_enable()
    opt, opt_desc = make_optimizer(case, model.parameters())
    batches = make_batches(case, cfg, model)

    t0 = time.time()
    train_step(model, opt, batches, case)               # step 1: creates optimizer state
    opt.zero_grad(set_to_none=True)
    gc.collect()

    params = list(model.parameters())
    buffers = list(model.buffers())
    state_tensors = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    step_tensors = [v for st in opt.state.values() for k, v in st.items()
                    if k == "step" and isinstance(v, torch.Tensor)]
    input_tensors = [t for mb in batches for t in mb.values() if isinstance(t, torch.Tensor)]
    param_bytes = unique_bytes(params)
    buffer_bytes = unique_bytes(buffers)
    opt_bytes = unique_bytes(state_tensors)
    step_bytes = unique_bytes(step_tensors)
    input_bytes = unique_bytes(input_tensors)
    baseline_direct = unique_bytes(params + buffers + state_tensors + input_tensors)

    mt_ = PhaseMemTracker()
    mt_.track_external(model, opt, *input_tensors)
    baseline_snap = cat_snapshot(mt_.get_tracker_snapshot())
    marks = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with mt_:
            train_step(model, opt, batches, case, tracker=mt_, marks=marks)  # step 2 (measured)
    peak_snap = cat_snapshot(mt_.get_tracker_snapshot("peak"))
    end_snap = cat_snapshot(mt_.get_tracker_snapshot())
    alloc = allocator_trace(prof, marks)
    grad_bytes = unique_bytes([p.grad for p in params if p.grad is not None])
    elapsed = time.time() - t0

    peak = peak_snap["total"]
    baseline = baseline_snap["total"]
    mt_delta = peak - baseline
    al_delta = alloc["allocator_peak_above_baseline"]
    info = mt_.peak_info or {"phase": "baseline"}

    scenario = {
        "model": {"hf_config": cfg},
        "training": {"micro_batch": case["b"], "seq_len": case["s"], "grad_accum": case["ga"],
                     "precision": case["precision"], "optimizer": case["optimizer"],
                     "checkpointing": case["ckpt"], "attention": case["attention"], "dropout": 0.0,
                     "mode": "train"},
        "parallel": {}, "device": {"preset": "h100-sxm-80gb"},
    }
    if mt == "resnet":
        scenario["training"]["image_size"] = case["image_size"]
    backend = "cpu (real tensors), " + ("conv" if mt == "resnet" else f"attention {case['attention']}")
    if case["attention"] == "sdpa":
        backend += " (CPU SDPA: " + "+".join(sorted(mt_.kernels)) + ")"
    if case["precision"] == "bf16-mixed":
        backend += ", torch.autocast('cpu', bfloat16) (CPU autocast op lists)"
    backend += f", optimizer {opt_desc}"
    notes = []
    if case["notes"]:
        notes.append(case["notes"])
    notes.append(f"peak reached at aten op {info.get('op')} in {info.get('phase')}"
                 + (f" (micro-batch {info['micro_batch']})" if info.get("micro_batch") is not None else "")
                 + (f", innermost module {info['modules'][0]}" if info.get("modules") else "")
                 + (", during checkpoint recompute" if info.get("in_recompute") else ""))
    notes.append(f"cross-check: MemTracker peak above baseline {mt_delta} B; allocator-level (profiler "
                 f"[memory] events) peak above baseline {al_delta} B (phase {alloc['allocator_peak_phase']}); "
                 f"difference {al_delta - mt_delta} B")
    if baseline != baseline_direct:
        notes.append(f"baseline mismatch: tracker {baseline} vs direct storage sum {baseline_direct}")
    if case["ckpt"] == "full":
        kw = [getattr(getattr(m, "_gradient_checkpointing_func", None), "keywords", None) for m in model.modules()]
        kw = [k for k in kw if k is not None]
        notes.append(f"model.gradient_checkpointing_enable(): torch.utils.checkpoint with {kw[0] if kw else '?'}")
    if step_bytes:
        notes.append(f"optimizer_state_bytes includes {step_bytes} B of fp32 'step' scalars (on a GPU these "
                     f"stay on the CPU unless capturable/fused)")
    notes.append("categories are MemTracker's: activation = tensors created in forward (saved or transient), "
                 "temp = tensors created in backward that are not (yet) .grad, optimizer = persistent state + "
                 "tensors created inside optimizer.step, other_inputs = the input batches")
    result = {
        "name": case["name"],
        "hf_class": CLASS[mt],
        "scenario": scenario,
        "backend": backend,
        "measured": {
            "peak_bytes": int(peak),
            "peak_phase": info.get("phase"),
            "baseline_bytes": int(baseline),
            "param_bytes": int(param_bytes),
            "grad_bytes": int(grad_bytes),
            "optimizer_state_bytes": int(opt_bytes),
            "by_category_at_peak": peak_snap,
        },
        "detail": {
            "peak_op": info.get("op"),
            "peak_micro_batch": info.get("micro_batch"),
            "peak_innermost_module": (info.get("modules") or [None])[0],
            "peak_in_recompute": info.get("in_recompute"),
            "peak_by_phase": mt_.phase_peaks,
            "baseline_by_category": baseline_snap,
            "end_of_step_by_category": end_snap,
            "buffer_bytes": int(buffer_bytes),
            "input_bytes": int(input_bytes),
            "optimizer_step_scalar_bytes": int(step_bytes),
            "crosscheck": {"memtracker_peak_above_baseline": int(mt_delta), **alloc},
        },
        "notes": "; ".join(notes),
    }
    print(f"{case['name']:40s} peak={peak:>12,d} ({info.get('phase')}, {info.get('op')}) base={baseline:>12,d} "
          f"alloc_delta={al_delta:>12,d} mt_delta={mt_delta:>12,d} {elapsed:.1f}s", flush=True)
    print("   at peak:", peak_snap, flush=True)
    return result


def main():
    sel = sys.argv[1:]
    results = []
    for case in CASES:
        if sel and not any(x in case["name"] for x in sel):
            continue
        try:
            results.append(run_case(case))
        except Exception as e:  # record and continue
            import traceback
            traceback.print_exc()
            print("FAILED", case["name"], repr(e), flush=True)
            continue
        gc.collect()
        out = {"generator": "tests/measure/peaks.py", "torch": torch.__version__,
               "transformers": transformers.__version__,
               "tool": "torch.distributed._tools.mem_tracker.MemTracker (live untyped-storage bytes, updated at "
                       "every aten op and storage free; peak = max over step 2), cross-checked against the c10 "
                       "CPU allocator's [memory] events from torch.profiler(profile_memory=True)",
               "cases": results}
        with open(OUT, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
