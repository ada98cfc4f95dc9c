"""Peak live-tensor bytes of a whole training step of tiny diffusers denoisers, on CPU.

For each case: build the denoiser from a tiny config (diffusion_unet_vae.py's UNets,
diffusion_dit.py's Flux / SD3 / Wan), an AdamW optimizer (foreach=True, the CUDA default) over
what is trained, and run two steps

    optimizer.zero_grad(set_to_none=True)
    pred = model(**inputs).sample ; loss = mse_loss(pred.float(), target.float()) ; loss.backward()
    optimizer.step()

(the loss as diffusers' training scripts write it), measuring the second with LiveBytes (live_bytes.py: every storage an op makes, freed when it
expires; MemTracker cannot hook frozen LoRA bases): parameters, buffers, optimizer states and
the inputs exist before the step and are added as its baseline, so the peak is the whole
step's. Three set-ups:
full fine-tuning in fp32, full fine-tuning in pure bf16 (model.to(torch.bfloat16)), and PEFT
LoRA (rank 4 on to_q/to_k/to_v/to_out.0, adapters cast to fp32 as the scripts'
`cast_training_params`) on a bf16 base; each with and without `enable_gradient_checkpointing()`.
No autocast (CPU autocast's op lists differ from CUDA's); attention is torch's CPU SDPA (the
CPU flash kernel: it saves q, k, v, the output and a logsumexp, as CUDA's flash kernel does).

Run: /work/venv/bin/python tests/measure/diffusion_steps.py
Writes tests/fixtures/measured/diffusion_steps.json
"""
import json
import pathlib
import warnings

import diffusers
import peft
import torch
import torch.nn.functional as F
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from live_bytes import LiveBytes  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = pathlib.Path(__file__).resolve().parents[2]
DEST = ROOT / "tests/fixtures/measured/diffusion_steps.json"

TINY = {
    "sd15_tiny": {"_class_name": "UNet2DConditionModel", "block_out_channels": [32, 64], "layers_per_block": 1,
                  "down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"],
                  "attention_head_dim": 2, "cross_attention_dim": 48, "norm_num_groups": 8, "sample_size": 32},
    "flux_tiny": {"_class_name": "FluxTransformer2DModel", "patch_size": 1, "in_channels": 16, "num_layers": 2,
                  "num_single_layers": 2, "attention_head_dim": 32, "num_attention_heads": 2,
                  "joint_attention_dim": 48, "pooled_projection_dim": 24, "guidance_embeds": True,
                  "axes_dims_rope": [8, 12, 12]},
    "sd3_tiny": {"_class_name": "SD3Transformer2DModel", "sample_size": 32, "patch_size": 2, "in_channels": 4,
                 "num_layers": 3, "attention_head_dim": 32, "num_attention_heads": 2, "joint_attention_dim": 48,
                 "caption_projection_dim": 64, "pooled_projection_dim": 24, "out_channels": 4,
                 "pos_embed_max_size": 32},
    "wan_tiny": {"_class_name": "WanTransformer3DModel", "patch_size": [1, 2, 2], "num_attention_heads": 2,
                 "attention_head_dim": 32, "in_channels": 4, "out_channels": 4, "text_dim": 48, "freq_dim": 32,
                 "ffn_dim": 96, "num_layers": 2, "cross_attn_norm": True, "qk_norm": "rms_norm_across_heads",
                 "rope_max_seq_len": 64},
}
LORA_TARGETS = ["to_q", "to_k", "to_v", "to_out.0"]
BATCH, LATENT, TEXT, FRAMES = 2, 32, 24, 3


