#!/usr/bin/env python3
"""What torch.compile (Inductor, per-block as torchtune/torchtitan compile) leaves saved for
backward, against eager PyTorch, on tiny real models on the CPU.

Cases: Llama (GQA, SwiGLU, RMSNorm), Qwen3 (+ per-head q/k RMSNorm, tied head) and GPT-2 (fused
c_attn, LayerNorm, op-by-op gelu_new, tied head); fp32, pure bf16 (weights made in bf16) and
bf16 autocast (fp32 weights, forward under torch.autocast("cpu", torch.bfloat16): CPU autocast op
lists, not CUDA's); the loss as transformers' ForCausalLMLoss (logits.float() then cross_entropy) or torchtune's CEWithChunkedOutputLoss (8
chunks, a copy of torchtune 0.6.1 modules/loss/ce_chunked_output_loss.py; torchtune is not
installed here). b=2, s=256, dropout 0, attention "sdpa" (CPU runs
aten._scaled_dot_product_flash_attention_for_cpu, grouped K/V passed as they are: enable_gqa).

Compiled variant (torchtune training/_compile.py `compile_model`: `m.compile(backend=...)` on every
decoder layer; torchtitan `apply_compile`: each transformer block): every decoder layer gets
`layer.compile(backend="inductor")` and the loss function is `torch.compile`d (torchtune
`compile_loss` compiles `CEWithChunkedOutputLoss.compute_cross_entropy` in place; torchtitan
compiles the loss). Embeddings, the final norm and the output projection stay eager, as there.
Inductor's default partitioner (min_cut_rematerialization_partition) with torch's default
functorch config (activation_memory_budget = 1.0); the AOTAutograd cache is off so that the
partitioner runs and its choice is recorded.

Measured per case, on the second step (the first compiles):
  * saved_bytes: the storages saved for backward, found by walking the autograd graph from the
    loss after forward: every C++ node's `_saved_*` tensors and every Python node's
    `saved_tensors` (AOTAutograd's CompiledFunctionBackward keeps the partitioner's saved values
    in its ctx), each storage once, parameters and buffers excluded. For eager runs the same
    total is also taken with saved_tensors_hooks (common.SavedTensorRecorder) and must agree.
  * param_copy_bytes: autocast's bf16 copies of weights among the saved storages (eager: storages
    made by _to_copy of a parameter, common.ParamCastTracker; compiled: saved fx nodes that are casts
    of a graph input of a parameter's shape; the eager output projection's saved `mat2`). Not in
    saved_bytes, as in activations.json (Headroom counts them as "autocast weight copies").
  * allocator_live_after_forward: the c10 CPU allocator's [memory] events during the forward
    (torch.profiler, profile_memory=True), summed: bytes made in forward still alive when it
    ends. Inductor's kernels allocate through empty_strided_cpu, which a TorchDispatchMode
    (MemTracker) does not see; the allocator does. It equals saved_bytes + param_copy_bytes
    - the input ids (made before the forward) + the loss scalar. forward_allocator_peak: the
    highest running sum during the forward; backward_allocator_peak_above_start: the same over
    loss.backward(), from the end of forward (loss gradients, then the blocks' gradients).
  * parts: saved bytes grouped by part (norms, attention projections, attention core, MLP, loss,
    inputs), from the module that saved each tensor (eager: module stack at pack time; compiled:
    the partitioner's saved fx nodes, with their nn_module_stack, op and source line, in
    `partition`).

Output: tests/fixtures/measured/compile.json. Run: /work/venv/bin/python tests/measure/compile.py
[name-substring ...] (about 10 min on 2 cores; with arguments only those cases are written).
"""
import copy, functools, gc, json, os, re, sys, time, warnings

import torch
import torch.nn.functional as F
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import contextlib  # noqa: E402
from common import SavedTensorRecorder, ModuleStack, ParamCastTracker, sref  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "compile.json")

import torch._inductor.config as inductor_config  # noqa: E402
import torch._functorch.config as functorch_config  # noqa: E402
import torch._inductor.compile_fx as compile_fx  # noqa: E402

