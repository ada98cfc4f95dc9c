#!/usr/bin/env python3
"""Peak live-tensor bytes of FSDP2 (`fully_shard`) training steps on one rank of a fake multi-rank group.

torch 2.15's FSDP2 runs here for real, on CPU tensors: `dist.init_process_group("fake", store=FakeStore(),
rank=0, world_size=W)` (torch.testing._internal.distributed.fake_pg: every collective returns at once without
touching data) and `init_device_mesh("cpu", (W,))`. FSDP2 allocates all its own buffers exactly as on a GPU
(the sharded parameters, the all-gather outputs, the unsharded parameters, the unsharded gradients, the
reduce-scatter inputs and outputs); only the bytes the collectives would write are not written. So the
memory of rank 0 of a W-rank job is measured, with rank 0's values being garbage (the losses are not used).

Model: transformers LlamaForCausalLM from an explicit config (llama-tiny = peaks.py's LLAMA_TINY; "blocky" = a
config whose blocks outweigh its logits), dropout 0, seed 0. Wrapping as torch's FSDP2 examples and HF
accelerate's transformer-based wrap policy do: `fully_shard(layer)` for every decoder layer, then
`fully_shard(model)` (the root unit: embeddings, final norm, lm_head) with `reshard_after_forward` left at its
default for the root (torch: None -> False for the root, `_fsdp_state.py` `_lazy_init`).
Mixed precision: `MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)` (torchtitan's defaults,
`mixed_precision_param = "bfloat16"`, `mixed_precision_reduce = "float32"`): fp32 sharded parameters, bf16
all-gathers, fp32 reduce-scatter; no autocast.
Optimizer: torch.optim.AdamW(foreach=True) (CUDA's default) over the sharded DTensor parameters.

Two full steps (zero_grad(set_to_none=True); per micro-batch loss = model(**batch).loss / ga; loss.backward();
optimizer.step()); the SECOND is measured with torch.distributed._tools.fsdp2_mem_tracker.FSDPMemTracker
(MemTracker with FSDP's categories: sharded/unsharded parameters and gradients, all-gather and reduce-scatter
buffers), subclassed to record the peak of each phase (forward, backward, optimizer) with its categories and the
aten op. Cross-check: the c10 CPU allocator's [memory] events from torch.profiler(profile_memory=True), summed in
time order (peak above the level at the start of step 2).

Full state dict on save (`save_cases`): the same llama-tiny, sharded on a fake 4-rank group, then one
`state_dict` gathered on the GPU side (offload to CPU off) under MemTracker: FSDP2 through DCP
`get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=False))`, and FSDP1
`FullyShardedDataParallel(auto_wrap_policy=ModuleWrapPolicy({LlamaDecoderLayer}), device_id=cpu,
mixed_precision=MixedPrecision(param_dtype=bf16))` under `FSDP.state_dict_type(model, FULL_STATE_DICT,
FullStateDictConfig(offload_to_cpu=False, rank0_only=True))` (rank 0 keeps the dict). `extra_bytes` = the
tracker's peak less the sharded parameters it started with.

Output: tests/fixtures/measured/fsdp.json
Run: /work/venv/bin/python tests/measure/fsdp.py [case-name-substring ...]
"""
import copy, gc, json, os, sys, time, warnings
import torch
import torch.distributed as dist
import transformers
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker
from torch.profiler import profile, ProfilerActivity, record_function
from torch.testing._internal.distributed.fake_pg import FakeStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peaks as P  # noqa: E402  LLAMA_TINY, allocator_trace

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
ROOT = P.ROOT
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "fsdp.json")
CPU = torch.device("cpu")

LLAMA_TINY = P.LLAMA_TINY
# Blocks outweigh the logits: h1024, ffn 4096, vocab 2048, 4 layers.
BLOCKY = dict(LLAMA_TINY, hidden_size=1024, intermediate_size=4096, num_attention_heads=16, num_key_value_heads=4,
              head_dim=64, vocab_size=2048)


def C(name, cfg, b, s, world, reshard=True, mp=True, attention="eager", ckpt="none", ga=1, notes=""):
    return dict(name=name, cfg=cfg, b=b, s=s, world=world, reshard=reshard, mp=mp, attention=attention, ckpt=ckpt,
                ga=ga, notes=notes)