def inputs(cfg, dtype):
    b, lat, text = BATCH, LATENT, TEXT
    cls = cfg["_class_name"]
    if cls == "UNet2DConditionModel":
        return {"sample": torch.randn(b, 4, lat, lat, dtype=dtype), "timestep": torch.randint(0, 1000, (b,)),
                "encoder_hidden_states": torch.randn(b, text, cfg["cross_attention_dim"], dtype=dtype)}
    if cls == "FluxTransformer2DModel":
        n = (lat // 2) ** 2
        return {"hidden_states": torch.randn(b, n, cfg["in_channels"], dtype=dtype),
                "encoder_hidden_states": torch.randn(b, text, cfg["joint_attention_dim"], dtype=dtype),
                "pooled_projections": torch.randn(b, cfg["pooled_projection_dim"], dtype=dtype),
                "timestep": torch.rand(b, dtype=dtype), "img_ids": torch.zeros(n, 3, dtype=dtype),
                "txt_ids": torch.zeros(text, 3, dtype=dtype), "guidance": torch.ones(b, dtype=dtype)}
    if cls == "SD3Transformer2DModel":
        return {"hidden_states": torch.randn(b, cfg["in_channels"], lat, lat, dtype=dtype),
                "encoder_hidden_states": torch.randn(b, text, cfg["joint_attention_dim"], dtype=dtype),
                "pooled_projections": torch.randn(b, cfg["pooled_projection_dim"], dtype=dtype),
                "timestep": torch.rand(b, dtype=dtype) * 1000}
    return {"hidden_states": torch.randn(b, cfg["in_channels"], FRAMES, lat, lat, dtype=dtype),
            "encoder_hidden_states": torch.randn(b, text, cfg["text_dim"], dtype=dtype),
            "timestep": torch.randint(0, 1000, (b,))}


def case(name, cfg, setup, ckpt):
    torch.manual_seed(0)
    model = getattr(diffusers, cfg["_class_name"]).from_config(cfg)
    low = setup in ("bf16", "lora")
    if low:
        model = model.to(torch.bfloat16)
    if setup == "lora":
        model.requires_grad_(False)
        model.add_adapter(peft.LoraConfig(r=4, lora_alpha=4, init_lora_weights="gaussian", target_modules=LORA_TARGETS))
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.float()
    if ckpt:
        model.enable_gradient_checkpointing()
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, foreach=True)
    batch = inputs(cfg, torch.bfloat16 if low else torch.float32)

    def step():
        opt.zero_grad(set_to_none=True)
        pred = model(**batch, return_dict=False)[0]
        loss = F.mse_loss(pred.float(), torch.zeros_like(pred, dtype=torch.float32))
        loss.backward()
        opt.step()

    step()
    opt.zero_grad(set_to_none=True)
    tensors = [t for t in batch.values() if isinstance(t, torch.Tensor)]
    states = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    existing = [*model.parameters(), *model.buffers(), *states, *tensors]
    seen, baseline = set(), 0
    for t in existing:
        key = t.untyped_storage().data_ptr()
        if key not in seen:
            seen.add(key)
            baseline += t.untyped_storage().nbytes()
    mode = LiveBytes()
    mode.ignore(existing)
    with mode:
        step()
    total = baseline + mode.peak
    input_bytes = sum(t.untyped_storage().nbytes() for t in tensors)
    buffer_bytes = sum(b.untyped_storage().nbytes() for b in model.buffers())
    return {"name": f"{name}-{setup}" + ("-ckpt" if ckpt else ""), "config": cfg, "setup": setup, "checkpointing": ckpt,
            "batch": BATCH, "latent": LATENT, "text_tokens": TEXT, "frames": FRAMES if "Wan" in cfg["_class_name"] else 1,
            "peak_bytes": total, "input_bytes": input_bytes, "buffer_bytes": buffer_bytes,
            "trainable_params": sum(p.numel() for p in params)}


def main():
    out = []
    for name, cfg in TINY.items():
        for setup in ["fp32", "bf16", "lora"]:
            for ckpt in [False, True]:
                r = case(name, cfg, setup, ckpt)
                print(r["name"], r["peak_bytes"], r["trainable_params"])
                out.append(r)
    DEST.write_text(json.dumps({"diffusers": diffusers.__version__, "torch": torch.__version__, "peft": peft.__version__, "cases": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