functorch_config.enable_autograd_cache = False   # the partitioner must run to be recorded
torch._dynamo.config.cache_size_limit = 64

# ---------------------------------------------------------------- configs (as activations*.py)
LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512,
         "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
         "intermediate_size": 1792, "vocab_size": 32000, "max_position_embeddings": 4096,
         "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
         "attention_dropout": 0.0, "tie_word_embeddings": False, "rope_theta": 500000.0}
QWEN3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "hidden_size": 768, "num_hidden_layers": 4,
         "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 2304,
         "vocab_size": 151936, "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "hidden_act": "silu",
         "attention_bias": False, "attention_dropout": 0.0, "rope_theta": 1000000.0, "tie_word_embeddings": True,
         "use_sliding_window": False, "sliding_window": None, "max_window_layers": 4}
GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "activation_function": "gelu_new",
        "n_embd": 768, "n_layer": 4, "n_head": 12, "n_inner": None, "n_positions": 1024, "n_ctx": 1024,
        "vocab_size": 50257, "layer_norm_epsilon": 1e-5, "attn_pdrop": 0.0, "embd_pdrop": 0.0,
        "resid_pdrop": 0.0, "summary_first_dropout": 0.0, "tie_word_embeddings": True,
        "bos_token_id": 50256, "eos_token_id": 50256}
CLASS = {"llama": "LlamaForCausalLM", "qwen3": "Qwen3ForCausalLM", "gpt2": "GPT2LMHeadModel"}
B, S, CHUNKS, IGNORE = 2, 256, 8, -100


def K(model, cfg, precision, loss, mode):
    return dict(name=f"{model}-{precision}-{loss}-{mode}", model=model, cfg=cfg, precision=precision, loss=loss,
                mode=mode)


CASES = []
for _m, _c in (("llama", LLAMA), ("qwen3", QWEN3), ("gpt2", GPT2)):
    for _p in ("fp32", "bf16", "bf16-mixed"):
        for _mode in ("eager", "compiled"):
            CASES.append(K(_m, _c, _p, "standard", _mode))
for _p in ("fp32", "bf16"):
    for _mode in ("eager", "compiled"):
        CASES.append(K("llama", LLAMA, _p, "chunked", _mode))


# ---------------------------------------------------------------- losses
def causal_lm_loss(logits, labels, vocab_size):
    """transformers 5.24 ForCausalLMLoss (loss/loss_utils.py), called as the model calls it."""
    return transformers.loss.loss_utils.ForCausalLMLoss(logits, labels, vocab_size)


def compute_cross_entropy(logits, labels):
    """torchtune 0.6.1 CEWithChunkedOutputLoss.compute_cross_entropy (ce_chunked_output_loss.py)."""
    return F.cross_entropy(logits.float(), labels, ignore_index=IGNORE, reduction="sum")


def chunked_ce(cross_entropy, logits, labels):
    """torchtune 0.6.1 CEWithChunkedOutputLoss.forward, with its compute_cross_entropy passed in."""
    total_elements = (labels != IGNORE).sum()
    labels = [t.reshape(-1) for t in labels.chunk(CHUNKS, dim=1)]
    logits = [c.reshape(-1, c.size(-1)) for c in logits]
    total_loss = 0.0
    for logits_chunk, labels_chunk in zip(logits, labels):
        total_loss += cross_entropy(logits_chunk, labels_chunk)
    return total_loss / total_elements


# ---------------------------------------------------------------- partitioner record
PARTITIONS = []   # one list of saved-value descriptions per compiled graph (forward/backward pair)
_orig_partition = compile_fx.min_cut_rematerialization_partition


def _module_of(node):
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return None
    path = list(stack.values())[-1][0]
    path = re.sub(r"^L\['self'\]\.?|^L__self___?", "", path)
    path = re.sub(r"^L\['fn'\]\.?", "", path)
    return path or "<layer>"


