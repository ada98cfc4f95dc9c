#!/usr/bin/env python3
"""Exact parameter counts of every model in Headroom's catalogue (src/import/catalogue/).

Rewrites tests/fixtures/measured/param_counts.json. No network, nothing downloaded,
deterministic (models are built on torch.device("meta"): shapes only, no memory).

Building. The catalogue file minus "_headroom" is passed to
transformers.AutoConfig.for_model(model_type, **config) and the class named by
_headroom.hf_class is instantiated from it. Vision-language models (Gemma 3 4B and up,
Qwen2.5-VL, Qwen3-VL, LLaVA) are built whole by their ForConditionalGeneration class, vision
tower and projector included, and their count is also split as tests/measure/vlm.py splits
it (param_count_by_part: vision_tower = the tower module less its mergers, projector =
model.visual.merger (+ Qwen3-VL's deepstack_merger_list) or model.multi_modal_projector,
language_model = the rest). For a multimodal wrapper listed for its text model only
(_headroom.text_only: none in the catalogue now) the wrapper config is parsed the
same way and the text class is built from its parsed .text_config.

Counts.
* param_count = sum(p.numel() for p in model.parameters()). PyTorch yields a
  shared (tied) Parameter once, so tied input/output embeddings count once.
* largest_module / largest_module_params: the module holding the most parameters
  directly (m.parameters(recurse=False)), e.g. the embedding, the untied lm_head,
  or a fused expert tensor holder (".mlp.experts").
* active_param_count: the parameters a single token uses. For dense models it
  equals param_count. For MoE models it is
      param_count - sum over MoE layers of (num_experts - top_k) routed experts,
  where routed-expert parameters are identified by their module path: every
  parameter whose name contains ".experts." (transformers 5 stores routed experts
  fused, e.g. model.layers.3.mlp.experts.gate_up_proj of shape [E, 2F, H], and
  gpt-oss also fused biases [E, 2F]; a leading dimension equal to num_experts is
  required and checked; per-expert module lists ".experts.<i>." are handled too).
  Shared experts (".shared_expert(s)."), the shared-expert gate, routers/gates
  and any dense MLP layers (e.g. DeepSeek's first_k_dense_replace layers) count
  fully, as do the embedding and the lm_head. So the inactive part of a layer is
  routed_params_of_layer * (E - k) / E (all experts of a layer have equal size).
  Published "active" figures sometimes leave out the input embedding table
  (a lookup, no FLOPs): see each case's notes.
* checkpoint_param_count (only where it differs from param_count): FLAN-T5 ships an
  untied lm_head but transformers 5 forces T5 to tie it (see the case's notes).
* ResNet: cross-checked against torchvision.models.resnetNN (identical counts).
* Published totals (model cards / papers) are checked within 1.5% where known
  (PUBLISHED below; the script fails otherwise): this guards the catalogue
  values, which were copied from the Hub config files.
"""
import glob
import json
import os
import re

import torch
import torchvision
import transformers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOGUE = os.path.join(ROOT, "src", "import", "catalogue")
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "param_counts.json")

