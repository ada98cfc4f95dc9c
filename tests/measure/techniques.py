#!/usr/bin/env python3
"""Whole-step peaks of three framework memory techniques, each against its plain baseline (real CPU tensors).

Same model, machinery and measurement as peaks.py (imported as a module: LLAMA_TINY, make_model,
PhaseMemTracker, cat_snapshot, unique_bytes, allocator_trace): llama-tiny (h512, 4 layers, GQA 8/2,
vocab 32000), micro-batch 2 x 256 tokens, dropout 0, seed 0; two full training steps, the SECOND one
measured with MemTracker (per-phase peaks with MemTracker's categories) and cross-checked with the
c10 CPU allocator's [memory] events. Every run passes use_cache=False (no DynamicCache in training, as
in torchtune; peaks.py's model(**batch) builds one, whose K/V live until the output is dropped).

Techniques (torchtune 0.6.1 is imported and used where it can be; file:line refer to that wheel):
1. chunked-ce: torchtune CEWithChunkedOutputLoss(num_output_chunks=8) (modules/loss/ce_chunked_output_loss.py
   :13-83) on the list of per-chunk logits of TransformerDecoder.chunked_output (modules/transformer.py:482-501:
   [output(c) for c in h.chunk(n, dim=1)] on the final-norm output h), labels shifted as the recipe does
   (recipes/full_finetune_single_device.py:636-652: hstack(labels[..., 1:], ignore_index), del logits).
   Baseline: transformers' own loss, model(input_ids, labels).loss (ForCausalLMLoss: logits.float()).
   If torchtune cannot be imported, a line-for-line copy of CEWithChunkedOutputLoss below is used (recorded).
2. optimizer-in-backward: one torch.optim.AdamW per parameter, stepped from register_post_accumulate_grad_hook
   and zero_grad(set_to_none) right after (torchtune training/memory.py:219-242 register_optim_in_bwd_hooks;
   PyTorch tutorial "How to save memory by fusing the optimizer step into the backward pass"). Baseline: one
   AdamW over all parameters, foreach=True (CUDA's default) and foreach=False (CPU's default, recorded).
   MemTracker installs its own post-accumulate-grad hooks in the first tracked forward, so the step hooks are
   re-registered after every forward (hooks run in registration order; MemTracker must see the grad first).
3. activation-offload: torchtune's real OffloadActivations (training/_activation_offloading.py) through
   get_act_offloading_ctx_manager (lines 373-449: the output head runs under NoOpManager, i.e. is NOT offloaded),
   around the model forward only; the loss is computed outside it (as the recipe). It needs CUDA streams and a
   GPU, so here its module-global `torch` is replaced by a proxy: torch.cuda streams/events are no-ops, and
   the "host" copy (torch.empty_like(..., device="cpu") + copy_, lines 171-183) is a real CPU tensor made with
   the dispatch modes disabled, so MemTracker does not count it: MemTracker's CPU total plays the GPU, the
   untracked copies play pinned host memory (their live bytes are counted separately). The copy back
   (.to("cuda"), lines 220 / 275) is a clone made under MemTracker (device memory). Pinning is dropped (needs
   an accelerator); record_stream (line 322) is a counted no-op. Everything else (the min_offload_size test,
   the Parameter/Buffer test, the forward stash of the last max_fwd_stash_size tensor ids, the backward stash
   freed at the next autograd node, the callback at the end of backward) is torchtune's own code. The pack hook
   is wrapped to count every saved tensor: bytes saved, bytes copied out, and whether the copied tensor's
   storage is a parameter / input (copied but not freed on the device).

Output: tests/fixtures/measured/techniques.json
Run: .venv/bin/python tests/measure/techniques.py [name-substring ...]
     torchtune: pip install --no-deps --target DIR torchtune==0.6.1 torchao==0.15.0 torchdata==0.11.0, plus
     (with deps, same DIR) datasets omegaconf sentencepiece tiktoken blobfile kagglehub psutil; then
     TORCHTUNE_SITE=DIR (appended to sys.path, after the venv's site-packages).
"""
import contextlib, copy, gc, json, os, sys, time, types, warnings, weakref
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, record_function
from torch.utils._python_dispatch import _disable_current_modes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


