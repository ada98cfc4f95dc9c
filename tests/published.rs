//! Published figures reproduced: the ZeRO paper's model-state table (Rajbhandari et al.
//! 2020, Table 1 / Figure 1) and the per-layer activation terms of Korthikanti et al. 2022
//! (Table 2), for a GPT-style block in 16-bit with dropout — the setting the paper assumes.

use headroom::model::arch::{Activation, Architecture, AttentionPart, EmbeddingPart, MlpPart, NormKind, NormPart, Placement, Stack, TransformerArch};
use headroom::model::precision::Precision;
use headroom::scenario::{Attention, Checkpointing, ModelSpec, Parallel, Scenario, Zero};
use headroom::{estimate, Breakdown};

/// A GPT-style stack (learned positions, LayerNorm, GELU MLP, no biases, tiny vocab) whose
/// parameters are almost exactly `layers × 12h²`.
fn gpt_block(h: u64, heads: u64, layers: u64) -> Architecture {
    Architecture::Transformer(TransformerArch {
        stack: Stack::Decoder,
        hidden: h,
        layers,
        vocab: 8,
        embedding: EmbeddingPart { max_positions: 8, tied: true, ..EmbeddingPart::default() },
        attention: AttentionPart { heads, kv_heads: heads, head_dim: h / heads, rotary_dim: 0, ..AttentionPart::default() },
        norm: NormPart { kind: NormKind::Layernorm, placement: Placement::Pre },
        mlp: MlpPart { ffn: 4 * h, activation: Activation::Gelu, gated: false, fused_gate_up: false, bias: false },
        ..TransformerArch::default()
    })
}

fn run(arch: &Architecture, f: impl FnOnce(&mut Scenario)) -> Breakdown {
    let mut s = Scenario { model: ModelSpec::Arch(arch.clone()), ..Scenario::default() };
    f(&mut s);
    estimate(&s)
}

/// Model states during the optimizer step, where weights, gradients and states coexist.
fn model_states(b: &Breakdown) -> f64 {
    let o = &b.phases.optimizer_step;
    (o.parameters + o.gradients + o.optimizer_states) as f64
}

/// ZeRO Table 1 / Fig. 1: Ψ = 7.5B, K = 12, N_d = 64 → 120, 31.4, 16.6, 1.88 GB.
#[test]
fn zero_paper_model_states() {
    // 12·h²·L = 7.5e9 with h = 6250, L = 16.
    let arch = gpt_block(6250, 50, 16);
    let psi = arch.param_count();
    assert!((psi - 7.5e9).abs() / 7.5e9 < 1e-3, "Ψ = {psi}");
    // (stage, N_d, GB as printed, half a unit of the last printed digit)
    let expected = [(0u64, 1u64, 120.0, 0.5), (1, 64, 31.4, 0.05), (2, 64, 16.6, 0.05), (3, 64, 1.88, 0.005), (1, 4, 52.5, 0.05), (2, 16, 21.6, 0.05), (3, 1024, 0.12, 0.005)];
    for (zero, dp, gb, half_digit) in expected {
        let b = run(&arch, |s| {
            s.training.precision = Precision::Fp16Mixed;
            s.parallel = Parallel { dp, zero: Zero::from_stage(zero).expect("stage 0-3"), ..Parallel::default() };
        });
        let got = model_states(&b) / 1e9;
        assert!((got - gb).abs() <= half_digit + 0.001 * gb, "ZeRO-{zero}, N_d = {dp}: {got:.3} GB vs paper {gb} GB");
    }
}

/// Korthikanti et al. 2022, Table 2: bytes per layer for s = 2048, b = 1, h = 6144,
/// a = 64 (the 22B model), in the paper's setting: 16-bit, dropout, eager attention.
#[test]
fn korthikanti_table_two() {
    let (s, b, h, a) = (2048.0, 1.0, 6144.0, 64.0);
    let per_layer = |tp: u64, sp: bool, ckpt: Checkpointing| -> f64 {
        let with = |layers: u64| {
            let arch = gpt_block(6144, 64, layers);
            let b = run(&arch, |sc| {
                sc.training.precision = Precision::Bf16;
                sc.training.attention = Attention::Eager;
                sc.training.dropout = 0.1;
                sc.training.seq_len = 2048;
                sc.training.checkpointing = ckpt;
                sc.parallel = Parallel { tp, sp, ..Parallel::default() };
            });
            b.phases.forward_backward.activations as f64
        };
        // The difference of two depths isolates one layer from the embeddings and loss.
        with(2) - with(1)
    };
    let sbh = s * b * h;
    let rows = [
        ("no parallelism", 1, false, Checkpointing::None, sbh * (34.0 + 5.0 * a * s / h)),
        ("tensor parallel", 8, false, Checkpointing::None, sbh * (10.0 + 24.0 / 8.0 + 5.0 * a * s / (h * 8.0))),
        ("tensor + sequence parallel", 8, true, Checkpointing::None, sbh * (34.0 / 8.0 + 5.0 * a * s / (h * 8.0))),
        ("tensor parallel + selective", 8, false, Checkpointing::Selective, sbh * (10.0 + 24.0 / 8.0)),
        ("tensor + sequence + selective", 8, true, Checkpointing::Selective, sbh * 34.0 / 8.0),
        ("full recompute", 1, false, Checkpointing::Full, sbh * 2.0),
    ];
    for (name, tp, sp, ckpt, paper) in rows {
        let got = per_layer(tp, sp, ckpt);
        // LayerNorm statistics (fp32 mean and rstd, 8 B per token) are the only extra: < 0.5%.
        assert!((got - paper).abs() / paper < 0.005, "{name}: {got:.0} B vs paper {paper:.0} B");
    }
}
