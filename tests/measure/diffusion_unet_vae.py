"""Parameter counts, saved activations and no-grad peaks of diffusers' UNet2DConditionModel
and AutoencoderKL (diffusers 0.42.1, torch CPU), for Headroom's model::diffusion::{unet, vae}.

counts: every real config under tests/fixtures/diffusers/configs/*/{unet,vae}/ and the tiny
  configs below, built on the meta device, sum(p.numel()).
saved:  one training forward of a tiny UNet (random weights, 32×32 latents, CFG-free, text
  tokens × cross_attention_dim conditioning) under saved_tensors_hooks (common.SavedTensorRecorder:
  once per storage, parameters excluded), for fp32, pure bf16 (model.to(bfloat16)) and bf16
  autocast, with and without enable_gradient_checkpointing(), with and without PEFT LoRA
  (rank 4 on to_q/to_k/to_v/to_out.0, adapters fp32 as cast_training_params does). Tensors
  live on fake CUDA (FakeTensorMode) so autocast takes CUDA's op lists and SDPA picks CUDA's
  kernel (common.cuda_sdpa).
flops:  FlopCounterMode's count of one UNet call on the meta device (tiny and real configs).
peaks:  one torch.no_grad() UNet call and VAE encode/decode (plain, tiled, sliced) on tiny
  configs, real CPU tensors, live storage bytes beyond weights and inputs (live_bytes.LiveBytes).

Run: /work/venv/bin/python tests/measure/diffusion_unet_vae.py [counts|saved|peaks ...]
Writes tests/fixtures/measured/diffusion_unet_vae.json (sections not run are kept).
"""
import json
import pathlib
import sys

import torch
import diffusers

sys.path.insert(0, str(pathlib.Path(__file__).parent))

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests/fixtures/diffusers/configs"
DEST = ROOT / "tests/fixtures/measured/diffusion_unet_vae.json"
CLASSES = {"UNet2DConditionModel": diffusers.UNet2DConditionModel, "AutoencoderKL": diffusers.AutoencoderKL,
           "AutoencoderKLWan": diffusers.AutoencoderKLWan}

TINY_UNETS = {
    # SD 1.5's layout, small: conv projections, one head count for every level
    "sd15_tiny": {"_class_name": "UNet2DConditionModel", "block_out_channels": [32, 64], "layers_per_block": 1,
                  "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"],
                  "attention_head_dim": 2, "cross_attention_dim": 48, "norm_num_groups": 8, "sample_size": 32},
    # SDXL's layout, small: linear projections, heads per level, several transformer layers,
    # text_time addition embedding
    "sdxl_tiny": {"_class_name": "UNet2DConditionModel", "block_out_channels": [32, 64, 64], "layers_per_block": 2,
                  "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
                  "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
                  "attention_head_dim": [2, 4, 8], "transformer_layers_per_block": [1, 1, 2], "cross_attention_dim": 64,
                  "use_linear_projection": True, "norm_num_groups": 8, "addition_embed_type": "text_time",
                  "addition_time_embed_dim": 8, "projection_class_embeddings_input_dim": 80, "sample_size": 32},
}
TINY_VAES = {
    "vae_tiny": {"_class_name": "AutoencoderKL", "block_out_channels": [16, 32, 32], "layers_per_block": 1,
                 "down_block_types": ["DownEncoderBlock2D"] * 3, "up_block_types": ["UpDecoderBlock2D"] * 3,
                 "latent_channels": 4, "norm_num_groups": 8, "sample_size": 32},
    "wan_vae_tiny": {"_class_name": "AutoencoderKLWan", "base_dim": 8, "decoder_base_dim": 12, "z_dim": 4,
                      "dim_mult": [1, 2, 2], "num_res_blocks": 1, "attn_scales": [0.5],
                      "temperal_downsample": [True, False], "scale_factor_spatial": 4},
    "vae16_tiny": {"_class_name": "AutoencoderKL", "block_out_channels": [16, 32], "layers_per_block": 2,
                   "down_block_types": ["DownEncoderBlock2D"] * 2, "up_block_types": ["UpDecoderBlock2D"] * 2,
                   "latent_channels": 16, "norm_num_groups": 8, "sample_size": 32, "use_quant_conv": False,
                   "use_post_quant_conv": False},
}