import peaks as P  # noqa: E402  reuses its model builder, PhaseMemTracker, cat_snapshot, unique_bytes, allocator_trace
import transformers  # noqa: E402

warnings.filterwarnings("ignore")
if os.environ.get("TORCHTUNE_SITE"):
    sys.path.append(os.environ["TORCHTUNE_SITE"])

TT_VERSION = None
try:
    import torchtune  # noqa: E402
    from torchtune.modules.loss import CEWithChunkedOutputLoss  # noqa: E402
    from torchtune.training import _activation_offloading as tt_off  # noqa: E402
    TT_VERSION = torchtune.__version__
except Exception as e:  # pragma: no cover - fallback when torchtune is absent
    print("torchtune not importable (", repr(e)[:200], "): chunked CE uses the copy below, offload is skipped")
    tt_off = None

    class CEWithChunkedOutputLoss(nn.Module):
        """Copy of torchtune 0.6.1 modules/loss/ce_chunked_output_loss.py:30-83 (docstrings dropped)."""

        def __init__(self, num_output_chunks: int = 8, ignore_index: int = -100):
            super().__init__()
            self.num_output_chunks = num_output_chunks
            self.ignore_index = ignore_index

        def compute_cross_entropy(self, logits, labels, normalize=True):
            return F.cross_entropy(logits.float(), labels, ignore_index=self.ignore_index, reduction="sum")

        def forward(self, logits, labels):
            total_elements = (labels != self.ignore_index).sum()
            labels = [t.reshape(-1) for t in labels.chunk(self.num_output_chunks, dim=1)]
            logits = [c.reshape(-1, c.size(-1)) for c in logits]
            total_loss = 0.0
            for logits_chunk, labels_chunk in zip(logits, labels):
                total_loss += self.compute_cross_entropy(logits_chunk, labels_chunk)
            return total_loss / total_elements

ROOT = P.ROOT
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "techniques.json")
CFG = P.LLAMA_TINY
B, S, CHUNKS, IGNORE = 2, 256, 8, -100


def K(name, technique, precision, variant, techniques, optimizer_impl="foreach", s=S, notes=""):
    return dict(name=name, technique=technique, precision=precision, variant=variant, techniques=techniques,
                optimizer_impl=optimizer_impl, s=s, notes=notes)


CHUNK_NOTE = ("observed in backward: all 8 chunks' cross-entropy backward nodes run before any lm_head backward "
              "(they were created after all 8 lm_head calls), so the 8 chunk logit gradients (model dtype, "
              "dtype*T*V in all) are alive together and released together (before the last chunk's lm_head backward); each chunk's lm_head weight "
              "gradient (V*h) is summed into the previous one out of place (aten.add: the mm result is a transposed "
              "view), so 3 V*h buffers exist at each add")
S256 = "; at s=256, T = 512 = h, so T*V = V*h and a chunk's logits are 1/8 of the lm_head weight gradient"
S1024 = "s=1024 so that T = 2048 tokens differs from h = 512 (at s=256, T = h and T*V = V*h)"

