//! Planning over scenarios: the strategy ladder (`escalation.rs`: mixed precision →
//! checkpointing → ZeRO → pipeline → …, each step's memory, time and communication, and the
//! fewest steps that still fit) and the automatic layout search (`search.rs`). Both evaluate
//! whole scenarios with [`crate::estimate`]; the search reads most of its estimates as
//! totals only, with the model and device resolved once (`resolved.rs`); the memory model
//! itself lives in `crate::model`.
//!
//! What both share lives here: the global batch and how a data-parallel degree splits it,
//! the safety margin a recommended plan leaves free, and when two step times count as equal.

pub mod changes;
pub mod diffusion_ladder;
pub mod escalation;
pub mod explain;
pub mod limits;
pub mod prices;
pub mod rent;
pub mod resolved;
pub mod run;
pub mod search;
pub mod serving_ladder;
pub mod strategy_table;

use crate::model::breakdown::{Breakdown, Totals};
use crate::model::inputs::Training;
use crate::scenario::Scenario;

/// Share of the GPU's capacity a recommended plan leaves free unless told otherwise: a
/// plan at 79 of 80 GiB fails on the first allocator fragment or longer batch.
pub const DEFAULT_MARGIN: f64 = 0.10;

/// Largest margin accepted; anything above (or not a number) is clamped.
pub const MAX_MARGIN: f64 = 0.9;

/// Step times within this fraction of each other are the same step time: the model's FLOPs
/// estimate is not more precise than that, so memory left decides between them.
pub const SAME_TIME: f64 = 0.005;

/// Context parallelism is considered only while each of its GPUs keeps at least this many
/// tokens of a sequence. Splitting a short sequence trades compute for ring traffic and
/// saves little: Llama 3 trains at 8,192 tokens without it and turns it on only for the
/// 131,072-token stage, at CP 16, that is 8,192 tokens per GPU (Dubey et al. 2024,
/// §3.3.2 and Table 4); Megatron-Core documents it as the remedy for long-context OOM.
pub const MIN_CP_TOKENS: u64 = 8192;

/// True when sequences of `seq_len` tokens may be split over `cp` GPUs: each keeps at least
/// [`MIN_CP_TOKENS`], in 2·cp equal chunks (the load-balanced causal split).
pub fn context_parallel_pays(seq_len: u64, cp: u64) -> bool {
    let cp = cp.max(1);
    cp == 1 || (seq_len / cp >= MIN_CP_TOKENS && seq_len.is_multiple_of(cp.saturating_mul(2)))
}

/// `margin` clamped to `0..=MAX_MARGIN` (NaN becomes the default).
pub fn clamp_margin(margin: f64) -> f64 {
    if margin.is_nan() {
        DEFAULT_MARGIN
    } else {
        margin.clamp(0.0, MAX_MARGIN)
    }
}

/// True when the run fits and leaves at least `margin` of the capacity free.
pub fn fits_with_margin(b: &Breakdown, margin: f64) -> bool {
    leaves_margin(b.fits, b.total, b.capacity, margin)
}

/// [`fits_with_margin`] of an estimate's totals.
pub fn totals_fit_with_margin(t: &Totals, margin: f64) -> bool {
    leaves_margin(t.fits(), t.total(), t.capacity(), margin)
}

fn leaves_margin(fits: bool, total: u64, capacity: u64, margin: f64) -> bool {
    fits && total as f64 <= capacity as f64 * (1.0 - clamp_margin(margin))
}

/// Bytes of capacity left free (zero when over).
pub fn headroom(b: &Breakdown) -> u64 {
    b.capacity.saturating_sub(b.total)
}

/// True when `a` is faster than `b` by more than [`SAME_TIME`].
pub fn faster(a: f64, b: f64) -> bool {
    a < b * (1.0 - SAME_TIME)
}

/// Sequences per optimizer step: micro-batch × accumulation × data-parallel degree.
pub fn global_batch(s: &Scenario) -> u64 {
    s.training.micro_batch.max(1).saturating_mul(s.training.grad_accum.max(1)).saturating_mul(s.parallel.dp.max(1))
}

/// Splits `global` sequences over `dp` replicas: the micro-batch becomes the largest
/// divisor of `global / dp` not above `max_micro` (at least 1), accumulation the rest, so
/// micro-batch × accumulation × dp is exactly `global`. Returns false, changing nothing,
/// when `dp` does not divide `global`.
pub fn split_global_batch(t: &mut Training, global: u64, dp: u64, max_micro: u64) -> bool {
    let dp = dp.max(1);
    if global == 0 || !global.is_multiple_of(dp) {
        return false;
    }
    let per_replica = global / dp;
    let micro = largest_divisor_at_most(per_replica, max_micro.max(1));
    t.micro_batch = micro;
    t.grad_accum = per_replica / micro;
    true
}

/// Candidates [`largest_divisor_at_most`] looks at before settling for 1: more than any
/// micro-batch the scenario accepts, so only absurd unvalidated input reaches the bound.
const DIVISOR_SCAN: u64 = 1 << 21;

