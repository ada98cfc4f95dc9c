//! Step-time estimate: compute time from FLOPs at a stated utilisation, pipeline bubble,
//! host-link traffic for CPU offload, and the extra time spilled memory costs crossing the
//! host link.
//!
//! FLOPs per token: forward 2N + 2·L·s·d_attn (Kaplan et al. 2020, Table 1; s is the keys a
//! query sees, at most the window in sliding-window layers; MLA counts its q/k and v widths), backward twice
//! the forward, full recomputation one more forward of the blocks (the embedding and the head
//! are not checkpointed: Narayanan et al. 2021, Appendix eq. (3), counts the logit layer 3
//! times), selective recomputation one more forward of the attention core (Korthikanti et al.
//! 2022 §4.2: QKᵀ, softmax, dropout and AV are what it drops and redoes). Pipeline bubble: (p − 1)/(m·v) of the
//! ideal time (Narayanan et al. 2021, §2.2). Spill: priced by `spill::price` from the kernels
//! that touch the spilled bytes and the FLOPs they do per byte (`SpillContext`), at the link's
//! per-direction bandwidth (memory-formulas.md §A9: "bandwidth ≈ PCIe").

use super::arch::{resnet_blocks, Architecture, Scope, Tensors};
use super::breakdown::{PhaseTotals, SpillReport, StepTime};
use super::spill::{price, SpillContext, GEMM_TILE};
use super::step_inputs::Inputs;
use crate::model::inputs::{Checkpointing, Mode, Offload};

/// Model FLOPs utilisation assumed: Megatron-LM reaches 41–56% on A100 clusters
/// (Korthikanti et al. 2022, Table 5); 40% is a fair figure for a tuned run.
pub const UTILISATION: f64 = 0.40;

/// Forward FLOPs of one sample (sequence or image), split by what recomputation repeats.
struct Forward {
    /// The whole forward.
    total: f64,
    /// The blocks' share, which full checkpointing runs again (Hugging Face and Megatron
    /// checkpoint the blocks; the embedding lookup and the head run once: the logit layer's
    /// 3 passes in Narayanan et al. 2021, Appendix eq. (3)).
    blocks: f64,
    /// The attention core's s² products, which selective checkpointing runs again (QKᵀ,
    /// softmax, dropout, AV: Korthikanti et al. 2022 §4.2).
    attention: f64,
    /// Tokens of the sample.
    tokens: f64,
}

/// Forward FLOPs of one token at the scenario's sequence length (a sample's over its tokens).
pub fn forward_flops_per_token(arch: &Architecture, tensors: &Tensors, s: &Inputs) -> f64 {
    let f = forward_flops_per_sample(arch, tensors, s);
    f.total / f.tokens.max(1.0)
}

