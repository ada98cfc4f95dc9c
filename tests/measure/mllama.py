#!/usr/bin/env python3
"""mllama (Llama-3.2-Vision) against transformers 5.x (tests/fixtures/measured/mllama.json).

No network, nothing downloaded.
- params: MllamaForConditionalGeneration built on torch.device("meta") from MllamaConfig's
  default (stored as its to_dict()), from a small variant (max_num_tiles 2 with its own
  supported_aspect_ratios, three intermediate layers) and from the tiny config below. Parts:
  vision_tower = model.vision_model, projector = model.multi_modal_projector,
  language_model = everything else (the text model with its cross-attention layers, lm_head).
- tiles: MllamaImageProcessor (torchvision backend) on random images of several sizes: the tiles
  pixel_values holds per image (always max_image_tiles, padded with zeros) and the aspect ratio.
- cache: the tiny model in eval, one forward with pixel_values and use_cache (DynamicCache), the
  K/V bytes of its self-attention layers and of its cross-attention layers, fp32 and bf16, at two
  text lengths and with one and two images (common.cache_bytes per layer).
- activations: the tiny model on CPU (fp32; pure bf16 once; CPU autocast to bf16, which casts
  these models' ops as CUDA's does: linears, convs, matmuls and SDPA with its float mask cast per
  call; the LayerNorms, which CUDA's autocast runs in fp32 and CPU's in their input's dtype, read
  fp32 inputs here; SDPA); twice with non-reentrant gradient checkpointing, whose kept layer
  arguments are recorded as activations_parts.py records them, each image through the real image processor,
  the cross-attention mask built as MllamaProcessor builds it (the tokens from the <|image|> token
  on attend to the image's tiles), use_cache as the config says (true: the forward builds a
  DynamicCache, whose K/V bytes are recorded too); saved tensors (each storage once; common.SavedTensorRecorder)
  grouped by the module that saved them: vision_model, multi_modal_projector, the cross-attention
  layers, the self-attention layers and the rest (embeddings, final norm, lm_head, loss); tower
  trained and frozen.
Run: /work/venv/bin/python tests/measure/mllama.py
"""
import contextlib
import json
import os
import sys

import torch
import transformers
from transformers import MllamaConfig, MllamaForConditionalGeneration, MllamaImageProcessor
from transformers.models.mllama.processing_mllama import convert_sparse_cross_attention_mask_to_dense, get_cross_attention_token_mask

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ModuleStack, ParamCastTracker, SavedTensorRecorder, cache_bytes, hold_checkpoint_inputs  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "mllama.json")
IMAGE_TOKEN = 500

# A 42-px tile of 3 × 3 patches and a class token (10, padded to 16 before the encoders); 4 local
# and 2 global blocks; the final state and two intermediate layers' make 3 · 32 = 96 =
# vision_output_dim. The text model: 4 layers, 1 and 3 cross-attention.
TINY = {"model_type": "mllama", "image_token_index": IMAGE_TOKEN,
        "text_config": {"model_type": "mllama_text_model", "vocab_size": 512, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "hidden_size": 64, "intermediate_size": 96,
                        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "cross_attention_layers": [1, 3]},
        "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 4,
                          "num_global_layers": 2, "attention_heads": 4, "image_size": 42, "patch_size": 14, "max_num_tiles": 4,
                          "intermediate_layers_indices": [1, 3], "vision_output_dim": 96}}

SMALL = {"model_type": "mllama", "image_token_index": 128256,
         "text_config": {"model_type": "mllama_text_model", "vocab_size": 32000, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "hidden_size": 512, "intermediate_size": 1376,
                         "num_hidden_layers": 10, "num_attention_heads": 8, "num_key_value_heads": 4, "cross_attention_layers": [2, 5, 9]},
         "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 6,
                           "num_global_layers": 2, "attention_heads": 4, "image_size": 224, "patch_size": 16, "max_num_tiles": 2,
                           "supported_aspect_ratios": [[1, 1], [1, 2], [2, 1]], "intermediate_layers_indices": [1, 3, 5],
                           "vision_output_dim": 1024}}


def build(cfg):
    return MllamaConfig.from_dict(cfg) if cfg else MllamaConfig()


def params(cfg):
    with torch.device("meta"):
        m = MllamaForConditionalGeneration(build(cfg))
    total = sum(p.numel() for p in m.parameters())
    tower = sum(p.numel() for p in m.model.vision_model.parameters())
    projector = sum(p.numel() for p in m.model.multi_modal_projector.parameters())
    config = cfg if cfg else MllamaConfig().to_dict()
    return {"config": config, "param_count": total,
            "param_count_by_part": {"vision_tower": tower, "projector": projector, "language_model": total - tower - projector}}


