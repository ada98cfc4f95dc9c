"""Writes the diffusion pipelines of the model catalogue (src/import/catalogue/*.json):
each file is {"_headroom": {id, name, aliases}, "pipeline": {"model_index": …, "<component>":
config, …}}, the `model.pipeline` contract of a scenario, assembled from the component
configs under tests/fixtures/diffusers/configs/ (their sources: SOURCES.md there) and the
pipeline's model_index.json as the Hub repository lists it (class per component).

A pipeline is written only when every component it counts has a config; run again after
adding configs. Run: python3 tests/measure/write_diffusion_catalogue.py
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests/fixtures/diffusers/configs"
OUT = ROOT / "src/import/catalogue"

# Text encoders shared by several pipelines: where their config lives.
CLIP_L = "stable-diffusion-v1-5--stable-diffusion-v1-5/text_encoder"
CLIP_L_PROJ = "stabilityai--stable-diffusion-3.5-large/text_encoder"
CLIP_G = "stabilityai--stable-diffusion-xl-base-1.0/text_encoder_2"
CLIP_H = "stabilityai--stable-diffusion-2-1/text_encoder"
T5XXL = "black-forest-labs--FLUX.1-dev/text_encoder_2"
UMT5 = "Wan-AI--Wan2.1-T2V-1.3B-Diffusers/text_encoder"

SD_TEXT = {"text_encoder": ("transformers", "CLIPTextModel", CLIP_L)}
SD3_TEXT = {
    "text_encoder": ("transformers", "CLIPTextModelWithProjection", CLIP_L_PROJ),
    "text_encoder_2": ("transformers", "CLIPTextModelWithProjection", CLIP_G),
    "text_encoder_3": ("transformers", "T5EncoderModel", T5XXL),
}
FLUX_TEXT = {"text_encoder": ("transformers", "CLIPTextModel", CLIP_L), "text_encoder_2": ("transformers", "T5EncoderModel", T5XXL)}

# (Hub id, display name, aliases, pipeline class, {component: (library, class, config dir)}
# or {setting: value} for a model_index.json setting that is not a component).
PIPELINES = [
    ("stable-diffusion-v1-5/stable-diffusion-v1-5", "Stable Diffusion 1.5", ["sd15", "sd-1.5", "stable-diffusion-1.5"], "StableDiffusionPipeline",
     {**SD_TEXT, "unet": ("diffusers", "UNet2DConditionModel", None), "vae": ("diffusers", "AutoencoderKL", None)}),
    ("stabilityai/stable-diffusion-2-1", "Stable Diffusion 2.1", ["sd21", "sd-2.1"], "StableDiffusionPipeline",
     {"text_encoder": ("transformers", "CLIPTextModel", CLIP_H), "unet": ("diffusers", "UNet2DConditionModel", None), "vae": ("diffusers", "AutoencoderKL", None)}),
    ("stabilityai/stable-diffusion-xl-base-1.0", "SDXL base 1.0", ["sdxl", "sdxl-base", "stable-diffusion-xl"], "StableDiffusionXLPipeline",
     {**SD_TEXT, "text_encoder_2": ("transformers", "CLIPTextModelWithProjection", CLIP_G), "unet": ("diffusers", "UNet2DConditionModel", None), "vae": ("diffusers", "AutoencoderKL", None)}),
    ("stabilityai/stable-diffusion-3-medium-diffusers", "Stable Diffusion 3 Medium", ["sd3-medium", "sd3"], "StableDiffusion3Pipeline",
     {**SD3_TEXT, "transformer": ("diffusers", "SD3Transformer2DModel", None), "vae": ("diffusers", "AutoencoderKL", "stabilityai--stable-diffusion-3.5-large/vae")}),
    ("stabilityai/stable-diffusion-3.5-medium", "Stable Diffusion 3.5 Medium", ["sd3.5-medium", "sd35-medium"], "StableDiffusion3Pipeline",
     {**SD3_TEXT, "transformer": ("diffusers", "SD3Transformer2DModel", None), "vae": ("diffusers", "AutoencoderKL", "stabilityai--stable-diffusion-3.5-large/vae")}),
    ("stabilityai/stable-diffusion-3.5-large", "Stable Diffusion 3.5 Large", ["sd3.5-large", "sd35-large", "sd3.5"], "StableDiffusion3Pipeline",
     {**SD3_TEXT, "transformer": ("diffusers", "SD3Transformer2DModel", None), "vae": ("diffusers", "AutoencoderKL", None)}),
    ("black-forest-labs/FLUX.1-dev", "FLUX.1 [dev]", ["flux", "flux-dev", "flux.1-dev"], "FluxPipeline",
     {**FLUX_TEXT, "transformer": ("diffusers", "FluxTransformer2DModel", None), "vae": ("diffusers", "AutoencoderKL", None)}),
    ("black-forest-labs/FLUX.1-schnell", "FLUX.1 [schnell]", ["flux-schnell", "flux.1-schnell"], "FluxPipeline",
     {**FLUX_TEXT, "transformer": ("diffusers", "FluxTransformer2DModel", None), "vae": ("diffusers", "AutoencoderKL", "black-forest-labs--FLUX.1-dev/vae")}),
    ("Wan-AI/Wan2.1-T2V-1.3B-Diffusers", "Wan 2.1 T2V 1.3B", ["wan2.1-1.3b", "wan-1.3b"], "WanPipeline",
     {"text_encoder": ("transformers", "UMT5EncoderModel", UMT5), "transformer": ("diffusers", "WanTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLWan", None)}),
    ("Wan-AI/Wan2.1-T2V-14B-Diffusers", "Wan 2.1 T2V 14B", ["wan2.1-14b", "wan-14b"], "WanPipeline",
     {"text_encoder": ("transformers", "UMT5EncoderModel", UMT5), "transformer": ("diffusers", "WanTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLWan", "Wan-AI--Wan2.1-T2V-1.3B-Diffusers/vae")}),
    ("Wan-AI/Wan2.2-TI2V-5B-Diffusers", "Wan 2.2 TI2V 5B", ["wan2.2-5b", "wan2.2-ti2v-5b"], "WanPipeline",
     {"text_encoder": ("transformers", "UMT5EncoderModel", UMT5), "transformer": ("diffusers", "WanTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLWan", None)}),
    # Two experts: `transformer` (high noise) and `transformer_2` (low noise), switching at
    # boundary_ratio 0.875 (the Hub's model_index.json); the VAE is Wan 2.1's.
    ("Wan-AI/Wan2.2-T2V-A14B-Diffusers", "Wan 2.2 T2V A14B", ["wan2.2-a14b", "wan2.2-t2v-a14b", "wan2.2"], "WanPipeline",
     {"text_encoder": ("transformers", "UMT5EncoderModel", UMT5), "transformer": ("diffusers", "WanTransformer3DModel", None),
      "transformer_2": ("diffusers", "WanTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLWan", "Wan-AI--Wan2.1-T2V-1.3B-Diffusers/vae"),
      "boundary_ratio": 0.875}),
    ("THUDM/CogVideoX-2b", "CogVideoX 2B", ["cogvideox-2b", "cogvideox"], "CogVideoXPipeline",
     {"text_encoder": ("transformers", "T5EncoderModel", T5XXL), "transformer": ("diffusers", "CogVideoXTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLCogVideoX", None)}),
    ("THUDM/CogVideoX-5b", "CogVideoX 5B", ["cogvideox-5b"], "CogVideoXPipeline",
     {"text_encoder": ("transformers", "T5EncoderModel", T5XXL), "transformer": ("diffusers", "CogVideoXTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLCogVideoX", None)}),
    ("Lightricks/LTX-Video", "LTX-Video", ["ltx-video", "ltxv", "ltx"], "LTXPipeline",
     {"text_encoder": ("transformers", "T5EncoderModel", T5XXL), "transformer": ("diffusers", "LTXVideoTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLLTXVideo", None)}),
    ("hunyuanvideo-community/HunyuanVideo", "HunyuanVideo", ["hunyuanvideo", "hunyuan-video"], "HunyuanVideoPipeline",
     {"text_encoder": ("transformers", "LlamaModel", None), "text_encoder_2": ("transformers", "CLIPTextModel", None),
      "transformer": ("diffusers", "HunyuanVideoTransformer3DModel", None), "vae": ("diffusers", "AutoencoderKLHunyuanVideo", None)}),
    ("Efficient-Large-Model/Sana_1600M_1024px_diffusers", "Sana 1600M 1024px", ["sana", "sana-1.6b", "sana-1600m"], "SanaPipeline",
     {"text_encoder": ("transformers", "Gemma2Model", None), "transformer": ("diffusers", "SanaTransformer2DModel", None), "vae": ("diffusers", "AutoencoderDC", None)}),
]


def main():
    for hub_id, name, aliases, cls, components in PIPELINES:
        stem = hub_id.replace("/", "--")
        index = {"_class_name": cls, "_diffusers_version": "0.32.0"}
        pipeline = {"model_index": index}
        missing = []
        for comp, value in sorted(components.items()):
            if not isinstance(value, tuple):
                index[comp] = value  # a pipeline setting of model_index.json (boundary_ratio)
                continue
            lib, comp_cls, src = value
            index[comp] = [lib, comp_cls]
            path = CONFIGS / (src or f"{stem}/{comp}") / "config.json"
            if path.exists():
                pipeline[comp] = json.loads(path.read_text())
            else:
                missing.append(str(path.relative_to(ROOT)))
        if missing:
            print(f"skip {hub_id}: missing {', '.join(missing)}")
            continue
        out = {"_headroom": {"id": hub_id, "name": name, "aliases": aliases}, "pipeline": pipeline}
        (OUT / f"{stem}.json").write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {stem}.json")


if __name__ == "__main__":
    main()