fn forward_flops_per_sample(arch: &Architecture, tensors: &Tensors, s: &Inputs) -> Forward {
    match arch {
        Architecture::Transformer(t) => {
            let seq = t.sample_tokens(s.training.seq_len, s.training.image_size, s.training.visual()) as f64;
            let params = |scope: Scope| -> f64 { tensors.list.iter().filter(|p| p.scope == scope).map(|p| p.numel()).sum() };
            let head = if t.embedding.tied { (t.vocab * t.hidden) as f64 } else { 0.0 };
            let n = tensors.active_param_count - params(Scope::Input) + head;
            let edge = params(Scope::Output) + head;
            // Per token: each attention block's query attends to its keys (a window in sliding
            // layers); a hybrid's other mixers are linear in the sequence, their matmuls in n.
            // Gemma 4's attention kinds each with their own head width, over their own blocks.
            let attention = match t.attention.full_layers {
                Some(_) => t.attention_groups().iter().map(|(part, blocks, _)| *blocks as f64 * part.mean_keys(seq, *blocks) * part.flops_per_query_key()).sum(),
                None => t.attention_layers() as f64 * t.attention.mean_keys(seq, t.layers) * t.attention.flops_per_query_key(),
            };
            Forward { total: (2.0 * n + attention) * seq, blocks: (2.0 * (n - edge) + attention) * seq, attention: attention * seq, tokens: seq }
        }
        Architecture::Resnet(r) => {
            // 2 FLOPs per multiply-add of every convolution at the input resolution.
            let image = s.training.image_size.unwrap_or(r.image_size).max(8) as f64;
            let mut side = image / 4.0;
            let stem = 2.0 * 49.0 * r.channels as f64 * r.stem_width as f64 * (image / 2.0).powi(2);
            let mut flops = stem;
            for b in resnet_blocks(r) {
                let out = side / b.stride as f64;
                let (c_in, mid, c_out) = (b.c_in as f64, b.mid as f64, b.c_out as f64);
                let convs = if r.bottleneck {
                    c_in * mid * side.powi(2) + 9.0 * mid * mid * out.powi(2) + mid * c_out * out.powi(2)
                } else {
                    9.0 * c_in * c_out * out.powi(2) + 9.0 * c_out * c_out * out.powi(2)
                };
                let shortcut = if b.shortcut { c_in * c_out * out.powi(2) } else { 0.0 };
                flops += 2.0 * (convs + shortcut);
                side = out;
            }
            Forward { total: flops, blocks: flops, attention: 0.0, tokens: 1.0 }
        }
        // One denoiser call per training sample (the frozen parts' no-grad calls are not
        // counted: cached embeddings and latents are the common case).
        Architecture::Diffusion(d) => {
            // Generation with classifier-free guidance in one batch runs two samples per prompt.
            let batch = if s.training.mode == Mode::Inference && d.guidance(s.training) { 2 } else { 1 };
            let flops = d.denoiser.as_ref().map_or(0.0, |den| den.forward_flops(&d.run(s.training, batch)));
            Forward { total: flops, blocks: flops, attention: 0.0, tokens: 1.0 }
        }
    }
}

/// [`priced_step_time`] without keeping the spill's costs.
pub fn step_time(s: &Inputs, tensors: &Tensors, spill: &SpillReport, at_peak: &PhaseTotals, offloaded_elements: f64, offloaded_activation_bytes: f64) -> StepTime {
    priced_step_time(s, tensors, &mut spill.clone(), at_peak, offloaded_elements, offloaded_activation_bytes).0
}