CASES = [
    K("llama-tiny-fp32-ce-baseline", "chunked-ce", "fp32", "hf-loss", {"loss": "standard"}),
    K("llama-tiny-fp32-ce-chunked8", "chunked-ce", "fp32", "chunked", {"loss": "chunked", "loss_chunks": CHUNKS},
      notes=CHUNK_NOTE + S256),
    K("llama-tiny-bf16-ce-baseline", "chunked-ce", "bf16", "hf-loss", {"loss": "standard"}),
    K("llama-tiny-bf16-ce-chunked8", "chunked-ce", "bf16", "chunked", {"loss": "chunked", "loss_chunks": CHUNKS},
      notes=CHUNK_NOTE + S256),
    K("llama-tiny-fp32-s1024-ce-baseline", "chunked-ce", "fp32", "hf-loss", {"loss": "standard"}, s=1024,
      notes=S1024),
    K("llama-tiny-fp32-s1024-ce-chunked8", "chunked-ce", "fp32", "chunked", {"loss": "chunked", "loss_chunks": CHUNKS},
      s=1024, notes=S1024 + "; " + CHUNK_NOTE),
    K("llama-tiny-bf16-s1024-ce-baseline", "chunked-ce", "bf16", "hf-loss", {"loss": "standard"}, s=1024,
      notes=S1024),
    K("llama-tiny-bf16-s1024-ce-chunked8", "chunked-ce", "bf16", "chunked", {"loss": "chunked", "loss_chunks": CHUNKS},
      s=1024, notes=S1024 + "; " + CHUNK_NOTE),
    K("llama-tiny-fp32-optinbwd-baseline", "optimizer-in-backward", "fp32", "plain",
      {"optimizer_in_backward": False}),
    K("llama-tiny-fp32-optinbwd-baseline-forloop", "optimizer-in-backward", "fp32", "plain",
      {"optimizer_in_backward": False}, optimizer_impl="forloop"),
    K("llama-tiny-fp32-optinbwd", "optimizer-in-backward", "fp32", "in-backward", {"optimizer_in_backward": True}),
    K("llama-tiny-fp32-optinbwd-forloop", "optimizer-in-backward", "fp32", "in-backward",
      {"optimizer_in_backward": True}, optimizer_impl="forloop"),
    K("llama-tiny-bf16-optinbwd-baseline", "optimizer-in-backward", "bf16", "plain",
      {"optimizer_in_backward": False}),
    K("llama-tiny-bf16-optinbwd", "optimizer-in-backward", "bf16", "in-backward", {"optimizer_in_backward": True}),
    K("llama-tiny-fp32-offload-baseline", "activation-offload", "fp32", "plain", {"activation_offload": False}),
    K("llama-tiny-fp32-offload-streams", "activation-offload", "fp32", "offload-streams",
      {"activation_offload": True}),
    K("llama-tiny-fp32-offload-nostreams", "activation-offload", "fp32", "offload-single-stream",
      {"activation_offload": True}),
    K("llama-tiny-bf16-offload-baseline", "activation-offload", "bf16", "plain", {"activation_offload": False}),
    K("llama-tiny-bf16-offload-streams", "activation-offload", "bf16", "offload-streams",
      {"activation_offload": True}),
]
BASELINE_OF = {"llama-tiny-fp32-ce-chunked8": "llama-tiny-fp32-ce-baseline",
               "llama-tiny-bf16-ce-chunked8": "llama-tiny-bf16-ce-baseline",
               "llama-tiny-fp32-s1024-ce-chunked8": "llama-tiny-fp32-s1024-ce-baseline",
               "llama-tiny-bf16-s1024-ce-chunked8": "llama-tiny-bf16-s1024-ce-baseline",
               "llama-tiny-fp32-optinbwd": "llama-tiny-fp32-optinbwd-baseline",
               "llama-tiny-fp32-optinbwd-forloop": "llama-tiny-fp32-optinbwd-baseline-forloop",
               "llama-tiny-fp32-optinbwd-baseline-forloop": "llama-tiny-fp32-optinbwd-baseline",
               "llama-tiny-bf16-optinbwd": "llama-tiny-bf16-optinbwd-baseline",
               "llama-tiny-fp32-offload-streams": "llama-tiny-fp32-offload-baseline",
               "llama-tiny-fp32-offload-nostreams": "llama-tiny-fp32-offload-baseline",
               "llama-tiny-bf16-offload-streams": "llama-tiny-bf16-offload-baseline"}


