#!/usr/bin/env python3
"""Real GPU peaks of the families read this stop, and of an MoE under autocast with fp32 master
weights (tests/fixtures/measured/gpu_new_families.json).

Prepared for one CUDA GPU (run on an H200 of this workplace with transformers 5.25 carried as a
wheel; NOT run in CI). Same method and code as gpu_hybrid_vlm.py, whose `run_one` it drives with
its own cases:
  gemma4-default-lora8-s2048            Gemma4TextConfig's class default (5.08 B parameters: per-layer
                                        inputs, 512-wide global heads), bf16 + autocast, PEFT LoRA r 8
                                        on q/k/v/o/gate/up/down, 2,048 tokens
  qwen3-moe-2l-bf16mixed-full-s1024     Qwen3-30B-A3B's config cut to 2 layers, fp32 weights under bf16
                                        autocast, full fine-tuning with AdamW: transformers 5.25 runs
                                        the routed experts through torch._grouped_mm, which has no
                                        autocast rule (integrations/moe.py 373-383)
  qwen3-moe-2l-bf16-full-s1024          the same in pure bf16, the comparison
Run:    python tests/measure/gpu_new_families.py [case-name-substring ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_hybrid_vlm as g  # noqa: E402
from gpu_peaks import ROOT, catalogue_config, drive  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "gpu_new_families.json")
ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def cases():
    moe = g.cut("Qwen--Qwen3-30B-A3B.json", 2)
    gemma4 = dict(g.C("gemma4-default-lora8-s2048", {"model_type": "gemma4_text"}, 2048, 8, ALL), cls="Gemma4ForCausalLM")
    return [
        gemma4,
        g.C("qwen3-moe-2l-bf16mixed-full-s1024", moe, 1024, None),
        g.C("qwen3-moe-2l-bf16-full-s1024", moe, 1024, None, precision="bf16"),
    ]


_base_cases = g.cases
g.cases = lambda: _base_cases() + cases()  # gpu_peak_owners.py finds these cases too

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        g.run_one(sys.argv[2])
    else:
        drive(cases(), g.scenario, __file__, OUT, "tests/measure/gpu_new_families.py", total_budget_s=140, case_timeout_s=100)
