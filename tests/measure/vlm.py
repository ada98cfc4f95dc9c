#!/usr/bin/env python3
"""Vision-language models' parameter counts by part (tests/fixtures/measured/vlm_params.json).

No network, nothing downloaded: each model is built on torch.device("meta") from its config
with AutoModelForImageTextToText (Qwen2_5_VLForConditionalGeneration,
Gemma3ForConditionalGeneration, PaliGemmaForConditionalGeneration, LlavaForConditionalGeneration,
Idefics3ForConditionalGeneration, SmolVLMForConditionalGeneration, InternVLForConditionalGeneration,
LlavaNextForConditionalGeneration, Qwen3_5ForConditionalGeneration, Qwen3_5MoeForConditionalGeneration).

Parts: vision_tower = the tower module's parameters (model.visual without its mergers for
Qwen2.5-VL, Qwen3-VL and Qwen3.5, model.vision_tower otherwise); projector = model.visual.merger
(and Qwen3-VL's deepstack_merger_list) or model.multi_modal_projector (model.connector for
Idefics3 and SmolVLM, whose tower is model.vision_model; LLaVA-NeXT's model.image_newline, the
vector its packing appends to each row of image features, is counted with the projector); language_model = everything else (embeddings, blocks, final
norm, LM head). param_count = sum(p.numel()) of the whole model (tied weights once).

Configs: each family's configuration-class default, and the Hub config.json of
Qwen/Qwen2.5-VL-7B-Instruct (flat, as published), google/gemma-3-4b-it (the catalogue's
copy, src/import/catalogue/google--gemma-3-4b-it.json) and llava-hf/llava-1.5-7b-hf (as
published: the text_config lists only the keys that differ from LlamaConfig's defaults).
Run: /work/venv/bin/python tests/measure/vlm.py
(and VLM_ACTIVATIONS=1 /work/venv/bin/python tests/measure/vlm.py for vlm_activations.json,
described below).
"""
import json
import os

import torch
import transformers
from transformers import AutoConfig, AutoModelForImageTextToText

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "vlm_params.json")

QWEN25_VL_7B = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "image_token_id": 151655, "initializer_range": 0.02,
    "intermediate_size": 18944, "max_position_embeddings": 128000, "max_window_layers": 28, "model_type": "qwen2_5_vl",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
    "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"}, "rope_theta": 1000000.0,
    "sliding_window": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
    "use_sliding_window": False, "video_token_id": 151656,
    "vision_config": {"depth": 32, "fullatt_block_indexes": [7, 15, 23, 31], "hidden_act": "silu", "hidden_size": 1280,
                      "in_channels": 3, "initializer_range": 0.02, "intermediate_size": 3420, "model_type": "qwen2_5_vl",
                      "num_heads": 16, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
                      "spatial_patch_size": 14, "temporal_patch_size": 2, "tokens_per_second": 2, "torch_dtype": "float32",
                      "window_size": 112},
    "vision_end_token_id": 151653, "vision_start_token_id": 151652, "vision_token_id": 151654, "vocab_size": 152064,
}

LLAVA_15_7B = {
    "architectures": ["LlavaForConditionalGeneration"], "ignore_index": -100, "image_token_index": 32000,
    "model_type": "llava", "pad_token_id": 32001, "projector_hidden_act": "gelu",
    "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5", "architectures": ["LlamaForCausalLM"],
                    "max_position_embeddings": 4096, "model_type": "llama", "rms_norm_eps": 1e-05,
                    "torch_dtype": "float16", "vocab_size": 32064},
    "tie_word_embeddings": False, "torch_dtype": "float16",
    "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096, "model_type": "clip_vision_model",
                      "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768,
                      "vocab_size": 32000},
    "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "vocab_size": 32064,
}


# SmolVLM2-500M-Video-Instruct's shapes as a stored public repository file quotes the Hub
# config.json ("verbatim from the model card"; find_string "\"model_type\": \"smolvlm\"", the
# offline-cache test helper): its origin could not be checked, so it is a shape case here, not
# a catalogue entry. Only the keys that shape the model are kept.
SMOLVLM2_500M_SHAPES = {
    "architectures": ["SmolVLMForConditionalGeneration"], "image_token_id": 49190, "model_type": "smolvlm", "scale_factor": 4,
    "text_config": {"head_dim": 64, "hidden_size": 960, "intermediate_size": 2560, "max_position_embeddings": 8192, "model_type": "llama",
                    "num_attention_heads": 15, "num_hidden_layers": 32, "num_key_value_heads": 5, "rms_norm_eps": 1e-05,
                    "rope_theta": 100000, "vocab_size": 49280},
    "tie_word_embeddings": False,
    "vision_config": {"hidden_size": 768, "image_size": 512, "max_image_size": {"longest_edge": 512}, "model_type": "smolvlm_vision",
                      "num_attention_heads": 12, "patch_size": 16, "size": {"longest_edge": 2048}},
    "vocab_size": 49280,
}


