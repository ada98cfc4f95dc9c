//! Diffusers component configs (a `config.json` carrying `_class_name`) and whole pipelines
//! (`model_index.json` plus its components) read into `model::diffusion` parts.
pub mod text_encoder;
pub mod unet;
pub mod vae;
