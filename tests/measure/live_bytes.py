"""LiveBytes: the peak of live tensor storage bytes allocated inside a block of code,
on CPU, for Headroom's forward-peak measurements (the no-grad calls of diffusion parts).

Every storage an ATen op returns is counted when it first appears and uncounted once
it has expired (torch's StorageWeakRef on the C++ storage, swept after every op and
before counting the op's outputs), so the peak is what a caching allocator would have
to hold at once, excluding the weights and inputs that exist before the block. Views
share their base's storage and count once.
"""
import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class LiveBytes(TorchDispatchMode):
    def __init__(self, count_meta=False):
        """`count_meta`: count meta tensors too (a step run on the meta device with CUDA's
        kernel choice, diffusion_steps.py); off, meta tensors are never counted."""
        super().__init__()
        self.count_meta = count_meta
        self.tracked = {}  # cdata -> (weakref, nbytes)
        self.live = 0
        self.peak = 0

    def ignore(self, tensors):
        """Storages that exist before the block (weights, buffers, inputs): never counted,
        even when an op returns a view of them (`aten.t` of a weight)."""
        for t in tensors:
            ref = StorageWeakRef(t.untyped_storage())
            self.tracked[ref.cdata] = (ref, 0)

    def _sweep(self):
        dead = [k for k, (ref, _) in self.tracked.items() if ref.expired()]
        for k in dead:
            self.live -= self.tracked.pop(k)[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        flat, _ = tree_flatten(out)
        fresh = []
        for t in flat:
            if isinstance(t, torch.Tensor) and (self.count_meta or t.device.type != "meta"):
                ref = StorageWeakRef(t.untyped_storage())
                if ref.cdata not in self.tracked:
                    fresh.append((ref, t.untyped_storage().nbytes()))
        # Inputs freed by this op's caller before its outputs were made are not counted
        # against them: sweep first, then add the outputs.
        self._sweep()
        for ref, n in fresh:
            if ref.cdata not in self.tracked:
                self.tracked[ref.cdata] = (ref, n)
                self.live += n
        self.peak = max(self.peak, self.live)
        return out