def process(sizes, tile, max_tiles):
    proc = MllamaImageProcessor(size={"height": tile, "width": tile}, max_image_tiles=max_tiles)
    images = [torch.randint(1, 255, (3, h, w), dtype=torch.uint8) for h, w in sizes]
    return proc(images=[images], return_tensors="pt")


def tiles():
    cases = []
    for tile, max_tiles in ((560, 4), (42, 4)):
        for h, w in ((560, 560), (300, 300), (1120, 560), (560, 1680), (2000, 1500), (100, 900)):
            out = process([(h, w)], tile, max_tiles)
            cases.append({"height": h, "width": w, "tile_size": tile, "max_image_tiles": max_tiles,
                          "pixel_values_shape": list(out["pixel_values"].shape), "num_tiles": int(out["num_tiles"][0][0]),
                          "aspect_ratio_id": int(out["aspect_ratio_ids"][0][0])})
    return cases


def inputs(images, text, seed=0):
    """input_ids with one <|image|> token per image at its start, pixel values through the
    processor, and the cross-attention mask MllamaProcessor makes."""
    g = torch.Generator().manual_seed(seed)
    sizes = [(42, 42), (84, 42), (42, 126)][:images]
    out = process(sizes, 42, 4)
    ids = torch.randint(0, 400, (1, text), generator=g)
    for i in range(images):
        ids[0, 1 + i] = IMAGE_TOKEN
    token_mask = get_cross_attention_token_mask(ids[0].tolist(), IMAGE_TOKEN)
    dense = convert_sparse_cross_attention_mask_to_dense([token_mask], out["num_tiles"], 4, text)
    return ids, out, torch.tensor(dense)


def cache():
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        for images, text in ((1, 16), (1, 32), (2, 32)):
            torch.manual_seed(0)
            mixed = dtype == "bf16-mixed"
            m = MllamaForConditionalGeneration(build(TINY)).to(torch.float32 if mixed else dtype).eval()
            ids, pv, mask = inputs(images, text)
            with torch.no_grad():
                res = m(input_ids=ids, pixel_values=pv["pixel_values"].to(dtype), aspect_ratio_ids=pv["aspect_ratio_ids"],
                        aspect_ratio_mask=pv["aspect_ratio_mask"], cross_attention_mask=mask, use_cache=True)
            c = res.cache
            cross = set(TINY["text_config"]["cross_attention_layers"])
            per_layer = []
            for i, layer in enumerate(c.layers):
                class One:
                    layers = [layer]
                per_layer.append(cache_bytes(One)[0]["kv"])
            key = f"mllama@{images}img-s{text}-{str(dtype).replace('torch.', '')}"
            out[key] = {"config": TINY, "images": images, "text_tokens": text, "micro_batch": 1,
                        "precision": "fp32" if dtype == torch.float32 else "bf16",
                        "self_kv_bytes": sum(b for i, b in enumerate(per_layer) if i not in cross),
                        "cross_kv_bytes": sum(b for i, b in enumerate(per_layer) if i in cross),
                        "kv_bytes_by_layer": per_layer}
            print(key, out[key]["self_kv_bytes"], out[key]["cross_kv_bytes"])
    return out


# PEFT LoRA on the language model's linears only (the tower's q/k/v/o and fc1/fc2 would match
# plain names too): all seven kinds, or q and v.
LM_LINEARS = r"model\.language_model\.layers\.\d+\.(self_attn|cross_attn|mlp)\.({})_proj"
LORA = {"all": ["q", "k", "v", "o", "gate", "up", "down"], "qv": ["q", "v"], "all+tower": ["q", "k", "v", "o", "gate", "up", "down"]}
# With "all+tower" the vision blocks' q/k/v/o_proj and fc1/fc2 too (Headroom's lora.vision_tower).
TOWER_LINEARS = r"model\.vision_model\.(transformer|global_transformer)\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.fc1|mlp\.fc2)"
CASES = [  # (images, text tokens, frozen tower, dtype, LoRA targets, gradient checkpointing)
    (1, 32, False, torch.float32, None, False), (2, 32, False, torch.float32, None, False), (1, 64, False, torch.float32, None, False),
    (1, 32, True, torch.float32, None, False), (1, 32, False, torch.bfloat16, None, False),
    (1, 32, True, torch.float32, "all", False), (1, 32, True, torch.float32, "qv", False),
    (1, 32, True, "bf16-mixed", None, False), (2, 32, True, "bf16-mixed", None, False), (1, 32, False, "bf16-mixed", None, False),
    (1, 32, False, torch.float32, None, True), (1, 32, True, "bf16-mixed", None, True),
    (1, 32, True, torch.float32, "all+tower", False)]


