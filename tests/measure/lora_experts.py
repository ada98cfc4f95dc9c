#!/usr/bin/env python3
"""PEFT's LoRA on transformers 5's fused MoE experts (tests/fixtures/measured/lora_experts.json).

No network, nothing downloaded. transformers 5 keeps every MoE family's routed experts as two
fused 3-D parameters (`experts.gate_up_proj` [E, 2f, h], `experts.down_proj` [E, h, f]) and
its routers as custom modules holding a `weight` parameter; only a few routers are still
`nn.Linear`s (Llama 4, PhiMoE). PEFT 0.21.2 reaches the fused parameters only through the
v4 -> v5 conversion of its config (peft/utils/transformers_weight_conversion.py,
`_convert_peft_config_moe`), which runs for the model types transformers maps to the
`mixtral` or `qwen2_moe` conversion pattern (plus `mixtral` itself, PEFT's own addition):
the names `gate_proj`/`up_proj`/`down_proj` (Mixtral: `w1`/`w3`/`w2`) and the router `gate`
move from `target_modules` to `target_parameters` and are wrapped by `lora.ParamWrapper`
(rank r per expert, 2r on the fused `gate_up_proj`).

counts: trainable parameters of `get_peft_model(model, LoraConfig(r=8, ...))` on the meta
device for every MoE config of the catalogue (src/import/catalogue/), with
`target_modules="all-linear"` and with the family's own module names for Headroom's kinds
q, k, v, o, gate, up, down (["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
"down_proj"]; DeepSeek's latent attention names its q and k/v projections `q_a_proj`,
`q_b_proj` (V2-Lite: `q_proj`), `kv_a_proj_with_mqa` and `kv_b_proj`; Mixtral's experts are
`w1`, `w3`, `w2` by PEFT's conversion, and Llama's names on Mixtral are recorded beside them
as "llama_names"); each with the parameters and modules PEFT wrapped, by leaf name.

families: the same two counts for the class defaults (meta device) of MoE families Headroom reads
beyond the catalogue: OLMoE and GLM-4-MoE (converted; GLM with a dense first layer and a shared
expert), PhiMoE and Llama 4's text model (routers that are nn.Linear; Llama 4 with a shared
expert) and LFM2-MoE (LFM2-8B-A1B's schedule, as tests/measure/lfm2_moe.py; "all-linear"
only: its attention and conv linears are not named as Llama's).

activations: the tensors a tiny Qwen3-MoE (converted) and a tiny Qwen2-MoE (not converted)
save for backward with LoRA (fp32, CPU, batch 2, two lengths, 4 layers; every module's, counted once per
storage with saved_tensors_hooks, common.SavedTensorRecorder, parameters excluded; the
Qwen3-MoE also in pure bf16, its adapters in fp32 as PEFT's autocast_adapter_dtype keeps them), for
three targetings: the attention only, the names list, and "all-linear". The experts run the
implementation transformers picks on CPU (recorded). ParamWrapper folds its adapter into the
weight once per forward (`_LoraFactorsProxy`: `torch.baddbmm(W, lhs, rhs)` under
`parametrize.cached()`), and the experts' matmuls save that merged weight.

qlora: the tiny Qwen3-MoE above (fp32 config, saved in bf16 to a temporary directory) loaded with
BitsAndBytesConfig(load_in_4bit, nf4, double quant, bf16 compute) on the CPU, then PEFT's
prepare_model_for_kbit_training: bytes of parameters by kind and dtype before and after
(lora.py's param_bytes, the fused experts as their own kind), and the quantisation state's bytes.
transformers 5.25 quantizes only `bnb.nn.Linear4bit` parameters, so the fused experts stay bf16 and
the preparation casts them to fp32.

Run: /work/venv/bin/python tests/measure/lora_experts.py
"""
import json
import os
import warnings

import peft
import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, Qwen2MoeConfig, Qwen2MoeForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM

