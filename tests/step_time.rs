//! Step time against the papers' FLOP counts and the roofline, computed by hand.
//!
//! - Training FLOPs of a GPT block stack (Narayanan et al. 2021, Appendix "Floating-point
//!   operations", eq. (3)): per block and micro-batch the forward does 24·B·s·h² in its
//!   matmuls (QKV 6, projection 2, MLP 16) and the logit layer 2·B·s·h·V; backward twice the
//!   forward; full recomputation one more forward of the blocks (not of the logit layer):
//!   96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), and 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))
//!   without it. That is Kaplan et al.'s C ≈ 6N per token (2020, §2.1), 8N with recomputation.
//!   The attention core (QKᵀ and AV) is counted as Kaplan's Table 1 does, 2·n_ctx·d_attn per
//!   token and block, the causal half of the 4·B·s²·h Narayanan counts: its term is s/(12h).
//! - Selective recomputation redoes the attention core only — QKᵀ, softmax, dropout, AV
//!   (Korthikanti et al. 2022, §4.2) — one more forward of the s² terms.
//! - Time = FLOPs / (peak × MFU) (Chowdhery et al. 2022, PaLM, Appendix B defines MFU as
//!   model FLOPs per second over the peak).
//! - Decode: a token of a small batch reads every weight and the KV cache once, so its time is
//!   their bytes over the memory bandwidth (Pope et al. 2022, §2–3), unless its 2N FLOPs per
//!   token take longer.
//! - ZeRO-Offload (Ren et al. 2021, §4.1–4.2): 16-bit gradients go down and 16-bit parameters
//!   come up over PCIe every step, 4 bytes per element of each rank's partition.

use headroom::model::arch::{Activation, Architecture, AttentionPart, EmbeddingPart, MlpPart, NormKind, NormPart, Placement, Stack, TransformerArch};
use headroom::model::step_time::UTILISATION;
use headroom::scenario::{Checkpointing, DeviceSpec, ModelSpec, Parallel, Scenario};
use headroom::{estimate, Breakdown};

/// A GPT-style stack: LayerNorm, 4h GELU MLP without biases, learned positions, tied head.
fn gpt(h: u64, heads: u64, layers: u64, vocab: u64) -> Architecture {
    Architecture::Transformer(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers,
        vocab,
        embedding: EmbeddingPart { max_positions: 2048, tied: true, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: 4 * h, activation: Activation::Gelu, gated: false, fused_gate_up: false, bias: false },
        ..TransformerArch::default()
    })
}

const H: f64 = 2048.0;
const L: f64 = 8.0;
const V: f64 = 50304.0;
const S: f64 = 2048.0;

fn gpt_run(f: impl FnOnce(&mut Scenario)) -> Breakdown {
    let mut s = Scenario { model: ModelSpec::Arch(gpt(H as u64, 16, L as u64, V as u64)), ..Scenario::default() };
    s.training.seq_len = S as u64;
    f(&mut s);
    estimate(&s)
}

/// The block LayerNorms' 4h parameters per block (2·4h/24h² of the FLOPs) are the only terms
/// the closed forms leave out: < 2·10⁻⁴ here.
fn assert_near(got: f64, expected: f64, what: &str) {
    assert!((got - expected).abs() < 5e-4 * expected, "{what}: {got:.4e} vs {expected:.4e} (ratio {:.5})", got / expected);
}

/// Narayanan eq. (3) without and with full recomputation, and with selective recomputation
/// one attention-core forward (2·B·s²·h per block at Kaplan's count) on top; B = 2.
#[test]
fn training_flops_follow_narayanan() {
    let b = 2.0;
    let base = 72.0 * b * S * L * H * H;
    let cases = [
        (Checkpointing::None, base * (1.0 + S / (12.0 * H) + V / (12.0 * L * H))),
        (Checkpointing::Full, 96.0 * b * S * L * H * H * (1.0 + S / (12.0 * H) + V / (16.0 * L * H))),
        (Checkpointing::Selective, base * (1.0 + S / (12.0 * H) + V / (12.0 * L * H)) + 2.0 * b * S * S * H * L),
    ];
    for (checkpointing, expected) in cases {
        let got = gpt_run(|s| {
            s.training.micro_batch = 2;
            s.training.checkpointing = checkpointing;
        });
        assert_near(got.step_time.flops_per_gpu, expected, &format!("{checkpointing:?}"));
    }
}

/// Full recomputation costs one more forward of the blocks: 8N against 6N per token when the
/// logit layer is small (V = 8) — 4/3 of the FLOPs, less the head and final norm that are not
/// recomputed (8·4096 + 2·4096 of 4 × 12·4096² parameters: 1.7·10⁻⁵ of the ratio).
#[test]
fn full_recomputation_is_eight_n_against_six_n() {
    let run = |checkpointing| {
        let mut s = Scenario { model: ModelSpec::Arch(gpt(4096, 32, 4, 8)), ..Scenario::default() };
        s.training.seq_len = 256;
        s.training.checkpointing = checkpointing;
        estimate(&s).step_time.flops_per_gpu
    };
    let ratio = run(Checkpointing::Full) / run(Checkpointing::None);
    assert!((ratio - 4.0 / 3.0).abs() < 1e-4, "{ratio}");
}

