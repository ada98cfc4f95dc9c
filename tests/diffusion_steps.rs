//! The whole training step of tiny diffusers denoisers against the live bytes of real steps
//! on CPU (`tests/measure/diffusion_steps.py`, `tests/fixtures/measured/diffusion_steps.json`):
//! parameters, gradients, AdamW states, what the forward saves and the step's transients, in
//! fp32, pure bf16 and PEFT LoRA on a bf16 base, with and without gradient checkpointing.
//!
//! Ignored by default: it measures a gap the model does not close yet. What a diffusion
//! denoiser keeps for backward is modelled to the byte (`diffusion_unet_vae.rs`,
//! `diffusion_dit.rs`), and under checkpointing the recomputed block is
//! (`model/diffusion/backward.rs`), but a step's peak comes later in its backward than an
//! LLM's (no logits) and the activation gradients in flight there are not modelled for
//! diffusion denoisers. Measured misses (predicted − measured, 24 cases): −2.6 % to −5.1 %
//! for the UNet and SD3 without LoRA, −8.6 % to −26 % for Flux, Wan and LoRA runs (the
//! recomputed block took the checkpointed cases from −13…−86 % to −5…−26 %). Run it with
//! `cargo test --test diffusion_steps -- --ignored --nocapture` to print the table.

use headroom::{estimate, Scenario};
use serde_json::{json, Value};

/// Pixels per latent side of the pipelines these denoisers come in (a lone denoiser's VAE).
const VAE_FACTOR: u64 = 8;

#[test]
#[ignore = "known gap: a diffusion step's backward transients (activation gradients, the recomputed block) are not modelled; see the module doc"]
fn step_peaks_are_within_five_percent_of_real_steps() {
    let f: Value = serde_json::from_str(include_str!("fixtures/measured/diffusion_steps.json")).unwrap();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for c in f["cases"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let side = c["latent"].as_u64().unwrap() * VAE_FACTOR;
        let mut training = json!({
            "micro_batch": c["batch"],
            "precision": if c["setup"] == "fp32" { "fp32" } else { "bf16" },
            "optimizer": "adamw",
            "optimizer_impl": "foreach",
            "checkpointing": if c["checkpointing"].as_bool().unwrap() { "full" } else { "none" },
            "resolution": [side, side],
            "frames": c["frames"],
            "diffusion": {"text_tokens": c["text_tokens"]},
        });
        if c["setup"] == "lora" {
            training["lora"] = json!({"rank": 4, "targets": ["q", "k", "v", "o"], "fp32_adapters": true});
        }
        let s: Scenario = serde_json::from_value(json!({"model": {"hf_config": c["config"]}, "training": training})).unwrap();
        let b = estimate(&s);
        if b.trainable_params != c["trainable_params"].as_u64().unwrap() {
            failures.push(format!("{name}: trainable {} vs {}", b.trainable_params, c["trainable_params"]));
        }
        let measured = c["peak_bytes"].as_f64().unwrap() - c["input_bytes"].as_f64().unwrap() - c["buffer_bytes"].as_f64().unwrap();
        let predicted = (b.total - b.overhead) as f64;
        let miss = predicted / measured - 1.0;
        report.push(format!("{name:<28} measured {measured:>12.0} predicted {predicted:>12.0} {:+6.2} %", miss * 100.0));
        if miss.abs() > 0.05 {
            failures.push(name.to_string());
        }
    }
    println!("{}", report.join("\n"));
    assert!(report.len() >= 24);
    assert!(failures.is_empty(), "off by more than 5 %: {failures:?}\n{}", report.join("\n"));
}
