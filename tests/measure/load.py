#!/usr/bin/env python3
"""Load-time transients: FSDP1 wrapping with `sync_module_states`, FSDP2's two ways of loading (a host model
sharded unit by unit, or a meta model filled one broadcast tensor at a time), and NF4 quantisation at load.

FSDP1 (`torch.distributed.fsdp.FullyShardedDataParallel`, torch 2.15) runs for real on CPU tensors on rank 0 of a
fake 2-rank group (`dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)`,
torch.testing._internal.distributed.fake_pg: every collective returns at once, allocating what it allocates).
Model: transformers LlamaForCausalLM, llama-tiny (peaks.py's LLAMA_TINY), fp32, built on CPU as rank 0 of a
rank-0-loading run holds it. Wrapped as accelerate's transformer-based policy does:
`FSDP(model, auto_wrap_policy=ModuleWrapPolicy({LlamaDecoderLayer}), device_id=cpu, sync_module_states=...)`.
The constructor is run under torch.distributed._tools.mem_tracker.MemTracker with the model's own tensors
tracked (`track_external`); `extra_bytes` = the tracker's peak less the bytes alive when it started (the
unsharded model). On a GPU the model starts on the CPU and `_move_module_to_device` (fsdp/_init_utils.py) moves
each unit's parameters to the GPU first; on CPU that move is a no-op, so what this measures is what follows it:
`_sync_module_params_and_buffers` (dist._broadcast_coalesced, 250 MiB buckets) and the FlatParamHandle's flatten
(`torch.cat`) and shard (a 1/world clone). FSDP1 refuses `sync_module_states=True` with CPU tensors
(`_check_module_states_for_sync_module_states`, a device check and nothing else); the script replaces that check
with a no-op so the broadcast runs on the fake group.
Why the CPU peak is the GPU's: the units are wrapped blocks first, root last. At the root's flatten the CPU holds
the blocks' shards, the root's original tensors, its flat copy and its shard clone; on a GPU the blocks' shards,
the root moved to the GPU, its flat copy and its shard clone: the same bytes (Psi*4/W + 2*root*4 here).

NF4 (bitsandbytes 0.50.2, which quantises on CPU): one llama-tiny MLP weight (1792 x 512) in bf16 turned into a
`Params4bit(quant_type="nf4", compress_statistics=True)` and quantised (`_quantize`, what `.to(device)` /
transformers' bnb 4-bit loader call per layer), under MemTracker: peak = the bf16 weight + its NF4 output
(packed uint8 + absmax + double-quantisation state).

Output: tests/fixtures/measured/load.json
Run: /work/venv/bin/python tests/measure/load.py
"""
import json, os, sys, warnings
import torch
import torch.distributed as dist
import transformers
from torch.distributed._tools.mem_tracker import MemTracker
from torch.testing._internal.distributed.fake_pg import FakeStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peaks as P  # noqa: E402  LLAMA_TINY

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
OUT = os.path.join(P.ROOT, "tests", "fixtures", "measured", "load.json")
CPU = torch.device("cpu")
WORLD = 2


def live(tr):
    return int(tr.get_tracker_snapshot()[CPU]["Total"])


def fsdp1_case(sync):
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
    import torch.distributed.fsdp._init_utils as init_utils
    init_utils._check_module_states_for_sync_module_states = lambda states: None  # device check only (see above)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**P.LLAMA_TINY)).float()
    psi = sum(p.numel() for p in model.parameters())
    block = sum(p.numel() for p in model.model.layers[0].parameters())
    root = psi - block * len(model.model.layers)
    tr = MemTracker()
    tr.track_external(model)
    with tr:
        start = live(tr)
        wrapped = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({LlamaDecoderLayer}), device_id=CPU,
                       sync_module_states=sync)
        end = live(tr)
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    sharded = sum(p.numel() * p.element_size() for p in wrapped.parameters())
    out = {"name": f"llama-tiny-fsdp1-x{WORLD}-sync-{str(sync).lower()}", "world": WORLD, "sync_module_states": sync,
           "param_count": int(psi), "block_param_count": int(block), "root_param_count": int(root), "weight_bytes": 4,
           "scenario": {"model": {"hf_config": P.LLAMA_TINY}, "training": {"precision": "fp32"},
                        "parallel": {"dp": WORLD, "zero": "fsdp", "fsdp_version": 1}},
           "measured": {"start_bytes": start, "peak_bytes": peak, "end_bytes": end, "extra_bytes": peak - start,
                        "sharded_param_bytes": int(sharded)}}
    print(out["name"], out["measured"], "root*4", root * 4, "block*4", block * 4, flush=True)
    return out


