"""Shared helpers for Headroom's measuring scripts (tests/measure/*.py).

SavedTensorRecorder: counts the tensors autograd saves for backward
(torch.autograd.graph.saved_tensors_hooks), once per untyped storage,
excluding parameter and buffer storages, and separating storages produced
by casting a parameter (autocast's low-precision weight copies).

allocation_events: the c10 allocator's allocation events of a torch.profiler run
(profile_memory=True) as (time, address, bytes), in time order.

cache_bytes: the conv, recurrent and K/V bytes a transformers cache object holds.

cuda_sdpa: the CUDA SDPA kernel selection (flash / memory-efficient / math) that
fake CUDA tensors cannot do themselves; activations.py and activations_parts.py
install it in place of torch.nn.functional.scaled_dot_product_attention.
"""
import math
import contextlib
import functools
import torch
import transformers
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode


def allocation_events(prof):
    out = []

    def walk(ev):
        f = ev.extra_fields
        if type(f).__name__ == "_ExtraFields_Allocation":
            out.append((ev.start_time_ns, f.ptr, f.alloc_size))
        for c in ev.children:
            walk(c)

    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root)
    out.sort()
    return out


def cache_bytes(cache):
    """{"conv", "recurrent", "kv"} bytes of a cache's layers (their `conv_states`,
    `recurrent_states`, `keys` and `values`, a tensor, a list or a dict of them), and the dtypes seen."""
    total = {"conv": 0, "recurrent": 0, "kv": 0}
    dtypes = set()
    for layer in cache.layers:
        for attr, kind in (("conv_states", "conv"), ("recurrent_states", "recurrent"), ("keys", "kv"), ("values", "kv")):
            held = getattr(layer, attr, None)
            held = list(held.values()) if isinstance(held, dict) else held if isinstance(held, list) else [held]
            for t in held:
                if isinstance(t, torch.Tensor) and t.numel() > 0:
                    total[kind] += t.numel() * t.element_size()
                    dtypes.add(f"{kind}:{t.dtype}")
    return total, dtypes


def sref(t):
    return StorageWeakRef(t.untyped_storage())


def storage_nbytes(t):
    return t.untyped_storage().nbytes()


class ParamCastTracker(TorchDispatchMode):
    """Records storages produced by aten._to_copy / aten.to applied to a parameter
    (this is how torch.autocast makes its bf16 weight copies)."""

    def __init__(self, param_refs):
        super().__init__()
        self.param_refs = param_refs
        self.cast_refs = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in (torch.ops.aten._to_copy.default,) and isinstance(args[0], torch.Tensor):
            if sref(args[0]) in self.param_refs or sref(args[0]) in self.cast_refs:
                if isinstance(out, torch.Tensor):
                    self.cast_refs.add(sref(out))
        return out


class ModuleStack:
    """Tracks the name of the innermost module running (forward hooks)."""

    def __init__(self, model):
        self.stack = []
        self.handles = []
        for name, m in model.named_modules():
            self.handles.append(m.register_forward_pre_hook(self._pre(name)))
            self.handles.append(m.register_forward_hook(self._post(name)))

    def _pre(self, name):
        def f(mod, args):
            self.stack.append(name)
        return f

    def _post(self, name):
        def f(mod, args, out):
            if self.stack and self.stack[-1] == name:
                self.stack.pop()
        return f

    def current(self):
        return self.stack[-1] if self.stack else "<top>"

    def remove(self):
        for h in self.handles:
            h.remove()