/// Largest divisor of `n` (≥ 1) that is at most `cap`; 1 when `n` is 0.
fn largest_divisor_at_most(n: u64, cap: u64) -> u64 {
    if n == 0 {
        return 1;
    }
    let top = cap.min(n).max(1);
    (top.saturating_sub(DIVISOR_SCAN).max(1)..=top).rev().find(|d| n.is_multiple_of(*d)).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_the_global_batch_exactly_or_refuses() {
        let mut t = Scenario::default().training;
        // 32 sequences on 2 replicas, at most 3 per micro-batch: 2 × 8 × 2.
        assert!(split_global_batch(&mut t, 32, 2, 3));
        assert_eq!((t.micro_batch, t.grad_accum), (2, 8));
        // 48 on 4 replicas with room for 5: 12 per replica → 4 × 3.
        assert!(split_global_batch(&mut t, 48, 4, 5));
        assert_eq!((t.micro_batch, t.grad_accum), (4, 3));
        // A prime per-replica batch falls back to micro-batch 1.
        assert!(split_global_batch(&mut t, 13, 1, 12));
        assert_eq!((t.micro_batch, t.grad_accum), (1, 13));
        // Room for everything: one micro-batch.
        assert!(split_global_batch(&mut t, 8, 8, 100));
        assert_eq!((t.micro_batch, t.grad_accum), (1, 1));
        // 32 does not split over 3 replicas, and 1 not over 8: nothing changes.
        let before = t.clone();
        assert!(!split_global_batch(&mut t, 32, 3, 4));
        assert!(!split_global_batch(&mut t, 1, 8, 4));
        assert_eq!(t, before);
        for (global, dp, cap) in [(32u64, 1u64, 7u64), (36, 2, 5), (1024, 8, 1000), (6, 6, 0)] {
            assert!(split_global_batch(&mut t, global, dp, cap));
            assert_eq!(t.micro_batch * t.grad_accum * dp, global, "{global} on {dp} capped {cap}");
            assert!(t.micro_batch <= cap.max(1));
        }
    }

    #[test]
    fn largest_divisor_at_most_matches_brute_force() {
        for n in 1..200u64 {
            for cap in 1..=n + 1 {
                let brute = (1..=cap.min(n)).rev().find(|d| n % d == 0).unwrap();
                assert_eq!(largest_divisor_at_most(n, cap), brute, "{n} ≤ {cap}");
            }
        }
        assert_eq!(largest_divisor_at_most(0, 5), 1);
        // Absurd sizes answer at once.
        assert_eq!(largest_divisor_at_most(u64::MAX, u64::MAX), u64::MAX);
        let d = largest_divisor_at_most(1 << 62, (1 << 62) - 1);
        assert!((1u64 << 62).is_multiple_of(d) && d < 1 << 62);
    }

    #[test]
    fn the_margin_leaves_capacity_free() {
        let mut b = Breakdown { capacity: 80 << 30, total: 79 << 30, fits: true, ..Breakdown::default() };
        assert!(fits_with_margin(&b, 0.0));
        assert!(!fits_with_margin(&b, DEFAULT_MARGIN), "79 of 80 GiB is within 10 %");
        b.total = 72 << 30;
        assert!(fits_with_margin(&b, DEFAULT_MARGIN), "72 of 80 GiB leaves exactly 10 %");
        b.total = (72 << 30) + 1;
        assert!(!fits_with_margin(&b, DEFAULT_MARGIN));
        // A run that does not fit never fits with a margin; absurd margins are clamped.
        b.fits = false;
        b.total = 1;
        assert!(!fits_with_margin(&b, 0.0));
        b.fits = true;
        assert!(fits_with_margin(&b, f64::NAN));
        assert!(fits_with_margin(&b, -3.0));
        assert!(!fits_with_margin(&Breakdown { capacity: 10, total: 2, fits: true, ..Breakdown::default() }, 5.0));
        assert_eq!(headroom(&b), (80 << 30) - 1);
    }

    #[test]
    fn context_parallel_only_for_long_sequences() {
        assert!(context_parallel_pays(2048, 1));
        assert!(!context_parallel_pays(2048, 2));
        assert!(!context_parallel_pays(8192, 2), "4,096 tokens per GPU is too few");
        assert!(context_parallel_pays(16384, 2));
        assert!(context_parallel_pays(131_072, 16), "Llama 3's long-context stage");
        assert!(!context_parallel_pays(131_072, 32));
        assert!(!context_parallel_pays(16385, 2), "uneven chunks");
        assert!(!context_parallel_pays(0, 4));
    }

    #[test]
    fn same_time_is_half_a_percent() {
        assert!(faster(0.99, 1.0));
        assert!(!faster(0.996, 1.0));
        assert!(!faster(1.0, 1.0));
        assert!(!faster(1.1, 1.0));
    }
}