# Published totals (and active counts) used as sanity checks: (total, active or None, source).
PUBLISHED = {
    "meta-llama/Llama-3.1-8B": (8.03e9, None, "model card: 8B (8.03B safetensors)"),
    "meta-llama/Llama-3.1-70B": (70.6e9, None, "model card: 70B (70.6B safetensors)"),
    "meta-llama/Llama-3.1-405B": (405.85e9, None, "405.85B (Llama 3 paper, Hub safetensors 406B)"),
    "mistralai/Mistral-7B-v0.3": (7.25e9, None, "Hub safetensors 7.25B"),
    "mistralai/Mistral-Nemo-Base-2407": (12.2e9, None, "Mistral NeMo: 12B (Hub safetensors 12.2B)"),
    "mistralai/Mixtral-8x22B-v0.1": (141e9, 39e9, "Mistral: 141B total, 39B active"),
    "Qwen/Qwen2.5-0.5B": (0.49e9, None, "model card: 0.49B"),
    "Qwen/Qwen2.5-7B": (7.61e9, None, "model card: 7.61B"),
    "Qwen/Qwen2.5-72B": (72.7e9, None, "model card: 72.7B"),
    "Qwen/Qwen1.5-MoE-A2.7B": (14.3e9, 2.7e9, "model card: 14.3B total, 2.7B activated"),
    "Qwen/Qwen3-0.6B": (0.6e9, None, "model card: 0.6B (0.44B non-embedding)"),
    "Qwen/Qwen3-8B": (8.2e9, None, "model card: 8.2B"),
    "Qwen/Qwen3-32B": (32.8e9, None, "model card: 32.8B"),
    "Qwen/Qwen3-30B-A3B": (30.5e9, 3.3e9, "model card: 30.5B total, 3.3B activated"),
    "Qwen/Qwen3-235B-A22B": (235e9, 22e9, "model card: 235B total, 22B activated"),
    "google/gemma-2b": (2.51e9, None, "Hub safetensors 2.51B"),
    "google/gemma-7b": (8.54e9, None, "Hub safetensors 8.54B"),
    "google/gemma-2-2b": (2.61e9, None, "Hub safetensors 2.61B"),
    "google/gemma-2-9b": (9.24e9, None, "Hub safetensors 9.24B"),
    "google/gemma-2-27b": (27.2e9, None, "Hub safetensors 27.2B"),
    "google/gemma-3-1b-pt": (1.0e9, None, "model card: 1B"),
    "microsoft/Phi-3-mini-4k-instruct": (3.82e9, None, "Hub safetensors 3.82B"),
    "microsoft/phi-4": (14.7e9, None, "model card: 14B (Hub safetensors 14.7B)"),
    "microsoft/phi-2": (2.78e9, None, "Hub safetensors 2.78B"),
    "deepseek-ai/DeepSeek-V2-Lite": (15.7e9, None, "paper/model card: 15.7B total, 2.4B activated"),
    "deepseek-ai/DeepSeek-V3": (671e9, 37e9, "model card: 671B main model + 14B MTP; 37B activated"),
    "openai/gpt-oss-20b": (20.9e9, None, "model card: 20.9B total (21B), 3.6B active"),
    "openai/gpt-oss-120b": (116.8e9, None, "model card: 116.8B total (117B), 5.1B active"),
    "allenai/OLMo-2-1124-7B": (7.3e9, None, "Hub safetensors 7.3B"),
    "ibm-granite/granite-3.1-8b-base": (8.17e9, None, "Hub safetensors 8.17B"),
    "ibm-granite/granite-3.1-3b-a800m-base": (3.3e9, None, "model card: 3.3B total, 800M active"),
    "EleutherAI/pythia-1b": (1.011781632e9, None, "Pythia paper: 1,011,781,632"),
    "EleutherAI/pythia-6.9b": (6.857302016e9, None, "Pythia paper: 6,857,302,016"),
    "EleutherAI/gpt-neox-20b": (20.55e9, None, "GPT-NeoX-20B paper: 20.55B"),
    "bigcode/starcoder2-7b": (7.17e9, None, "Hub safetensors 7.17B"),
    "CohereForAI/c4ai-command-r-v01": (35.0e9, None, "model card: 35B"),
    "FacebookAI/roberta-base": (125e9 / 1000, None, "RoBERTa paper: 125M"),
    "FacebookAI/roberta-large": (355e6, None, "RoBERTa paper: 355M"),
    "google-t5/t5-small": (60.5e6, None, "Hub safetensors 60.5M"),
    "google-t5/t5-base": (223e6, None, "Hub safetensors 223M"),
    "google/flan-t5-large": (783e6, None, "Hub safetensors 783M (untied lm_head: compared with checkpoint_param_count)"),
    # Issue 23's entries (write_catalogue.py's HYBRID_VLM says where each config was read).
    "Qwen/Qwen3-VL-8B-Instruct": (8767123696, None, "the checkpoint's tensors summed, 8,767,123,696 (the same model-inspection "
                                  "report the config was read from)"),
    "llava-hf/llava-1.5-7b-hf": (7063427072, None, "LLaMA-Factory's log of a LoRA run on llava-hf/llava-1.5-7b-hf: 'all params: "
                                 "7067621376' less its 4,194,304 LoRA parameters"),
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (80e9, None, "transformers docs (model_doc/qwen3_next.md): 80B total, 3B active "
                                         "(the active figure is not checked: see the case's notes)"),
    "mistralai/Mamba-Codestral-7B-v0.1": (7285403648, None, "Mistral's announcement (mistral.ai/news/codestral-mamba, as "
                                          "copied in public repositories): 'an instructed model, with 7,285,403,648 parameters'"),
    "state-spaces/mamba-2.8b-hf": (2.8e9, None, "state-spaces/mamba README: 2.8B (64 layers, model dim 2560)"),
    "ai21labs/AI21-Jamba-1.5-Mini": (52e9, 12e9, "AI21's model card, as copied in asgaardlab/model-card-reorganization "
                                     "verified_model_cards/ai21labs@AI21-Jamba-1.5-Mini: 52B total, 12B active"),
    "nvidia/Nemotron-H-8B-Base-8K": (8e9, None, "NVIDIA-NeMo Megatron-Bridge docs/models/llm/nemotronh.md: 8B (52 layers, "
                                     "hidden 4096)"),
    "google/gemma-3-4b-it": (4.3e9, None, "Hub safetensors 4.3B (vision tower and projector included)"),
    "google/gemma-3-27b-it": (27.4e9, None, "Hub safetensors 27.4B (vision tower and projector included)"),
}