# ---------------------------------------------------------------- activation offloading on a CPU-only machine
class _Event:
    def synchronize(self):
        pass

    def query(self):
        return True


class _Stream:
    def wait_event(self, ev):
        pass

    def wait_stream(self, s):
        pass

    def record_event(self, ev=None):
        return _Event()


class HostLedger:
    """Live bytes of the untracked 'host' copies (pinned memory on a GPU machine)."""

    def __init__(self):
        self.live = self.peak = self.total = self.count = 0

    def add(self, t):
        n = t.untyped_storage().nbytes()
        self.live += n
        self.total += n
        self.count += 1
        self.peak = max(self.peak, self.live)
        weakref.finalize(t.untyped_storage(), self._free, n)

    def _free(self, n):
        self.live -= n


LEDGER = HostLedger()
RECORD_STREAM_CALLS = [0]


class _Host(torch.Tensor):
    """A CPU tensor MemTracker never sees (created and written with dispatch modes off)."""
    __torch_function__ = torch._C._disabled_torch_function_impl

    def copy_(self, src, non_blocking=False):
        with _disable_current_modes():
            torch.Tensor.copy_(self.as_subclass(torch.Tensor), src)
        return self

    def to(self, *args, **kwargs):
        if args and args[0] == "cuda":
            # "bring back to the GPU": a new device tensor, visible to MemTracker
            return self.as_subclass(torch.Tensor).clone()
        raise AssertionError(f"unexpected _Host.to{args}")


class _CudaShim:
    @staticmethod
    def default_stream(device=None):
        return _Stream()

    Stream = _Stream

    @staticmethod
    def stream(s):
        return contextlib.nullcontext()


class _TorchProxy:
    """Replaces the `torch` global of torchtune's _activation_offloading module only."""
    cuda = _CudaShim

    def __getattr__(self, k):
        return getattr(torch, k)

    @staticmethod
    def empty_like(x, pin_memory=False, device=None, **kw):
        with _disable_current_modes():
            t = torch.empty_like(x, device="cpu", **kw).as_subclass(_Host)
        LEDGER.add(t)
        return t


@contextlib.contextmanager
def offload_shims():
    old_torch = tt_off.torch
    old_rs = torch.Tensor.record_stream

    def record_stream(self, stream):
        RECORD_STREAM_CALLS[0] += 1

    tt_off.torch = _TorchProxy()
    torch.Tensor.record_stream = record_stream
    try:
        yield
    finally:
        tt_off.torch = old_torch
        torch.Tensor.record_stream = old_rs


