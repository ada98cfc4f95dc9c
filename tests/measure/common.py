"""Shared helpers for Headroom's measuring scripts (tests/measure/*.py).

SavedTensorRecorder: counts the tensors autograd saves for backward
(torch.autograd.graph.saved_tensors_hooks), once per untyped storage,
excluding parameter and buffer storages, and separating storages produced
by casting a parameter (autocast's low-precision weight copies).
"""
import math
import contextlib
import torch
import transformers
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode


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