def _source_line(node):
    """The innermost frame of the node's stack trace: 'file.py:line: code'."""
    tr = node.meta.get("stack_trace") or ""
    lines = [ln.strip() for ln in tr.strip().splitlines() if ln.strip() and not set(ln.strip()) <= set("^~")]
    for i in range(len(lines) - 1, -1, -1):
        m = re.match(r'File "([^"]+)", line (\d+)', lines[i])
        if m:
            code = lines[i + 1] if i + 1 < len(lines) else ""
            return f"{os.path.basename(m.group(1))}:{m.group(2)}: {code}"
    return None


def _fx_nbytes(val):
    if not isinstance(val, torch.Tensor):
        return 0
    try:
        return int(val.untyped_storage().nbytes())
    except Exception:
        return int(val.numel() * val.element_size())


def _chain(node):
    while node.op == "call_function" and node.args and isinstance(node.args[0], torch.fx.Node):
        yield node
        node = node.args[0]


def recording_partition(joint_module, joint_inputs, **kwargs):
    fw, bw = _orig_partition(joint_module, joint_inputs, **kwargs)
    n_out = kwargs["num_fwd_outputs"]
    out_node = next(n for n in fw.graph.nodes if n.op == "output")
    saved = list(out_node.args[0])[n_out:]
    rows = []
    for node in saved:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        src = node
        while src.op == "call_function" and src.args and isinstance(src.args[0], torch.fx.Node) and \
                str(src.target) in ("aten.permute.default", "aten.t.default", "aten.view.default",
                                    "prims.convert_element_type.default", "aten._to_copy.default"):
            src = src.args[0]
        cast_of_input = src is not node and src.op == "placeholder" and any(
            str(n.target) in ("prims.convert_element_type.default", "aten._to_copy.default")
            for n in _chain(node))
        rows.append({"node": node.name, "op": "placeholder" if node.op == "placeholder" else str(node.target),
                     "cast_of_graph_input": list(src.meta["val"].shape) if cast_of_input else None,
                     "shape": list(val.shape), "dtype": str(val.dtype).replace("torch.", ""),
                     "nbytes": _fx_nbytes(val), "module": _module_of(node), "source": _source_line(node)})
    PARTITIONS.append(rows)
    return fw, bw


compile_fx.min_cut_rematerialization_partition = recording_partition


# ---------------------------------------------------------------- saved tensors by graph walk
def graph_saved(root):
    """Every tensor saved by the autograd graph reachable from root: (tensor, node name, field)."""
    out, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "CompiledFunctionBackward" or hasattr(node, "_forward_cls"):
            for i, t in enumerate(node.saved_tensors):
                if isinstance(t, torch.Tensor):
                    out.append((t, node, f"saved_tensors[{i}]"))
        else:
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
                        out.append((v, node, attr[7:]))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return out


def allocator_peak(prof):
    """Highest running sum of the allocator's [memory] events: the peak above the start."""
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"
           and str(e.device_type()).endswith("CPU")]
    evs.sort(key=lambda e: e.start_ns())
    run = peak = 0
    for e in evs:
        run += e.nbytes()
        peak = max(peak, run)
    return int(peak)


def allocator_live(prof):
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"
           and str(e.device_type()).endswith("CPU")]
    return int(sum(e.nbytes() for e in evs))


# ---------------------------------------------------------------- parts
def part_of(module, model_type, op=None, source=None):
    """A Headroom-style part name for the module (path inside the model or the layer) that saved a tensor."""
    m = module or ""
    m = re.sub(r"^(model|transformer)\.", "", m)
    m = re.sub(r"^(layers|h)\.\d+\.?", "", m)
    if m.startswith("<loss>"):
        return "loss"
    if m in ("embed_tokens", "wte", "wpe"):
        return "input ids"
    if m in ("rotary_emb",):
        return "rotary cos/sin"
    if m in ("norm", "ln_f"):
        return "final norm"
    if m == "lm_head":
        return "LM head input"
    if m in ("input_layernorm", "ln_1"):
        return "attention norm"
    if m in ("post_attention_layernorm", "ln_2"):
        return "MLP norm"
    if m.endswith("q_norm") or m.endswith("k_norm"):
        return "q/k norms"
    if m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "attn.c_attn"):
        return "q/k/v projections"
    if m in ("self_attn.o_proj", "attn.c_proj"):
        return "attention output projection"
    if m.startswith("self_attn") or m.startswith("attn"):
        return "attention core"
    if m.startswith("mlp"):
        return "MLP"
    return m or "<layer>"


