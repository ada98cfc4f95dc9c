"""Diffusion transformers (FluxTransformer2DModel, SD3Transformer2DModel, WanTransformer3DModel)
as diffusers 0.42.1 builds and runs them.

Counts: each real config under tests/fixtures/diffusers/configs/*/transformer/config.json built on
the meta device, sum(p.numel()).

Saved: one training forward of tiny configs under FakeTensorMode on device "cuda" (no memory, no
GPU: ops dispatch as on CUDA, CUDA autocast through common.fake_cuda_autocast), SDPA replaced by
common.cuda_sdpa (torch 2.15's CUDA kernel choice: flash in bf16, memory-efficient in fp32), every
tensor autograd saves counted once per storage (common.SavedTensorRecorder; parameters excluded,
autocast's bf16 weight copies reported apart as param_copy_bytes). Checkpointing: diffusers'
enable_gradient_checkpointing() (torch.utils.checkpoint, non-reentrant): the block inputs it keeps
are recorded as "checkpoint-input". LoRA: PEFT adapters added as diffusers' train_dreambooth_lora_*
scripts add them (transformer.requires_grad_(False), LoraConfig(r, init_lora_weights="gaussian",
target_modules=...), transformer.add_adapter), adapters fp32 (cast_training_params) or in the
base's dtype. The loss is outside the denoiser and not counted.

Peaks: one torch.no_grad() call of the same tiny configs, fake CUDA, LiveBytes (live storage bytes
beyond weights and inputs).

Run: /work/venv/bin/python tests/measure/diffusion_dit.py
Writes tests/fixtures/measured/diffusion_dit.json
"""
import json
import os
import pathlib
import sys
import warnings

import torch
import diffusers
import peft
from torch._subclasses.fake_tensor import FakeTensorMode

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from common import SavedTensorRecorder, ParamCastTracker, ModuleStack, fake_cuda_autocast, cuda_sdpa  # noqa: E402
from live_bytes import LiveBytes  # noqa: E402

warnings.filterwarnings("ignore")
# PEFT moves each new adapter to its base layer's dtype with module.to(), which swaps FakeTensor
# parameters and fails on them: done as the in-place cast it amounts to (as tests/measure/lora.py).
_orig_to = torch.nn.Module.to


def _to_in_place(self, *args, **kwargs):
    params = list(self.parameters())
    if not params or not all(isinstance(p, torch._subclasses.fake_tensor.FakeTensor) for p in params):
        return _orig_to(self, *args, **kwargs)
    dtype = kwargs.get("dtype") or next((a for a in args if isinstance(a, torch.dtype)), None)
    if dtype is not None:
        for p in params:
            if p.dtype.is_floating_point and p.dtype != dtype:
                p.data = p.data.to(dtype)
    return self


torch.nn.Module.to = _to_in_place
ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests/fixtures/diffusers/configs"
KERNELS = []


def forced_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    kernel, out = cuda_sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                            scale=scale, enable_gqa=enable_gqa)
    KERNELS.append(kernel)
    return out


torch.nn.functional.scaled_dot_product_attention = forced_sdpa

# train_dreambooth_lora_flux.py / train_dreambooth_lora_sd3.py default target_modules; Wan: the
# attention projections (diffusers' Wan LoRA trainers target to_q/to_k/to_v/to_out.0).
TARGETS = {
    "FluxTransformer2DModel": ["attn.to_k", "attn.to_q", "attn.to_v", "attn.to_out.0", "attn.add_k_proj",
                               "attn.add_q_proj", "attn.add_v_proj", "attn.to_add_out", "ff.net.0.proj",
                               "ff.net.2", "ff_context.net.0.proj", "ff_context.net.2"],
    "SD3Transformer2DModel": ["attn.add_k_proj", "attn.add_q_proj", "attn.add_v_proj", "attn.to_add_out",
                              "attn.to_k", "attn.to_out.0", "attn.to_q", "attn.to_v"],
    "WanTransformer3DModel": ["to_q", "to_k", "to_v", "to_out.0"],
    # train_cogvideox_lora.py
    "CogVideoXTransformer3DModel": ["to_k", "to_q", "to_v", "to_out.0"],
    # finetrainers' HunyuanVideo LoRA default
    "HunyuanVideoTransformer3DModel": ["to_q", "to_k", "to_v", "to_out.0"],
    # train_dreambooth_lora_sana.py
    "SanaTransformer2DModel": ["to_k", "to_q", "to_v"],
    # LTX-Video-Trainer's default LoRA targets
    "LTXVideoTransformer3DModel": ["to_k", "to_q", "to_v", "to_out.0"],
}