/// PaLM Appendix B: time = model FLOPs / (peak × MFU). A 400 TFLOP/s device; tensor
/// parallelism over t = 2 halves each GPU's FLOPs (Shoeybi §3: every matmul is split).
#[test]
fn step_seconds_are_flops_over_peak_times_mfu() {
    let device = DeviceSpec { bf16_tflops: Some(400.0), ..DeviceSpec::default() };
    let one = gpt_run(|s| s.device = device.clone());
    let expected = 72.0 * S * L * H * H * (1.0 + S / (12.0 * H) + V / (12.0 * L * H)) / (400e12 * UTILISATION);
    assert_near(one.step_time.seconds, expected, "one GPU");
    let tp = gpt_run(|s| {
        s.device = device.clone();
        s.parallel = Parallel { tp: 2, ..Parallel::default() };
    });
    assert_near(tp.step_time.seconds, expected / 2.0, "tp 2");
    // Tokens per second: one sequence of S tokens per step.
    assert_near(one.step_time.tokens_per_second, S / expected, "tokens/s");
}

/// Llama-3-8B in bf16, batch 1, 4096 tokens of context, 2 TB/s: a token reads the 2Ψ bytes of
/// weights and the 128 KiB × 4096 of KV cache. Prefill is the forward's FLOPs at the stated
/// MFU: per token 2N (N without the input embedding, Kaplan §2.1) + 2·L·s·h.
#[test]
fn decode_reads_weights_and_cache_once_per_token() {
    let psi = 8_030_261_248.0;
    let json = r#"{"model": {"preset": "llama-3-8b"}, "training": {"mode": "inference", "precision": "bf16", "seq_len": 4096},
                   "device": {"preset": "h100-sxm-80gb", "hbm_bandwidth": 2e12, "bf16_tflops": 1000}}"#;
    let b = estimate(&Scenario::from_json(json).expect("decodes").scenario);
    let bytes = 2.0 * psi + 131_072.0 * 4096.0;
    assert!((b.step_time.decode_seconds_per_token - bytes / 2e12).abs() < 1e-12, "{} s vs {} s", b.step_time.decode_seconds_per_token, bytes / 2e12);
    let n = psi - 128_256.0 * 4096.0;
    let prefill = (2.0 * n + 2.0 * 32.0 * 4096.0 * 4096.0) * 4096.0 / (1000e12 * UTILISATION);
    assert!((b.step_time.prefill_seconds - prefill).abs() < 1e-9 * prefill, "{} s vs {prefill} s", b.step_time.prefill_seconds);
}

/// A large batch makes decode compute-bound: 2048 sequences of 16 tokens read 16.06 GB of
/// weights and 4.3 GB of cache (10 ms at 2 TB/s) but need (2N + 2·L·s·h) FLOPs per token each
/// — 2048 × 15.0 GFLOP = 30.8 TFLOP, 77 ms at 1000 TFLOP/s × MFU.
#[test]
fn large_batch_decode_is_compute_bound() {
    let psi = 8_030_261_248.0;
    let json = r#"{"model": {"preset": "llama-3-8b"}, "training": {"mode": "inference", "precision": "bf16", "seq_len": 16, "micro_batch": 2048},
                   "device": {"preset": "h100-sxm-80gb", "hbm_bandwidth": 2e12, "bf16_tflops": 1000}}"#;
    let b = estimate(&Scenario::from_json(json).expect("decodes").scenario);
    let n = psi - 128_256.0 * 4096.0;
    let compute = (2.0 * n + 2.0 * 32.0 * 16.0 * 4096.0) * 2048.0 / (1000e12 * UTILISATION);
    let read = (2.0 * psi + 131_072.0 * 16.0 * 2048.0) / 2e12;
    assert!(compute > read);
    let got = b.step_time.decode_seconds_per_token;
    assert!((got - compute).abs() < 1e-9 * compute, "{got} s vs {compute} s");
}

/// ZeRO-Offload on 8 GPUs over a 25 GB/s host link: each rank sends its eighth of the 16-bit
/// gradients down and brings its eighth of the 16-bit parameters up, 4·Ψ/8 bytes a step.
#[test]
fn cpu_offload_moves_four_bytes_per_partition_element() {
    let psi = 8_030_261_248.0;
    let run = |offload: &str| {
        let json = format!(
            r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 1024}}, "parallel": {{"dp": 8, "zero": 2, "offload": "{offload}"}},
                "device": {{"preset": "h100-sxm-80gb", "host_link_bandwidth": 25e9}}}}"#
        );
        estimate(&Scenario::from_json(&json).expect("decodes").scenario).step_time.seconds
    };
    let extra = run("optimizer") - run("none");
    let expected = 4.0 * psi / 8.0 / 25e9;
    assert!((extra - expected).abs() < 1e-9 * expected, "{extra} s vs {expected} s");
}
