//! How fast an engine serves at the concurrency its cache allows: each decode step produces
//! one token for every running sequence and reads every weight on the GPU once plus the KV
//! cache of those sequences (memory-bound decode, Pope et al. 2022 §3), unless its FLOPs
//! take longer; the first token waits for the prompt's prefill, bound by its FLOPs
//! (2 × parameters per token plus attention, Kaplan et al. 2020 §2.1) at the same sustained
//! utilisation as the step time (`step_time.rs`). Sequences are taken at the full context,
//! the slowest point of a generation.

use super::shared::ServingReport;

/// What the speed of one GPU's share of the engine depends on.
pub struct SpeedInputs {
    /// Bytes of weights on the GPU.
    pub weights_bytes: f64,
    /// Bytes one sequence at the full context keeps in this GPU's cache.
    pub kv_bytes_per_sequence: f64,
    /// Forward FLOPs of one token at the full context, on this GPU.
    pub flops_per_token: f64,
    pub hbm_bandwidth: f64,
    /// Sustained FLOP/s (peak × utilisation).
    pub flops_per_second: f64,
    /// Sequences the user asks to serve at once.
    pub requested: u64,
}

/// Fill the report's speed: the concurrency served (the request, capped by the cache), the
/// decode step, tokens per second per sequence and in aggregate, time to first token.
pub fn fill(report: &mut ServingReport, inputs: &SpeedInputs) {
    report.requested = inputs.requested;
    if !report.starts() {
        return;
    }
    let cap = (report.max_concurrency.floor() as u64).max(1);
    let running = inputs.requested.max(1).min(cap);
    let read = inputs.weights_bytes + running as f64 * inputs.kv_bytes_per_sequence;
    let bandwidth = inputs.hbm_bandwidth.max(1.0);
    let throughput = inputs.flops_per_second.max(1.0);
    let step = (read / bandwidth).max(running as f64 * inputs.flops_per_token / throughput);
    report.concurrency = running;
    report.decode_step_seconds = step;
    report.tokens_per_second_per_sequence = if step > 0.0 { 1.0 / step } else { 0.0 };
    report.tokens_per_second = running as f64 * report.tokens_per_second_per_sequence;
    report.time_to_first_token_seconds = report.max_model_len as f64 * inputs.flops_per_token / throughput;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 GB of weights and 1 GB per sequence at 2 TB/s: 10 sequences read 26 GB per step,
    /// 13 ms; the FLOPs (10 × 16 GFLOP at 400 TFLOP/s = 0.4 ms) do not bind.
    #[test]
    fn memory_bound_decode_by_hand() {
        let mut r = ServingReport { max_concurrency: 12.7, max_model_len: 8192, ..ServingReport::default() };
        let inputs = SpeedInputs { weights_bytes: 16e9, kv_bytes_per_sequence: 1e9, flops_per_token: 16e9, hbm_bandwidth: 2e12, flops_per_second: 400e12, requested: 32 };
        fill(&mut r, &inputs);
        assert_eq!(r.concurrency, 12);
        let step = (16e9 + 12.0 * 1e9) / 2e12;
        assert!((r.decode_step_seconds - step).abs() < 1e-12);
        assert!((r.tokens_per_second - 12.0 / step).abs() < 1e-6);
        assert!((r.time_to_first_token_seconds - 8192.0 * 16e9 / 400e12).abs() < 1e-12);
    }
}