TINY = {
    "flux": {"_class_name": "FluxTransformer2DModel", "patch_size": 1, "in_channels": 16, "num_layers": 2,
             "num_single_layers": 2, "attention_head_dim": 32, "num_attention_heads": 2,
             "joint_attention_dim": 48, "pooled_projection_dim": 24, "guidance_embeds": True,
             "axes_dims_rope": [8, 12, 12]},
    "sd3": {"_class_name": "SD3Transformer2DModel", "sample_size": 32, "patch_size": 2, "in_channels": 4,
            "num_layers": 3, "attention_head_dim": 32, "num_attention_heads": 2, "joint_attention_dim": 48,
            "caption_projection_dim": 64, "pooled_projection_dim": 24, "out_channels": 4,
            "pos_embed_max_size": 32},
    "sd35": {"_class_name": "SD3Transformer2DModel", "sample_size": 32, "patch_size": 2, "in_channels": 4,
             "num_layers": 3, "attention_head_dim": 32, "num_attention_heads": 2, "joint_attention_dim": 48,
             "caption_projection_dim": 64, "pooled_projection_dim": 24, "out_channels": 4,
             "pos_embed_max_size": 32, "dual_attention_layers": [0, 1], "qk_norm": "rms_norm"},
    # CogVideoX-2b-like: sincos positions (a buffer) sized for 9 frames of 32 × 32 and 24 text tokens
    "cogvideox": {"_class_name": "CogVideoXTransformer3DModel", "num_attention_heads": 2, "attention_head_dim": 32,
                  "in_channels": 4, "out_channels": 4, "time_embed_dim": 24, "text_embed_dim": 48, "num_layers": 2,
                  "patch_size": 2, "sample_width": 32, "sample_height": 32, "sample_frames": 9,
                  "max_text_seq_length": 24},
    # CogVideoX-5b-like: 3-D RoPE on the video tokens (the pipeline's cos/sin tables as inputs)
    "cogvideox_rope": {"_class_name": "CogVideoXTransformer3DModel", "num_attention_heads": 2, "attention_head_dim": 32,
                       "in_channels": 4, "out_channels": 4, "time_embed_dim": 24, "text_embed_dim": 48,
                       "num_layers": 2, "patch_size": 2, "sample_width": 32, "sample_height": 32, "sample_frames": 9,
                       "max_text_seq_length": 24, "use_rotary_positional_embeddings": True},
    "ltx": {"_class_name": "LTXVideoTransformer3DModel", "in_channels": 16, "out_channels": 16,
            "num_attention_heads": 2, "attention_head_dim": 32, "cross_attention_dim": 64, "num_layers": 2,
            "caption_channels": 48},
    "hunyuan_video": {"_class_name": "HunyuanVideoTransformer3DModel", "in_channels": 4, "out_channels": 4,
                      "num_attention_heads": 2, "attention_head_dim": 32, "num_layers": 2, "num_single_layers": 2,
                      "num_refiner_layers": 1, "patch_size": 2, "patch_size_t": 1, "text_embed_dim": 48,
                      "pooled_projection_dim": 24, "rope_axes_dim": [8, 12, 12], "guidance_embeds": True},
    "sana": {"_class_name": "SanaTransformer2DModel", "in_channels": 4, "out_channels": 4, "num_attention_heads": 2,
             "attention_head_dim": 32, "num_layers": 2, "num_cross_attention_heads": 2, "cross_attention_head_dim": 32,
             "cross_attention_dim": 64, "caption_channels": 48, "mlp_ratio": 2.5, "sample_size": 32, "patch_size": 1},
    "pixart": {"_class_name": "PixArtTransformer2DModel", "num_attention_heads": 2, "attention_head_dim": 32,
               "in_channels": 4, "out_channels": 8, "num_layers": 2, "cross_attention_dim": 64, "caption_channels": 48,
               "patch_size": 2, "sample_size": 32, "use_additional_conditions": False},
    "wan": {"_class_name": "WanTransformer3DModel", "patch_size": [1, 2, 2], "num_attention_heads": 2,
            "attention_head_dim": 32, "in_channels": 4, "out_channels": 4, "text_dim": 48, "freq_dim": 32,
            "ffn_dim": 96, "num_layers": 2, "cross_attn_norm": True, "qk_norm": "rms_norm_across_heads",
            "rope_max_seq_len": 64},
}


