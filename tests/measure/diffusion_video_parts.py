"""Parameter counts of the video and Sana pipelines' VAEs and LLM text encoders, and their
remaining denoiser configs, as diffusers 0.42.1 / transformers build them (meta device,
sum(p.numel())), for Headroom's model::diffusion::{cogvideox_vae, hunyuan_vae, ltx_vae,
dc_ae, wan_vae} and the LlamaModel / Gemma2Model text encoders.

counts: every real config under tests/fixtures/diffusers/configs/*/ whose class is one of
  CLASSES below (diffusers `_class_name`, or transformers `architectures[0]`), and the tiny
  configs below.

Run: /work/venv/bin/python tests/measure/diffusion_video_parts.py
Writes tests/fixtures/measured/diffusion_video_parts.json
"""
import json
import pathlib

import diffusers
import torch
import transformers

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests/fixtures/diffusers/configs"
DEST = ROOT / "tests/fixtures/measured/diffusion_video_parts.json"

DIFFUSERS = ["AutoencoderKLCogVideoX", "AutoencoderKLHunyuanVideo", "AutoencoderKLLTXVideo", "AutoencoderDC"]
# Wan's VAE and transformer only for the Wan 2.2 configs (Wan 2.1's are counted by
# diffusion_unet_vae.py and diffusion_dit.py).
WAN22 = ["Wan-AI--Wan2.2-"]
TRANSFORMERS = ["LlamaModel", "Gemma2Model"]

TINY = {
    "cogvideox_vae_tiny": {"_class_name": "AutoencoderKLCogVideoX", "block_out_channels": [8, 16, 24],
                           "down_block_types": ["CogVideoXDownBlock3D"] * 3, "up_block_types": ["CogVideoXUpBlock3D"] * 3,
                           "layers_per_block": 1, "latent_channels": 4, "norm_num_groups": 4},
    "hunyuan_vae_tiny": {"_class_name": "AutoencoderKLHunyuanVideo", "block_out_channels": [8, 16, 24, 32],
                         "layers_per_block": 1, "latent_channels": 4, "norm_num_groups": 4},
    "ltx_vae_tiny": {"_class_name": "AutoencoderKLLTXVideo", "block_out_channels": [8, 16, 24, 24],
                     "decoder_block_out_channels": [8, 16, 24, 24], "layers_per_block": [1, 2, 1, 1, 2],
                     "decoder_layers_per_block": [1, 2, 1, 1, 2], "latent_channels": 4, "patch_size": 2},
    "dc_ae_tiny": {"_class_name": "AutoencoderDC", "encoder_block_out_channels": [8, 16, 32], "decoder_block_out_channels": [8, 16, 32],
                   "encoder_block_types": ["ResBlock", "ResBlock", "EfficientViTBlock"],
                   "decoder_block_types": ["ResBlock", "ResBlock", "EfficientViTBlock"],
                   "encoder_layers_per_block": [1, 1, 1], "decoder_layers_per_block": [1, 2, 1],
                   "encoder_qkv_multiscales": [[], [], [5]], "decoder_qkv_multiscales": [[], [], [3, 5]],
                   "latent_channels": 4, "attention_head_dim": 8, "upsample_block_type": "interpolate",
                   "downsample_block_type": "Conv"},
    # the class defaults: pixel (un)shuffle resampling, ResBlocks everywhere
    "dc_ae_shuffle_tiny": {"_class_name": "AutoencoderDC", "encoder_block_out_channels": [8, 16, 32], "decoder_block_out_channels": [8, 16, 32],
                           "encoder_layers_per_block": [1, 1, 1], "decoder_layers_per_block": [1, 1, 1],
                           "encoder_qkv_multiscales": [[], [], []], "decoder_qkv_multiscales": [[], [], []], "latent_channels": 4},
    "wan22_vae_tiny": {"_class_name": "AutoencoderKLWan", "base_dim": 8, "decoder_base_dim": 12, "z_dim": 4, "dim_mult": [1, 2, 2],
                       "num_res_blocks": 1, "attn_scales": [], "temperal_downsample": [False, True], "is_residual": True,
                       "patch_size": 2, "in_channels": 12, "out_channels": 12},
    "llama_tiny": {"architectures": ["LlamaModel"], "hidden_size": 64, "intermediate_size": 160, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "num_hidden_layers": 3, "vocab_size": 1000, "tie_word_embeddings": False},
    "gemma2_tiny": {"architectures": ["Gemma2Model"], "hidden_size": 64, "intermediate_size": 160, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 3, "vocab_size": 1000},
}


def build(cfg):
    if "_class_name" in cfg:
        return getattr(diffusers, cfg["_class_name"]).from_config(cfg)
    cls = getattr(transformers, cfg["architectures"][0])
    config = cls.config_class(**{k: v for k, v in cfg.items() if k != "architectures"})
    return cls(config)


def wanted(path, cfg):
    cls = cfg.get("_class_name") or cfg.get("architectures", [""])[0]
    if cls in DIFFUSERS or cls in TRANSFORMERS:
        return True
    if cls == "CLIPTextModel":
        # HunyuanVideo's CLIP-L copy (the other CLIPs are counted by diffusion_text_encoders.py)
        return "hunyuanvideo-community" in str(path)
    return cls in ("AutoencoderKLWan", "WanTransformer3DModel") and any(str(path).find(w) >= 0 for w in WAN22)


def count(cfg):
    with torch.device("meta"):
        model = build(cfg)
    return sum(p.numel() for p in model.parameters())


def counts():
    out = []
    for path in sorted(CONFIGS.glob("*/*/config.json")):
        cfg = json.loads(path.read_text())
        if wanted(path, cfg):
            cls = cfg.get("_class_name") or cfg["architectures"][0]
            out.append({"config": str(path.relative_to(ROOT)), "class": cls, "params": count(cfg)})
    for name, cfg in TINY.items():
        cls = cfg.get("_class_name") or cfg["architectures"][0]
        out.append({"name": name, "config": cfg, "class": cls, "params": count(cfg)})
    return out


if __name__ == "__main__":
    old = json.loads(DEST.read_text()) if DEST.exists() else {}
    result = {**old, "diffusers": diffusers.__version__, "transformers": transformers.__version__, "torch": torch.__version__, "counts": counts()}
    DEST.write_text(json.dumps(result, indent=1) + "\n")
    for c in result["counts"]:
        print(c.get("name") or c["config"], c["class"], c["params"])
