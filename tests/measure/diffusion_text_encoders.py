"""Parameter counts and no-grad encode peaks of diffusion pipelines' text encoders, as
transformers builds them (CLIPTextModel, CLIPTextModelWithProjection, T5EncoderModel,
UMT5EncoderModel).

Counts: each real config under tests/fixtures/diffusers/configs/*/text_encoder*/ built on
the meta device, sum(p.numel()). Peaks: tiny configs of each class, random weights,
one torch.no_grad() encode of batch × max_tokens tokens in fp32 and bf16, measured with
LiveBytes (live storage bytes beyond the weights and the input ids).

Run: /work/venv/bin/python tests/measure/diffusion_text_encoders.py
Writes tests/fixtures/measured/diffusion_text_encoders.json
"""
import json
import pathlib
import sys

import torch
import transformers

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from live_bytes import LiveBytes  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests/fixtures/diffusers/configs"
CLASSES = {c: getattr(transformers, c) for c in ["CLIPTextModel", "CLIPTextModelWithProjection", "T5EncoderModel", "UMT5EncoderModel"]}


def build(cfg):
    cls = CLASSES[cfg["architectures"][0]]
    config = cls.config_class(**{k: v for k, v in cfg.items() if k != "architectures"})
    return cls(config)


def counts():
    out = []
    for path in sorted(CONFIGS.glob("*/text_encoder*/config.json")):
        cfg = json.loads(path.read_text())
        if cfg.get("architectures", [""])[0] not in CLASSES:
            continue
        with torch.device("meta"):
            model = build(cfg)
        out.append({"config": str(path.relative_to(ROOT)), "class": cfg["architectures"][0], "params": sum(p.numel() for p in model.parameters())})
    return out


TINY = {
    "clip": {"architectures": ["CLIPTextModel"], "hidden_size": 64, "intermediate_size": 256, "num_attention_heads": 4, "num_hidden_layers": 3, "max_position_embeddings": 77, "vocab_size": 1000, "hidden_act": "quick_gelu", "projection_dim": 32},
    "clip_projection": {"architectures": ["CLIPTextModelWithProjection"], "hidden_size": 80, "intermediate_size": 320, "num_attention_heads": 5, "num_hidden_layers": 2, "max_position_embeddings": 77, "vocab_size": 1000, "hidden_act": "gelu", "projection_dim": 48},
    "t5": {"architectures": ["T5EncoderModel"], "d_model": 64, "d_kv": 16, "d_ff": 160, "num_heads": 4, "num_layers": 3, "vocab_size": 1000, "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 32},
    "t5_many_heads": {"architectures": ["T5EncoderModel"], "d_model": 64, "d_kv": 4, "d_ff": 96, "num_heads": 16, "num_layers": 2, "vocab_size": 1000, "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 32},
    "umt5": {"architectures": ["UMT5EncoderModel"], "d_model": 64, "d_kv": 16, "d_ff": 160, "num_heads": 4, "num_layers": 2, "vocab_size": 1000, "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 32},
}


def peaks():
    out = []
    torch.manual_seed(0)
    for name, cfg in TINY.items():
        model = build(cfg).eval()
        tokens = 77 if name.startswith("clip") else 256 if name == "t5_many_heads" else 128
        for dtype in [torch.float32, torch.bfloat16]:
            model = model.to(dtype)
            for batch, hidden_states in [(1, False), (2, False), (2, name.startswith("clip"))]:
                ids = torch.randint(0, cfg["vocab_size"], (batch, tokens))
                with torch.no_grad():
                    mode = LiveBytes()
                    mode.ignore([*model.parameters(), *model.buffers(), ids])
                    with mode:
                        model(ids, output_hidden_states=hidden_states)
                out.append({"name": name, "config": cfg, "dtype": str(dtype).split(".")[-1], "batch": batch, "tokens": tokens, "hidden_states": hidden_states, "peak_bytes": mode.peak})
    return out


if __name__ == "__main__":
    result = {"transformers": transformers.__version__, "torch": torch.__version__, "counts": counts(), "peaks": peaks()}
    dest = ROOT / "tests/fixtures/measured/diffusion_text_encoders.json"
    dest.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["counts"], indent=1))
    for p in result["peaks"]:
        print(p["name"], p["dtype"], p["batch"], p["peak_bytes"])