from common import ModuleStack, SavedTensorRecorder

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "lora_experts.json")
RANK = 8
NAMES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# The family's names for Headroom's kinds where they are not Llama's (src/model/arch/attention.rs: MLA's
# q_a_proj/q_b_proj are kind q, kv_a_proj_with_mqa/kv_b_proj kinds k and v).
ROLE_NAMES = {
    "mixtral": ["q_proj", "k_proj", "v_proj", "o_proj", "w1", "w2", "w3"],
    "deepseek_v2": ["q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "deepseek_v3": ["q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
}
CATALOGUE = [
    "Qwen--Qwen1.5-MoE-A2.7B", "Qwen--Qwen3-30B-A3B", "Qwen--Qwen3-235B-A22B", "Qwen--Qwen3-Next-80B-A3B-Instruct",
    "ai21labs--AI21-Jamba-1.5-Mini", "deepseek-ai--DeepSeek-V2-Lite", "deepseek-ai--DeepSeek-V3",
    "ibm-granite--granite-3.1-3b-a800m-base", "mistralai--Mixtral-8x7B-v0.1", "mistralai--Mixtral-8x22B-v0.1",
    "openai--gpt-oss-20b", "openai--gpt-oss-120b",
]


def catalogue_config(stem):
    cfg = json.loads(open(os.path.join(ROOT, "src/import/catalogue", stem + ".json")).read())
    return {k: v for k, v in cfg.items() if not k.startswith("_")}


def peft_count(cfg, targets):
    c = dict(cfg)
    conf = AutoConfig.for_model(c.pop("model_type"), **c)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(conf)
        pm = get_peft_model(model, LoraConfig(r=RANK, lora_alpha=16, target_modules=targets))
    wrapped = {}
    for name, module in pm.named_modules():
        if isinstance(module, peft.tuners.lora.LoraLayer):
            kind = type(module).__name__
            leaf = module.parameter_name if kind == "ParamWrapper" else name.rsplit(".", 1)[-1]
            key = f"{kind}:{leaf}"
            n = sum(p.numel() for p in module.lora_A.parameters()) + sum(p.numel() for p in module.lora_B.parameters())
            entry = wrapped.setdefault(key, {"modules": 0, "params": 0})
            entry["modules"] += 1
            entry["params"] += n
    trainable = sum(p.numel() for p in pm.parameters() if p.requires_grad)
    total = sum(p.numel() for n, p in pm.named_parameters() if "lora_" not in n)
    return {"trainable": trainable, "param_count": total, "wrapped": wrapped}


def counts():
    out = {}
    for stem in CATALOGUE:
        cfg = catalogue_config(stem)
        entry = {"model_type": cfg["model_type"], "rank": RANK}
        entry["all_linear"] = peft_count(cfg, "all-linear")
        entry["names"] = peft_count(cfg, ROLE_NAMES.get(cfg["model_type"], NAMES))
        if cfg["model_type"] == "mixtral":
            entry["llama_names"] = peft_count(cfg, NAMES)
        out[stem.replace("--", "/")] = entry
        print(stem, entry["all_linear"]["trainable"], entry["names"]["trainable"], entry.get("llama_names", {}).get("trainable"))
    return out


LFM2_SCHEDULE = ["attention" if i in (2, 6, 10, 14, 18, 21) else "conv" for i in range(32)]
FAMILIES = {
    "olmoe": ({}, True),
    "glm4_moe": ({}, True),
    "phimoe": ({}, True),
    "llama4_text": ({}, True),
    "lfm2_moe": ({"layer_types": LFM2_SCHEDULE}, False),
}


def families():
    out = {}
    for model_type, (kw, with_names) in FAMILIES.items():
        conf = AutoConfig.for_model(model_type, **kw)
        cfg = json.loads(json.dumps(conf.to_dict(), default=str))
        entry = {"config": cfg, "rank": RANK, "all_linear": peft_count(cfg, "all-linear")}
        if with_names:
            entry["names"] = peft_count(cfg, NAMES)
        out[model_type] = entry
        print(model_type, entry["all_linear"]["trainable"], entry.get("names", {}).get("trainable"))
    return out


TINY3 = {"hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32, "num_hidden_layers": 4, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 16, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 256, "use_cache": False}
TINY2 = {"hidden_size": 64, "intermediate_size": 128, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 96, "num_hidden_layers": 4,
         "num_attention_heads": 4, "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 256, "use_cache": False}
TARGETINGS = {"attention": ["q_proj", "k_proj", "v_proj", "o_proj"], "names": NAMES, "all_linear": "all-linear"}


def saved(cls, conf, targets, seq, dtype):
    torch.manual_seed(0)
    model = cls(conf).to(dtype)
    pm = get_peft_model(model, LoraConfig(r=RANK, lora_alpha=16, target_modules=targets))
    pm.train()
    stack = ModuleStack(pm)
    rec = SavedTensorRecorder(pm, stack)
    ids = torch.randint(0, conf.vocab_size, (2, seq))
    with rec.hooks():
        loss = pm(input_ids=ids, labels=ids).loss
    total, _, _ = rec.totals()
    by_module = {}
    for e in rec.entries.values():
        key = (e["module"] or "").replace("base_model.model.", "")
        by_module[key] = by_module.get(key, 0) + e["nbytes"]
    loss.backward()
    stack.remove()
    trainable = sum(p.numel() for p in pm.parameters() if p.requires_grad)
    return total, trainable, by_module, str(model.config._experts_implementation_internal)


def activations():
    out = {}
    runs = [("qwen3_moe", Qwen3MoeForCausalLM, Qwen3MoeConfig, TINY3, seq, "fp32") for seq in (32, 64)]
    runs += [("qwen2_moe", Qwen2MoeForCausalLM, Qwen2MoeConfig, TINY2, seq, "fp32") for seq in (32, 64)]
    runs += [("qwen3_moe", Qwen3MoeForCausalLM, Qwen3MoeConfig, TINY3, 64, "bf16")]
    for family, cls, ccls, kw, seq, precision in runs:
        conf = ccls(**kw)
        dtype = torch.float32 if precision == "fp32" else torch.bfloat16
        for tname, targets in TARGETINGS.items():
            total, trainable, by_module, impl = saved(cls, conf, targets, seq, dtype)
            name = f"{family}_{tname}@s{seq}_{precision}"
            out[name] = {"config": json.loads(json.dumps(conf.to_dict(), default=str)), "batch": 2, "seq_len": seq, "precision": precision, "rank": RANK,
                         "targets": targets, "trainable": trainable, "model_saved_bytes": total, "experts_implementation": impl, "by_module": by_module}
            print(name, total, trainable, impl)
    return out


def qlora():
    import tempfile
    from lora import param_bytes, quant_state_bytes
    from peft import prepare_model_for_kbit_training
    from transformers import BitsAndBytesConfig

    conf = Qwen3MoeConfig(**TINY3)
    torch.manual_seed(0)
    out = {"config": json.loads(json.dumps(conf.to_dict(), default=str))}
    with tempfile.TemporaryDirectory() as d:
        Qwen3MoeForCausalLM(conf).to(torch.bfloat16).save_pretrained(d)
        q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=torch.bfloat16)
        m = Qwen3MoeForCausalLM.from_pretrained(d, dtype=torch.bfloat16, quantization_config=q, device_map="cpu")

        def by_kind(model):
            kinds = param_bytes(model)
            experts = {}
            for n, p in model.named_parameters():
                if ".experts." in n:
                    key = f"experts {str(p.dtype).replace('torch.', '')}"
                    experts[key] = experts.get(key, 0) + p.numel() * p.element_size()
            return {"all": kinds, "experts": experts}

        out["nf4_before"] = by_kind(m)
        out["nf4_quant_state_bytes"] = quant_state_bytes(m)
        m = prepare_model_for_kbit_training(m)
        out["nf4_after_prepare"] = by_kind(m)
        out["param_bytes_after_prepare"] = sum(p.numel() * p.element_size() for p in m.parameters())
    print("qlora", out["nf4_after_prepare"]["experts"], out["param_bytes_after_prepare"], out["nf4_quant_state_bytes"])
    return out


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
            "counts": counts(), "families": families(), "activations": activations(), "qlora": qlora()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