def gemma3_4b():
    with open(os.path.join(ROOT, "src", "import", "catalogue", "google--gemma-3-4b-it.json")) as f:
        c = json.load(f)
    c.pop("_headroom")
    return c


def count(config):
    cfg = AutoConfig.for_model(**config) if False else AutoConfig.for_model(config["model_type"]).__class__.from_dict(config)
    with torch.device("meta"):
        m = AutoModelForImageTextToText.from_config(cfg)
    total = sum(p.numel() for p in m.parameters())
    inner = m.model
    if hasattr(inner, "visual"):
        projector = sum(p.numel() for p in inner.visual.merger.parameters())
        if hasattr(inner.visual, "deepstack_merger_list"):
            projector += sum(p.numel() for p in inner.visual.deepstack_merger_list.parameters())
        tower = sum(p.numel() for p in inner.visual.parameters()) - projector
    elif hasattr(inner, "connector"):
        projector = sum(p.numel() for p in inner.connector.parameters())
        tower = sum(p.numel() for p in inner.vision_model.parameters())
    else:
        projector = sum(p.numel() for p in inner.multi_modal_projector.parameters())
        if getattr(inner, "image_newline", None) is not None:
            projector += inner.image_newline.numel()
        tower = sum(p.numel() for p in inner.vision_tower.parameters())
    return {"config": config, "class": type(m).__name__, "param_count": total,
            "param_count_by_part": {"vision_tower": tower, "projector": projector, "language_model": total - tower - projector}}


def default(model_type):
    d = AutoConfig.for_model(model_type).to_dict()
    return d


def main():
    cases = {
        "qwen2_5_vl@7b-instruct": QWEN25_VL_7B,
        "qwen2_5_vl@default": default("qwen2_5_vl"),
        "qwen3_vl@default": default("qwen3_vl"),
        "gemma3@4b-it": gemma3_4b(),
        "gemma3@default": default("gemma3"),
        "paligemma@default": default("paligemma"),
        "llava@1.5-7b": LLAVA_15_7B,
        "llava@default": default("llava"),
        "idefics3@default": default("idefics3"),
        "smolvlm@default": default("smolvlm"),
        "smolvlm@2-500m-shapes": SMOLVLM2_500M_SHAPES,
        "internvl@default": default("internvl"),
        # InternViT-6B's switches (RMSNorm blocks, q/k norms, a final LayerNorm instead of mean
        # pooling, a mask token, no attention biases) on the default's shapes.
        "internvl@rms-qk-norm": {**default("internvl"), "vision_config": {
            **default("internvl")["vision_config"], "norm_type": "rms_norm", "use_qk_norm": True, "use_mean_pooling": False,
            "use_mask_token": True, "attention_bias": False, "num_hidden_layers": 4}},
        "llava_next@default": default("llava_next"),
        # Qwen3.5 (every size is a Qwen3_5ForConditionalGeneration with a tower) and its MoE
        # variant, and a vision_config left empty: Qwen3_5VisionConfig's defaults, whose
        # merger writes 3584 wide whatever the text width.
        "qwen3_5@default": default("qwen3_5"),
        "qwen3_5_moe@default": default("qwen3_5_moe"),
        "qwen3_5@vision-defaults": {"model_type": "qwen3_5", "text_config": default("qwen3_5")["text_config"], "vision_config": {}},
    }
    out = {"torch": torch.__version__, "transformers": transformers.__version__, "cases": {}}
    for name, cfg in cases.items():
        out["cases"][name] = count(json.loads(json.dumps(cfg, default=str)))
        print(name, out["cases"][name]["param_count"], out["cases"][name]["param_count_by_part"])
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__" and not os.environ.get("VLM_ACTIVATIONS"):
    main()


# ---------------------------------------------------------------------------------------
# Saved activations of tiny VLMs (tests/fixtures/measured/vlm_activations.json): fp32 on
# CPU, train mode, one sample with one image, the tower trained or frozen
# (requires_grad_(False) on the tower, as frozen.vision_tower). Bytes saved for backward
# (common.SavedTensorRecorder, once per storage) by modules under the tower, the projector,
# and the whole model; SDPA as transformers picks it on CPU (named in "attention").
# ---------------------------------------------------------------------------------------
TINY_TEXT = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
             "intermediate_size": 128, "vocab_size": 512}

