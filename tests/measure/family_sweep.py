#!/usr/bin/env python3
"""Parameter counts of every decoder-only text LM family transformers knows, from its
default configuration (tests/fixtures/measured/family_sweep.json).

No network, nothing downloaded, deterministic: models are built on torch.device("meta")
(shapes only) from configuration classes.

Which families. Every model_type in transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
minus encoders / encoder-decoders (their *ForCausalLM is a decoder half), audio and
vision models (SKIP below, with the reason written into the fixture), plus the
multimodal wrappers in WRAPPERS whose text model a user may paste (mistral3), plus
VARIANTS: a family's default config with the keys real checkpoints set differently
(interleaved MoE layers, q/k norms, biases, shared experts), keyed "model_type@name".

Config. AutoConfig.for_model(model_type), with num_hidden_layers (and whatever keys list
one entry per layer: layer_types, no_rope_layers, mlp_only_layers, …) shrunk to
SHRINK_LAYERS when the family's default is deeper, so the fixture stays small and the
per-layer structure (dense first layers, interleaved MoE, sliding/full patterns) is kept
where the pattern is shorter than the shrunk depth. Widths, heads and experts are kept.
Where shrinking cannot be done consistently (a per-layer list whose length is not the
layer count), the family's default depth is kept. The config recorded is
config.to_dict() of the config the model was built from (what a Hub config.json holds).
For wrappers with a text_config (llama4, mistral3), the wrapper's dict is recorded and
the text model is built from the parsed text_config (what Headroom imports).

Counts. param_count = sum(p.numel() for p in model.parameters()); PyTorch yields a tied
Parameter once, so tied embeddings count once. Buffers (e.g. e_score_correction_bias
registered as a buffer) are not parameters and are not counted.

Versions: torch and transformers versions are written into the fixture.
Run: /work/venv/bin/python tests/measure/family_sweep.py
"""
import json
import math
import os
import sys
import traceback

import torch
import transformers
from transformers import AutoConfig
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "family_sweep.json")

SHRINK_LAYERS = 8

# Not decoder-only text LMs: the reason is recorded in the fixture.
ENC = "encoder or encoder-decoder family (its *ForCausalLM is a decoder half)"
SKIP = {
    **{t: ENC for t in [
        "bart", "bert", "bert-generation", "big_bird", "bigbird_pegasus", "blenderbot", "blenderbot-small", "camembert",
        "data2vec-text", "electra", "ernie", "marian", "mbart", "megatron-bert", "mvp", "pegasus", "plbart", "prophetnet",
        "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer", "trocr", "xlm", "xlm-roberta", "xlm-roberta-xl",
        "xlnet", "xmod", "reformer", "whisper",
    ]},
    "musicgen": "audio", "musicgen_melody": "audio", "moshi": "audio", "moss_transcribe_diarize": "audio",
    "fuyu": "vision-language", "git": "vision-language", "got_ocr2": "vision-language", "phi4_multimodal": "vision/audio-language",
    "gemma3": "vision-language wrapper (its text model gemma3_text is measured)",
    "gemma3n": "vision/audio-language wrapper", "gemma4": "vision-language wrapper", "gemma4_unified": "vision-language wrapper",
    "emu3": "vision-language (image tokens)",
}
# Wrappers not in the causal-LM mapping whose text model is measured.
WRAPPERS = ["mistral3"]
# Configs with a text_config whose text model is the one built (the vision tower is not counted).
WRAPPED = {"mistral3", "llama4", "mllama", "qwen3_5", "qwen3_5_moe", "dots3_note"}