NOTES = {
    "deepseek-ai/DeepSeek-V3": (
        "The Hub config has num_nextn_predict_layers: 1 (one multi-token-prediction module, ~14B params in the "
        "published checkpoint: 671B + 14B = 685B); transformers does not build the MTP layer, so it is not "
        "counted. quantization_config (fp8 e4m3, 128x128 blocks) is ignored when building from a config: counts "
        "are element counts. Active includes embedding and lm_head (published 37B)."),
    "deepseek-ai/DeepSeek-V2-Lite": (
        "q_lora_rank null: a plain q_proj (no q_a/q_b low-rank query). Published 2.4B activated excludes the input "
        "embedding table (0.21B); active_param_count here counts it."),
    "openai/gpt-oss-20b": (
        "transformers stores routed experts fused (mlp.experts.gate_up_proj [E,H,2F] with bias [E,2F], down_proj "
        "[E,F,H] with bias [E,H]); quantization_config (mxfp4 experts) is ignored when building from a config. "
        "Published 3.6B active excludes the input embedding table (0.58B): active_param_count counts it."),
    "openai/gpt-oss-120b": (
        "Fused experts as gpt-oss-20b; mxfp4 quantization_config ignored. Published 5.1B active excludes the input "
        "embedding table (0.58B): active_param_count counts it."),
    "Qwen/Qwen1.5-MoE-A2.7B": "Shared expert (5632) and its sigmoid gate count fully in active.",
    "ibm-granite/granite-3.1-3b-a800m-base": (
        "Published '800M active' excludes the tied embedding (75.5M): active_param_count counts it."),
    "tiiuae/falcon-7b": (
        "multi_query (1 KV head of 64), parallel_attn, new_decoder_architecture false, tie_word_embeddings "
        "default (true): lm_head shares the embedding. (The Hub's '7.22B' safetensors figure counts the stored "
        "lm_head copy separately.)"),
    "tiiuae/falcon-40b": "new_decoder_architecture true, num_kv_heads 8, tie_word_embeddings default (true).",
    "google/gemma-3-12b-pt": (
        "Gemma3ForConditionalGeneration: SigLIP vision tower (27 layers of 1152, no head) and the projector "
        "(RMSNorm + 1152 x hidden) counted; the text_config's unspecified keys take Gemma3TextConfig defaults "
        "(head_dim 256, vocab 262208, sliding_window_pattern 6). Published 12B total."),
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (
        "Gated DeltaNet in 36 layers, gated attention in 12 (full_attention_interval 4), 512 routed experts "
        "(top 10) and a gated shared expert in every layer. The published checkpoint also stores a multi-token-"
        "prediction layer (mtp.*), which transformers does not build: not counted. Active includes the "
        "embedding and lm_head (0.62B): 3.87B, 3.25B without them; the published '3B active' is rounded, "
        "so only the total is checked against it."),
    "ai21labs/AI21-Jamba-1.5-Mini": (
        "Mamba layers with attention every 8th (offset 4) and 16 experts (top 2) every 2nd layer (offset 1)."),
    "nvidia/Nemotron-H-8B-Base-8K": (
        "hybrid_override_pattern: 24 Mamba-2, 24 squared-ReLU MLP and 4 attention layers; "
        "n_routed_experts takes NemotronHConfig's default but no layer is 'E', so the model is dense."),
    "ibm-granite/granite-4.0-h-350m": (
        "28 Mamba-2 and 4 NoPE attention layers (layer_types), num_local_experts 0: every layer a dense "
        "shared MLP of 2048."),
    "LiquidAI/LFM2-1.2B": (
        "10 gated short-convolution and 6 attention layers (full_attn_idxs); block_auto_adjust_ff_dim turns "
        "block_ff_dim 12288 into an 8192-wide SwiGLU (two thirds, rounded up to block_multiple_of)."),
    "google/flan-t5-large": (
        "gated-gelu feed-forward (wi_0, wi_1). The Hub config has tie_word_embeddings false and the checkpoint "
        "stores its own lm_head.weight, but transformers 5.x T5Config.__post_init__ forces tie_word_embeddings = "
        "True (the Hub value only sets scale_decoder_outputs = False), so the model built from the config ties "
        "lm_head to `shared` and param_count is 32,899,072 lower than the checkpoint: checkpoint_param_count adds "
        "the separate lm_head back."),
}