def build(cfg):
    return CLASSES[cfg["_class_name"]].from_config(cfg)


def counts():
    out = []
    for path in sorted(CONFIGS.glob("*/*/config.json")):
        cfg = json.loads(path.read_text())
        if cfg.get("_class_name") not in CLASSES:
            continue
        with torch.device("meta"):
            model = build(cfg)
        out.append({"config": str(path.relative_to(ROOT)), "class": cfg["_class_name"], "params": sum(p.numel() for p in model.parameters())})
    for name, cfg in {**TINY_UNETS, **TINY_VAES}.items():
        with torch.device("meta"):
            model = build(cfg)
        out.append({"name": name, "config": cfg, "class": cfg["_class_name"], "params": sum(p.numel() for p in model.parameters())})
    return out


def unet_inputs(cfg, b, tokens, dev, dtype, latent=(32, 32)):
    h, w = latent
    kwargs = {}
    if cfg.get("addition_embed_type") == "text_time":
        pooled = cfg["projection_class_embeddings_input_dim"] - 6 * cfg["addition_time_embed_dim"]
        kwargs["added_cond_kwargs"] = {"text_embeds": torch.randn(b, pooled, device=dev, dtype=dtype),
                                       "time_ids": torch.randn(b, 6, device=dev, dtype=dtype)}
    return (torch.randn(b, cfg.get("in_channels", 4), h, w, device=dev, dtype=dtype),
            torch.randint(0, 1000, (b,), device=dev),
            torch.randn(b, tokens, cfg["cross_attention_dim"], device=dev, dtype=dtype), kwargs)