def build(cfg):
    return getattr(diffusers, cfg["_class_name"]).from_config(cfg)


def counts():
    out = []
    for path in sorted(CONFIGS.glob("*/transformer/config.json")):
        cfg = json.loads(path.read_text())
        with torch.device("meta"):
            model = build(cfg)
        out.append({"config": str(path.relative_to(ROOT)), "class": cfg["_class_name"],
                    "params": sum(p.numel() for p in model.parameters())})
    return out


# Parameter counts only: the switches of the classes whose activations are not modelled.
COUNT_ONLY = {
    "hunyuan": {"_class_name": "HunyuanVideoTransformer3DModel", "in_channels": 4, "out_channels": 4,
                "num_attention_heads": 2, "attention_head_dim": 16, "num_layers": 2, "num_single_layers": 2,
                "num_refiner_layers": 1, "mlp_ratio": 3.0, "patch_size": 2, "patch_size_t": 1, "qk_norm": "rms_norm",
                "guidance_embeds": False, "text_embed_dim": 40, "pooled_projection_dim": 24, "rope_axes_dim": [8, 12, 12]},
    "cogvideox_1.5": {"_class_name": "CogVideoXTransformer3DModel", "num_attention_heads": 2, "attention_head_dim": 16,
                      "in_channels": 8, "out_channels": 4, "time_embed_dim": 24, "text_embed_dim": 40, "num_layers": 2,
                      "patch_size": 2, "patch_size_t": 2, "ofs_embed_dim": 8, "patch_bias": False,
                      "use_rotary_positional_embeddings": True, "sample_width": 8, "sample_height": 8,
                      "sample_frames": 9, "max_text_seq_length": 8, "attention_bias": False},
    "ltx": {"_class_name": "LTXVideoTransformer3DModel", "in_channels": 16, "out_channels": 16,
            "num_attention_heads": 2, "attention_head_dim": 16, "cross_attention_dim": 32, "num_layers": 2,
            "caption_channels": 40, "attention_bias": False},
    "sana_1.5": {"_class_name": "SanaTransformer2DModel", "in_channels": 8, "num_attention_heads": 2,
                 "attention_head_dim": 16, "num_layers": 2, "num_cross_attention_heads": 2, "cross_attention_head_dim": 8,
                 "cross_attention_dim": 32, "caption_channels": 40, "mlp_ratio": 2.5, "qk_norm": "rms_norm_across_heads",
                 "guidance_embeds": True, "norm_elementwise_affine": True, "patch_size": 2},
}


def tiny_counts():
    out = []
    for name, cfg in {**TINY, **COUNT_ONLY}.items():
        with torch.device("meta"):
            model = build(cfg)
        out.append({"name": name, "config": cfg, "params": sum(p.numel() for p in model.parameters())})
    return out


