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

Each case is measured twice: on CPU (`peak_bytes`, real kernels), and on the meta device with
CUDA's kernel choice (`cuda_peak_bytes`): no data, every op's output allocated as its meta kernel
shapes it, attention as torch 2.15's CUDA SDPA picks its kernel (common.cuda_sdpa: flash in bf16,
memory-efficient in fp32, math when the head dim is unaligned) and torch.nn.RMSNorm as CUDA's
`_fused_rms_norm` (saves its input and a fp32 rstd per row; CPU and meta decompose it into
pow/mean/rsqrt/mul, which save fp32 copies of the input). The fake-CUDA step that
diffusion_dit.py uses for the forward cannot run backward (the autograd engine asks for a CUDA
context), hence meta. `cuda_backward_start_bytes` is what is live (beyond the baseline) when
`loss.backward()` starts: the saved tensors, the prediction and the loss's own. Kernel workspaces
that CUDA allocates inside one kernel (flash backward's fp32 dq accumulator) are not seen.

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
from torch.multiprocessing.reductions import StorageWeakRef
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from live_bytes import LiveBytes  # noqa: E402
from common import cuda_sdpa  # noqa: E402

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


ORIG_SDPA = F.scaled_dot_product_attention
ORIG_RMS_NORM = F.rms_norm


class FusedRmsNorm(torch.autograd.Function):
    """What CUDA's `_fused_rms_norm` allocates and keeps (derivatives.yaml: `_fused_rms_norm_backward`
    reads input, rstd and weight): the output and a fp32 rstd per row; backward makes the input's
    and the weight's gradients."""

    @staticmethod
    def forward(ctx, x, weight, dims):
        rstd = torch.empty(x.shape[:x.dim() - dims] + (1,) * dims, dtype=torch.float32, device=x.device)
        ctx.save_for_backward(x, rstd, weight)
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, grad):
        x, _, weight = ctx.saved_tensors
        gw = torch.empty_like(weight) if weight is not None and ctx.needs_input_grad[1] else None
        return torch.empty_like(x), gw, None


def meta_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    return cuda_sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                     enable_gqa=enable_gqa, devices=("cuda", "meta"))[1]


def meta_rms_norm(x, normalized_shape, weight=None, eps=None):
    return FusedRmsNorm.apply(x, weight, len(normalized_shape))


def build(cfg, setup, device):
    """The model in fp32 on `device`, then cast to bf16 for the bf16 and LoRA set-ups (buffers
    too, as `model.to` casts them)."""
    with torch.device(device):
        model = getattr(diffusers, cfg["_class_name"]).from_config(cfg)
    return model.to(torch.bfloat16) if setup in ("bf16", "lora") else model


def case(name, cfg, setup, ckpt, device="cpu"):
    """One step's peak; `device` "meta" runs it with CUDA's kernel choice (module doc)."""
    torch.manual_seed(0)
    meta = device == "meta"
    F.scaled_dot_product_attention = meta_sdpa if meta else ORIG_SDPA
    F.rms_norm = meta_rms_norm if meta else ORIG_RMS_NORM
    model = build(cfg, setup, device)
    low = setup in ("bf16", "lora")
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
    batch = {k: v.to(device) for k, v in inputs(cfg, torch.bfloat16 if low else torch.float32).items()}
    start = []

    def step():
        opt.zero_grad(set_to_none=True)
        pred = model(**batch, return_dict=False)[0]
        loss = F.mse_loss(pred.float(), torch.zeros_like(pred, dtype=torch.float32))
        if mode is not None:
            start.append(mode.live)
        loss.backward()
        opt.step()

    mode = None
    step()
    opt.zero_grad(set_to_none=True)
    tensors = [t for t in batch.values() if isinstance(t, torch.Tensor)]
    states = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    existing = [*model.parameters(), *model.buffers(), *states, *tensors]
    seen, baseline = set(), 0
    for t in existing:
        key = StorageWeakRef(t.untyped_storage()).cdata  # meta storages all have data_ptr 0
        if key not in seen:
            seen.add(key)
            baseline += t.untyped_storage().nbytes()
    mode = LiveBytes(count_meta=meta)
    mode.ignore(existing)
    with mode:
        step()
    total = baseline + mode.peak
    input_bytes = sum(t.untyped_storage().nbytes() for t in tensors)
    buffer_bytes = sum(b.untyped_storage().nbytes() for b in model.buffers())
    if meta:
        return {"cuda_peak_bytes": total, "cuda_backward_start_bytes": baseline + start[0]}
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
                r.update(case(name, cfg, setup, ckpt, "meta"))
                print(r["name"], r["peak_bytes"], r["cuda_peak_bytes"], r["trainable_params"])
                out.append(r)
    DEST.write_text(json.dumps({"diffusers": diffusers.__version__, "torch": torch.__version__, "peft": peft.__version__, "cases": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
