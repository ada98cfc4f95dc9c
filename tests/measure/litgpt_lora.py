#!/usr/bin/env python3
"""What LitGPT's LoRA fine-tuning saves for backward, on the CPU, against transformers + PEFT.

LitGPT 0.5.13's own modules (`litgpt/model.py`, `litgpt/lora.py`) build a tiny Llama-shaped GPT in
pure bf16 (`bf16-true`: the model, its LoRA weights included, in bf16) with LoRA r=8 on the query
and value (LitGPT's `finetune_lora` defaults `lora_query=True, lora_value=True`), and run the
forward `finetune_lora` runs: `model(input_ids, lm_head_chunk_size=128)`, the last chunk shifted,
`chunked_cross_entropy(logits, targets, chunk_size=128)` (bf16 logits, no upcast). Counted as the
other scripts count (`common.SavedTensorRecorder`: every storage saved for backward once,
parameters and buffers excluded), LoRA dropout 0 (on the CPU a dropout mask is a float tensor,
not CUDA's bool). SDPA runs the CPU flash kernel (causal, no mask, dropout 0).

LitGPT's package `__init__` imports Lightning (whose huggingface_hub pin the shared venv cannot
take), so the package is registered by path, and the two helpers `lora.py` and `model.py` import
from `scripts/convert_hf_checkpoint.py` and `utils.py` (`qkv_reassemble`,
`map_old_state_dict_weights`, only used to load checkpoints) are stubbed; `chunked_cross_entropy`
is LitGPT's own source, compiled from `utils.py`.

Set-up (no install): `pip download litgpt==0.5.13 --no-deps -d /tmp/w && unzip /tmp/w/*.whl -d
/tmp/litgpt-src`, then `LITGPT_SRC=/tmp/litgpt-src python tests/measure/litgpt_lora.py`.
Writes tests/fixtures/measured/litgpt_lora.json.
"""
import ast, json, os, sys, types, warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import ModuleStack, SavedTensorRecorder  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "litgpt_lora.json")
SRC = os.environ.get("LITGPT_SRC", "/tmp/i28lit")


def import_litgpt():
    pkg = types.ModuleType("litgpt")
    pkg.__path__ = [os.path.join(SRC, "litgpt")]
    sys.modules["litgpt"] = pkg
    scripts = types.ModuleType("litgpt.scripts")
    scripts.__path__ = []
    sys.modules["litgpt.scripts"] = scripts
    convert = types.ModuleType("litgpt.scripts.convert_hf_checkpoint")
    convert.qkv_reassemble = None  # checkpoint loading only
    sys.modules["litgpt.scripts.convert_hf_checkpoint"] = convert
    utils = types.ModuleType("litgpt.utils")
    utils.map_old_state_dict_weights = None  # checkpoint loading only
    source = open(os.path.join(SRC, "litgpt", "utils.py")).read()
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "chunked_cross_entropy")
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "litgpt/utils.py", "exec"), {"torch": torch}, utils.__dict__)
    sys.modules["litgpt.utils"] = utils
    import litgpt.lora as lora
    return lora, utils.chunked_cross_entropy


CFG = dict(n_layer=2, n_embd=256, n_head=4, n_query_groups=2, head_size=64, intermediate_size=704,
           vocab_size=2048, padded_vocab_size=2048, block_size=2048, bias=False, norm_class_name="RMSNorm",
           norm_eps=1e-5, mlp_class_name="LLaMAMLP", rotary_percentage=1.0, parallel_residual=False,
           rope_base=500000)
HF = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 704, "vocab_size": 2048,
      "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "hidden_act": "silu", "attention_bias": False,
      "mlp_bias": False, "tie_word_embeddings": False, "rope_theta": 500000.0}
RANK = 8


def run(lora, chunked_cross_entropy, b, s):
    torch.manual_seed(0)
    config = lora.Config(lora_r=RANK, lora_alpha=16, lora_dropout=0.0, lora_query=True, lora_key=False,
                         lora_value=True, lora_projection=False, lora_mlp=False, lora_head=False, **CFG)
    torch.set_default_dtype(torch.bfloat16)
    try:
        model = lora.GPT(config)
    finally:
        torch.set_default_dtype(torch.float32)
    lora.mark_only_lora_as_trainable(model)
    model.train()
    model.max_seq_length = s
    trainable = [p for p in model.parameters() if p.requires_grad]
    ids = torch.randint(0, CFG["vocab_size"], (b, s + 1))
    input_ids, targets = ids[:, :-1], ids[:, 1:]
    stack = ModuleStack(model)
    rec = SavedTensorRecorder(model, stack)
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
        logits = model(input_ids, lm_head_chunk_size=128)
        logits[-1] = logits[-1][..., :-1, :]
        loss = chunked_cross_entropy(logits, targets[..., 1:])
    loss.backward()
    stack.remove()
    by_dtype = {}
    for e in rec.entries.values():
        by_dtype[e["dtype"]] = by_dtype.get(e["dtype"], 0) + e["nbytes"]
    # What the second block saves (the first one's attention norm is not saved: nothing before
    # it needs a gradient) and what is saved outside the blocks, tensor by tensor.
    detail = [{k: e[k] for k in ("nbytes", "dtype", "shape", "module", "grad_fn")} for e in (rec.entries[r] for r in rec.order)
              if ".h." not in f".{e['module']}" or ".h.1." in f".{e['module']}."]
    return {
        "name": f"litgpt-llama-tiny-bf16-lora-b{b}-s{s}",
        "micro_batch": b,
        "seq_len": s,
        "adapter_dtypes": sorted({str(p.dtype).replace("torch.", "") for p in trainable}),
        "adapter_elements": sum(p.numel() for p in trainable),
        "saved_bytes": sum(e["nbytes"] for e in rec.entries.values()),
        "saved_bytes_by_dtype": by_dtype,
        "saved_tensor_count": len(rec.entries),
        "saved_detail_last_block_and_outside": detail,
    }


def main():
    lora, cce = import_litgpt()
    cases = []
    for b, s in [(1, 512), (2, 512), (1, 1024)]:
        c = run(lora, cce, b, s)
        print(c, flush=True)
        cases.append(c)
    out = {"torch": torch.__version__, "litgpt": "0.5.13", "device": "cpu", "precision": "bf16-true",
           "litgpt_config": CFG, "hf_config": HF,
           "lora": {"rank": RANK, "alpha": 16, "dropout": 0.0, "query": True, "value": True},
           "loss": "model(input_ids, lm_head_chunk_size=128); chunked_cross_entropy(chunk_size=128), bf16 logits",
           "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