/// Step time (training) or prefill and per-token decode time (inference), with what the
/// spill in `spill` adds (`spill::price`, which also fills the spill's costs), and the
/// context it was priced with (to price the same run on other platforms). `at_peak` gives
/// the bytes a decode step reads (weights and KV cache on this GPU); `tensors` are the
/// architecture's.
pub fn priced_step_time(
    s: &Inputs,
    tensors: &Tensors,
    spill: &mut SpillReport,
    at_peak: &PhaseTotals,
    offloaded_elements: f64,
    offloaded_activation_bytes: f64,
) -> (StepTime, SpillContext) {
    let Inputs { arch, training: t, parallel: p, device, .. } = *s;
    let forward = forward_flops_per_sample(arch, tensors, s);
    let samples = t.micro_batch.max(1) as f64 * t.grad_accum.max(1) as f64;
    // Backward is twice the forward; recomputation adds what it runs again.
    let per_sample = match (t.mode, t.checkpointing) {
        (Mode::Inference, _) => forward.total,
        (Mode::Train, Checkpointing::None) => 3.0 * forward.total,
        (Mode::Train, Checkpointing::Selective) => 3.0 * forward.total + forward.attention,
        (Mode::Train, Checkpointing::Full) => 3.0 * forward.total + forward.blocks,
    };
    let model_parallel = p.tp.max(1) as f64 * p.pp.max(1) as f64 * p.cp.max(1) as f64;
    let flops_per_gpu = per_sample * samples / model_parallel;
    let peak = device.bf16_tflops.max(1e-9) * 1e12;
    let mut seconds = flops_per_gpu / (peak * UTILISATION);
    let pp = p.pp.max(1) as f64;
    if pp > 1.0 {
        let v = if p.pp_schedule == crate::model::inputs::PpSchedule::Interleaved { p.virtual_stages.max(1) as f64 } else { 1.0 };
        seconds *= 1.0 + (pp - 1.0) / (t.grad_accum.max(1) as f64 * v);
    }
    if p.offload != Offload::None && t.mode == Mode::Train {
        // 16-bit gradients down and 16-bit parameters up every step (ZeRO-Offload, §4).
        seconds += 4.0 * offloaded_elements / device.host_link_bandwidth.max(1.0);
    }
    if offloaded_activation_bytes > 0.0 {
        // Activation offloading copies the activations down in forward and up in backward; its
        // streams overlap the copies with compute, so only what exceeds the compute is exposed
        // (a lower bound: repeat saves of one storage and `weight.t()` views are copied too,
        // 1.8× the distinct bytes in techniques.json).
        let copies = 2.0 * offloaded_activation_bytes * t.grad_accum.max(1) as f64 / device.host_link_bandwidth.max(1.0);
        seconds += (copies - seconds).max(0.0);
    }
    let global_tokens = samples * forward.tokens * p.dp.max(1) as f64;
    // A diffusion pipeline generates by calling its denoiser once per step: the time of one
    // call is its `seconds`, with no prefill or per-token decode.
    let diffusion = matches!(arch, Architecture::Diffusion(_));
    let (decode, prefill) = if t.mode == Mode::Inference && !diffusion {
        // One token for the batch reads every weight and the KV cache on this GPU once
        // (memory-bound decode, Pope et al. 2022 §3), unless its FLOPs take longer.
        let read = (at_peak.parameters + at_peak.activations) as f64 / device.hbm_bandwidth.max(1.0);
        // A new token's forward: 2N (N without the input embedding) + its attention over the
        // context, the per-token share of the prefill's forward.
        let flops = forward.total / forward.tokens.max(1.0) * t.micro_batch.max(1) as f64 / model_parallel;
        (read.max(flops / (peak * UTILISATION)), seconds)
    } else {
        (0.0, 0.0)
    };
    // Spill slows the training step (a diffusion pipeline's denoising step), or in inference
    // each decoded token.
    let base = if t.mode == Mode::Inference && !diffusion { decode } else { seconds };
    let ctx = spill_context(s, base, forward.tokens, peak * UTILISATION);
    let [low, high] = price(spill, at_peak, t, &ctx);
    let ratio = |extra: f64| {
        if base > 0.0 {
            (base + extra) / base
        } else {
            1.0
        }
    };
    let time = StepTime {
        seconds,
        seconds_with_spill: base + low,
        slowdown: ratio(low),
        slowdown_range: [ratio(low), ratio(high)],
        decode_seconds_per_token: decode,
        prefill_seconds: prefill,
        flops_per_gpu,
        utilisation: UTILISATION,
        tokens_per_second: if seconds > 0.0 { global_tokens / seconds } else { 0.0 },
    };
    (time, ctx)
}

/// The FLOPs the kernels touching spilled bytes do per byte (`spill::SpillContext`): a
/// weight element does 2 FLOPs per token of the micro-batch on this GPU in each matmul pass
/// (T = b·s/cp in training, the batch b per decoded token), a gradient element the same in the
/// weight-gradient matmul, a saved activation 2·d/tp in the matmul that reads or writes it
/// (its other dimension, the block's width on this GPU); and how often a tiled matmul reads
/// each of them when the L2 cache reuses nothing.
fn spill_context(s: &Inputs, base_seconds: f64, sample_tokens: f64, flops_per_second: f64) -> SpillContext {
    let Inputs { arch, training: t, parallel: p, .. } = *s;
    let tokens = if t.mode == Mode::Inference { t.micro_batch.max(1) as f64 } else { t.micro_batch.max(1) as f64 * sample_tokens / p.cp.max(1) as f64 };
    let width = match arch {
        Architecture::Transformer(tr) => tr.hidden as f64 / p.tp.max(1) as f64,
        // Convolutions: not priced as matmuls (their saved tensors count as memory-bound).
        Architecture::Resnet(_) | Architecture::Diffusion(_) => 0.0,
    };
    let weight = t.precision.matmul_weight_bytes() as f64;
    SpillContext {
        base_seconds,
        flops_per_second,
        weight_flops_per_byte: 2.0 * tokens / weight,
        gradient_flops_per_byte: 2.0 * tokens / t.precision.stored_weight_bytes() as f64,
        activation_flops_per_byte: 2.0 * width / t.precision.activation_bytes() as f64,
        weight_rereads: (tokens / GEMM_TILE).ceil().max(1.0),
        activation_rereads: (width / GEMM_TILE).ceil().max(1.0),
    }
}