TINY_VLM = {
    "qwen2_5_vl": {"model_type": "qwen2_5_vl", "image_token_id": 500, "video_token_id": 501, "vision_start_token_id": 502,
                   "text_config": {**TINY_TEXT, "model_type": "qwen2_5_vl_text", "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]}},
                   "vision_config": {"depth": 2, "hidden_size": 64, "intermediate_size": 96, "num_heads": 4, "out_hidden_size": 64,
                                     "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 56,
                                     "fullatt_block_indexes": [1]}},
    "qwen3_vl": {"model_type": "qwen3_vl", "image_token_id": 500, "video_token_id": 501, "vision_start_token_id": 502,
                 "text_config": {**TINY_TEXT, "model_type": "qwen3_vl_text", "head_dim": 16, "rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}},
                 "vision_config": {"depth": 3, "hidden_size": 64, "intermediate_size": 96, "num_heads": 4, "out_hidden_size": 64,
                                   "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2, "num_position_embeddings": 64,
                                   "deepstack_visual_indexes": [0, 1]}},
    # Qwen3.5: Qwen3-VL's tower without DeepStack before a Gated DeltaNet + attention model
    # (transformers' torch fallback of the delta rule on the CPU).
    "qwen3_5": {"model_type": "qwen3_5", "image_token_id": 500, "video_token_id": 501, "vision_start_token_id": 502,
                "text_config": {**TINY_TEXT, "model_type": "qwen3_5_text", "head_dim": 32, "layer_types": ["linear_attention", "full_attention"],
                                "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16,
                                "rope_parameters": {"rope_type": "default", "mrope_section": [2, 1, 1], "rope_theta": 10000.0, "partial_rotary_factor": 0.25}},
                "vision_config": {"depth": 3, "hidden_size": 64, "intermediate_size": 96, "num_heads": 4, "out_hidden_size": 64,
                                  "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2, "num_position_embeddings": 64}},
    "gemma3": {"model_type": "gemma3", "image_token_index": 500, "mm_tokens_per_image": 4, "boi_token_index": 501, "eoi_token_index": 502,
               "text_config": {**TINY_TEXT, "model_type": "gemma3_text", "head_dim": 16},
               "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                 "image_size": 64, "patch_size": 16, "vision_use_head": False}},
    "paligemma": {"model_type": "paligemma", "image_token_index": 500, "projection_dim": 64, "hidden_size": 64,
                  "text_config": {**TINY_TEXT, "model_type": "gemma", "head_dim": 16},
                  "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                    "image_size": 64, "patch_size": 16, "vision_use_head": False, "projection_dim": 64}},
    "llava": {"model_type": "llava", "image_token_index": 500, "vision_feature_layer": -2,
              "text_config": {**TINY_TEXT, "model_type": "llama"},
              "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                "image_size": 32, "patch_size": 8}},
    # Idefics3 / SmolVLM: 32-px tiles of 4 × 4 patches, pixel-shuffled 2 × 2 into 4 tokens; the
    # processor's `size.longest_edge` rides in vision_config as SmolVLM's Hub configs carry it.
    "idefics3": {"model_type": "idefics3", "image_token_id": 500, "scale_factor": 2,
                 "text_config": {**TINY_TEXT, "model_type": "llama"},
                 "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                   "image_size": 32, "patch_size": 8, "size": {"longest_edge": 64}}},
    "smolvlm": {"model_type": "smolvlm", "image_token_id": 500, "scale_factor": 2,
                "text_config": {**TINY_TEXT, "model_type": "llama"},
                "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                  "image_size": 32, "patch_size": 8, "size": {"longest_edge": 96}}},
    # InternVL: 32-px tiles of 4 × 4 patches and a class token, pixel-shuffled 2 × 2 into 4
    # tokens; a 64 × 32 image is 2 × 1 tiles and the thumbnail (GotOcr2ImageProcessor,
    # crop_to_patches, max_patches 12). The second case has InternViT-6B's switches.
    "internvl": {"model_type": "internvl", "image_token_id": 500, "downsample_ratio": 0.5,
                 "text_config": {**TINY_TEXT, "model_type": "qwen2"},
                 "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                   "image_size": 32, "patch_size": 8, "attention_bias": True}},
    "internvl_rms": {"model_type": "internvl", "image_token_id": 500, "downsample_ratio": 0.5,
                     "text_config": {**TINY_TEXT, "model_type": "qwen2"},
                     "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                       "image_size": 32, "patch_size": 8, "norm_type": "rms_norm", "use_qk_norm": True,
                                       "use_mean_pooling": False}},
    # LLaVA-NeXT: CLIP over 32-px tiles of 4 × 4 patches and a class token; a 64 × 32 image
    # fits the [32, 64] pinpoint: the base tile and 1 × 2 crops (3 tiles), 16 + 4 × 8 + 4 = 52
    # language-model tokens after pack_image_features.
    "llava_next": {"model_type": "llava_next", "image_token_index": 500, "vision_feature_layer": -2,
                   "image_grid_pinpoints": [[32, 64], [64, 32], [64, 64]],
                   "text_config": {**TINY_TEXT, "model_type": "llama"},
                   "vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                                     "image_size": 32, "patch_size": 8}},
}

# The tiled families' images (height, width) before the processor: 64 × 64 becomes 2 × 2 tiles and
# the global view (5 tiles); 32 × 96 becomes 1 × 3 tiles and the global view (4 tiles).
TILED_IMAGE = {"idefics3": (64, 64), "smolvlm": (32, 96), "internvl": (32, 64), "internvl_rms": (32, 64), "llava_next": (32, 64)}


def tiled_pixels(name, cfg):
    """The real image processor (PIL backend) on a random image: pixel_values, the
    pixel_attention_mask and the tiles' count."""
    from transformers import GotOcr2ImageProcessorPil, Idefics3ImageProcessorPil, SmolVLMImageProcessorPil
    v = cfg["vision_config"]
    h, w = TILED_IMAGE[name]
    image = torch.randint(1, 255, (3, h, w), dtype=torch.uint8)
    if name == "llava_next":
        from transformers import LlavaNextImageProcessorPil
        proc = LlavaNextImageProcessorPil(size={"shortest_edge": v["image_size"]}, crop_size={"height": v["image_size"], "width": v["image_size"]},
                                          image_grid_pinpoints=cfg["image_grid_pinpoints"])
        out = proc(images=[image], return_tensors="pt")
        return out["pixel_values"], out["image_sizes"], [w, h]
    if name.startswith("internvl"):
        proc = GotOcr2ImageProcessorPil(size={"height": v["image_size"], "width": v["image_size"]}, crop_to_patches=True, max_patches=12)
        out = proc(images=[image], return_tensors="pt")
        return out["pixel_values"], None, [w, h]
    cls = Idefics3ImageProcessorPil if name == "idefics3" else SmolVLMImageProcessorPil
    proc = cls(size={"longest_edge": v["size"]["longest_edge"]}, max_image_size={"longest_edge": v["image_size"]})
    out = proc(images=[[image]], return_tensors="pt")
    return out["pixel_values"], out["pixel_attention_mask"], [w, h]


def vlm_inputs(name, cfg, text_tokens=32):
    torch.manual_seed(0)
    if name in ("qwen2_5_vl", "qwen3_vl", "qwen3_5"):
        p = 14 if name == "qwen2_5_vl" else 16
        side = 8 * p  # 8 × 8 patches, 16 tokens after the 2 × 2 merger
        grid = torch.tensor([[1, side // p, side // p]])
        patches = int(grid.prod())
        pixel_values = torch.randn(patches, 3 * 2 * p * p)
        image_tokens = patches // 4
        extra = {"pixel_values": pixel_values, "image_grid_thw": grid}
        resolution = [side, side]
    elif name == "paligemma":
        image_tokens = (64 // 16) ** 2
        extra = {"pixel_values": torch.randn(1, 3, 64, 64)}
        resolution = [64, 64]
    elif name == "gemma3":
        image_tokens = cfg["mm_tokens_per_image"]
        extra = {"pixel_values": torch.randn(1, 3, 64, 64)}
        resolution = [64, 64]
    elif name == "llava_next":
        from transformers.models.llava_next.modeling_llava_next import LlavaNextModel
        pixel_values, image_sizes, resolution = tiled_pixels(name, cfg)
        counter = LlavaNextModel(AutoConfig.for_model("llava_next").__class__.from_dict(cfg))
        with torch.no_grad():
            _, lens = counter.pack_image_features([torch.zeros(pixel_values.shape[1], (32 // 8) ** 2, 64)], image_sizes, "default",
                                                  image_newline=counter.image_newline)
        image_tokens = int(lens[0])
        extra = {"pixel_values": pixel_values, "image_sizes": image_sizes}
    elif name.startswith("internvl"):
        pixel_values, _, resolution = tiled_pixels(name, cfg)
        image_tokens = pixel_values.shape[0] * (32 // 8) ** 2 // 4
        extra = {"pixel_values": pixel_values}
    elif name in TILED_IMAGE:
        pixel_values, mask, resolution = tiled_pixels(name, cfg)
        image_tokens = pixel_values.shape[1] * (32 // 8) ** 2 // 4
        extra = {"pixel_values": pixel_values, "pixel_attention_mask": mask}
    else:
        image_tokens = (32 // 8) ** 2
        extra = {"pixel_values": torch.randn(1, 3, 32, 32)}
        resolution = [32, 32]
    image_id = cfg.get("image_token_id", cfg.get("image_token_index"))
    ids = torch.cat([torch.full((1, image_tokens), image_id), torch.randint(0, 400, (1, text_tokens))], dim=1)
    if name in ("gemma3", "paligemma"):
        extra["token_type_ids"] = (ids == image_id).long()
    if name in ("qwen3_vl", "qwen3_5"):
        extra["mm_token_type_ids"] = (ids == image_id).long()
    return ids, extra, resolution, image_tokens


def vlm_activations():
    from common import ModuleStack, SavedTensorRecorder
    out = {}
    # LLaVA also at two samples per micro-batch: its projector's input is then a copy of the
    # class-token-less slice (one sample's slice is a view of the tower's output).
    runs = [(name, cfg, frozen, 1) for name, cfg in TINY_VLM.items() for frozen in (False, True)]
    runs += [("llava", TINY_VLM["llava"], frozen, 2) for frozen in (False, True)]
    for name, cfg, frozen, batch in runs:
        config = AutoConfig.for_model(cfg["model_type"]).__class__.from_dict(cfg)
        torch.manual_seed(0)
        m = AutoModelForImageTextToText.from_config(config)
        m.train()
        inner = m.model
        if frozen:
            (inner.visual if hasattr(inner, "visual") else getattr(inner, "vision_tower", None) or inner.vision_model).requires_grad_(False)
            if hasattr(inner, "visual"):
                inner.visual.merger.requires_grad_(True)
                if hasattr(inner.visual, "deepstack_merger_list"):
                    inner.visual.deepstack_merger_list.requires_grad_(True)
        ids, extra, resolution, image_tokens = vlm_inputs(name, cfg)
        if batch > 1:
            ids = ids.repeat(batch, 1)
            extra = {"pixel_values": extra["pixel_values"].repeat(batch, 1, 1, 1)}
        stack = ModuleStack(m)
        rec = SavedTensorRecorder(m, stack)
        with rec.hooks():
            loss = m(input_ids=ids, labels=ids, **extra).loss
        def part(pred):
            return sum(e["nbytes"] for e in rec.entries.values() if e["module"] and pred(e["module"]))
        is_projector = lambda mod: "merger" in mod or "multi_modal_projector" in mod or "connector" in mod  # deepstack_merger_list too
        is_tower = lambda mod: ("visual" in mod or "vision_tower" in mod or "vision_model" in mod) and not is_projector(mod)
        total, _, _ = rec.totals()
        # Storages no node reachable from the loss keeps (Qwen3.5's delta rule drops its last
        # state update), freed when the forward returns.
        rec.annotate_from_graph(loss.grad_fn)
        unreachable = sum(e["nbytes"] for e in rec.entries.values() if not e["savers"])
        key = f"{name}@{'frozen' if frozen else 'trained'}" + (f"-b{batch}" if batch > 1 else "")
        out[key] = {"config": cfg, "resolution": resolution, "text_tokens": 32, "image_tokens": image_tokens, "micro_batch": batch,
                    "precision": "fp32", "frozen_tower": frozen,
                    "attention": str(getattr(config.vision_config, "_attn_implementation", None)),
                    "tower_saved_bytes": part(is_tower), "projector_saved_bytes": part(is_projector), "model_saved_bytes": total,
                    "model_unreachable_bytes": unreachable}
        print(key, out[key]["tower_saved_bytes"], out[key]["projector_saved_bytes"], total)
        loss.backward()
        stack.remove()
    path = os.path.join(ROOT, "tests", "fixtures", "measured", "vlm_activations.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "cases": out}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__" and os.environ.get("VLM_ACTIVATIONS"):
    vlm_activations()
