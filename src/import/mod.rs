//! Turning what users bring into an [`Architecture`](crate::model::arch::Architecture):
//! a Hugging Face `config.json` (`hf_config.rs`, one mapping per family in `families.rs`
//! and `encoders.rs`) or a catalogue preset named by its Hub id (`presets.rs`).
//!
//! Kept out of `src/model/`, which takes resolved architectures only.

pub mod diffusers;
mod eager_softmax;
mod encoders;
mod families;
mod gemma3n;
mod gemma4;
pub mod hf_config;
pub mod hub;
mod hybrids;
pub(crate) mod keys;
mod mllama;
mod moe_peft;
pub mod presets;
mod vlm;
mod zamba;
mod zamba2;