def load(path):
    with open(path) as f:
        return json.load(f)


def build(cfg):
    """Return (model, built_config) on the meta device."""
    d = {k: v for k, v in cfg.items() if k != "_headroom"}
    meta = cfg["_headroom"]
    config = transformers.AutoConfig.for_model(d.pop("model_type"), **d)
    if meta.get("text_only"):
        config = config.text_config
    cls = getattr(transformers, meta["hf_class"])
    with torch.device("meta"):
        model = cls(config)
    return model, config


def moe_shape(config):
    """(num_experts, top_k) of a MoE config, or None."""
    for e_key in ("num_experts", "num_local_experts", "n_routed_experts"):
        e = getattr(config, e_key, None)
        if e:
            k = getattr(config, "num_experts_per_tok", None)
            assert k, "MoE config without num_experts_per_tok"
            return e, k
    return None


EXPERT_RE = re.compile(r"^(.*?)\.experts\.(\d+\.)?")


def counts(model, config):
    total = sum(p.numel() for p in model.parameters())
    largest, largest_name = 0, None
    for name, m in model.named_modules():
        n = sum(p.numel() for p in m.parameters(recurse=False))
        if n > largest:
            largest, largest_name = n, name
    moe = moe_shape(config)
    routed_by_layer = {}
    for name, p in model.named_parameters():
        mt = EXPERT_RE.match(name)
        if not mt:
            continue
        assert moe is not None, f"expert parameter {name} in a model without MoE config"
        if mt.group(2) is None:  # fused: leading dim = number of experts
            assert p.shape[0] == moe[0], (name, tuple(p.shape), moe)
        routed_by_layer[mt.group(1)] = routed_by_layer.get(mt.group(1), 0) + p.numel()
    info = None
    active = total
    # A config that names experts but builds none (Nemotron-H's n_routed_experts default
    # with no "E" in its pattern, Granite 4.0-H's num_local_experts 0) is dense.
    if moe is not None and routed_by_layer:
        e, k = moe
        inactive = 0
        for layer, n in routed_by_layer.items():
            assert n % e == 0, (layer, n, e)
            inactive += n // e * (e - k)
        active = total - inactive
        per_expert = sorted({n // e for n in routed_by_layer.values()})
        info = {"num_experts": e, "top_k": k, "moe_layers": len(routed_by_layer),
                "routed_expert_params": sum(routed_by_layer.values()),
                "params_per_routed_expert": per_expert[0] if len(per_expert) == 1 else per_expert}
    return total, active, largest, largest_name, info


def parts(model):
    """param_count_by_part of a vision-language model, as tests/measure/vlm.py splits it; None
    for a model without a vision tower."""
    inner = getattr(model, "model", None)
    if inner is None:
        return None
    if hasattr(inner, "visual"):
        projector = sum(p.numel() for p in inner.visual.merger.parameters())
        if hasattr(inner.visual, "deepstack_merger_list"):
            projector += sum(p.numel() for p in inner.visual.deepstack_merger_list.parameters())
        tower = sum(p.numel() for p in inner.visual.parameters()) - projector
    elif hasattr(inner, "vision_tower"):
        projector = sum(p.numel() for p in inner.multi_modal_projector.parameters())
        tower = sum(p.numel() for p in inner.vision_tower.parameters())
    else:
        return None
    total = sum(p.numel() for p in model.parameters())
    return {"vision_tower": tower, "projector": projector, "language_model": total - tower - projector}


def main():
    cases = []
    failures = []
    for path in sorted(glob.glob(os.path.join(CATALOGUE, "*.json"))):
        cfg = load(path)
        if "pipeline" in cfg:
            continue  # diffusion pipelines: measured by diffusion_*.py with diffusers
        meta = cfg["_headroom"]
        hub_id = meta["id"]
        model, config = build(cfg)
        total, active, largest, largest_name, moe = counts(model, config)
        # T5 v1.1 / FLAN-T5: the Hub says untied, transformers 5 ties anyway (see NOTES).
        checkpoint_count = None
        if (cfg.get("tie_word_embeddings") is False and hasattr(model, "lm_head")
                and model.lm_head.weight is model.get_input_embeddings().weight):
            checkpoint_count = total + model.lm_head.weight.numel()
        notes = []
        if NOTES.get(hub_id):
            notes.append(NOTES[hub_id])
        pub = PUBLISHED.get(hub_id)
        if pub:
            ptotal, pactive, src = pub
            ref = checkpoint_count or total
            rel = ref / ptotal - 1
            notes.append(f"published check ({src}): measured total {ref / 1e9:.3f}B, {rel * 100:+.2f}% vs "
                         f"{ptotal / 1e9:g}B" + (f"; active {active / 1e9:.3f}B vs {pactive / 1e9:g}B" if pactive else ""))
            if abs(rel) > 0.015:
                failures.append(f"{hub_id}: total {ref} vs published {ptotal}")
            if pactive and abs(active / pactive - 1) > 0.04:
                failures.append(f"{hub_id}: active {active} vs published {pactive}")
        case = {
            "preset": hub_id,
            "file": os.path.basename(path),
            "hf_class": meta["hf_class"],
            "model_type": cfg["model_type"],
            "built_config": type(config).__name__,
            "text_only": bool(meta.get("text_only", False)),
            "param_count": total,
            "active_param_count": active,
            "largest_module_params": largest,
            "largest_module": largest_name,
            "moe": moe,
            "notes": " ".join(notes),
        }
        if checkpoint_count is not None:
            case["checkpoint_param_count"] = checkpoint_count
        by_part = parts(model)
        if by_part is not None:
            case["param_count_by_part"] = by_part
        if cfg["model_type"] == "resnet":
            tv_name = "resnet" + hub_id.rsplit("-", 1)[1]
            with torch.device("meta"):
                tv = getattr(torchvision.models, tv_name)(weights=None)
            case["torchvision_param_count"] = sum(p.numel() for p in tv.parameters())
            case["torchvision_model"] = "torchvision.models." + tv_name
            if case["torchvision_param_count"] != total:
                failures.append(f"{hub_id}: torchvision {case['torchvision_param_count']} != {total}")
        print(f"{hub_id:45s} {total:>16,} {active:>16,}  {largest_name} {largest:,}")
        cases.append(case)
        del model
    out = {
        "generator": "tests/measure/param_counts.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "torchvision": torchvision.__version__,
        "method": ("model built on torch.device('meta') from the catalogue config (vision-language models whole, "
                   "split into param_count_by_part as tests/measure/vlm.py splits them; text_only wrappers: the text "
                   "class from the parsed text_config); param_count = sum(p.numel() for p in model.parameters()) "
                   "(tied weights once); active_param_count = param_count - (num_experts - top_k)/num_experts of the "
                   "routed-expert parameters (names containing '.experts.') of every MoE layer; equal to "
                   "param_count for dense models"),
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    if failures:
        raise SystemExit("published-count checks failed:\n  " + "\n  ".join(failures))


if __name__ == "__main__":
    main()