def grouped(tensors):
    """The saved tensors with identical ones of different layers merged ("count"), layer indices
    written as N."""
    out, index = [], {}
    for e in tensors:
        e = dict(e)
        if e.get("module"):
            e["module"] = re.sub(r"\.(\d+)\.", ".N.", e["module"])
        key = json.dumps(e, sort_keys=True)
        if key in index:
            out[index[key]]["count"] += 1
        else:
            index[key] = len(out)
            e["count"] = 1
            out.append(e)
    return out


# ---------------------------------------------------------------- one case
def build(case):
    cfg = copy.deepcopy(case["cfg"])
    d = dict(cfg)
    mt = d.pop("model_type")
    config = transformers.AutoConfig.for_model(mt, **d)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    prev = torch.get_default_dtype()
    if case["precision"] == "bf16":
        torch.set_default_dtype(torch.bfloat16)
    try:
        model = getattr(transformers, CLASS[mt])(config)
    finally:
        torch.set_default_dtype(prev)
    model.set_attn_implementation("sdpa")
    model.train()
    return cfg, model


def run_case(case):
    PARTITIONS.clear()
    torch._dynamo.reset()
    cfg, model = build(case)
    mt = cfg["model_type"]
    compiled = case["mode"] == "compiled"
    body = model.transformer if mt == "gpt2" else model.model
    layers = body.h if mt == "gpt2" else body.layers
    if compiled:
        for layer in layers:
            layer.compile(backend="inductor")
    ce = torch.compile(compute_cross_entropy, backend="inductor") if compiled else compute_cross_entropy
    std_loss = torch.compile(causal_lm_loss, backend="inductor") if compiled else causal_lm_loss
    V = cfg["vocab_size"]
    torch.manual_seed(1)
    ids = torch.randint(0, V, (B, S))
    shifted = torch.hstack((ids[..., 1:], torch.full((B, 1), IGNORE, dtype=torch.long)))

    mixed = case["precision"] == "bf16-mixed"

    def forward():
        with (torch.autocast("cpu", dtype=torch.bfloat16) if mixed else contextlib.nullcontext()):
            return _forward()

    def _forward():
        h = body(input_ids=ids, use_cache=False).last_hidden_state
        if case["loss"] == "chunked":
            logits = [model.lm_head(c) for c in h.chunk(CHUNKS, dim=1)]
            return chunked_ce(ce, logits, shifted)
        return std_loss(model.lm_head(h), ids, V)

    # step 1: compiles forward and backward
    t0 = time.time()
    loss = forward()
    loss.backward()
    model.zero_grad(set_to_none=True)
    del loss
    gc.collect()
    compile_s = time.time() - t0

    # step 2: measured
    rec = ms = tracker = None
    if not compiled:
        ms = ModuleStack(model)
        rec = SavedTensorRecorder(model, ms)
        tracker = ParamCastTracker(rec.param_refs)
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        if rec is not None:
            with rec.hooks(), tracker:
                loss = forward()
        else:
            loss = forward()
    if ms is not None:
        ms.remove()
    live = allocator_live(prof)
    forward_peak = allocator_peak(prof)
    params = {sref(p) for p in model.parameters()} | {sref(b) for b in model.buffers()}
    saved = graph_saved(loss.grad_fn)

    # per storage, the first saver
    storages = {}
    for t, node, field in saved:
        r = sref(t)
        if r in params or r in storages:
            continue
        if t.dim() == 0 and t.dtype == torch.float64:
            # a Python number wrapped by the op (GPT-2's gelu_new: 0.5 * x): saved as it is, never through
            # saved_tensors_hooks, a host scalar on a GPU (8 B each); left out as the other fixtures do
            continue
        storages[r] = {"t": t, "node": node, "field": field}
    pshapes = {tuple(p.shape) for p in model.parameters()} | {tuple(p.shape[::-1]) for p in model.parameters()}

    n_storages = len(storages)
    # parts
    parts, tensors = {}, []
    if rec is not None:
        for r, e in rec.entries.items():
            mod = e["module"] or ""
            if mod == "<top>" or mod == "":
                mod = "<loss>"
            p = "autocast weight copies" if r in tracker.cast_refs else part_of(mod, mt)
            parts[p] = parts.get(p, 0) + e["nbytes"]
            tensors.append({"part": p, "module": e["module"], "grad_fn": e["grad_fn"], "shape": e["shape"],
                            "dtype": e["dtype"], "nbytes": e["nbytes"]})
    else:
        # compiled: saved tensors of CompiledFunctionBackward nodes matched in order with the partition
        # records (same shapes and dtypes); tensors of eager nodes by node name.
        used = set()
        for r, v in storages.items():
            t, node, field = v["t"], v["node"], v["field"]
            nb = int(t.untyped_storage().nbytes())
            desc = None
            if field.startswith("saved_tensors["):
                i = int(field[len("saved_tensors["):-1])
                sig = [(list(x.shape), str(x.dtype).replace("torch.", "")) for x in node.saved_tensors
                       if isinstance(x, torch.Tensor)]
                for pi, rows in enumerate(PARTITIONS):
                    if [(rw["shape"], rw["dtype"]) for rw in rows] == sig:
                        desc = dict(rows[i])
                        desc["graph"] = pi
                        break
                if desc is None:
                    p = "<unmatched compiled>"
                elif not any(rw["module"] for rw in PARTITIONS[desc["graph"]]):
                    p = "loss"   # the compiled loss graph has no module stack
                elif desc["module"] is None and desc["op"] == "placeholder":
                    p = "compiled graph input"   # the layer input, or cos/sin
                else:
                    p = part_of(desc["module"], mt, desc["op"], desc["source"])
            else:
                p = "eager:" + node.name()
            if desc is not None and desc.get("cast_of_graph_input") and tuple(desc["cast_of_graph_input"]) in pshapes:
                p = "autocast weight copies"
            entry = {"part": p, "saver": f"{node.name()}.{field}", "shape": list(t.shape),
                     "dtype": str(t.dtype).replace("torch.", ""), "nbytes": nb}
            if desc is not None:
                entry["fx"] = {k: desc[k] for k in ("node", "op", "module", "source", "graph")}
            tensors.append(entry)
        # name graph inputs by what they are
        for e in tensors:
            if e["part"] == "compiled graph input":
                shp = e["shape"]
                if len(shp) == 3 and shp[:2] == [B, S] and shp[2] == (cfg.get("hidden_size") or cfg.get("n_embd")):
                    e["part"] = "block input (compiled graph input)"
                elif len(shp) == 3 and shp[0] == 1 and shp[1] == S:
                    e["part"] = "rotary cos/sin"
                elif shp and shp[-1] == V:
                    e["part"] = "loss"
                elif e["dtype"] == "int64":
                    e["part"] = "loss"
            elif e["part"].startswith("eager:"):
                n = e["part"][6:]
                if mixed and e["dtype"] == "bfloat16" and e["saver"].endswith(".mat2") and tuple(e["shape"]) in pshapes:
                    # the eager output projection's autocast copy of its weight (mm's mat2, a parameter's shape)
                    e["part"] = "autocast weight copies"
                elif n.startswith("Embedding"):
                    e["part"] = "input ids"
                elif "Mm" in n or "Addmm" in n:
                    e["part"] = "LM head input"
                elif "LayerNorm" in n or "Rsqrt" in n or "Pow" in n or "Mul" in n or "Mean" in n:
                    e["part"] = "final norm"
        for e in tensors:
            parts[e["part"]] = parts.get(e["part"], 0) + e["nbytes"]
    copies = parts.get("autocast weight copies", 0)
    total = sum(int(v["t"].untyped_storage().nbytes()) for v in storages.values()) - copies

    if rec is not None:
        hook_total = sum(e["nbytes"] for e in rec.entries.values()) - copies
        extra = [(v["node"].name(), v["field"], list(v["t"].shape), str(v["t"].dtype), v["t"].untyped_storage().nbytes())
                 for r, v in storages.items() if r not in rec.entries]
        missing = [(e["grad_fn"], e["shape"], e["dtype"], e["nbytes"]) for r, e in rec.entries.items() if r not in storages]
        if hook_total != total:
            print("   hooks vs graph walk:", hook_total, total, "only in the walk:", extra[:8], "only in hooks:", missing[:8])
    loss_value = float(loss.detach())
    del saved, storages
    for e in tensors:
        e.pop("t", None)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof_b:
        loss.backward()
    backward_peak = allocator_peak(prof_b)
    grad_norm = float(torch.sqrt(sum((p.grad.float() ** 2).sum() for p in model.parameters() if p.grad is not None)))

    scenario = {
        "model": {"hf_config": dict(cfg, use_cache=False)},
        "training": {"micro_batch": B, "seq_len": S, "precision": case["precision"], "optimizer": "adamw",
                     "checkpointing": "none", "attention": "sdpa", "dropout": 0.0, "mode": "train",
                     "techniques": {"loss": case["loss"], "loss_chunks": CHUNKS, "compile": compiled}},
        "parallel": {}, "device": {"preset": "h100-sxm-80gb"},
    }
    result = {
        "name": case["name"], "hf_class": CLASS[mt], "mode": case["mode"], "precision": case["precision"],
        "loss": case["loss"], "scenario": scenario,
        "measured": {"saved_bytes": total, "param_copy_bytes": copies, "saved_storage_count": n_storages,
                     "allocator_live_after_forward": live, "forward_allocator_peak": forward_peak,
                     "backward_allocator_peak_above_start": backward_peak,
                     "parts": dict(sorted(parts.items()))},
        "loss_value": loss_value, "grad_norm": grad_norm, "step1_seconds": round(compile_s, 1),
        "tensors": grouped(tensors),
    }
    if compiled:
        result["partition"] = [list(rows) for rows in PARTITIONS]
    print(f"{case['name']:36s} saved={total:>12,d} copies={copies:>10,d} live={live:>12,d} n={n_storages:3d} "
          f"bw_peak={backward_peak:>12,d} loss={loss_value:.5f} |g|={grad_norm:.4f} step1={compile_s:.0f}s", flush=True)
    for k, v in sorted(parts.items()):
        print(f"    {k:40s} {v:>12,d}")
    return result