# Keys a default configuration leaves unset although the model needs them (a Hub
# config.json always sets them); the values are the family's released checkpoint's.
FIX = {
    "hunyuan_v1_dense": {"head_dim": 128},
    "hunyuan_v1_moe": {"head_dim": 128},
    "ministral": {"head_dim": 128},
    "nemotron": {"num_key_value_heads": 48},
    "dots1": {"n_routed_experts": 128, "num_experts_per_tok": 6, "n_shared_experts": 2},
    "dbrx": {"attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000.0}},
}

# Variants of a family's default config that take the branches real checkpoints take
# (interleaved MoE, q/k norms, biases, shared experts, …): "model_type@name" -> keys set.
VARIANTS = {
    "llama4_text@maverick": {"interleave_moe_layer_step": 2, "num_local_experts": 128},
    "glm@no_bias": {"attention_bias": False},
    "glm4_moe@air": {"use_qk_norm": True, "head_dim": 128, "attention_bias": True, "num_attention_heads": 96, "n_routed_experts": 128},
    "stablelm@2_12b": {"qk_layernorm": True, "use_parallel_residual": True, "num_key_value_heads": 8},
    "stablelm@2_1_6b": {"use_qkv_bias": True},
    "phimoe@biases": {"attention_bias": True, "lm_head_bias": True},
    "ernie4_5_moe@biases_interval2": {"use_bias": True, "moe_layer_interval": 2},
    "seed_oss@out_bias": {"attention_out_bias": True, "mlp_bias": True},
    "hunyuan_v1_moe@a13b": {"num_experts": 64, "moe_topk": 8, "head_dim": 128},
    "smollm3@sliding": {"use_sliding_window": True, "sliding_window": 4096},
    "nemotron@biases": {"attention_bias": True, "mlp_bias": True, "num_key_value_heads": 8},
    "granitemoeshared@shared": {"shared_intermediate_size": 1024},
    "gpt_bigcode@mha": {"multi_query": False},
    "opt@350m": {"word_embed_proj_dim": 512, "hidden_size": 1024, "num_attention_heads": 16, "ffn_dim": 4096, "do_layer_norm_before": False},
    "olmoe@norm_topk": {"norm_topk_prob": True, "attention_bias": True},
    "exaone4@gqa": {"num_key_value_heads": 8},
    "qwen3_moe@mlp_only_step2": {"decoder_sparse_step": 2, "head_dim": 128},
    "cohere2@gqa": {"num_key_value_heads": 8},
    "dots1@dense_first": {"first_k_dense_replace": 1},
    "minimax_m2@small": {"num_local_experts": 32},
    "dbrx@no_clip": {"attn_config": {"kv_n_heads": 4, "rope_theta": 500000.0}, "ffn_config": {"ffn_hidden_size": 1024, "moe_num_experts": 16, "moe_top_k": 4}},
    "mpt@bigger_ratio": {"expansion_ratio": 8},
    "cohere2_moe@dense_prefix_shared": {"mlp_layer_types": ["dense"] + ["sparse"] * 39, "prefix_dense_intermediate_size": 4096, "num_shared_experts": 1, "rms_norm_eps": 1e-5},
    "exaone_moe@dense2": {"mlp_layer_types": ["dense", "dense"] + ["sparse"] * 30},
    "mellum@dense_first": {"mlp_layer_types": ["dense"] + ["sparse"] * 27},
    # Gemma 3n with 3 shared-KV layers: the default 15 leave no producer once shrunk to 8 layers.
    "gemma3n_text@kv_shared3": {"num_kv_shared_layers": 3},
    "gemma4_text@no_per_layer_input": {"hidden_size_per_layer_input": 0},
    "gemma4_text@moe": {"hidden_size_per_layer_input": 0, "enable_moe_block": True, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 1024},
}

# Configs written the way the Hub's config.json files write them (older key spellings,
# top-level partial_rotary_factor, wrappers with a text_config), full depth, keyed
# "model_type@hub:<model>". Typed in by hand from recollection of those files (nothing is
# downloaded here); the totals agree with the published sizes (6.9B, 41.9B, 106B, 3.1B,
# 21.8B, 1.1B, 132B, 109B/400B with vision, 24B). The count is whatever transformers builds
# from these keys (the text model for wrappers), so a wrong shape would make an entry less
# representative, not the check wrong.
HUB_CONFIGS = {
    "olmoe@hub:OLMoE-1B-7B-0924": {"hidden_size": 2048, "intermediate_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 16, "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304, "clip_qkv": None, "norm_topk_prob": False, "tie_word_embeddings": False, "attention_bias": False},
    "phimoe@hub:Phi-3.5-MoE-instruct": {"hidden_size": 4096, "intermediate_size": 6400, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 16, "num_experts_per_tok": 2, "vocab_size": 32064, "attention_bias": True, "lm_head_bias": True, "sliding_window": 131072, "tie_word_embeddings": False},
    "glm4_moe@hub:GLM-4.5-Air": {"hidden_size": 4096, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 46, "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1, "partial_rotary_factor": 0.5, "attention_bias": True, "use_qk_norm": False, "vocab_size": 151552, "tie_word_embeddings": False, "num_nextn_predict_layers": 1},
    "smollm3@hub:SmolLM3-3B": {"hidden_size": 2048, "intermediate_size": 11008, "num_attention_heads": 16, "num_hidden_layers": 36, "num_key_value_heads": 4, "vocab_size": 128256, "tie_word_embeddings": True, "use_sliding_window": False, "no_rope_layer_interval": 4},
    "ernie4_5_moe@hub:ERNIE-4.5-21B-A3B-PT": {"hidden_size": 2560, "intermediate_size": 12288, "num_attention_heads": 20, "num_key_value_heads": 4, "num_hidden_layers": 28, "moe_num_experts": 64, "moe_k": 6, "moe_intermediate_size": 1536, "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": 27, "moe_layer_interval": 1, "use_bias": False, "vocab_size": 103424, "tie_word_embeddings": True},
    "gpt_bigcode@hub:starcoderbase-1b": {"n_embd": 2048, "n_head": 16, "n_layer": 24, "n_inner": 8192, "n_positions": 8192, "multi_query": True, "vocab_size": 49152, "activation_function": "gelu_pytorch_tanh"},
    "dbrx@hub:dbrx-base": {"d_model": 6144, "n_heads": 48, "n_layers": 40, "max_seq_len": 32768, "vocab_size": 100352, "attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000}, "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}, "tie_word_embeddings": False},
    "llama4@hub:Llama-4-Scout-17B-16E": {"text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 48, "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "vocab_size": 202048, "attention_chunk_size": 8192, "use_qk_norm": True, "tie_word_embeddings": False}},
    "llama4@hub:Llama-4-Maverick-17B-128E": {"text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 48, "num_local_experts": 128, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "vocab_size": 202048, "attention_chunk_size": 8192, "use_qk_norm": False, "tie_word_embeddings": False}},
    "mistral3@hub:Mistral-Small-3.1-24B": {"text_config": {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 32768, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 40, "vocab_size": 131072, "sliding_window": None}},
}

# Vision-language wrappers (image-text-to-text, not in the causal-LM mapping) whose text
# model Headroom imports. As param_counts.py does for the catalogue's wrappers, the text
# model is counted from the parsed text_config: its base model (AutoModel.from_config) plus
# an lm_head of vocab × hidden unless the wrapper's tie_word_embeddings (the wrapper holds the
# lm_head and ties it by its own config: modeling_utils.py get_expanded_tied_weights_keys
# reads self.config.tie_word_embeddings; Qwen3VLMoeConfig's default is False while its
# text config's is True, and Qwen3VLMoeForConditionalGeneration leaves lm_head untied).
VLM_WRAPPERS = ["glm4v", "glm4v_moe", "qwen2_5_vl", "qwen2_vl", "qwen3_vl", "qwen3_vl_moe"]

# Keys holding one entry per layer, shrunk with num_hidden_layers.
# Gemma 3n lists its MLP widths and activation sparsities per layer.
PER_LAYER_KEYS = ["layer_types", "no_rope_layers", "mlp_layer_types", "moe_layers_enabled", "intermediate_size", "activation_sparsity_pattern"]


def layer_key(cfg):
    for k in ["num_hidden_layers", "n_layer", "n_layers", "num_layers"]:
        if isinstance(getattr(cfg, k, None), int):
            return k
    return None


def shrink(cfg):
    """Shrink the depth to SHRINK_LAYERS where every per-layer key can follow. Returns a note."""
    key = layer_key(cfg)
    if key is None:
        return "depth key not found; default depth kept"
    depth = getattr(cfg, key)
    if depth <= SHRINK_LAYERS:
        return f"default depth {depth} kept"
    new = SHRINK_LAYERS
    updates = {key: new}
    for k in PER_LAYER_KEYS:
        v = getattr(cfg, k, None)
        if isinstance(v, list):
            if len(v) != depth:
                return f"default depth {depth} kept ({k} has {len(v)} entries)"
            updates[k] = v[:new]
    for k in ["mlp_only_layers", "moe_layers"]:
        v = getattr(cfg, k, None)
        if isinstance(v, list):
            updates[k] = [i for i in v if i < new]
    fk = getattr(cfg, "first_k_dense_replace", None)
    if isinstance(fk, int) and fk >= new:
        return f"default depth {depth} kept (first_k_dense_replace {fk})"
    for k, v in updates.items():
        try:
            setattr(cfg, k, v)
        except AttributeError as e:
            raise CannotShrink(f"default depth {depth} kept ({k}: {e})")
    return f"{key} {depth} -> {new}"


class CannotShrink(Exception):
    pass


def shrunk_config(model_type, variant=None):
    fix = {**FIX.get(model_type, {}), **(VARIANTS[variant] if variant else {})}
    cfg = AutoConfig.for_model(model_type, **fix)
    target = getattr(cfg, "text_config", None) if model_type in WRAPPED else cfg
    try:
        note = shrink(target)
    except CannotShrink as e:
        cfg = AutoConfig.for_model(model_type, **fix)
        note = str(e)
    if FIX.get(model_type):
        note += f"; set {json.dumps(FIX[model_type])} (unset by default)"
    if variant:
        note += f"; variant: set {json.dumps(VARIANTS[variant])}"
    return cfg, note


def build(cfg, cls_name):
    cls = getattr(transformers, cls_name)
    with torch.device("meta"):
        model = cls._from_config(cfg)
    return sum(p.numel() for p in model.parameters())


def jsonable(d):
    """JSON as serde reads it: non-finite floats (Mamba's time_step_limit [0.0, inf]) become
    the strings "Infinity" / "-Infinity" / "NaN", other non-JSON values their str()."""
    def fix(v):
        if isinstance(v, float) and not math.isfinite(v):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v
    return fix(json.loads(json.dumps(d, default=lambda o: str(o))))


def measure(model_type, cls_name, variant=None):
    cfg, note = shrunk_config(model_type, variant)
    notes = []
    if model_type in WRAPPED:
        build_cfg = cfg.text_config
        notes.append(f"wrapper: text model {type(build_cfg).__name__} measured")
    else:
        build_cfg = cfg
    notes.append(note)
    n = build(build_cfg, cls_name)
    return {"config": jsonable(cfg.to_dict()), "param_count": n, "class": cls_name, "notes": "; ".join(notes)}


def main():
    torch.manual_seed(0)
    out = {
        "generator": "tests/measure/family_sweep.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "method": "AutoConfig.for_model(model_type), depth shrunk (see notes), *ForCausalLM built on torch.device('meta'); param_count = sum(p.numel() for p in model.parameters()) (tied once); config = config.to_dict()",
        "families": {},
        "skipped": {},
    }
    entries = sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items())
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES as IT

    text_of = {"mistral3": "MistralForCausalLM"}
    for w in WRAPPERS:
        assert w in IT, w
        entries.append((w, text_of[w]))
    for model_type, cls_name in sorted(entries):
        if model_type in SKIP:
            out["skipped"][model_type] = SKIP[model_type]
            continue
        try:
            out["families"][model_type] = measure(model_type, cls_name)
            print(f"{model_type:28} {out['families'][model_type]['param_count']:>16,}  {out['families'][model_type]['notes']}", file=sys.stderr)
        except Exception as e:  # a config that cannot be built
            msg = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            out["skipped"][model_type] = f"config or model cannot be built: {msg}"
            print(f"{model_type:28} SKIPPED {msg}", file=sys.stderr)
            if os.environ.get("SWEEP_DEBUG"):
                traceback.print_exc()
    from transformers import AutoModel

    for model_type in VLM_WRAPPERS:
        cfg = AutoConfig.for_model(model_type)
        tc = cfg.text_config
        note = shrink(tc)
        with torch.device("meta"):
            base = AutoModel.from_config(tc)
        n = sum(p.numel() for p in base.parameters())
        tied = bool(cfg.tie_word_embeddings)
        if not tied:
            n += tc.vocab_size * tc.hidden_size
        out["families"][model_type] = {
            "config": jsonable(cfg.to_dict()),
            "param_count": n,
            "class": type(base).__name__ + " + lm_head",
            "notes": f"vision-language wrapper: text model from text_config ({type(base).__name__}, lm_head {'tied' if tied else 'untied'}); text {note}",
        }
        print(f"{model_type:28} {n:>16,}  {out['families'][model_type]['notes']}", file=sys.stderr)

    for key, keys in HUB_CONFIGS.items():
        model_type = key.split("@")[0]
        cfg = AutoConfig.for_model(model_type, **keys)
        build_cfg = cfg.text_config if model_type in WRAPPED else cfg
        cls_name = {"llama4": "Llama4ForCausalLM", "mistral3": "MistralForCausalLM"}.get(model_type) or MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]
        n = build(build_cfg, cls_name)
        # What a Hub config.json holds: the keys written above (plus model_type), not to_dict().
        out["families"][key] = {"config": {"model_type": model_type, **keys}, "param_count": n, "class": cls_name, "notes": "Hub-style config.json (the keys as written), full depth"}
        print(f"{key:28} {n:>16,}", file=sys.stderr)

    classes = dict(entries)
    for variant in sorted(VARIANTS):
        model_type = variant.split("@")[0]
        out["families"][variant] = measure(model_type, classes[model_type], variant)
        print(f"{variant:28} {out['families'][variant]['param_count']:>16,}  {out['families'][variant]['notes']}", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True, allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
