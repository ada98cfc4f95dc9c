//! What a step costs, measured on the scenario after it: recomputation from the step-time
//! FLOPs, communication and the part of it that overlaps backward, the pipeline bubble, the
//! step time. Read by the ladder (`escalation`), the search and the resolved model.

use serde::{Deserialize, Serialize};

use crate::model::arch::{Architecture, Tensors};
use crate::model::breakdown::{Breakdown, StepTime};
use crate::model::communication::communication;
use crate::model::device::Device;
use crate::model::inputs::{Checkpointing, PpSchedule};
use crate::model::step_inputs::Inputs;
use crate::model::step_time::step_time;
use crate::scenario::Scenario;

/// What a step costs, measured on the scenario after it.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct StepCosts {
    /// Extra compute from recomputation, as a fraction of the step without it.
    pub recompute_fraction: f64,
    /// Bytes one GPU sends per step, all collectives.
    pub communication_bytes: f64,
    /// Communication time on the critical path per step, seconds.
    pub communication_seconds: f64,
    /// Data-parallel communication hidden behind the backward pass, seconds.
    pub overlapped_seconds: f64,
    /// Pipeline bubble as a fraction of the ideal step: (p − 1)/(m·v).
    pub bubble_fraction: f64,
    /// Estimated step time including exposed communication, seconds.
    pub step_seconds: f64,
    pub tokens_per_second: f64,
}

/// Costs of a scenario: recomputation from the step-time FLOPs, communication from
/// `communication.rs`, the bubble from the schedule.
pub fn costs(s: &Scenario, b: &Breakdown) -> StepCosts {
    let Some(arch) = s.model.architecture() else {
        return StepCosts::default();
    };
    let (device, _) = s.device.resolve_or_default();
    step_costs(s, &arch, &Tensors::new(&arch), &device, &b.step_time, b.trainable_params)
}

/// [`costs`] from an estimate's step time and trainable parameters, with the scenario's
/// model (`arch` and its `tensors`) and device resolved by the caller.
pub fn step_costs(s: &Scenario, arch: &Architecture, tensors: &Tensors, device: &Device, step_time: &StepTime, trainable_params: u64) -> StepCosts {
    let mut plain = s.training.clone();
    plain.checkpointing = Checkpointing::None;
    let plain_flops = estimate_flops(&Inputs { training: &plain, ..inputs(arch, s, device) }, tensors);
    let recompute_fraction = if plain_flops > 0.0 { step_time.flops_per_gpu / plain_flops - 1.0 } else { 0.0 };
    let comm = communication(&inputs(arch, s, device), trainable_params as f64 / (s.parallel.tp.max(1) * s.parallel.pp.max(1)) as f64);
    let p = &s.parallel;
    let v = if p.pp_schedule == PpSchedule::Interleaved { p.virtual_stages.max(1) as f64 } else { 1.0 };
    let bubble_fraction = if p.pp > 1 { (p.pp as f64 - 1.0) / (s.training.grad_accum.max(1) as f64 * v) } else { 0.0 };
    // Data-parallel traffic hides behind the backward pass when shorter: DDP all-reduces each
    // bucket as its gradients appear (Li et al. 2020, "PyTorch Distributed", §3.2.3), and ZeRO
    // overlaps its reduce-scatter the same way. Backward is all but the one forward: the forward
    // is a third of the step without recomputation (backward twice the forward, Kaplan et al.
    // 2020 §2.1), so 2/3 of the compute, more when recomputation runs inside backward.
    let compute = step_time.seconds;
    let flops = step_time.flops_per_gpu;
    let backward_share = if flops > 0.0 && plain_flops > 0.0 { (1.0 - plain_flops / 3.0 / flops).clamp(0.0, 1.0) } else { 0.0 };
    let exposed_dp = (comm.data_parallel_seconds - compute * backward_share).max(0.0);
    let step_seconds = compute + comm.exposed_seconds + exposed_dp;
    let tokens = step_time.tokens_per_second * compute;
    StepCosts {
        recompute_fraction: recompute_fraction.max(0.0),
        communication_bytes: comm.bytes_per_step,
        communication_seconds: comm.exposed_seconds + exposed_dp,
        overlapped_seconds: comm.data_parallel_seconds - exposed_dp,
        bubble_fraction,
        step_seconds,
        tokens_per_second: if step_seconds > 0.0 { tokens / step_seconds } else { 0.0 },
    }
}

fn estimate_flops(inputs: &Inputs, tensors: &Tensors) -> f64 {
    step_time(inputs, tensors, &Default::default(), &Default::default(), 0.0, 0.0).flops_per_gpu
}

fn inputs<'a>(arch: &'a Architecture, s: &'a Scenario, device: &'a Device) -> Inputs<'a> {
    Inputs { arch, training: &s.training, parallel: &s.parallel, device, runtime: &s.runtime }
}
