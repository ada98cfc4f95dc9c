#!/usr/bin/env python3
"""LoRA adapters' dtype on a 16-bit base, PEFT's default against adapters in the model dtype.

A tiny Llama in pure bf16 (and fp16) on the CPU, PEFT 0.21.2 `LoraConfig(r=16, lora_alpha=32, all seven
projections, lora_dropout=0)` through `get_peft_model(model, config, autocast_adapter_dtype=...)`:
  * True (PEFT's default): `peft/tuners/tuners_utils.py` casts 16-bit adapter weights to fp32;
  * False: the adapters stay in the base's dtype -- what torchtune (the model built under
    `set_default_dtype(bf16)`) and LitGPT (`fabric.init_module()` under `bf16-true`) hold.
One real training step (AdamW fused=True over the trainable parameters, micro-batch 2 x 128):
the adapters' parameter dtype and bytes, their gradients' bytes and the AdamW states' bytes
(exp_avg + exp_avg_sq, step counters excluded), and the bytes autograd saves for backward
(saved_tensors_hooks, every storage once, parameters and buffers excluded; SDPA on the CPU).

Output: tests/fixtures/measured/lora_dtypes.json
Run: /work/venv/bin/python tests/measure/lora_dtypes.py
"""
import json, os, sys, warnings

import torch
import transformers
import peft

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import SavedTensorRecorder  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "lora_dtypes.json")

LLAMA = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
             intermediate_size=704, vocab_size=2048, max_position_embeddings=2048, rms_norm_eps=1e-5,
             hidden_act="silu", attention_bias=False, mlp_bias=False, attention_dropout=0.0,
             tie_word_embeddings=False, rope_theta=500000.0)
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
B, S, RANK = 2, 128, 16


def nbytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        key = (t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())
        if key not in seen:
            seen.add(key)
            total += t.untyped_storage().nbytes()
    return total


def run(dtype_name, autocast_adapter_dtype):
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    config = transformers.LlamaConfig(**LLAMA)
    config._attn_implementation = "sdpa"
    model = transformers.LlamaForCausalLM(config).to(dtype)
    lcfg = peft.LoraConfig(r=RANK, lora_alpha=32, lora_dropout=0.0, target_modules=TARGETS, bias="none",
                           task_type="CAUSAL_LM")
    model = peft.get_peft_model(model, lcfg, autocast_adapter_dtype=autocast_adapter_dtype)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-4, fused=True)
    ids = torch.randint(0, LLAMA["vocab_size"], (B, S))
    rec = SavedTensorRecorder(model)
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
        loss = model(input_ids=ids, labels=ids).loss
    saved = sum(e["nbytes"] for e in rec.entries.values())
    loss.backward()
    del loss
    opt.step()
    states = [v for st in opt.state.values() for k, v in st.items() if isinstance(v, torch.Tensor) and k != "step"]
    dtypes = sorted({str(p.dtype).replace("torch.", "") for p in trainable})
    return {
        "name": f"llama-tiny-{dtype_name}-lora-autocast_adapter_dtype={autocast_adapter_dtype}",
        "precision": dtype_name,
        "autocast_adapter_dtype": autocast_adapter_dtype,
        "adapter_dtypes": dtypes,
        "adapter_elements": sum(p.numel() for p in trainable),
        "adapter_param_bytes": nbytes(trainable),
        "adapter_grad_bytes": nbytes([p.grad for p in trainable if p.grad is not None]),
        "adapter_state_bytes": nbytes(states),
        "saved_bytes": saved,
    }


def main():
    cases = []
    for dtype_name in ["bf16", "fp16"]:
        for flag in [True, False]:
            c = run(dtype_name, flag)
            print(c)
            cases.append(c)
    out = {
        "torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
        "device": "cpu", "model": {"model_type": "llama", **LLAMA},
        "lora": {"rank": RANK, "alpha": 32, "dropout": 0.0, "targets": TARGETS},
        "batch": {"micro_batch": B, "seq_len": S},
        "optimizer": "torch.optim.AdamW(lr=1e-4, fused=True) over the trainable parameters",
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
