//! Parallel layouts against the papers' own formulas: micro-batches in flight per pipeline
//! schedule (Narayanan et al. 2021 §2.2: 1F1B's first stage holds p, GPipe holds all m; the
//! interleaved schedule multiplies the first stage by 1 + (p − 1)/(p·v); every stage in
//! `pipeline.rs`), context parallelism dividing token-proportional activations (Liu et al.
//! 2023), expert parallelism dividing the routed experts only (Lepikhin et al. 2020), and
//! ZeRO-Offload / ZeRO-Infinity moving model states to the host (Ren et al. 2021 §4;
//! Rajbhandari et al. 2021 §5).

use headroom::model::breakdown::Component;
use headroom::{estimate, Breakdown, Scenario};

fn plan(json: &str) -> Breakdown {
    estimate(&Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}")).scenario)
}

/// Bytes of the per-block activation terms (the formula says "per block").
fn block_activations(b: &Breakdown) -> f64 {
    b.terms.iter().filter(|t| t.component == Component::Activations && t.formula.starts_with("saved per block")).map(|t| t.bytes as f64).sum()
}

fn llama(parallel: &str, grad_accum: u64) -> Breakdown {
    plan(&format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 1024, "grad_accum": {grad_accum}}}, "parallel": {parallel}}}"#))
}

