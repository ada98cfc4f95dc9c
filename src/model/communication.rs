//! Communication volume per step and its time over the GPU interconnect, per GPU.
//!
//! - Data parallel: ring all-reduce moves 2(N−1)/N of the gradients (Patarasuk & Yuan
//!   2009); ZeRO-1/2 the same volume as reduce-scatter + all-gather; ZeRO-3 adds one more
//!   all-gather of the weights in backward: 3Ψ instead of 2Ψ (Rajbhandari et al. 2020 §7).
//! - Tensor parallel: four all-reduces of the b·s·h activations per block per micro-batch
//!   (two forward, two backward), each 2(t−1)/t of the tensor, plus one after the
//!   vocab-parallel input embedding and one for the output layer's input in backward
//!   (Shoeybi et al. 2019 §3; sequence parallelism replaces them with reduce-scatter +
//!   all-gather of equal volume).
//! - Pipeline parallel: each stage boundary sends b·s·h activations forward and their
//!   gradients back per micro-batch (Narayanan et al. 2021).
//! - Context parallel: ring attention passes each rank's K and V block around the cp ranks,
//!   cp − 1 times per layer in forward (Liu et al. 2023, §3, Algorithm 1); backward passes
//!   K/V together with dK/dV, twice the forward's bytes (Transformer Engine
//!   `AttnFuncWithCPAndKVP2P.backward`, Megatron's default `cp_comm_type = "p2p"`).
//!
//! Data-parallel traffic overlaps with backward (PyTorch DDP buckets, ZeRO prefetch); tensor,
//! pipeline and context traffic sits on the critical path.
//!
//! Each collective runs at the GPU-to-GPU link's bandwidth while its ranks sit in one node,
//! and at the network's (per GPU) once they span nodes. Ranks are placed as Megatron-Core
//! places them (`parallel_state.py`, `order="tp-cp-ep-dp-pp"`): a TP group spans tp
//! consecutive GPUs, a CP group tp·cp, a DP group tp·cp·dp, and PP the whole job.

use crate::model::dtype::{F32, HALF};
use crate::model::inputs::Zero;
use crate::model::precision::Precision;
use serde::{Deserialize, Serialize};

use super::arch::{Architecture, Stack};
use super::Inputs;

#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Communication {
    /// Bytes one GPU sends per optimizer step, all collectives together.
    pub bytes_per_step: f64,
    /// Data-parallel share (overlappable with backward).
    pub data_parallel_bytes: f64,
    /// Seconds of communication on the critical path (not overlapped).
    pub exposed_seconds: f64,
    /// Seconds of data-parallel communication (hidden when shorter than backward).
    pub data_parallel_seconds: f64,
}

pub fn communication(inputs: &Inputs, gradient_elements_local: f64) -> Communication {
    let Inputs { arch, training: t, parallel: p, device, .. } = *inputs;
    let span_bandwidth = |span: u64| {
        let bw = if span <= device.gpus_per_node.max(1) { device.interconnect_bandwidth } else { device.interconnect_bandwidth.min(device.network_bandwidth) };
        bw.max(1.0)
    };
    let x = t.precision.activation_bytes() as f64;
    let n = (p.dp.max(1) * p.cp.max(1)) as f64;
    // Gradients travel in the dtype they are kept in (states.rs): the weights' dtype without
    // ZeRO (fp32 for fp32 and for autocast, whose fp32 parameters get fp32 `.grad`s that DDP
    // all-reduces as they are), 16-bit with ZeRO's 16-bit gradients (ZeRO §3.1) except in fp32.
    let grad_width = match (t.precision, p.zero) {
        (_, Zero::Off) => t.precision.stored_weight_bytes() as f64,
        (Precision::Fp32, _) => F32,
        _ => HALF,
    };
    let grad_bytes = gradient_elements_local * grad_width;
    let ring = |k: f64| if k > 1.0 { 2.0 * (k - 1.0) / k } else { 0.0 };
    let zero_factor = if p.zero >= Zero::Parameters { 1.5 } else { 1.0 };
    let data_parallel_bytes = ring(n) * grad_bytes * zero_factor;

    let (h, layers, tokens, kv_width, vocab) = match arch {
        Architecture::Transformer(a) => {
            let seq = if a.stack == Stack::Vision { 0.0 } else { t.seq_len.max(1) as f64 };
            (a.hidden as f64, a.layers as f64, t.micro_batch.max(1) as f64 * seq / p.cp.max(1) as f64, (a.attention.k_width() + a.attention.v_width()) as f64, a.vocab)
        }
        // No tensor, sequence or context parallelism: only the data-parallel gradients move.
        Architecture::Resnet(_) | Architecture::Diffusion(_) => (0.0, 0.0, 0.0, 0.0, 0),
    };
    let micro_batches = t.grad_accum.max(1) as f64;
    let tp = p.tp.max(1) as f64;
    let pp = p.pp.max(1) as f64;
    let cp = p.cp.max(1) as f64;
    let layers_local = layers / pp;
    let activation = tokens * h * x;
    // The vocab-parallel embedding's all-reduce (g) and the output layer's input (f, all-reduced
    // in backward) on the first and last stage (Shoeybi et al. 2019 §3): both with one stage,
    // one on the most loaded of several.
    let edge_layers = if vocab == 0 {
        0.0
    } else if pp > 1.0 {
        1.0
    } else {
        2.0
    };
    let tensor_parallel = (4.0 * layers_local + edge_layers) * ring(tp) * activation * micro_batches;
    let pipeline = if pp > 1.0 { 2.0 * activation / tp * micro_batches } else { 0.0 };
    // Per layer, forward passes the local K and V block on cp − 1 times; backward passes K/V
    // and their gradients dK/dV (TE `AttnFuncWithCPAndKVP2P.backward`): 3 (cp − 1) blocks.
    let context = if cp > 1.0 { 3.0 * layers_local * (cp - 1.0) * tokens * kv_width * x / tp * micro_batches } else { 0.0 };
    let exposed = tensor_parallel + pipeline + context;
    let (tp_span, cp_span) = (p.tp.max(1), p.tp.max(1).saturating_mul(p.cp.max(1)));
    let dp_span = cp_span.saturating_mul(p.dp.max(1));
    Communication {
        bytes_per_step: data_parallel_bytes + exposed,
        data_parallel_bytes,
        exposed_seconds: tensor_parallel / span_bandwidth(tp_span) + context / span_bandwidth(cp_span) + pipeline / span_bandwidth(p.world_size()),
        data_parallel_seconds: data_parallel_bytes / span_bandwidth(dp_span),
    }
}