CASES = [
    C("llama-tiny-fsdp4-bf16mp-reshard", LLAMA_TINY, 2, 256, 4),
    C("llama-tiny-fsdp4-bf16mp-noreshard", LLAMA_TINY, 2, 256, 4, reshard=False),
    C("blocky-fsdp4-bf16mp-reshard", BLOCKY, 1, 64, 4, attention="sdpa"),
    C("blocky-fsdp4-bf16mp-noreshard", BLOCKY, 1, 64, 4, reshard=False, attention="sdpa"),
    C("blocky-fsdp2-bf16mp-reshard", BLOCKY, 1, 64, 2, attention="sdpa"),
    C("blocky-fsdp4-fp32-reshard", BLOCKY, 1, 64, 4, mp=False, attention="sdpa"),
    C("blocky-fsdp4-bf16mp-reshard-ckpt", BLOCKY, 1, 256, 4, attention="sdpa", ckpt="full"),
    C("blocky-fsdp4-bf16mp-reshard-ga2", BLOCKY, 1, 64, 4, attention="sdpa", ga=2),
    C("llama-tiny-fsdp8-bf16mp-reshard-eager", LLAMA_TINY, 1, 512, 8),
]


def catname(k):
    return getattr(k, "value", str(k))


class PhaseFSDPMemTracker(FSDPMemTracker):
    def __init__(self, mod, optm):
        super().__init__(mod, optm)
        self.phase = "zero_grad"
        self.micro_batch = None
        self._cur_func = None
        self.phase_peaks = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self._cur_func = func
        return super().__torch_dispatch__(func, types, args, kwargs)

    def snapshot(self):
        dev = self._curr_mem_snap.get(CPU, {})
        out = {catname(k): int(v) for k, v in dev.items()}
        return out

    def _update_peak_stats(self, peak_state):
        super()._update_peak_stats(peak_state)
        cur = self._curr_mem_snap.get(CPU, {}).get("Total", 0)
        if cur > self.phase_peaks.get(self.phase, {}).get("Total", -1):
            snap = self.snapshot()
            snap["op"] = str(self._cur_func)
            snap["micro_batch"] = self.micro_batch
            self.phase_peaks[self.phase] = snap


def make_model(case):
    d = dict(case["cfg"])
    mt = d.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **d)
    config._attn_implementation = case["attention"]
    model = transformers.LlamaForCausalLM(config)
    model.set_attn_implementation(case["attention"])
    if case["ckpt"] == "full":
        model.gradient_checkpointing_enable()
    return model


def shard(model, case, mesh):
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if case["mp"] \
        else MixedPrecisionPolicy()
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh, mp_policy=mp, reshard_after_forward=case["reshard"])
    fully_shard(model, mesh=mesh, mp_policy=mp)
    return model


def step(model, opt, batches, tracker=None, marks=None):
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
                tracker.reset_mod_stats()  # FSDPMemTracker refuses a 2nd root forward otherwise
        mark("forward")
        with record_function("phase:forward"):
            loss = model(**mb, use_cache=False).loss
            if len(batches) > 1:
                loss = loss / len(batches)
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


def local_bytes(tensors):
    out = []
    for t in tensors:
        out.append(t.to_local() if hasattr(t, "to_local") else t)
    return P.unique_bytes(out)


def run_case(case):
    world = case["world"]
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = shard(make_model(case), case, mesh)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    cfg = case["cfg"]
    batches = []
    for _ in range(case["ga"]):
        ids = torch.randint(0, cfg["vocab_size"], (case["b"], case["s"]))
        batches.append({"input_ids": ids, "labels": ids.clone()})
    t0 = time.time()
    step(model, opt, batches)  # step 1: optimizer state, lazy init
    opt.zero_grad(set_to_none=True)
    gc.collect()

    params = list(model.parameters())
    sharded_param_bytes = local_bytes(params)
    state = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    opt_bytes = local_bytes(state)
    step_bytes = local_bytes([v for st in opt.state.values() for k, v in st.items() if k == "step"])
    input_bytes = P.unique_bytes([t for mb in batches for t in mb.values()])
    buffer_bytes = P.unique_bytes(list(model.buffers()))

    tr = PhaseFSDPMemTracker(model, opt)
    tr.track_inputs(tuple(t for mb in batches for t in mb.values()))
    marks = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with tr:
            step(model, opt, batches, tracker=tr, marks=marks)
    alloc = P.allocator_trace(prof, marks)
    grad_bytes = local_bytes([p.grad for p in params if p.grad is not None])
    phases = tr.phase_peaks
    start = phases.get("zero_grad", {}).get("Total", 0)
    peak_phase = max((k for k in ("forward", "backward", "optimizer") if k in phases),
                     key=lambda k: phases[k]["Total"])
    peak = phases[peak_phase]["Total"]
    scenario = {
        "model": {"hf_config": cfg},
        "training": {"micro_batch": case["b"], "seq_len": case["s"], "grad_accum": case["ga"],
                     "precision": "bf16-mixed" if case["mp"] else "fp32", "optimizer": "adamw",
                     "checkpointing": case["ckpt"], "attention": case["attention"], "dropout": 0.0, "mode": "train"},
        "parallel": {"dp": world, "zero": "fsdp", "fsdp_reshard_after_forward": case["reshard"]},
        "device": {"preset": "h100-sxm-80gb"},
    }
    result = {
        "name": case["name"],
        "hf_class": "LlamaForCausalLM",
        "scenario": scenario,
        "backend": (f"FSDP2 fully_shard on a fake {world}-rank group (rank 0 measured), cpu tensors, attention "
                    f"{case['attention']}, "
                    + ("MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)" if case["mp"] else "no mixed precision (fp32)")
                    + f", reshard_after_forward={case['reshard']} for the layers (root: default), "
                      "torch.optim.AdamW(lr=1e-4, foreach=True)"),
        "measured": {
            "peak_bytes": int(peak),
            "peak_phase": peak_phase,
            "start_of_step_bytes": int(start),
            "sharded_param_bytes": int(sharded_param_bytes),
            "sharded_grad_bytes": int(grad_bytes),
            "optimizer_state_bytes": int(opt_bytes),
        },
        "detail": {
            "peak_by_phase": phases,
            "buffer_bytes": int(buffer_bytes),
            "input_bytes": int(input_bytes),
            "optimizer_step_scalar_bytes": int(step_bytes),
            "crosscheck": {"tracker_peak_above_start": int(peak - start), **alloc},
        },
        "notes": case["notes"],
    }
    print(f"{case['name']:44s} peak={peak:>12,d} ({peak_phase}) start={start:>12,d} "
          f"tracker_delta={peak - start:>12,d} alloc_delta={alloc['allocator_peak_above_baseline']:>12,d} "
          f"{time.time() - t0:.1f}s", flush=True)
    for k in ("forward", "backward", "optimizer"):
        if k in phases:
            print("  ", k, {a: b for a, b in phases[k].items() if b}, flush=True)
    return result