class PackStats:
    """Wraps OffloadActivations' pack hook: every saved tensor of the wrapped forward, its bytes
    (element_size * nelement, as torchtune's get_num_bytes_tensor) and torchtune's decision."""

    def __init__(self, ctx, param_refs, input_refs):
        self.rows = []
        self.ctx, self.param_refs, self.input_refs = ctx, param_refs, input_refs
        orig = ctx.pack_hook

        def pack(t):
            tid = orig(t)
            off = bool(ctx.tracker[tid][1])
            r = P.sref(t)
            kind = "parameter" if r in self.param_refs else "input" if r in self.input_refs else "activation"
            self.rows.append({"bytes": t.element_size() * t.nelement(), "storage_bytes": t.untyped_storage().nbytes(),
                              "ref": r, "offloaded": off, "kind": kind, "is_param_obj": isinstance(t, nn.Parameter),
                              "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)})
            return tid

        ctx.pack_hook = pack

    def reset(self):
        self.rows = []

    def summary(self):
        def agg(rows):
            return {"count": len(rows), "bytes": sum(x["bytes"] for x in rows),
                    "unique_storage_bytes": sum({x["ref"]: x["storage_bytes"] for x in rows}.values())}
        rows = self.rows
        off = [x for x in rows if x["offloaded"]]
        kept = [x for x in rows if not x["offloaded"]]
        out = {
            "packed": agg(rows),
            "offloaded": agg(off),
            "offloaded_activation": agg([x for x in off if x["kind"] == "activation"]),
            "offloaded_but_storage_is_parameter": agg([x for x in off if x["kind"] == "parameter"]),
            "offloaded_but_storage_is_input": agg([x for x in off if x["kind"] == "input"]),
            "kept_parameter_objects": agg([x for x in kept if x["is_param_obj"]]),
            "kept_small_below_min_offload_size": agg([x for x in kept if not x["is_param_obj"]]),
            "offloaded_param_view_examples": sorted({f"{x['dtype']}{x['shape']}" for x in off
                                                     if x["kind"] == "parameter"})[:6],
        }
        return out


# ---------------------------------------------------------------- techniques
class ChunkedOutput(nn.Module):
    """torchtune TransformerDecoder.chunked_output (modules/transformer.py:482-501) on an HF Llama:
    the decoder's final-norm output, then the output projection per chunk of tokens."""

    def __init__(self, hf, n):
        super().__init__()
        self.hf, self.n = hf, n

    def forward(self, input_ids):
        h = self.hf.model(input_ids=input_ids, use_cache=False).last_hidden_state
        return [self.hf.lm_head(c) for c in h.chunk(self.n, dim=1)]


class Runner:
    """Builds the optimizer(s) and runs one training step for a case; phase marks as peaks.train_step."""

    def __init__(self, case, model, batch):
        self.case, self.model, self.batch = case, model, batch
        self.tracker = None
        self.marks = None
        foreach = case["optimizer_impl"] == "foreach"
        self.opt_desc = f"torch.optim.AdamW(lr=1e-4, weight_decay=0.01, foreach={foreach})"
        self.losses = []
        self.pack_stats = None
        self.hook_handles = []
        if case["variant"] == "in-backward":
            self.opts = {p: torch.optim.AdamW([p], lr=1e-4, foreach=foreach) for p in model.parameters()}
            for o in self.opts.values():
                o.register_step_pre_hook(lambda *a: self._set_phase("backward:optimizer_step"))
                o.register_step_post_hook(lambda *a: self._set_phase("backward"))
            self.opt_desc = (f"one {self.opt_desc} per parameter ({len(self.opts)}), stepped in "
                             f"register_post_accumulate_grad_hook then zero_grad(set_to_none=True)")
            self._register_step_hooks()
        else:
            self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=foreach)
        self.extra = []
        if case["technique"] == "chunked-ce" and case["variant"] == "chunked":
            self.wrapper = ChunkedOutput(model, CHUNKS)
            self.loss_fn = CEWithChunkedOutputLoss(num_output_chunks=CHUNKS, ignore_index=IGNORE)
            self.ignore_labels_cache = torch.full((B, 1), IGNORE, dtype=torch.long)  # recipe line 346-348
            self.extra.append(self.ignore_labels_cache)
        self.ctx = None
        if case["variant"].startswith("offload"):
            with offload_shims():
                ctx = tt_off.get_act_offloading_ctx_manager(types.SimpleNamespace(output=model.lm_head), True)
            if case["variant"] == "offload-single-stream":
                # same manager, use_streams=False (the NoOp hooks on lm_head from above stay registered)
                with offload_shims():
                    ctx = tt_off.OffloadActivations(use_streams=False)
            self.ctx = ctx
            self.ctx_desc = (f"torchtune {TT_VERSION} OffloadActivations(use_pin_memory={ctx.use_pin_memory} "
                             f"(pinning not done on CPU), use_streams={ctx.use_streams}, "
                             f"max_fwd_stash_size={getattr(ctx, 'max_fwd_stash_size', None)}, "
                             f"min_offload_size={ctx.min_tensor_size_bytes}) via get_act_offloading_ctx_manager "
                             f"(lm_head under NoOpManager)")
            param_refs = {P.sref(p) for p in model.parameters()} | {P.sref(b) for b in model.buffers()}
            input_refs = {P.sref(t) for t in batch.values()}
            self.pack_stats = PackStats(ctx, param_refs, input_refs)

    def optimizers(self):
        return list(self.opts.values()) if hasattr(self, "opts") else [self.opt]

    def _set_phase(self, name):
        if self.tracker is not None:
            self.tracker.phase = name

    def _register_step_hooks(self):
        for h in self.hook_handles:
            h.remove()

        def step(p):  # torchtune training/memory.py:236-238
            self.opts[p].step()
            self.opts[p].zero_grad()
        self.hook_handles = [p.register_post_accumulate_grad_hook(step) for p in self.model.parameters()]

    def mark(self, name):
        self._set_phase(name)
        if self.marks is not None:
            self.marks.append((name, time.time_ns()))

    def step(self):
        c, model, mb = self.case, self.model, self.batch
        if c["variant"] != "in-backward":
            self.opt.zero_grad(set_to_none=True)
        if self.tracker is not None:
            self.tracker.micro_batch = 0
        self.mark("forward")
        with record_function("phase:forward"):
            if c["technique"] == "chunked-ce" and c["variant"] == "chunked":
                # recipes/full_finetune_single_device.py:_loss_step (lines 632-652)
                labels = mb["labels"]
                logits = self.wrapper(mb["input_ids"])
                labels = torch.hstack((labels[..., 1:], self.ignore_labels_cache[: labels.shape[0]]))
                loss = self.loss_fn(logits, labels)
                del logits
            elif c["technique"] == "activation-offload":
                if self.pack_stats is not None:
                    self.pack_stats.reset()
                ctx = self.ctx if self.ctx is not None else contextlib.nullcontext()
                with (offload_shims() if self.ctx is not None else contextlib.nullcontext()):
                    with ctx:
                        logits = model(input_ids=mb["input_ids"], use_cache=False).logits
                loss = model.loss_function(logits=logits, labels=mb["labels"], vocab_size=model.config.vocab_size)
                del logits
            else:
                loss = model(input_ids=mb["input_ids"], labels=mb["labels"], use_cache=False).loss
        self.losses.append(float(loss.detach()))
        if c["variant"] == "in-backward":
            self._register_step_hooks()  # after MemTracker's own grad hooks (installed in forward)
        self.mark("backward")
        with record_function("phase:backward"):
            with (offload_shims() if self.ctx is not None else contextlib.nullcontext()):
                loss.backward()
        del loss
        if self.tracker is not None:
            self.tracker.micro_batch = None
        if c["variant"] != "in-backward":
            self.mark("optimizer")
            with record_function("phase:optimizer"):
                self.opt.step()
        self.mark("end")


def grads_checksum(model):
    return [float(p.detach().double().abs().sum()) for p in list(model.parameters())[:3]]


def run_case(case):
    cfg = copy.deepcopy(CFG)
    torch.manual_seed(0)
    model = P.make_model(cfg, {"attention": "eager", "precision": case["precision"]})
    model.train()
    ids = torch.randint(0, cfg["vocab_size"], (B, case["s"]))
    batch = {"input_ids": ids, "labels": ids.clone()}
    run = Runner(case, model, batch)

    t0 = time.time()
    LEDGER.__init__()
    run.step()                                           # step 1: creates optimizer state
    if case["variant"] != "in-backward":
        run.opt.zero_grad(set_to_none=True)
    gc.collect()
    step1_pack = run.pack_stats.summary() if run.pack_stats else None

    opts = run.optimizers()
    params = list(model.parameters())
    buffers = list(model.buffers())
    state_tensors = [v for o in opts for st in o.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    step_tensors = [v for o in opts for st in o.state.values() for k, v in st.items()
                    if k == "step" and isinstance(v, torch.Tensor)]
    input_tensors = list(batch.values()) + run.extra
    baseline_direct = P.unique_bytes(params + buffers + state_tensors + input_tensors)

    LEDGER.__init__()
    RECORD_STREAM_CALLS[0] = 0
    mt_ = P.PhaseMemTracker()
    mt_.track_external(model, *opts, *input_tensors)
    baseline_snap = P.cat_snapshot(mt_.get_tracker_snapshot())
    marks = []
    run.tracker, run.marks = mt_, marks
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with mt_:
            run.step()                                   # step 2 (measured)
    run.tracker, run.marks = None, None
    peak_snap = P.cat_snapshot(mt_.get_tracker_snapshot("peak"))
    end_snap = P.cat_snapshot(mt_.get_tracker_snapshot())
    alloc = P.allocator_trace(prof, marks)
    grad_bytes = P.unique_bytes([p.grad for p in params if p.grad is not None])
    elapsed = time.time() - t0
    peak, baseline = peak_snap["total"], baseline_snap["total"]
    info = mt_.peak_info or {"phase": "baseline"}

    scenario = {
        "model": {"hf_config": cfg},
        "training": {"micro_batch": B, "seq_len": case["s"], "grad_accum": 1, "precision": case["precision"],
                     "optimizer": "adamw", "checkpointing": "none", "attention": "eager", "dropout": 0.0,
                     "mode": "train", "techniques": case["techniques"]},
        "parallel": {}, "device": {"preset": "h100-sxm-80gb"},
    }
    notes = [case["notes"]] if case["notes"] else []
    notes.append(f"peak reached at aten op {info.get('op')} in {info.get('phase')}")
    mt_delta = peak - baseline
    notes.append(f"cross-check: MemTracker peak above baseline {mt_delta} B; allocator-level peak above baseline "
                 f"{alloc['allocator_peak_above_baseline']} B (phase {alloc['allocator_peak_phase']})"
                 + ("; the allocator also sees the untracked host copies of the offload emulation"
                    if run.ctx is not None else ""))
    if baseline != baseline_direct:
        notes.append(f"baseline mismatch: tracker {baseline} vs direct storage sum {baseline_direct}")
    backend = f"cpu (real tensors), attention eager, use_cache=False, optimizer {run.opt_desc}"
    if case["technique"] == "chunked-ce" and case["variant"] == "chunked":
        backend += (f", loss torchtune {TT_VERSION or '(copy)'} CEWithChunkedOutputLoss(num_output_chunks={CHUNKS}) "
                    f"on [lm_head(c) for c in h.chunk({CHUNKS}, dim=1)]")
    elif case["technique"] == "chunked-ce":
        backend += ", loss model(input_ids, labels).loss (transformers ForCausalLMLoss, logits.float())"
    if run.ctx is not None:
        backend += ", " + run.ctx_desc + "; emulated on CPU (see techniques.py docstring)"
    if case["technique"] == "activation-offload":
        backend += ", loss model.loss_function(logits, labels) outside the offload context, then del logits"
    phase_peaks = mt_.phase_peaks
    result = {
        "name": case["name"],
        "technique": case["technique"],
        "variant": case["variant"],
        "hf_class": "LlamaForCausalLM",
        "scenario": scenario,
        "backend": backend,
        "measured": {
            "peak_bytes": int(peak),
            "peak_phase": info.get("phase"),
            "baseline_bytes": int(baseline),
            "peak_by_phase_total": {k: v["total"] for k, v in phase_peaks.items()},
            "by_category_at_peak": peak_snap,
        },
        "detail": {
            "peak_op": info.get("op"),
            "peak_by_phase": phase_peaks,
            "baseline_by_category": baseline_snap,
            "end_of_step_by_category": end_snap,
            "grad_bytes_after_step": int(grad_bytes),
            "param_bytes": int(P.unique_bytes(params)),
            "optimizer_state_bytes": int(P.unique_bytes(state_tensors)),
            "optimizer_step_scalar_bytes": int(P.unique_bytes(step_tensors)),
            "buffer_bytes": int(P.unique_bytes(buffers)),
            "input_bytes": int(P.unique_bytes(input_tensors)),
            "sizes": {"tokens_T": B * case["s"], "vocab_V": cfg["vocab_size"], "hidden_h": cfg["hidden_size"],
                      "T_times_V": B * case["s"] * cfg["vocab_size"], "V_times_h": cfg["vocab_size"] * cfg["hidden_size"]},
            "loss_step1": run.losses[0],
            "loss_step2": run.losses[1],
            "crosscheck": {"memtracker_peak_above_baseline": int(mt_delta), **alloc},
        },
        "notes": "; ".join(notes),
    }
    result["detail"]["optimizer_impl"] = case["optimizer_impl"]
    result["detail"]["cpu_default_optimizer_impl"] = _cpu_default(params)
    if run.pack_stats is not None:
        result["detail"]["offload"] = {
            "saved_tensors_step2": run.pack_stats.summary(),
            "saved_tensors_step1": step1_pack,
            "host_copy_bytes_total_step2": LEDGER.total,
            "host_copy_count_step2": LEDGER.count,
            "host_copy_peak_live_bytes_step2": LEDGER.peak,
            "record_stream_calls_step2": RECORD_STREAM_CALLS[0],
        }
    print(f"{case['name']:44s} peak={peak:>12,d} ({info.get('phase')}, {info.get('op')}) base={baseline:>12,d} "
          f"alloc_d={alloc['allocator_peak_above_baseline']:>12,d} mt_d={mt_delta:>12,d} loss={run.losses} "
          f"{elapsed:.1f}s", flush=True)
    for k, v in phase_peaks.items():
        print(f"   {k:24s}", {kk: vv for kk, vv in v.items() if vv}, flush=True)
    if run.pack_stats is not None:
        print("   offload:", json.dumps(result["detail"]["offload"]["saved_tensors_step2"]), flush=True)
        print("   host:", LEDGER.total, LEDGER.count, LEDGER.peak, RECORD_STREAM_CALLS[0], flush=True)
    return result


def _cpu_default(params):
    from torch.optim.optimizer import _default_to_fused_or_foreach
    fused, foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
    return "foreach" if foreach else "fused" if fused else "forloop (per-parameter)"


def compare(results):
    by = {r["name"]: r for r in results}
    for name, base in BASELINE_OF.items():
        if name not in by or base not in by:
            continue
        t, b = by[name], by[base]
        tb, bb = t["detail"]["peak_by_phase"], b["detail"]["peak_by_phase"]
        d = {}
        for ph in sorted(set(tb) & set(bb)):
            tp, bp = tb[ph], bb[ph]
            d[ph] = {k: int(tp.get(k, 0)) - int(bp.get(k, 0)) for k in sorted(set(tp) | set(bp))
                     if k not in ("op", "micro_batch")}
        t["vs_baseline"] = {"baseline": base,
                            "peak_bytes_delta": t["measured"]["peak_bytes"] - b["measured"]["peak_bytes"],
                            "peak_by_phase_delta": d,
                            "phases_only_in_baseline": sorted(set(bb) - set(tb)),
                            "phases_only_in_technique": sorted(set(tb) - set(bb))}


def main():
    sel = sys.argv[1:]
    results = []
    for case in CASES:
        if sel and not any(x in case["name"] for x in sel):
            continue
        if case["technique"] == "activation-offload" and case["variant"] != "plain" and tt_off is None:
            print("SKIPPED (no torchtune)", case["name"])
            continue
        try:
            results.append(run_case(case))
        except Exception as e:
            import traceback
            traceback.print_exc()
            print("FAILED", case["name"], repr(e), flush=True)
            continue
        gc.collect()
    compare(results)
    out = {"generator": "tests/measure/techniques.py", "torch": torch.__version__,
           "transformers": transformers.__version__, "torchtune": TT_VERSION,
           "tool": "MemTracker per-phase peaks as peaks.py (live untyped-storage bytes, step 2), allocator cross-check",
           "cases": results}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