class SavedTensorRecorder:
    def __init__(self, model, module_stack=None):
        self.param_refs = set()
        for p in model.parameters():
            self.param_refs.add(sref(p))
        for b in model.buffers():
            self.param_refs.add(sref(b))
        self.module_stack = module_stack
        self.entries = {}   # StorageWeakRef -> dict
        self.order = []
        self.param_hits = 0
        self.pack_calls = 0
        self.keep = []  # keep tensors alive so storage identities stay valid

    def pack(self, t):
        self.pack_calls += 1
        r = sref(t)
        if r in self.param_refs:
            self.param_hits += 1
            return t
        if r not in self.entries:
            self.entries[r] = {
                "nbytes": storage_nbytes(t),
                "shape": list(t.shape),
                "dtype": str(t.dtype).replace("torch.", ""),
                "module": self.module_stack.current() if self.module_stack else None,
                "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
                "savers": [],
                "via": "saved_tensors_hooks",
            }
            self.order.append(r)
            self.keep.append(t)
        return t

    def unpack(self, t):
        return t

    def add_external(self, t, module, via):
        """A tensor held for backward by something other than autograd's saved
        variables (e.g. the inputs kept by non-reentrant activation checkpointing)."""
        r = sref(t)
        if r in self.param_refs or r in self.entries:
            return
        self.entries[r] = {"nbytes": storage_nbytes(t), "shape": list(t.shape),
                           "dtype": str(t.dtype).replace("torch.", ""), "module": module,
                           "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
                           "savers": [], "via": via}
        self.order.append(r)
        self.keep.append(t)

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)

    def annotate_from_graph(self, root):
        """Walk the autograd graph from root and attach (node, field) saver names."""
        seen = set()
        stack = [root]
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            for attr in dir(node):
                if not attr.startswith("_saved_"):
                    continue
                try:
                    val = getattr(node, attr)
                except Exception:
                    continue
                vals = val if isinstance(val, (tuple, list)) else [val]
                for v in vals:
                    if isinstance(v, torch.Tensor):
                        r = sref(v)
                        if r in self.entries:
                            s = f"{node.name()}.{attr[7:]}"
                            if s not in self.entries[r]["savers"]:
                                self.entries[r]["savers"].append(s)
            if hasattr(node, "saved_tensors"):
                try:
                    for v in node.saved_tensors:
                        if isinstance(v, torch.Tensor) and sref(v) in self.entries:
                            s = f"{node.name()}.saved_tensors"
                            if s not in self.entries[sref(v)]["savers"]:
                                self.entries[sref(v)]["savers"].append(s)
                except Exception:
                    pass
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)

    def totals(self, cast_refs=()):
        act = sum(e["nbytes"] for r, e in self.entries.items() if r not in cast_refs)
        pc = sum(e["nbytes"] for r, e in self.entries.items() if r in cast_refs)
        n = sum(1 for r in self.entries if r not in cast_refs)
        return act, pc, n

    def listing(self, cast_refs=()):
        out = []
        for r in self.order:
            e = dict(self.entries[r])
            e["param_copy"] = r in cast_refs
            out.append(e)
        return out


def _tensors_in(x, partials):
    """The tensors inside nested tuples, lists and dicts (and functools.partial's bound
    arguments when `partials`), in order."""
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (tuple, list)):
        for y in x:
            yield from _tensors_in(y, partials)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _tensors_in(y, partials)
    elif partials and isinstance(x, functools.partial):
        yield from _tensors_in(x.args, partials)
        yield from _tensors_in(x.keywords, partials)