/// 32 blocks on 4 stages: 8 per stage. With m = 8 ≥ p = 4, 1F1B's first stage holds 4
/// micro-batches: 8 blocks × 4 = 32 blocks' worth — the same as one GPU holding all 32 blocks
/// for one micro-batch. GPipe holds all 8: twice that. Interleaved with v = 2: × (1 + 3/8).
#[test]
fn pipeline_schedules_hold_the_papers_micro_batches_in_flight() {
    let one_gpu = block_activations(&llama("{}", 8));
    let one_f_one_b = block_activations(&llama(r#"{"pp": 4}"#, 8));
    let gpipe = block_activations(&llama(r#"{"pp": 4, "pp_schedule": "gpipe"}"#, 8));
    let interleaved = block_activations(&llama(r#"{"pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2}"#, 8));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.max(1.0);
    assert!(close(one_f_one_b, one_gpu), "{one_f_one_b} vs {one_gpu}");
    assert!(close(gpipe, 2.0 * one_gpu), "{gpipe} vs {}", 2.0 * one_gpu);
    assert!(close(interleaved, one_gpu * (1.0 + 3.0 / 8.0)), "{interleaved} vs {one_gpu}: ratio {}", interleaved / one_gpu);
    // With fewer micro-batches than stages the first stage holds m = 2 (8 blocks × 2) and the
    // last holds one (8 blocks × 1, plus the logits): the breakdown reports the larger stage.
    let few = llama(r#"{"pp": 4}"#, 2);
    let expected = if few.stage == 0 { one_gpu * 2.0 / 4.0 } else { one_gpu / 4.0 };
    assert!(close(block_activations(&few), expected), "stage {}: {} vs {expected}", few.stage, block_activations(&few));
}

/// Context parallelism splits the sequence: every per-block activation term is proportional to
/// the tokens on the rank (flash attention keeps no s² term), so cp = 4 quarters them.
#[test]
fn context_parallel_divides_block_activations() {
    let one = block_activations(&llama("{}", 1));
    let cp4 = block_activations(&llama(r#"{"cp": 4}"#, 1));
    assert!((cp4 - one / 4.0).abs() <= 1e-6 * one, "{cp4} vs {}", one / 4.0);
}

/// Expert parallelism: Mixtral's 8 experts over ep = 8 leave one expert per block per GPU;
/// the expert weights drop to an eighth, the attention and router stay.
#[test]
fn expert_parallel_divides_the_experts() {
    let weights = |ep: u64| {
        let b = plan(&format!(r#"{{"model": {{"preset": "mixtral-8x7b"}}, "training": {{"precision": "bf16"}}, "parallel": {{"dp": 8, "ep": {ep}}}}}"#));
        b.phases.optimizer_step.parameters as f64
    };
    // Per block: 8 experts × 3 × 4096 × 14336 = 1.409e9 elements; over 32 blocks, 4.51e10.
    let experts = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0;
    let saved = weights(1) - weights(8);
    assert!((saved - 2.0 * experts * 7.0 / 8.0).abs() < 1e-6 * saved, "{saved}");
}

/// ZeRO-Offload (optimizer states to the CPU): the GPU keeps no optimizer state; the host
/// holds the fp32 Adam states and master weights (12 B per parameter), sharded over dp.
#[test]
fn cpu_offload_moves_optimizer_states_to_the_host() {
    let b = plan(r#"{"model": {"preset": "llama-3-8b"}, "parallel": {"dp": 8, "zero": 2, "offload": "optimizer"}}"#);
    assert_eq!(b.phases.optimizer_step.optimizer_states, 0);
    let psi = 8_030_261_248.0;
    // States and master (12 B) plus the gradient partition ZeRO-Offload also keeps there (2 B).
    let expected = psi * (12.0 + 2.0) / 8.0;
    assert!((b.host_bytes as f64 - expected).abs() < 1e-6 * expected, "{} vs {expected}", b.host_bytes);
}

/// Data-parallel step time: 8 GPUs each do an eighth of the global batch's FLOPs, so with
/// the global batch fixed the per-GPU FLOPs fall by 8 (Kaplan et al. 2020: 6N per token).
#[test]
fn step_flops_follow_six_n_per_token() {
    let b = plan(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 1024}}"#);
    // Forward 2N + attention 2·L·s·d_attn per token (N without the input embedding), ×3 for backward.
    let n = 8_030_261_248.0 - 128_256.0 * 4096.0;
    let per_token = 3.0 * (2.0 * n + 2.0 * 32.0 * 1024.0 * 4096.0);
    assert!((b.step_time.flops_per_gpu - per_token * 1024.0).abs() < 1e-9 * b.step_time.flops_per_gpu);
}

/// Context parallelism gives each rank s/cp tokens of every sequence (Liu et al. 2023, §3:
/// each host holds one block of the sequence; Table 1 counts activations in the block size c):
/// with flash attention every saved tensor — blocks, embeddings, final norm, the head's input
/// and the loss's fp32 log-softmax — is proportional to the tokens, so cp = 4 quarters them.
#[test]
fn context_parallel_divides_every_saved_tensor() {
    let activations = |cp: u64| {
        let b = plan(&format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 8192, "attention": "flash"}}, "parallel": {{"cp": {cp}}}}}"#));
        b.phases.forward_backward.activations as f64
    };
    let (one, four) = (activations(1), activations(4));
    assert!((four - one / 4.0).abs() <= 1e-6 * one, "{four} vs {}", one / 4.0);
}

/// Expert parallelism splits the routed experts only (GShard, Lepikhin et al. 2020, §2.2:
/// experts are sharded over devices, other layers replicated). DeepSeek-V2-Lite's config: 27
/// blocks, the first dense (`first_k_dense_replace` = 1, FFN 10944), 26 MoE blocks of 64 routed
/// experts of width 1408 (3 × 2048 × 1408 each) plus 2 shared experts, which every rank keeps.
/// In pure bf16, ep = 8 drops 7/8 of the routed experts' 2-byte weights and nothing else.
#[test]
fn expert_parallel_splits_routed_experts_not_shared_or_dense_ones() {
    let weights = |ep: u64| {
        let b = plan(&format!(r#"{{"model": {{"preset": "deepseek-v2-lite"}}, "training": {{"precision": "bf16", "seq_len": 512}}, "parallel": {{"dp": 8, "ep": {ep}}}}}"#));
        b.phases.optimizer_step.parameters as f64
    };
    let routed = 26.0 * 64.0 * 3.0 * 2048.0 * 1408.0;
    let saved = weights(1) - weights(8);
    assert!((saved - 2.0 * routed * 7.0 / 8.0).abs() <= 1.0, "{saved} vs {}", 2.0 * routed * 7.0 / 8.0);
}

/// ZeRO-Offload (Ren et al. 2021, §4.1, Figure 2): the GPU keeps the 16-bit parameters (2Ψ)
/// for forward and backward; the 16-bit gradients, fp32 master and Adam states live on the
/// CPU, so neither gradients nor optimizer states stay on the GPU in either phase.
#[test]
fn zero_offload_keeps_only_the_16_bit_weights_on_the_gpu() {
    let b = plan(r#"{"model": {"preset": "llama-3-8b"}, "parallel": {"dp": 8, "zero": 2, "offload": "optimizer"}}"#);
    let psi = 8_030_261_248u64;
    for phase in [&b.phases.forward_backward, &b.phases.optimizer_step] {
        assert_eq!((phase.parameters, phase.gradients, phase.optimizer_states), (2 * psi, 0, 0));
    }
}

/// ZeRO-Infinity (Rajbhandari et al. 2021, §5) offloads the parameters too, with ZeRO-3: the
/// GPU keeps no model state between uses, and the host holds each rank's share of all 16 B per
/// parameter (16-bit weights and gradients, fp32 master and Adam states).
#[test]
fn zero_infinity_moves_every_model_state_to_the_host() {
    let b = plan(r#"{"model": {"preset": "llama-3-8b"}, "parallel": {"dp": 8, "zero": 3, "offload": "optimizer+params"}}"#);
    let o = &b.phases.optimizer_step;
    assert_eq!((o.parameters, o.gradients, o.optimizer_states), (0, 0, 0));
    let expected = 16.0 * 8_030_261_248.0 / 8.0;
    assert!((b.host_bytes as f64 - expected).abs() < 1e-6 * expected, "{} vs {expected}", b.host_bytes);
}
