//! `DiffusionControls`: what a diffusion pipeline is planned at and how it runs — the
//! picture's width and height, a video's frames, and (training) whether latents and prompt
//! embeddings are cached and where the text encoders live, or (generation) diffusers'
//! offload mode, the VAE's tiling and classifier-free guidance. Shown only for a pipeline.

use leptos::prelude::*;

use crate::fields;
use crate::model::arch::Architecture;
use crate::model::diffusion::options::GenerationOffload;
use crate::scenario::{Mode, Scenario};
use crate::ui::fields::checkbox_field::CheckboxField;
use crate::ui::fields::number_slider::NumberSlider;
use crate::ui::fields::select_field::enum_select;
use crate::ui::state::Planner;

const OFFLOAD: [(GenerationOffload, &str); 3] = [
    (GenerationOffload::None, "none (every part on the GPU)"),
    (GenerationOffload::Model, "model CPU offload (one part at a time)"),
    (GenerationOffload::Sequential, "sequential CPU offload (one layer at a time)"),
];

/// The pipeline's default `[width, height]`, frames and guidance, if the model is one.
fn pipeline(s: &Scenario) -> Option<([u64; 2], u64, bool)> {
    match s.model.architecture()?.as_ref() {
        Architecture::Diffusion(d) => Some((d.resolution, d.frames, d.guidance)),
        _ => None,
    }
}

#[component]
pub fn DiffusionControls() -> impl IntoView {
    let planner = Planner::get();
    let shown = planner.slice(|s| pipeline(s).is_some());
    let video = planner.slice(|s| pipeline(s).is_some_and(|(_, frames, _)| frames > 1));
    let inference = planner.slice(|s| s.training.mode == Mode::Inference);
    let size = move |s: &Scenario| s.training.resolution.or_else(|| pipeline(s).map(|p| p.0)).unwrap_or([1024, 1024]);
    let width = planner.slice(move |s| size(s)[0]);
    let height = planner.slice(move |s| size(s)[1]);
    let frames = planner.slice(|s| s.training.frames.or_else(|| pipeline(s).map(|p| p.1)).unwrap_or(1));
    let set_size = move |i: usize, v: u64| {
        planner.set(move |s| {
            let mut r = size(s);
            r[i] = v;
            s.training.resolution = Some(r);
        })
    };
    let o = |f: fn(&crate::model::diffusion::options::DiffusionOptions) -> bool| planner.slice(move |s| f(&s.training.diffusion));
    let cache_latents = o(|d| d.cache_latents);
    let cache_text = o(|d| d.cache_text_embeddings);
    let offload_text = o(|d| d.offload_text_encoders);
    let tiling = o(|d| d.vae_tiling);
    let guidance = planner.slice(|s| s.training.diffusion.guidance.or_else(|| pipeline(s).map(|p| p.2)).unwrap_or(false));
    view! {
        <fieldset class="group" hidden=move || !shown.get()>
            <legend>{move || if inference.get() { "Picture, offload and tiling" } else { "Picture and caching" }}</legend>
            <NumberSlider label="Width (pixels)" id="diffusion-width" field="training.resolution" min=64 max=8192 log2=true value=width
                on_change=move |v| set_size(0, v) />
            <NumberSlider label="Height (pixels)" id="diffusion-height" field="training.resolution" min=64 max=8192 log2=true value=height
                on_change=move |v| set_size(1, v) />
            <div hidden=move || !video.get()>
                <NumberSlider label=fields::label("training.frames") id="diffusion-frames" field="training.frames" min=1 max=1024 log2=false value=frames
                    on_change=move |v| planner.set(|s| s.training.frames = Some(v)) />
            </div>
            <div hidden=move || inference.get()>
                <CheckboxField label=fields::label("training.diffusion.cache_latents") id="cache-latents" field="training.diffusion.cache_latents"
                    value=cache_latents on_change=move |on| planner.set(|s| s.training.diffusion.cache_latents = on) />
                <CheckboxField label=fields::label("training.diffusion.cache_text_embeddings") id="cache-text-embeddings" field="training.diffusion.cache_text_embeddings"
                    value=cache_text on_change=move |on| planner.set(|s| s.training.diffusion.cache_text_embeddings = on) />
                <CheckboxField label=fields::label("training.diffusion.offload_text_encoders") id="offload-text-encoders" field="training.diffusion.offload_text_encoders"
                    value=offload_text on_change=move |on| planner.set(|s| s.training.diffusion.offload_text_encoders = on) />
            </div>
            <div hidden=move || !inference.get()>
                {enum_select(
                    planner,
                    fields::label("training.diffusion.offload"),
                    "generation-offload",
                    "training.diffusion.offload",
                    OFFLOAD.to_vec(),
                    |s| s.training.diffusion.offload,
                    |s, v| s.training.diffusion.offload = v,
                )}
                <CheckboxField label=fields::label("training.diffusion.guidance") id="guidance" field="training.diffusion.guidance"
                    value=guidance on_change=move |on| planner.set(|s| s.training.diffusion.guidance = Some(on)) />
            </div>
            <CheckboxField label=fields::label("training.diffusion.vae_tiling") id="vae-tiling" field="training.diffusion.vae_tiling"
                value=tiling on_change=move |on| planner.set(|s| s.training.diffusion.vae_tiling = on) />
        </fieldset>
    }
}
