//! Diffusers component configs (a `config.json` carrying `_class_name`) and whole pipelines
//! (`model_index.json` plus its components) read into `model::diffusion` parts.
pub mod dit;
pub mod text_encoder;
