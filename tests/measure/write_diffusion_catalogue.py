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

# (Hub id, display name, aliases, pipeline class, {component: (library, class, config dir)}).
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
]


def main():
    for hub_id, name, aliases, cls, components in PIPELINES:
        stem = hub_id.replace("/", "--")
        index = {"_class_name": cls, "_diffusers_version": "0.32.0"}
        pipeline = {"model_index": index}
        missing = []
        for comp, (lib, comp_cls, src) in sorted(components.items()):
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