def saved_case(name, cfg, b, tokens, precision, ckpt, lora, detail=False, latent=(32, 32), lora_dropout=0.0):
    """One training forward of a tiny UNet on fake CUDA; returns the saved bytes."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from common import SavedTensorRecorder, ParamCastTracker, ModuleStack, fake_cuda_autocast, cuda_sdpa
    import torch.nn.functional as F
    kernels = []

    def forced_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        kernel, out = cuda_sdpa(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
        kernels.append(kernel)
        return out

    F.scaled_dot_product_attention = forced_sdpa
    dev = "cuda"
    with FakeTensorMode(allow_non_fake_inputs=True):
        prev = torch.get_default_dtype()
        if precision == "bf16" or (lora and precision == "bf16-mixed"):
            # pure bf16 (as model.to(torch.bfloat16)), or the LoRA scripts' frozen base in
            # weight_dtype; fake tensors cannot be swapped by .to(), so build in bf16
            torch.set_default_dtype(torch.bfloat16)
        try:
            with torch.device(dev):
                model = build(cfg)
        finally:
            torch.set_default_dtype(prev)
        if lora:
            from peft import LoraConfig
            from peft.tuners import tuners_utils
            model.requires_grad_(False)
            # PEFT moves new adapters to the base layer's device and dtype with Module.to(),
            # which fake tensors cannot do (parameter swap); skip that move: the adapters are
            # created fp32 on the fake CUDA device, which is where
            # diffusers.training_utils.cast_training_params(unet, torch.float32) puts them.
            # (and PEFT's module.to(weight.device): everything is on that device already).
            move = tuners_utils.BaseTunerLayer._move_adapter_to_device_of_base_layer
            to = torch.nn.Module.to
            tuners_utils.BaseTunerLayer._move_adapter_to_device_of_base_layer = lambda self, name, device=None: None
            torch.nn.Module.to = lambda self, *a, **k: self
            try:
                with torch.device(dev):
                    model.add_adapter(LoraConfig(r=lora, lora_alpha=lora, init_lora_weights="gaussian",
                                                 target_modules=["to_k", "to_q", "to_v", "to_out.0"],
                                                 lora_dropout=lora_dropout))
            finally:
                tuners_utils.BaseTunerLayer._move_adapter_to_device_of_base_layer = move
                torch.nn.Module.to = to
            trained = [p for p in model.parameters() if p.requires_grad]
            assert trained and all(p.dtype == torch.float32 and p.device.type == "cuda" for p in trained)
        model.train()
        if ckpt:
            model.enable_gradient_checkpointing()
        # the training scripts feed latents and text embeddings in weight_dtype (bf16) whenever
        # mixed precision is on (train_text_to_image.py: vae and text encoders in weight_dtype)
        in_dtype = torch.float32 if precision == "fp32" else torch.bfloat16
        sample, t, text, kwargs = unet_inputs(cfg, b, tokens, dev, in_dtype, latent)
        rec = SavedTensorRecorder(model)
        ms = ModuleStack(model)
        rec.module_stack = ms
        if ckpt:
            for m in model.modules():
                if getattr(m, "gradient_checkpointing", False) and hasattr(m, "_gradient_checkpointing_func"):
                    orig = m._gradient_checkpointing_func

                    def wrapped(fn, *args, __orig=orig):
                        before = len(rec.order)
                        out = __orig(fn, *args)
                        if isinstance(out, torch.Tensor) and out.requires_grad:
                            # non-reentrant checkpointing holds the call's tensor inputs for the
                            # recomputation (torch.utils.checkpoint _CheckpointFrame.save_inputs,
                            # packed through the recorder's hooks; add_external for any it missed)
                            for a in args:
                                if isinstance(a, torch.Tensor):
                                    rec.add_external(a, ms.current(), "checkpoint-input")
                        else:
                            # no graph: nothing references the checkpoint frame after the call,
                            # so the inputs save_inputs packed are not held
                            for r in rec.order[before:]:
                                rec.entries.pop(r)
                            del rec.order[before:]
                        return out
                    m._gradient_checkpointing_func = wrapped
        tracker = ParamCastTracker(rec.param_refs)
        with rec.hooks(), tracker:
            if precision == "bf16-mixed":
                with fake_cuda_autocast(torch.bfloat16):
                    out = model(sample, t, text, **kwargs).sample
            else:
                out = model(sample, t, text, **kwargs).sample
        ms.remove()
        act, pc, n = rec.totals(tracker.cast_refs)
        by_module = {}
        for e in rec.listing(tracker.cast_refs):
            if e["param_copy"]:
                continue
            key = e["module"]
            by_module[key] = by_module.get(key, 0) + e["nbytes"]
        if detail:
            for e in rec.listing(tracker.cast_refs):
                print(e["module"], e["shape"], e["dtype"], e["nbytes"], e["savers"] if e["savers"] else e["via"], e["param_copy"])
    return {"name": name, "config": cfg, "batch": b, "latent": list(latent), "text_tokens": tokens, "precision": precision,
            "checkpointing": ckpt, "lora_rank": lora, "lora_dropout": lora_dropout, "saved_bytes": act, "param_copy_bytes": pc, "tensors": n,
            "kernels": sorted(set(kernels)), "by_module": by_module}


def saved():
    out = []
    for name, cfg in TINY_UNETS.items():
        for precision in ["fp32", "bf16", "bf16-mixed"]:
            for ckpt in [False, True]:
                out.append(saved_case(name, cfg, 2, 20, precision, ckpt, None))
        for ckpt in [False, True]:
            out.append(saved_case(name, cfg, 2, 20, "bf16-mixed", ckpt, 4))
    # other shapes: odd and non-square latents (the efficient kernel pads its log-sum-exp to
    # 32 queries), one or three samples, CLIP's 77 tokens; LoRA on an fp32 base without autocast
    out.append(saved_case("sdxl_tiny", TINY_UNETS["sdxl_tiny"], 1, 77, "fp32", False, None, latent=(20, 28)))
    out.append(saved_case("sdxl_tiny", TINY_UNETS["sdxl_tiny"], 3, 77, "bf16-mixed", False, None, latent=(21, 27)))
    out.append(saved_case("sd15_tiny", TINY_UNETS["sd15_tiny"], 3, 77, "bf16-mixed", True, None, latent=(21, 27)))
    out.append(saved_case("sd15_tiny", TINY_UNETS["sd15_tiny"], 1, 77, "bf16-mixed", False, 8, latent=(24, 40)))
    out.append(saved_case("sd15_tiny", TINY_UNETS["sd15_tiny"], 2, 20, "fp32", False, 4))
    out.append(saved_case("sdxl_tiny", TINY_UNETS["sdxl_tiny"], 2, 20, "bf16", True, None, latent=(21, 27)))
    # train_dreambooth_lora_sdxl.py's --lora_dropout
    out.append(saved_case("sdxl_tiny", TINY_UNETS["sdxl_tiny"], 2, 20, "bf16-mixed", False, 4, lora_dropout=0.1))
    out.append(saved_case("sd15_tiny", TINY_UNETS["sd15_tiny"], 2, 20, "fp32", False, 4, lora_dropout=0.1))
    # the real UNets at their own sizes (fake tensors cost no memory): batch 1, 77 tokens
    real = [("stable-diffusion-v1-5--stable-diffusion-v1-5", 64, [("fp32", False, None), ("bf16-mixed", False, None),
                                                              ("bf16-mixed", True, None), ("bf16-mixed", False, 4),
                                                              ("bf16-mixed", True, 4)]),
            ("stabilityai--stable-diffusion-2-1", 96, [("bf16-mixed", True, None)]),
            ("stabilityai--stable-diffusion-xl-base-1.0", 128, [("bf16-mixed", False, 4), ("bf16-mixed", True, 4),
                                                                 ("bf16-mixed", True, None)])]
    for rel, latent, runs in real:
        path = CONFIGS / rel / "unet/config.json"
        cfg = json.loads(path.read_text())
        for precision, ckpt, lora in runs:
            case = saved_case(rel, cfg, 1, 77, precision, ckpt, lora, latent=(latent, latent))
            case["config"] = str(path.relative_to(ROOT))
            case.pop("by_module")
            out.append(case)
    return out


def live_peak(model, inputs, call):
    """Peak live bytes of call() under torch.no_grad(), beyond the weights and the inputs."""
    from live_bytes import LiveBytes
    with torch.no_grad():
        mode = LiveBytes()
        mode.ignore([*model.parameters(), *model.buffers(), *inputs])
        with mode:
            call()
    return mode.peak


def peaks():
    out = []
    torch.manual_seed(0)
    for name, cfg in TINY_UNETS.items():
        model = build(cfg).eval()
        for dtype in [torch.float32, torch.bfloat16]:
            model = model.to(dtype)
            for b, latent, tokens in [(1, (32, 32), 20), (2, (32, 32), 77), (2, (24, 40), 20)]:
                sample, t, text, kw = unet_inputs(cfg, b, tokens, "cpu", dtype, latent)
                extra = list(kw.get("added_cond_kwargs", {}).values())
                peak = live_peak(model, [sample, t, text, *extra], lambda: model(sample, t, text, **kw))
                out.append({"name": name, "config": cfg, "part": "unet", "dtype": str(dtype).split(".")[-1], "batch": b,
                            "latent": list(latent), "text_tokens": tokens, "peak_bytes": peak})
    # the real UNets at their own sizes, on fake CPU tensors (no memory; LiveBytes still sees
    # every storage come and go): a generation step's batch of 2 (guidance), 77 tokens
    from torch._subclasses.fake_tensor import FakeTensorMode
    for rel, latent in [("stable-diffusion-v1-5--stable-diffusion-v1-5", 64), ("stabilityai--stable-diffusion-2-1", 96),
                        ("stabilityai--stable-diffusion-xl-base-1.0", 128)]:
        path = CONFIGS / rel / "unet/config.json"
        cfg = json.loads(path.read_text())
        for dtype in [torch.float32, torch.bfloat16]:
            prev = torch.get_default_dtype()
            torch.set_default_dtype(dtype)
            try:
                with FakeTensorMode(allow_non_fake_inputs=True):
                    model = build(cfg).eval()
                    sample, t, text, kw = unet_inputs(cfg, 2, 77, "cpu", dtype, (latent, latent))
                    extra = list(kw.get("added_cond_kwargs", {}).values())
                    peak = live_peak(model, [sample, t, text, *extra], lambda: model(sample, t, text, **kw))
            finally:
                torch.set_default_dtype(prev)
            out.append({"name": rel, "config": str(path.relative_to(ROOT)), "part": "unet", "dtype": str(dtype).split(".")[-1],
                        "batch": 2, "latent": [latent, latent], "text_tokens": 77, "fake": True, "peak_bytes": peak})
    for name, cfg in TINY_VAES.items():
        if cfg["_class_name"] != "AutoencoderKL":
            continue
        model = build(cfg).eval()
        f = 2 ** (len(cfg["block_out_channels"]) - 1)
        for dtype in [torch.float32, torch.bfloat16]:
            model = model.to(dtype)
            # sample_size 32: tiling splits anything above 32 pixels (32 / f latents) into tiles
            for b, (h, w), mode in [(1, (64, 64), "plain"), (2, (48, 80), "plain"), (1, (96, 64), "tiled"),
                                    (2, (64, 64), "sliced")]:
                model.use_tiling = mode == "tiled"
                model.use_slicing = mode == "sliced"
                x = torch.randn(b, 3, h, w, dtype=dtype)
                z = torch.randn(b, cfg["latent_channels"], h // f, w // f, dtype=dtype)
                enc = live_peak(model, [x], lambda: model.encode(x).latent_dist.sample())
                dec = live_peak(model, [z], lambda: model.decode(z).sample)
                out.append({"name": name, "config": cfg, "part": "vae", "dtype": str(dtype).split(".")[-1], "batch": b,
                            "height": h, "width": w, "mode": mode, "encode_peak_bytes": enc, "decode_peak_bytes": dec})
        model.use_tiling = model.use_slicing = False
    return out


def flops():
    """Forward FLOPs of one UNet call (torch.utils.flop_counter.FlopCounterMode) on the meta
    device: the tiny configs and the real SD 1.5 / SD 2.1 / SDXL UNets at their own sizes."""
    from torch.utils.flop_counter import FlopCounterMode
    cases = [(name, cfg, 2, (32, 32), 20) for name, cfg in TINY_UNETS.items()]
    cases += [("sd15_tiny", TINY_UNETS["sd15_tiny"], 1, (21, 27), 77)]
    for rel, latent in [("stable-diffusion-v1-5--stable-diffusion-v1-5", (64, 64)),
                        ("stabilityai--stable-diffusion-2-1", (96, 96)),
                        ("stabilityai--stable-diffusion-xl-base-1.0", (128, 128))]:
        path = CONFIGS / rel / "unet/config.json"
        cases.append((str(path.relative_to(ROOT)), json.loads(path.read_text()), 1, latent, 77))
    out = []
    for name, cfg, b, latent, tokens in cases:
        with torch.device("meta"):
            model = build(cfg)
            sample, t, text, kw = unet_inputs(cfg, b, tokens, "meta", torch.float32, latent)
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            model(sample, t, text, **kw)
        out.append({"name": name if isinstance(name, str) else name, "config": cfg if "/" not in name else name,
                    "batch": b, "latent": list(latent), "text_tokens": tokens, "flops": counter.get_total_flops()})
    return out


def wan_peaks():
    """No-grad AutoencoderKLWan decodes (chunk by chunk with the causal caches) of tiny configs."""
    out = []
    torch.manual_seed(0)
    configs = {"wan_vae_tiny": TINY_VAES["wan_vae_tiny"],
               "wan_vae_tiny_t4": {"_class_name": "AutoencoderKLWan", "base_dim": 8, "z_dim": 4, "dim_mult": [1, 2, 2],
                                   "num_res_blocks": 1, "temperal_downsample": [True, True], "scale_factor_spatial": 4}}
    for name, cfg in configs.items():
        model = build(cfg).eval()
        for dtype in [torch.float32, torch.bfloat16]:
            model = model.to(dtype)
            for b, t, (h, w) in [(1, 1, (8, 8)), (1, 2, (8, 8)), (1, 3, (8, 8)), (1, 5, (8, 8)), (2, 3, (6, 10))]:
                z = torch.randn(b, cfg["z_dim"], t, h, w, dtype=dtype)
                peak = live_peak(model, [z], lambda: model.decode(z).sample)
                out.append({"name": name, "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": b, "latent_frames": t,
                            "latent": [h, w], "decode_peak_bytes": peak})
            # enable_tiling with 16-pixel tiles stepping by 12 (4 and 3 latents at this VAE's 4×)
            model.enable_tiling(tile_sample_min_height=16, tile_sample_min_width=16,
                                tile_sample_stride_height=12, tile_sample_stride_width=12)
            for b, t, (h, w) in [(1, 3, (8, 8)), (1, 2, (6, 10))]:
                z = torch.randn(b, cfg["z_dim"], t, h, w, dtype=dtype)
                peak = live_peak(model, [z], lambda: model.decode(z).sample)
                out.append({"name": name, "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": b, "latent_frames": t,
                            "latent": [h, w], "tile": 16, "stride": 12, "decode_peak_bytes": peak})
            model.disable_tiling()
            # encodes: the first frame alone, then groups of 4 frames (diffusers 0.42.1 cannot encode
            # with attn_scales: WanEncoder3d passes feat_cache to WanAttentionBlock.forward)
            for b, frames, (h, w), tiled in [(1, 1, (32, 32), False), (1, 5, (32, 32), False), (1, 9, (32, 32), False),
                                             (2, 13, (24, 40), False), (1, 9, (32, 32), True)]:
                if cfg.get("attn_scales"):
                    continue
                if tiled:
                    model.enable_tiling(tile_sample_min_height=16, tile_sample_min_width=16,
                                        tile_sample_stride_height=12, tile_sample_stride_width=12)
                x = torch.randn(b, 3, frames, h, w, dtype=dtype)
                peak = live_peak(model, [x], lambda: model.encode(x).latent_dist.sample())
                out.append({"name": name, "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": b, "frames": frames,
                            "height": h, "width": w, **({"tile": 16, "stride": 12} if tiled else {}), "encode_peak_bytes": peak})
                model.disable_tiling()
    return out


def real_vae_peaks():
    """The real SDXL VAE and Wan 2.1 VAE at their own sizes, on fake CPU tensors (no memory;
    LiveBytes still sees every storage come and go)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    out = []
    for rel in ["stabilityai--stable-diffusion-xl-base-1.0", "Wan-AI--Wan2.1-T2V-1.3B-Diffusers"]:
        path = CONFIGS / rel / "vae/config.json"
        cfg = json.loads(path.read_text())
        wan = cfg["_class_name"] == "AutoencoderKLWan"
        for dtype in [torch.float32, torch.bfloat16]:
            for tiled in [False, True]:
                prev = torch.get_default_dtype()
                torch.set_default_dtype(dtype)
                try:
                    with FakeTensorMode(allow_non_fake_inputs=True):
                        model = build(cfg).eval()
                        if tiled:
                            model.enable_tiling()
                        if wan:
                            # 17 frames of 480 × 832 (5 latent frames)
                            frames, (h, w) = 17, (480, 832)
                            z = torch.randn(1, 16, 5, h // 8, w // 8)
                            x = torch.randn(1, 3, frames, h, w)
                        else:
                            # 1024 px (one tile), 1536 px when tiled
                            frames, (h, w) = 1, ((1536, 1536) if tiled else (1024, 1024))
                            z = torch.randn(1, cfg["latent_channels"], h // 8, w // 8)
                            x = torch.randn(1, 3, h, w)
                        dec = live_peak(model, [z], lambda: model.decode(z).sample)
                        enc = live_peak(model, [x], lambda: model.encode(x).latent_dist.sample())
                finally:
                    torch.set_default_dtype(prev)
                out.append({"name": rel, "config": str(path.relative_to(ROOT)), "class": cfg["_class_name"],
                            "dtype": str(dtype).split(".")[-1], "batch": 1, "frames": frames, "height": h, "width": w,
                            "tiled": tiled, "encode_peak_bytes": enc, "decode_peak_bytes": dec})
    return out


SECTIONS = {"counts": counts, "saved": saved, "peaks": peaks, "flops": flops, "wan_peaks": wan_peaks,
            "real_vae_peaks": real_vae_peaks}

if __name__ == "__main__":
    result = json.loads(DEST.read_text()) if DEST.exists() else {}
    result.update({"diffusers": diffusers.__version__, "torch": torch.__version__})
    for section in sys.argv[1:] or list(SECTIONS):
        result[section] = SECTIONS[section]()
    DEST.write_text(json.dumps(result, indent=1) + "\n")
    for c in result.get("counts", []):
        print(c.get("name") or c["config"], c["params"])