def main():
    sel = sys.argv[1:]
    results = []
    for case in CASES:
        if sel and not any(x in case["name"] for x in sel):
            continue
        results.append(run_case(case))
        gc.collect()
    by = {r["name"]: r for r in results}
    for r in results:
        if r["mode"] == "compiled":
            e = by.get(r["name"].replace("-compiled", "-eager"))
            if e:
                r["eager_saved_bytes"] = e["measured"]["saved_bytes"]
                r["removed_by_compile"] = {p: e["measured"]["parts"].get(p, 0) - r["measured"]["parts"].get(p, 0)
                                           for p in sorted(set(e["measured"]["parts"]) | set(r["measured"]["parts"]))}
    out = {"generator": "tests/measure/compile.py", "torch": torch.__version__,
           "transformers": transformers.__version__,
           "inductor": {"backend": "inductor (CPU C++/OpenMP codegen)",
                        "partitioner": "torch._functorch.partitioners.min_cut_rematerialization_partition (default)",
                        "activation_memory_budget": functorch_config.activation_memory_budget,
                        "ban_recompute_not_in_allowlist": functorch_config.ban_recompute_not_in_allowlist,
                        "ban_recompute_reductions": functorch_config.ban_recompute_reductions,
                        "ban_recompute_materialized_backward": functorch_config.ban_recompute_materialized_backward,
                        "recompute_views": functorch_config.recompute_views,
                        "treat_parameters_as_free_to_save": functorch_config.treat_parameters_as_free_to_save,
                        "enable_autograd_cache": functorch_config.enable_autograd_cache},
           "tool": "autograd graph walk from the loss after forward (saved tensors, storages once, parameters "
                   "excluded); eager cross-checked with saved_tensors_hooks; c10 CPU allocator events",
           "cases": results}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