def activations():
    from peft import LoraConfig, get_peft_model
    out = {}
    cross = TINY["text_config"]["cross_attention_layers"]
    for images, text, frozen, dtype, lora, ckpt in CASES:
        if True:
            torch.manual_seed(0)
            mixed = dtype == "bf16-mixed"
            m = MllamaForConditionalGeneration(build(TINY)).to(torch.float32 if mixed else dtype)
            m.train()
            if frozen:
                m.model.vision_model.requires_grad_(False)
            adapter_params = 0
            if lora:
                targets = LM_LINEARS.format("|".join(LORA[lora]))
                if lora == "all+tower":
                    targets = f"({targets})|({TOWER_LINEARS})"
                m = get_peft_model(m, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=targets))
                adapter_params = sum(p.numel() for n, p in m.named_parameters() if "lora_" in n)
                m.train()
            ids, pv, mask = inputs(images, text)
            if ckpt:
                m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            stack = ModuleStack(m)
            rec = SavedTensorRecorder(m, stack)
            if ckpt:
                hold_checkpoint_inputs(m, rec, stack, partials=True)
            autocast = torch.autocast("cpu", dtype=torch.bfloat16) if mixed else contextlib.nullcontext()
            tracker = ParamCastTracker(rec.param_refs)
            with rec.hooks(), tracker, autocast:
                res = m(input_ids=ids, labels=ids, pixel_values=pv["pixel_values"].to(torch.float32 if mixed else dtype),
                        aspect_ratio_ids=pv["aspect_ratio_ids"], aspect_ratio_mask=pv["aspect_ratio_mask"], cross_attention_mask=mask)
            loss = res.loss
            # use_cache is the config's (true), as in a training run: the forward's cache.
            # (none with gradient checkpointing, which turns use_cache off)
            held = [cache_bytes(type("One", (), {"layers": [layer]}))[0]["kv"] for layer in res.cache.layers] if res.cache is not None else []
            rec.annotate_from_graph(loss.grad_fn)

            # autocast's 16-bit weight copies are counted apart (Headroom's "autocast weight copies").
            copies = set(tracker.cast_refs)

            def part(pred):
                return sum(e["nbytes"] for r, e in rec.entries.items() if r not in copies and pred(e["module"] or ""))

            def is_cross(mod):
                mod = mod.replace("base_model.model.", "")
                return any(mod.startswith(f"model.language_model.layers.{i}.") or mod == f"model.language_model.layers.{i}" for i in cross)

            def is_layer(mod):
                return "model.language_model.layers." in mod
            precision = "bf16-mixed" if mixed else "fp32" if dtype == torch.float32 else "bf16"
            key = f"mllama@{images}img-s{text}-{'frozen' if frozen else 'trained'}" + ("" if precision == "fp32" else f"-{precision}") + (f"-lora-{lora}" if lora else "") + ("-checkpointed" if ckpt else "")
            out[key] = {"config": TINY, "images": images, "text_tokens": text, "micro_batch": 1, "precision": precision,
                        "frozen_tower": frozen, "attention": str(m.config.text_config._attn_implementation),
                        "checkpointing": "full" if ckpt else "none", "lora_targets": LORA[lora] if lora else None,
                        "lora_vision_tower": lora == "all+tower", "lora_rank": 8 if lora else None, "adapter_params": adapter_params,
                        "tower_saved_bytes": part(lambda mod: "vision_model" in mod),
                        "projector_saved_bytes": part(lambda mod: "multi_modal_projector" in mod),
                        "cross_layers_saved_bytes": part(is_cross),
                        "self_layers_saved_bytes": part(lambda mod: is_layer(mod) and not is_cross(mod)),
                        "autocast_weight_copy_bytes": sum(e["nbytes"] for r, e in rec.entries.items() if r in copies),
                        "rest_saved_bytes": part(lambda mod: not is_layer(mod) and "vision_model" not in mod and "multi_modal_projector" not in mod),
                        "training_cache_self_kv_bytes": sum(b for i, b in enumerate(held) if i not in cross),
                        "training_cache_cross_kv_bytes": sum(b for i, b in enumerate(held) if i in cross),
                        "by_module": by_module(rec, copies)}
            o = out[key]
            print(key, o["tower_saved_bytes"], o["projector_saved_bytes"], o["cross_layers_saved_bytes"], o["self_layers_saved_bytes"], o["rest_saved_bytes"])
            loss.backward()
            stack.remove()
    return out


def by_module(rec, copies):
    agg = {}
    for r, e in rec.entries.items():
        if e["module"] and r not in copies:
            agg[e["module"]] = agg.get(e["module"], 0) + e["nbytes"]
    return dict(sorted(agg.items()))


def main():
    data = {"torch": torch.__version__, "transformers": transformers.__version__,
            "params": {"mllama@default": params(None), "mllama@small": params(SMALL), "mllama@tiny": params(TINY)},
            "tiles": tiles(), "cache": cache(), "activations": activations()}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