def hold_checkpoint_inputs(model, rec, stack, partials=False, only_if_grad=False):
    """Non-reentrant checkpointing keeps each checkpointed layer's tensor arguments for the
    recomputation (torch.utils.checkpoint `_CheckpointFrame`): record them with `rec` under the
    module `stack` is in. `partials`: also the arguments bound in a functools.partial (the
    callable GradientCheckpointingLayer passes); `only_if_grad`: only when one of them needs a
    gradient (otherwise the checkpoint builds no graph and holds nothing)."""
    for m in model.modules():
        if getattr(m, "gradient_checkpointing", False) and hasattr(m, "_gradient_checkpointing_func"):
            orig = m._gradient_checkpointing_func

            def wrapped(fn, *args, __orig=orig, **kwargs):
                tensors = list(_tensors_in((fn, args, kwargs), partials))
                if not only_if_grad or (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
                    for t in tensors:
                        rec.add_external(t, stack.current(), "checkpoint-input")
                return __orig(fn, *args, **kwargs)
            m._gradient_checkpointing_func = wrapped


@contextlib.contextmanager
def fake_cuda_autocast(dtype):
    """torch.autocast('cuda') refuses to enable without a GPU; set the same C++
    flags directly so that fake CUDA tensors go through the CUDA autocast kernels."""
    prev_en = torch.is_autocast_enabled("cuda")
    prev_dt = torch.get_autocast_dtype("cuda")
    prev_cache = torch.is_autocast_cache_enabled()
    torch.set_autocast_enabled("cuda", True)
    torch.set_autocast_dtype("cuda", dtype)
    torch.set_autocast_cache_enabled(True)
    torch.autocast_increment_nesting()
    try:
        yield
    finally:
        if torch.autocast_decrement_nesting() == 0:
            torch.clear_autocast_cache()
        torch.set_autocast_enabled("cuda", prev_en)
        torch.set_autocast_dtype("cuda", prev_dt)
        torch.set_autocast_cache_enabled(prev_cache)


# ---------------------------------------------------------------- CUDA SDPA kernel selection
# Captured when common.py is first imported, before any script replaces
# torch.nn.functional.scaled_dot_product_attention (the same builtin as torch._C._nn's).
ORIG_SDPA = torch._C._nn.scaled_dot_product_attention


def cuda_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False,
              devices=("cuda",)):
    """Run scaled_dot_product_attention choosing the kernel as torch 2.15's CUDA dispatch does
    (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp), which fake CUDA tensors cannot do
    themselves (they would fall back to the math kernel). Returns (kernel name, output).

    Flash first (cuDNN attention is not modelled), then the memory-efficient kernel, else math:
      - flash: no attn_mask, fp16/bf16, q, k and v with the same head dim <= 256 and % 8 == 0,
        valid heads (below);
      - efficient: valid heads, q/k head dims equal and aligned (8 in fp16/bf16, 4 in fp32); the
        value head dim may differ (DeepSeek MLA: q/k = qk_nope + qk_rope, v = v_head_dim);
      - valid heads (check_batch_size_and_num_heads_dense<supports_gqa, ..., supports_mqa> in
        sdp_utils_cpp.h, same for flash and efficient on CUDA): equal heads, MQA broadcast
        (k and v with one head), or enable_gqa with hk == hv dividing hq;
      - before the efficient kernel a boolean mask is converted to a new float mask in q's dtype
        and aligned/expanded as aten::scaled_dot_product_attention does (convert_boolean_attn_mask
        + preprocess_mask): the kernel saves that per-call float mask.
    Under CUDA autocast q, k, v are cast to the autocast dtype first (aten::scaled_dot_product_attention
    is on autocast's lower-precision list). Non-CUDA tensors run torch's own SDPA ("cpu-native-sdpa");
    `devices` names the device types treated as CUDA (diffusion_steps.py adds "meta")."""
    if query.device.type not in devices:
        k = "cpu-native-sdpa" + ("(mask)" if attn_mask is not None else "")
        return k, ORIG_SDPA(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                            scale=scale, enable_gqa=enable_gqa)
    if torch.is_autocast_enabled("cuda"):
        dt = torch.get_autocast_dtype("cuda")
        query, key, value = query.to(dt), key.to(dt), value.to(dt)
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    gqa = hk != hq or hv != hq
    # torch's check_batch_size_and_num_heads_dense for the flash and efficient kernels (CUDA):
    # equal heads, or MQA broadcast (k and v with one head), or enable_gqa with hk == hv dividing hq
    heads_ok = (not gqa) or (hk == 1 and hv == 1) or (enable_gqa and hk == hv and hq % hk == 0)
    dq, dk, dv = query.shape[-1], key.shape[-1], value.shape[-1]
    low = query.dtype in (torch.float16, torch.bfloat16)
    align = 8 if low else 4
    if attn_mask is None and low and heads_ok and dq == dk == dv and dq <= 256 and dq % 8 == 0:
        return "flash", torch.ops.aten._scaled_dot_product_flash_attention(
            query, key, value, dropout_p, is_causal, False, scale=scale)[0]
    if heads_ok and dq == dk and dq % align == 0 and dv % align == 0:
        k = "efficient" + ("(mask)" if attn_mask is not None else "") + (("(mqa)" if hk == 1 else "(gqa)") if gqa else "")
        if attn_mask is not None:
            # as aten::scaled_dot_product_attention does before the efficient kernel (attention.cpp):
            # convert_boolean_attn_mask (a new float mask in q's dtype, allocated per call, contiguous
            # when the bool mask is an expanded view) then preprocess_mask (pad the last dim to a
            # multiple of 8 when a stride is unaligned, expand to (b, hq, sq, sk)).
            if attn_mask.dtype == torch.bool:
                m = torch.zeros_like(attn_mask, dtype=query.dtype)
                m.masked_fill_(attn_mask.logical_not(), float("-inf"))
                attn_mask = m
            if not (all(attn_mask.stride(i) % 8 == 0 for i in range(attn_mask.dim() - 1))
                    and attn_mask.stride(-1) == 1):
                n = attn_mask.shape[-1]
                attn_mask = torch.nn.functional.pad(attn_mask, (0, 8 - n % 8))[..., :n]
            attn_mask = attn_mask.expand(query.shape[0], query.shape[1], query.shape[2], key.shape[2])
        return k, torch.ops.aten._scaled_dot_product_efficient_attention(
            query, key, value, attn_mask, True, dropout_p, is_causal, scale=scale)[0]
    k = "math" + ("(mask)" if attn_mask is not None else "") + ("(gqa)" if gqa else "")
    return k, ORIG_SDPA(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                        scale=scale, enable_gqa=enable_gqa)
