"""Parameter counts of the video and Sana pipelines' VAEs and LLM text encoders, and their
remaining denoiser configs, as diffusers 0.42.1 / transformers build them (meta device,
sum(p.numel())), for Headroom's model::diffusion::{cogvideox_vae, hunyuan_vae, ltx_vae,
dc_ae, wan_vae} and the LlamaModel / Gemma2Model text encoders.

counts: every real config under tests/fixtures/diffusers/configs/*/ whose class is one of
  the classes below (diffusers `_class_name`, or transformers `architectures[0]`), and the
  tiny configs below.
encode_peaks: no-grad encodes of the tiny LlamaModel / Gemma2Model (see encode_peaks).

Run: /work/venv/bin/python tests/measure/diffusion_video_parts.py [counts|encode_peaks ...]
Writes tests/fixtures/measured/diffusion_video_parts.json (sections not run are kept).
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




def encode_peaks():
    """No-grad encodes of the tiny LlamaModel / Gemma2Model (random weights, CPU, torch's own
    SDPA), `batch` prompts padded to `tokens` (the last quarter of each is padding, as the
    pipelines pad to max_length and pass the attention mask), with and without
    output_hidden_states (HunyuanVideo reads hidden_states[-3]; Sana the last hidden state):
    live storage bytes beyond the weights, the ids and the mask (live_bytes.LiveBytes)."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from live_bytes import LiveBytes
    out = []
    torch.manual_seed(0)
    for name in ["llama_tiny", "gemma2_tiny"]:
        cfg = TINY[name]
        model = build(cfg).eval()
        for dtype in [torch.float32, torch.bfloat16]:
            model = model.to(dtype)
            for batch, tokens, hidden_states in [(1, 96, False), (2, 96, False), (2, 96, True), (1, 160, True)]:
                ids = torch.randint(0, cfg["vocab_size"], (batch, tokens))
                mask = torch.ones(batch, tokens, dtype=torch.long)
                mask[:, tokens * 3 // 4:] = 0
                with torch.no_grad():
                    mode = LiveBytes()
                    mode.ignore([*model.parameters(), *model.buffers(), ids, mask])
                    with mode:
                        model(input_ids=ids, attention_mask=mask, output_hidden_states=hidden_states)
                out.append({"name": name, "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": batch, "tokens": tokens,
                            "hidden_states": hidden_states, "attn_implementation": model.config._attn_implementation,
                            "peak_bytes": mode.peak})
    return out


def dc_ae_peaks():
    """No-grad AutoencoderDC decodes of the tiny DC-AEs (random weights, CPU, no tiling):
    live storage bytes beyond the weights and the latents (live_bytes.LiveBytes)."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from live_bytes import LiveBytes
    out = []
    torch.manual_seed(0)
    for name in ["dc_ae_tiny", "dc_ae_shuffle_tiny"]:
        cfg = TINY[name]
        model = build(cfg).eval()
        for dtype in [torch.float32, torch.bfloat16]:
            model = model.to(dtype)
            for b, (h, w) in [(1, (16, 16)), (2, (8, 12)), (1, (32, 32)), (1, (4, 4))]:
                z = torch.randn(b, cfg["latent_channels"], h, w, dtype=dtype)
                with torch.no_grad():
                    mode = LiveBytes()
                    mode.ignore([*model.parameters(), *model.buffers(), z])
                    with mode:
                        model.decode(z)
                out.append({"name": name, "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": b, "latent": [h, w],
                            "decode_peak_bytes": mode.peak})
    return out


def real_peaks(rel, latents):
    """No-grad decodes of a real VAE config in bf16 on fake tensors (FakeTensorMode: shapes and
    dtypes without memory), live storage bytes beyond the weights and the latents."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from torch._subclasses.fake_tensor import FakeTensorMode
    from live_bytes import LiveBytes
    path = CONFIGS / rel / "vae/config.json"
    cfg = json.loads(path.read_text())
    out = []
    for latent in latents:
        with FakeTensorMode(allow_non_fake_inputs=True):
            prev = torch.get_default_dtype()
            torch.set_default_dtype(torch.bfloat16)
            try:
                model = build(cfg).eval()
            finally:
                torch.set_default_dtype(prev)
            z = torch.randn(1, cfg["latent_channels"], *latent, dtype=torch.bfloat16)
            with torch.no_grad():
                mode = LiveBytes()
                mode.ignore([*model.parameters(), *model.buffers(), z])
                with mode:
                    model.decode(z)
        out.append({"config": str(path.relative_to(ROOT)), "dtype": "bfloat16", "batch": 1, "latent": list(latent), "fake": True,
                    "decode_peak_bytes": mode.peak})
    return out


def ltx_vae_peaks():
    """No-grad AutoencoderKLLTXVideo decodes of the tiny 0.9.0-layout VAE (random weights, CPU,
    no tiling): live storage bytes beyond the weights and the latents (live_bytes.LiveBytes)."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from live_bytes import LiveBytes
    out = []
    torch.manual_seed(0)
    cfg = TINY["ltx_vae_tiny"]
    model = build(cfg).eval()
    for dtype in [torch.float32, torch.bfloat16]:
        model = model.to(dtype)
        for b, (t, h, w) in [(1, (3, 8, 8)), (2, (2, 6, 10)), (1, (5, 4, 4)), (1, (1, 8, 8))]:
            z = torch.randn(b, cfg["latent_channels"], t, h, w, dtype=dtype)
            with torch.no_grad():
                mode = LiveBytes()
                mode.ignore([*model.parameters(), *model.buffers(), z])
                with mode:
                    model.decode(z)
            out.append({"name": "ltx_vae_tiny", "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": b, "latent": [t, h, w],
                        "decode_peak_bytes": mode.peak})
    return out


def dc_ae_real_peaks():
    """The Sana 1600M VAE at 512 and 1024 pixels (16 and 32 latents)."""
    return real_peaks("Efficient-Large-Model--Sana_1600M_1024px_diffusers", [(16, 16), (32, 32)])


def ltx_real_peaks():
    """LTX-Video's VAE for 480 × 704 pixels, 9 and 17 frames (2 and 3 latent frames)."""
    return real_peaks("Lightricks--LTX-Video", [(2, 15, 22), (3, 15, 22)])


SECTIONS = {"counts": counts, "encode_peaks": encode_peaks, "dc_ae_peaks": dc_ae_peaks, "dc_ae_real_peaks": dc_ae_real_peaks,
            "ltx_vae_peaks": ltx_vae_peaks, "ltx_real_peaks": ltx_real_peaks}

if __name__ == "__main__":
    import sys
    old = json.loads(DEST.read_text()) if DEST.exists() else {}
    result = {**old, "diffusers": diffusers.__version__, "transformers": transformers.__version__, "torch": torch.__version__}
    for name in sys.argv[1:] or list(SECTIONS):
        result[name] = SECTIONS[name]()
        print(name, len(result[name]))
    DEST.write_text(json.dumps(result, indent=1) + "\n")