def run_save(kind, world=4):
    from torch.distributed._tools.mem_tracker import MemTracker
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    torch.manual_seed(0)
    case = dict(cfg=LLAMA_TINY, attention="eager", ckpt="none", mp=True, reshard=True)
    model = make_model(case)
    psi = sum(p.numel() for p in model.parameters())
    block = sum(p.numel() for p in model.model.layers[0].parameters())
    if kind == "fsdp2":
        from torch.distributed.checkpoint.state_dict import get_model_state_dict, StateDictOptions
        shard(model, case, init_device_mesh("cpu", (world,)))
        save = lambda: get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=False))
        how = ("FSDP2 fully_shard (blocks, root), MixedPrecisionPolicy(bf16, fp32); DCP get_model_state_dict("
               "full_state_dict=True, cpu_offload=False)")
    else:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType, FullStateDictConfig, \
            MixedPrecision
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer
        model = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({LlamaDecoderLayer}), device_id=CPU,
                     mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))

        def save():
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                                      FullStateDictConfig(offload_to_cpu=False, rank0_only=True)):
                return model.state_dict()
        how = ("FSDP1 FullyShardedDataParallel(ModuleWrapPolicy({LlamaDecoderLayer}), MixedPrecision(bf16, fp32)); "
               "FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=False, rank0_only=True)")
    sharded = local_bytes(list(model.parameters()))
    tr = MemTracker()
    tr.track_external(model)
    with tr:
        sd = save()
    peak = int(tr.get_tracker_snapshot("peak")[CPU]["Total"])
    dict_bytes = P.unique_bytes([v for v in sd.values() if isinstance(v, torch.Tensor)])
    out = {"name": f"llama-tiny-{kind}-x{world}-full-state-dict", "how": how, "world": world,
           "param_count": int(psi), "block_param_count": int(block),
           "scenario": {"model": {"hf_config": LLAMA_TINY}, "training": {"precision": "bf16-mixed", "seq_len": 256},
                        "parallel": {"dp": world, "zero": "fsdp", "full_state_dict_on_save": True}},
           "measured": {"peak_bytes": peak, "sharded_param_bytes": int(sharded),
                        "extra_bytes": peak - int(sharded), "state_dict_bytes": int(dict_bytes)}}
    print(f"{out['name']:44s} extra={peak - sharded:>12,d} dict={dict_bytes:>12,d} psi*4={psi * 4:>12,d} "
          f"block*4={block * 4:,d}", flush=True)
    return out


def main():
    sel = sys.argv[1:]
    results = []
    for case in CASES:
        if sel and not any(x in case["name"] for x in sel):
            continue
        results.append(run_case(case))
        gc.collect()
    saves = [run_save(kind) for kind in ("fsdp2", "fsdp1") if not sel or any(x in "save" for x in sel)]
    out = {"generator": "tests/measure/fsdp.py", "torch": torch.__version__, "transformers": transformers.__version__,
           "tool": "torch.distributed._tools.fsdp2_mem_tracker.FSDPMemTracker (live untyped-storage bytes with FSDP "
                   "categories; peak per phase over step 2), cross-checked against the c10 CPU allocator's [memory] "
                   "events from torch.profiler(profile_memory=True)",
           "cases": results, "save_cases": saves}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
