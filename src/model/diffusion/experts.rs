//! Two denoisers that take turns: Wan 2.2 A14B's mixture of experts, a high-noise
//! `transformer` and a low-noise `transformer_2` of the same 14B shape
//! (`pipelines/wan/pipeline_wan.py`: `WanPipeline.__init__` holds both, lines 130–152;
//! `__call__` computes `boundary_timestep = boundary_ratio * num_train_timesteps` and calls
//! `self.transformer` while `t >= boundary_timestep`, `self.transformer_2` after, lines
//! 585–603; `model_cpu_offload_seq = "text_encoder->transformer->transformer_2->vae"`).
//!
//! Generation holds both experts' weights (both are pipeline components on the device; under
//! `enable_model_cpu_offload()` one at a time), and each call is one expert's: its workspace
//! and FLOPs are the larger expert's. Training tools train one expert per run on its own
//! timestep range (musubi-tuner's `--dit` with `--min_timestep 875` for the high-noise
//! expert), which is planned from that expert's `transformer/config.json` alone; planned as
//! this pipeline, a training run counts both experts as the trained denoiser.

use serde::{Deserialize, Serialize};

use super::pipeline::Denoiser;

/// The two experts and where the pipeline switches between them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experts {
    /// `transformer`: timesteps at or above the boundary (the first, noisiest steps).
    pub high: Denoiser,
    /// `transformer_2`: the steps below the boundary.
    pub low: Denoiser,
    /// `model_index.json`'s `boundary_ratio` (0.875 for Wan2.2-T2V-A14B).
    pub boundary_ratio: f64,
}

impl Experts {
    /// The expert whose call is the larger (the same shape for Wan 2.2's).
    pub fn larger(&self) -> &Denoiser {
        let count = |d: &Denoiser| d.param_tensors().iter().map(|t| t.numel()).sum::<f64>();
        if count(&self.low) > count(&self.high) {
            &self.low
        } else {
            &self.high
        }
    }
}