def inputs(cfg, b, lat, text, frames, dev, dtype):
    """The denoiser call of the training scripts / pipelines: Flux packs 2x2 latent patches into
    64-channel tokens (pipeline_flux.py _pack_latents) so its in_channels already holds them."""
    cls = cfg["_class_name"]
    if cls == "FluxTransformer2DModel":
        n = (lat // 2) * (lat // 2)
        d = {"hidden_states": torch.randn(b, n, cfg["in_channels"], device=dev, dtype=dtype),
             "encoder_hidden_states": torch.randn(b, text, cfg["joint_attention_dim"], device=dev, dtype=dtype),
             "pooled_projections": torch.randn(b, cfg["pooled_projection_dim"], device=dev, dtype=dtype),
             "timestep": torch.rand(b, device=dev, dtype=dtype),
             "img_ids": torch.zeros(n, 3, device=dev, dtype=dtype),
             "txt_ids": torch.zeros(text, 3, device=dev, dtype=dtype)}
        if cfg.get("guidance_embeds"):
            d["guidance"] = torch.ones(b, device=dev, dtype=dtype)
        return d
    if cls == "SD3Transformer2DModel":
        return {"hidden_states": torch.randn(b, cfg["in_channels"], lat, lat, device=dev, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, text, cfg["joint_attention_dim"], device=dev, dtype=dtype),
                "pooled_projections": torch.randn(b, cfg["pooled_projection_dim"], device=dev, dtype=dtype),
                "timestep": torch.rand(b, device=dev, dtype=dtype) * 1000}
    if cls == "HunyuanVideoTransformer3DModel":
        return {"hidden_states": torch.randn(b, cfg["in_channels"], frames, lat, lat, device=dev, dtype=dtype),
                "timestep": torch.rand(b, device=dev, dtype=dtype) * 1000,
                "encoder_hidden_states": torch.randn(b, text, cfg["text_embed_dim"], device=dev, dtype=dtype),
                "encoder_attention_mask": torch.ones(b, text, device=dev, dtype=torch.int64),
                "pooled_projections": torch.randn(b, cfg["pooled_projection_dim"], device=dev, dtype=dtype),
                "guidance": torch.ones(b, device=dev, dtype=dtype) * 6000}
    if cls == "PixArtTransformer2DModel":
        # pipeline_pixart_sigma.py: the T5 mask as 0/1, no resolution/aspect-ratio conditions
        return {"hidden_states": torch.randn(b, cfg["in_channels"], lat, lat, device=dev, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, text, cfg["caption_channels"], device=dev, dtype=dtype),
                "timestep": torch.randint(0, 1000, (b,), device=dev),
                "encoder_attention_mask": torch.ones(b, text, device=dev, dtype=dtype),
                "added_cond_kwargs": {"resolution": None, "aspect_ratio": None}}
    if cls == "SanaTransformer2DModel":
        # pipeline_sana.py: the Gemma-2 prompt mask as 0/1
        return {"hidden_states": torch.randn(b, cfg["in_channels"], lat, lat, device=dev, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, text, cfg["caption_channels"], device=dev, dtype=dtype),
                "timestep": torch.rand(b, device=dev, dtype=dtype) * 1000,
                "encoder_attention_mask": torch.ones(b, text, device=dev, dtype=dtype)}
    if cls == "LTXVideoTransformer3DModel":
        # pipeline_ltx.py: latents packed to (b, frames × h × w, channels), the T5 mask as 0/1
        return {"hidden_states": torch.randn(b, frames * lat * lat, cfg["in_channels"], device=dev, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, text, cfg["caption_channels"], device=dev, dtype=dtype),
                "timestep": torch.rand(b, device=dev, dtype=dtype) * 1000,
                "encoder_attention_mask": torch.ones(b, text, device=dev, dtype=dtype),
                "num_frames": frames, "height": lat, "width": lat}
    if cls == "CogVideoXTransformer3DModel":
        d = {"hidden_states": torch.randn(b, frames, cfg["in_channels"], lat, lat, device=dev, dtype=dtype),
             "encoder_hidden_states": torch.randn(b, text, cfg["text_embed_dim"], device=dev, dtype=dtype),
             "timestep": torch.randint(0, 1000, (b,), device=dev)}
        if cfg.get("use_rotary_positional_embeddings"):
            # pipeline_cogvideox.py _prepare_rotary_positional_embeddings: (cos, sin), tokens × head_dim, fp32
            n = frames * (lat // cfg["patch_size"]) ** 2
            d["image_rotary_emb"] = (torch.randn(n, cfg["attention_head_dim"], device=dev),
                                     torch.randn(n, cfg["attention_head_dim"], device=dev))
        return d
    return {"hidden_states": torch.randn(b, cfg["in_channels"], frames, lat, lat, device=dev, dtype=dtype),
            "encoder_hidden_states": torch.randn(b, text, cfg["text_dim"], device=dev, dtype=dtype),
            "timestep": torch.randint(0, 1000, (b,), device=dev)}


def make(cfg, precision, lora, fp32_adapters, dropout=0.0):
    # pure bf16, or the LoRA scripts' frozen base in weight_dtype under bf16 mixed precision;
    # built in that dtype (fake tensors cannot swap parameters in model.to)
    low = precision == "bf16" or (lora and precision == "bf16-mixed")
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16 if low else torch.float32)
    try:
        model = build(cfg)
    finally:
        torch.set_default_dtype(prev)
    if lora:
        model.requires_grad_(False)
    if lora:
        model.add_adapter(peft.LoraConfig(r=lora, lora_alpha=lora, init_lora_weights="gaussian", lora_dropout=dropout,
                                          target_modules=TARGETS[cfg["_class_name"]]))
        if fp32_adapters:
            for p in model.parameters():
                if p.requires_grad:
                    p.data = p.data.float()
    return model


def saved_case(name, cfg, precision, ckpt, lora=None, fp32_adapters=True, b=2, lat=32, text=24, frames=3, dropout=0.0):
    torch.manual_seed(0)
    KERNELS.clear()
    with FakeTensorMode(allow_non_fake_inputs=True):
        with torch.device("cuda"):
            model = make(cfg, precision, lora, fp32_adapters, dropout)
        model.train()
        if ckpt:
            model.enable_gradient_checkpointing()
        dtype = torch.bfloat16 if precision == "bf16" or (lora and precision == "bf16-mixed") else torch.float32
        if precision == "bf16-mixed" and lora:
            dtype = torch.bfloat16  # the scripts cast latents and embeddings to weight_dtype
        x = inputs(cfg, b, lat, text, frames, "cuda", dtype)
        rec = SavedTensorRecorder(model)
        ms = ModuleStack(model)
        rec.module_stack = ms
        if ckpt:
            orig = model._gradient_checkpointing_func

            def wrapped(fn, *args, **kwargs):
                def visit(v):
                    if isinstance(v, torch.Tensor):
                        rec.add_external(v, ms.current(), "checkpoint-input")
                    elif isinstance(v, (tuple, list)):
                        for y in v:
                            visit(y)
                    elif isinstance(v, dict):
                        for y in v.values():
                            visit(y)
                visit(args)
                visit(kwargs)
                return orig(fn, *args, **kwargs)
            model._gradient_checkpointing_func = wrapped
        tracker = ParamCastTracker(rec.param_refs)
        with rec.hooks(), tracker:
            if precision == "bf16-mixed":
                with fake_cuda_autocast(torch.bfloat16):
                    out = model(**x, return_dict=False)[0]
            else:
                out = model(**x, return_dict=False)[0]
        ms.remove()
        act, pc, n = rec.totals(tracker.cast_refs)
        listing = rec.listing(tracker.cast_refs)
    return {"name": name, "config": cfg, "precision": precision, "checkpointing": ckpt, "lora_rank": lora,
            "lora_fp32": bool(lora and fp32_adapters), "lora_dropout": dropout, "batch": b, "latent": lat, "frames": frames,
            "text_tokens": text, "kernels": sorted(set(KERNELS)), "saved_bytes": act, "param_copy_bytes": pc,
            "saved_tensor_count": n, "detail": listing}


def peak_case(name, cfg, precision, b=2, lat=32, text=24, frames=3):
    torch.manual_seed(0)
    KERNELS.clear()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    with FakeTensorMode(allow_non_fake_inputs=True):
        with torch.device("cuda"):
            prev = torch.get_default_dtype()
            torch.set_default_dtype(dtype)
            try:
                model = build(cfg).eval()
            finally:
                torch.set_default_dtype(prev)
        x = inputs(cfg, b, lat, text, frames, "cuda", dtype)
        with torch.no_grad():
            mode = LiveBytes()
            mode.ignore([*model.parameters(), *model.buffers(),
                         *(t for v in x.values() if isinstance(v, (torch.Tensor, tuple))
                           for t in (v if isinstance(v, tuple) else (v,)))])
            with mode:
                model(**x, return_dict=False)
    return {"name": name, "config": cfg, "precision": precision, "batch": b, "latent": lat, "frames": frames,
            "text_tokens": text, "kernels": sorted(set(KERNELS)), "peak_bytes": mode.peak}


def flops_case(name, cfg, b=2, lat=32, text=24, frames=3):
    """torch.utils.flop_counter.FlopCounterMode over one forward (matmuls, convolutions and the
    SDPA kernels, 2 FLOPs per multiply-add)."""
    from torch.utils.flop_counter import FlopCounterMode
    torch.manual_seed(0)
    with FakeTensorMode(allow_non_fake_inputs=True):
        with torch.device("cuda"):
            prev = torch.get_default_dtype()
            torch.set_default_dtype(torch.bfloat16)
            try:
                model = build(cfg).eval()
            finally:
                torch.set_default_dtype(prev)
        x = inputs(cfg, b, lat, text, frames, "cuda", torch.bfloat16)
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            model(**x, return_dict=False)
    return {"name": name, "config": cfg, "precision": "bf16", "batch": b, "latent": lat, "frames": frames,
            "text_tokens": text, "flops": counter.get_total_flops()}


def saved_cases(only):
    out = []
    for name, cfg in TINY.items():
        if only and not any(o in name for o in only):
            continue
        for precision in ["fp32", "bf16", "bf16-mixed"]:
            for ckpt in [False, True]:
                out.append(saved_case(name, cfg, precision, ckpt))
        if name == "pixart":  # PixArtTransformer2DModel has no PeftAdapterMixin (no add_adapter)
            out.append(saved_case(name, cfg, "bf16", False, b=1, lat=48, text=40))
            continue
        for precision, fp32 in [("fp32", True), ("bf16-mixed", True), ("bf16-mixed", False)]:
            out.append(saved_case(name, cfg, precision, False, lora=4, fp32_adapters=fp32))
        out.append(saved_case(name, cfg, "bf16-mixed", True, lora=4, fp32_adapters=True))
        if name != "cogvideox":  # its sincos table is fixed to 24 text tokens
            out.append(saved_case(name, cfg, "bf16", False, b=1, lat=48, text=40))
        # LoRA dropout (train_dreambooth_lora_*.py --lora_dropout)
        out.append(saved_case(name, cfg, "bf16-mixed", False, lora=4, fp32_adapters=True, dropout=0.1))
        out.append(saved_case(name, cfg, "fp32", False, lora=4, fp32_adapters=True, dropout=0.1))
    # the real widths (fake tensors cost no memory): the Hub configs cut to their first blocks,
    # at a real resolution and prompt length
    for name, path, cut, lat, text, frames in REAL:
        if only and not any(o in name for o in only):
            continue
        cfg = dict(json.loads((CONFIGS / path).read_text()), **cut)
        out.append(saved_case(name, cfg, "bf16-mixed", False, b=1, lat=lat, text=text, frames=frames))
        out.append(saved_case(name, cfg, "bf16-mixed", True, b=1, lat=lat, text=text, frames=frames))
        out.append(saved_case(name, cfg, "bf16-mixed", False, lora=16, fp32_adapters=False, b=1, lat=lat, text=text, frames=frames))
    return out


# (name, Hub config, keys replaced to keep the first blocks, latent side, text tokens, latent frames)
REAL = [
    ("flux-dev-1024px", "black-forest-labs--FLUX.1-dev/transformer/config.json",
     {"num_layers": 1, "num_single_layers": 1}, 128, 512, 1),
    ("sd3.5-large-1024px", "stabilityai--stable-diffusion-3.5-large/transformer/config.json",
     {"num_layers": 2}, 128, 333, 1),
    ("sd3.5-medium-1024px", "stabilityai--stable-diffusion-3.5-medium/transformer/config.json",
     {"num_layers": 2, "dual_attention_layers": [0]}, 128, 333, 1),
    ("wan2.1-14b-480p", "Wan-AI--Wan2.1-T2V-14B-Diffusers/transformer/config.json",
     {"num_layers": 1}, 60, 512, 21),
    ("cogvideox-5b-49f", "THUDM--CogVideoX-5b/transformer/config.json",
     {"num_layers": 1}, 60, 226, 13),
    ("ltx-video-121f", "Lightricks--LTX-Video/transformer/config.json",
     {"num_layers": 1}, 20, 128, 16),
    ("hunyuanvideo-33f", "hunyuanvideo-community--HunyuanVideo/transformer/config.json",
     {"num_layers": 1, "num_single_layers": 1}, 60, 256, 9),
    ("sana-1600m-1024px", "Efficient-Large-Model--Sana_1600M_1024px_diffusers/transformer/config.json",
     {"num_layers": 2}, 32, 300, 1),
]


def peak_cases(only):
    out = []
    for name, cfg in TINY.items():
        if only and not any(o in name for o in only):
            continue
        for precision in ["fp32", "bf16"]:
            out.append(peak_case(name, cfg, precision))
        if name != "cogvideox":  # its sincos table is fixed to 24 text tokens
            out.append(peak_case(name, cfg, "bf16", b=1, lat=48, text=40))
            # a long prompt beside a small latent (the text stream's share grows)
            out.append(peak_case(name, cfg, "bf16", b=1, lat=16, text=160))
    # a wider feed-forward (Wan 14B's ffn_dim is 2.7 × hidden): its GELU moment can lead
    wide = dict(TINY["wan"], ffn_dim=192)
    if not only or any(o in "wan" for o in only):
        for precision in ["fp32", "bf16"]:
            out.append(peak_case("wan_wide_ffn", wide, precision))
    return out


if __name__ == "__main__":
    only = sys.argv[1:]
    dest = ROOT / "tests/fixtures/measured/diffusion_dit.json"
    result = {"diffusers": diffusers.__version__, "torch": torch.__version__, "peft": peft.__version__,
              "counts": counts(), "tiny_counts": tiny_counts(), "saved": saved_cases(only), "peaks": peak_cases(only),
              "flops": [flops_case(n, c) for n, c in TINY.items() if not only or any(o in n for o in only)]
              + [flops_case(n, c, b=1, lat=48, text=40) for n, c in TINY.items()
                 if n != "cogvideox" and (not only or any(o in n for o in only))]}
    detail = {c["name"] + " " + c["precision"] + f" b{c['batch']}" + (" ckpt" if c["checkpointing"] else "")
              + (f" lora{c['lora_rank']}" + ("fp32" if c["lora_fp32"] else "") + (" dropout" if c["lora_dropout"] else "") if c["lora_rank"] else ""): c.pop("detail")
              for c in result["saved"]}
    dest.write_text(json.dumps(result, indent=1) + "\n")
    # the per-tensor listing of the tiny cases (the real-width ones are too long to keep)
    detail = {k: v for k, v in detail.items() if k.split(" ")[0] in TINY}
    (ROOT / "tests/measure/diffusion_dit_detail.json").write_text(json.dumps(detail, separators=(",", ":")) + "\n")
    for c in result["counts"]:
        print(c["config"], c["params"])
    for c in result["saved"]:
        print(c["name"], c["precision"], "ckpt" if c["checkpointing"] else "", c["lora_rank"], c["lora_fp32"],
              c["saved_bytes"], c["param_copy_bytes"], c["kernels"])
    for p in result["flops"]:
        print(p["name"], p["batch"], "flops", p["flops"])
    for p in result["peaks"]:
        print(p["name"], p["precision"], p["batch"], p["peak_bytes"], p["kernels"])
