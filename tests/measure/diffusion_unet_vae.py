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
CLASSES = {"UNet2DConditionModel": diffusers.UNet2DConditionModel, "AutoencoderKL": diffusers.AutoencoderKL}

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


SECTIONS = {"counts": counts}

if __name__ == "__main__":
    result = json.loads(DEST.read_text()) if DEST.exists() else {}
    result.update({"diffusers": diffusers.__version__, "torch": torch.__version__})
    for section in sys.argv[1:] or list(SECTIONS):
        result[section] = SECTIONS[section]()
    DEST.write_text(json.dumps(result, indent=1) + "\n")
    for c in result.get("counts", []):
        print(c.get("name") or c["config"], c["params"])