def fsdp2_unit_case():
    """FSDP2 `fully_shard` on a model materialised on the host: each call's `_move_states_to_device`
    (fsdp/_fully_shard/_fsdp_init.py 369-401, called at 567) moves the unit's parameters to the GPU
    unsharded (`tensor.data = tensor.to(device)`), then `FSDPParam._init_sharded_param`
    (_fsdp_param.py 262-380) cuts this rank's padded shard (`new_zeros` + `copy_`); the unsharded
    copies are dropped when `fully_shard` returns. On CPU the move is a no-op, so it is emulated
    by a copy (`tensor.data = tensor.clone()`) while the host's originals stay referenced: every
    byte allocated after the start is then a byte the GPU would hold."""
    import torch.distributed.fsdp._fully_shard._fsdp_init as fsdp_init
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    def move(params, buffers, device):
        for t in list(params) + list(buffers):
            t.data = t.data.clone()
    fsdp_init._move_states_to_device = move
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**P.LLAMA_TINY)).float()
    host = [p.data for p in model.parameters()]  # the host's copy, not GPU memory
    psi = sum(p.numel() for p in model.parameters())
    block = sum(p.numel() for p in model.model.layers[0].parameters())
    root = psi - block * len(model.model.layers)
    mesh = init_device_mesh("cpu", (WORLD,))
    tr = MemTracker()
    tr.track_external(model)
    with tr:
        start = live(tr)
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        end = live(tr)
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    out = {"name": f"llama-tiny-fsdp2-unit-x{WORLD}", "world": WORLD, "param_count": int(psi), "block_param_count": int(block),
           "root_param_count": int(root), "weight_bytes": 4, "host_bytes": int(sum(t.numel() * 4 for t in host)),
           "scenario": {"model": {"hf_config": P.LLAMA_TINY}, "training": {"precision": "fp32"},
                        "parallel": {"dp": WORLD, "zero": "fsdp", "fsdp_version": 2, "fsdp_load": "unit"}},
           "measured": {"start_bytes": start, "peak_bytes": peak, "end_bytes": end, "gpu_peak_bytes": peak - start,
                        "gpu_end_bytes": end - start}}
    print(out["name"], out["measured"], "root*4", root * 4, flush=True)
    return out


def fsdp2_tensor_case():
    """FSDP2 on a meta-device model, loaded from a full state dict one tensor at a time, as
    torchtune's `load_from_full_model_state_dict` does (`set_model_state_dict(...,
    StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))`): torch
    `_state_dict_utils.py` `_broadcast_state_dict` (640-697) broadcasts every tensor alone ("to
    avoid OOM"), each rank but 0 receiving it into a new full tensor on its device, and
    `_distribute_tensors` keeps its shard. Measured on rank 1 of the fake group, whose receive
    buffer is a real allocation even on CPU."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(0)
    import torch.distributed._state_dict_utils as sdu
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**P.LLAMA_TINY)).float()
    # Rank 0 broadcasts the state dict's keys, sizes and dtypes first (`broadcast_object_list`);
    # the fake group delivers nothing, so rank 1 is handed what rank 0 would send.
    info = {k: sdu._TensorInfo(v.size(), v.dtype) for k, v in model.state_dict().items()}
    sdu.dist.broadcast_object_list = lambda objects, src=0, group=None, device=None: objects.__setitem__(0, dict(info))
    psi = sum(p.numel() for p in model.parameters())
    largest = max(p.numel() for p in model.parameters())
    mesh = init_device_mesh("cpu", (WORLD,))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    model.to_empty(device=CPU)
    tr = MemTracker()
    tr.track_external(model)
    with tr:
        start = live(tr)
        set_model_state_dict(model, {}, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
        end = live(tr)
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    out = {"name": f"llama-tiny-fsdp2-tensor-x{WORLD}-rank1", "world": WORLD, "param_count": int(psi),
           "largest_tensor": int(largest), "weight_bytes": 4,
           "scenario": {"model": {"hf_config": P.LLAMA_TINY}, "training": {"precision": "fp32"},
                        "parallel": {"dp": WORLD, "zero": "fsdp", "fsdp_version": 2, "fsdp_load": "tensor"}},
           "measured": {"start_bytes": start, "peak_bytes": peak, "end_bytes": end, "extra_bytes": peak - start}}
    print(out["name"], out["measured"], "largest*4", largest * 4, flush=True)
    return out


def nf4_case():
    import bitsandbytes as bnb
    torch.manual_seed(0)
    w = torch.randn(P.LLAMA_TINY["intermediate_size"], P.LLAMA_TINY["hidden_size"], dtype=torch.bfloat16)
    tr = MemTracker()
    with tr:
        p = bnb.nn.Params4bit(w.clone(), requires_grad=False, quant_type="nf4", compress_statistics=True,
                              quant_storage=torch.uint8)
        q = p._quantize(CPU)
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    packed = q.data.numel() * q.data.element_size()
    out = {"name": "llama-tiny-mlp-weight-nf4-at-load", "shape": list(w.shape), "bnb": bnb.__version__,
           "measured": {"peak_bytes": peak, "bf16_bytes": w.numel() * 2, "packed_bytes": int(packed)}}
    print(out["name"], out["measured"], flush=True)
    return out


def main():
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD)
    cases = [fsdp1_case(True), fsdp1_case(False)]
    nf4 = [nf4_case()]
    fsdp2 = [fsdp2_unit_case()]
    dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=1, world_size=WORLD)
    fsdp2.append(fsdp2_tensor_case())
    out = {"generator": "tests/measure/load.py", "torch": torch.__version__, "transformers": transformers.__version__,
           "tool": "torch.distributed._tools.mem_tracker.MemTracker (live untyped-storage bytes)",
           "fsdp1_cases": cases, "nf4_cases": nf4, "fsdp2_cases": fsdp2}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
