//! Framework techniques, through the whole planner: what each removes or adds, and the
//! validation that keeps impossible combinations out.

use headroom::model::breakdown::Phase;
use headroom::{estimate, Scenario};

fn plan(json: &str) -> headroom::Breakdown {
    estimate(&Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}")).scenario)
}

/// Optimizer step fused into backward on Llama-3-8B (bf16-mixed AdamW, one GPU): the
/// optimizer-step peak (weights + gradients + states + foreach intermediates) is gone, no
/// gradient is kept, and the peak becomes the start of backward.
#[test]
fn optimizer_in_backward_removes_the_optimizer_step_peak() {
    let plain = plan(r#"{"model": {"preset": "llama-3-8b"}}"#);
    let fused = plan(r#"{"model": {"preset": "llama-3-8b"}, "training": {"techniques": {"optimizer_in_backward": true}}}"#);
    assert_eq!(plain.phases.peak_phase, Phase::OptimizerStep);
    assert_eq!(fused.phases.peak_phase, Phase::ForwardBackward);
    assert_eq!(fused.gradients, 0);
    assert!(fused.total < plain.total);
    assert!(!fused.terms.iter().any(|t| t.name == "optimizer step intermediates"));
}

#[test]
fn optimizer_in_backward_refuses_gradient_accumulation() {
    let s = Scenario::from_json(r#"{"training": {"grad_accum": 4, "techniques": {"optimizer_in_backward": true}}}"#).expect("decodes").scenario;
    assert!(s.validate().iter().any(|e| e.field == "training.techniques.optimizer_in_backward"));
}

/// Llama-3.2-3B in bf16, micro-batch 2 × 4096 tokens (torchtune's "Optimization flags" setup):
/// T·V = 8192 × 128,256 logits. transformers' loss holds two fp32 gradient buffers of them at
/// the start of backward (8·T·V = 8.4 GB). In 8 chunks the largest moment becomes the end of
/// forward, where every chunk's bf16 logits (2·T·V) and one chunk's fp32 copy (T·V/2) are
/// alive: the peak falls by (8 − 2.5)·T·V = 5.78 GB (× 1.05 with fragmentation), while the
/// saved fp32 log-softmax (4·T·V) stays. (Measured on small configs in techniques.json.)
#[test]
fn chunked_cross_entropy_holds_one_chunk_of_logit_gradients() {
    let base = r#"{"model": {"preset": "llama-3.2-3b"}, "training": {"precision": "bf16", "micro_batch": 2, "seq_len": 4096"#;
    let plain = plan(&format!("{base}}}}}"));
    let chunked = plan(&format!(r#"{base}, "techniques": {{"loss": "chunked"}}}}}}"#));
    let tv = 8192.0 * 128_256.0;
    let saved = plain.phases.forward_backward.total as f64 - chunked.phases.forward_backward.total as f64;
    // Fragmentation (5 % of the dynamic bytes) shrinks with them.
    assert!((saved - 5.5 * tv * 1.05).abs() < 0.01 * saved, "{saved}");
    let logsoftmax = |b: &headroom::Breakdown| b.terms.iter().find(|t| t.name == "fp32 log-softmax of the logits").map(|t| t.bytes);
    assert_eq!(logsoftmax(&plain), logsoftmax(&chunked));
}

/// Liger's fused linear cross-entropy keeps no logits: the saved fp32 log-softmax (4·T·V) and
/// the LM head input go; the gradients of the hidden states (2·T·h) and of the output weight
/// (2·V·h) are saved instead (3B ties its head to the embedding).
#[test]
fn fused_linear_cross_entropy_keeps_no_logits() {
    let b = plan(r#"{"model": {"preset": "llama-3.2-3b"}, "training": {"precision": "bf16", "micro_batch": 2, "seq_len": 4096, "techniques": {"loss": "fused-linear"}}}"#);
    assert!(!b.terms.iter().any(|t| t.name == "fp32 log-softmax of the logits" || t.name == "LM head input"));
    let fused = b.terms.iter().find(|t| t.name.starts_with("fused linear cross-entropy gradients")).expect("fused term").bytes;
    assert_eq!(fused, 2 * 8192 * 3072 + 2 * 128_256 * 3072);
}

/// Activation offloading on Llama-3-8B (bf16-mixed, 4096 tokens): every block's and the
/// embeddings' saved tensors go to host memory; the GPU keeps the head's input and the loss's
/// tensors, plus one block brought back at a time in backward.
#[test]
fn activation_offload_moves_block_activations_to_the_host() {
    let plain = plan(r#"{"model": {"preset": "llama-3-8b"}, "training": {"checkpointing": "none"}}"#);
    let off = plan(r#"{"model": {"preset": "llama-3-8b"}, "training": {"techniques": {"activation_offload": true}}}"#);
    let kept: Vec<&str> = off.terms.iter().filter(|t| t.component == headroom::model::breakdown::Component::Activations).map(|t| t.name.as_ref()).collect();
    assert!(kept.iter().all(|n| ["final norm", "LM head input", "fp32 log-softmax of the logits"].contains(n)), "{kept:?}");
    assert!(off.host_bytes as f64 > 0.9 * (plain.phases.forward_backward.activations - off.phases.forward_backward.activations) as f64);
    assert!(off.phases.forward_backward.total < plain.phases.forward_backward.total);
}

/// `expandable_segments:True` removes the fragmentation term and nothing else (PyTorch's
/// `ExpandableSegment` maps 2 MiB pages into one growing range per stream).
#[test]
fn expandable_segments_drop_only_the_fragmentation_term() {
    let mut s = headroom::scenario::Scenario::default();
    let off = headroom::estimate(&s);
    s.runtime.expandable_segments = true;
    let on = headroom::estimate(&s);
    let fragmentation = off.terms.iter().find(|t| t.name == "allocator fragmentation").unwrap().bytes;
    assert!(fragmentation > 0);
    assert!(on.terms.iter().all(|t| t.name != "allocator fragmentation"));
    assert_eq!(off.total - on.total, fragmentation);
}

/// A frozen output weight gets no gradient: under LoRA (Llama-3.2-3B ties its head to the frozen
/// embeddings, and no adapter targets it) or with tied embeddings frozen, the chunked loss's
/// output-projection backward adds no v·h weight-gradient buffers, the head's input is not
/// saved (autograd saves a matmul's input only for its weight's gradient), and Liger keeps no
/// grad_weight. An untied head with frozen embeddings is still trained.
#[test]
fn frozen_output_weight_has_no_gradient_buffers_and_saves_no_input() {
    let base = r#""model": {"preset": "llama-3.2-3b"}, "training": {"precision": "bf16", "micro_batch": 2, "seq_len": 4096"#;
    let term = |b: &headroom::Breakdown, name: &str| b.terms.iter().chain(&b.uncounted_transients).find(|t| t.name.starts_with(name)).map(|t| t.bytes);
    let (v, h, tv) = (128_256.0, 3072.0, 8192.0 * 128_256.0);
    let full = plan(&format!(r#"{{{base}, "techniques": {{"loss": "chunked"}}}}}}"#));
    let head = term(&full, "chunk logit gradients").expect("head backward term") as f64;
    assert!((head - (2.0 * tv + 3.0 * v * h * 2.0 - 4.0 * tv)).abs() < 1.0, "{head}");
    assert!(term(&full, "LM head input").is_some());
    for frozen in [r#", "lora": {"rank": 64}"#, r#", "frozen": {"embeddings": true}"#] {
        let b = plan(&format!(r#"{{{base}, "techniques": {{"loss": "chunked"}}{frozen}}}}}"#));
        // 2·T·V of logit gradients less the freed 4·T·V log-softmax: nothing left to add.
        assert_eq!(term(&b, "chunk logit gradients"), None, "{frozen}");
        assert_eq!(term(&b, "LM head input"), None, "{frozen}");
        let fused = plan(&format!(r#"{{{base}, "techniques": {{"loss": "fused-linear"}}{frozen}}}}}"#));
        assert_eq!(term(&fused, "fused linear cross-entropy gradients"), Some(2 * 8192 * 3072), "{frozen}");
    }
    let untied = plan(r#"{"model": {"preset": "llama-3-8b"}, "training": {"precision": "bf16", "techniques": {"loss": "chunked"}, "frozen": {"embeddings": true}}}"#);
    assert!(term(&untied, "LM head input").is_some());
}

/// Liger kernels beyond the loss (`liger_kernels`), on Llama-3-8B (h 4096, ffn 14336, 32 blocks),
/// one sequence of 4096 tokens. Liger's kernels are Triton and do not run on a CPU, so the kernels
/// are not measured: the saved tensors are read from the autograd Functions' `ctx.save_for_backward`
/// (linkedin/Liger-Kernel at ead96b6) and compared with the eager Hugging Face terms the model
/// measured (`saved_tensors_report.md`). (`accuracy.rs` also runs Liger's real Functions on a tiny
/// Llama with the Triton launchers replaced by PyTorch ops: `liger.json`, to the byte.)
/// - `LigerRMSNormFunction` (`ops/rms_norm.py`, 436–510, 648–660) saves X (the residual stream
///   itself), W and an fp32 RSTD per row: r·T·h + 4·T per norm, where `LlamaRMSNorm` saves an
///   fp32 copy, the rsqrt and the normalised tensor: (4 + r)·T·h + 4·T;
/// - `LigerSiLUMulFunction` (`ops/swiglu.py`, 230–264) saves the gate and up outputs and
///   recomputes silu: with the down projection's input, 3·x·T·f instead of 4·x·T·f;
/// - `LigerRopeFunction` (`ops/rope.py`, 115–158, 204–227) rotates q and k in place and saves
///   cos and sin, the same shared tables `apply_rotary_pos_emb`'s two muls save: no change (SDPA
///   saves the rotated q and k either way).
#[test]
fn liger_kernels_save_less_in_norms_and_swiglu() {
    let (t, h, f, l) = (4096.0, 4096.0, 14336.0, 32.0);
    for (precision, r, x) in [("bf16", 2.0, 2.0), ("bf16-mixed", 4.0, 2.0)] {
        let base = format!(r#""model": {{"preset": "llama-3-8b"}}, "training": {{"precision": "{precision}", "micro_batch": 1, "seq_len": 4096"#);
        let eager = plan(&format!("{{{base}}}}}"));
        let liger = plan(&format!(r#"{{{base}, "techniques": {{"liger_kernels": true}}}}}}"#));
        let term = |b: &headroom::Breakdown, name: &str| b.terms.iter().find(|t| t.name == name).map(|t| t.bytes as f64).unwrap_or_else(|| panic!("{name}"));
        for (name, blocks) in [("attention norm", l), ("MLP norm", l), ("final norm", 1.0)] {
            assert_eq!(term(&eager, name), blocks * ((4.0 + r) * t * h + 4.0 * t), "{precision} {name}");
            assert_eq!(term(&liger, name), blocks * (r * t * h + 4.0 * t), "{precision} {name}");
        }
        assert_eq!(term(&eager, "MLP intermediates"), l * 4.0 * x * t * f, "{precision}");
        assert_eq!(term(&liger, "MLP intermediates"), l * 3.0 * x * t * f, "{precision}");
        for same in ["rotary cos/sin", "attention q, k, v, output and logsumexp", "q/k/v projection inputs", "MLP inputs"] {
            assert_eq!(term(&eager, same), term(&liger, same), "{precision} {same}");
        }
        let saved = (eager.phases.forward_backward.activations - liger.phases.forward_backward.activations) as f64;
        assert_eq!(saved, (2.0 * l + 1.0) * 4.0 * t * h + l * x * t * f, "{precision}");
    }
}

/// The TRL + Liger profile turns the Liger kernels on, and they travel in the link (`lig=`).
#[test]
fn liger_kernels_travel_in_the_link() {
    let mut s = headroom::scenario::Scenario::default();
    s.apply_framework(headroom::profiles::Framework::TrlLiger);
    assert!(s.training.techniques.liger_kernels);
    let query = headroom::url::encode(&s);
    assert!(query.contains("lig=true"), "{query}");
    let (back, errors) = headroom::url::decode(&query);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(back.training.techniques.liger_kernels);
}
