//! What a plan says about a hybrid's token mixers: in training, that its activations assume the
//! fused kernels, or, with transformers' torch fallback (`training.mixer_kernels: "torch"`),
//! which packages would enable them; in serving, where an engine's state pool is not modelled.

use super::arch::{Architecture, HybridPart, Mixer};
use super::inputs::{Engine, MixerKernels, Mode, Training};

/// The packages whose kernels transformers 5.25 calls for `mixer` instead of its torch code
/// (`use_kernel_func_from_hub_with_fallback` in modeling_mamba.py, modeling_mamba2.py,
/// modeling_jamba.py, modeling_qwen3_next.py 339/424, modeling_lfm2.py 293; the hub's
/// `kernels` package serves the same functions).
fn fused_packages(mixer: &Mixer) -> &'static str {
    match mixer {
        Mixer::Mamba { .. } | Mixer::Mamba2 { .. } => "mamba-ssm and causal-conv1d",
        Mixer::GatedDeltaNet { .. } => "flash-linear-attention (fla) and causal-conv1d",
        Mixer::ShortConv { .. } => "causal-conv1d",
    }
}

/// The notes for a training run whose mixers use the torch fallback (none otherwise).
pub fn mixer_notes(training: &Training, arch: &Architecture) -> Vec<String> {
    if training.mixer_kernels != MixerKernels::Torch || training.mode != Mode::Train {
        return Vec::new();
    }
    let Some(hy) = arch.transformer().and_then(|t| t.hybrid.as_ref()) else { return Vec::new() };
    let packages = fused_packages(&hy.mixer);
    vec![format!(
        "Mixer kernels: torch fallback. Without {packages} (or the hub's kernels), transformers runs its torch implementation of the {} mixers, which materialises the scan's intermediates in fp32 and saves several times what the fused kernels keep; installing {packages} lowers the activations",
        hy.mixer.label()
    )]
}

/// In training on the fused kernels, that the activations assume them; in serving, that the
/// engine's pool for the states is not modelled (where it is not).
pub fn kernel_or_pool_note(training: &Training, hy: &HybridPart) -> Option<String> {
    if training.mode == Mode::Train {
        // With `mixer_kernels: "torch"`, `mixer_notes` says what runs.
        return (training.mixer_kernels == MixerKernels::Fused).then(|| {
            format!(
                "the {} layers' saved activations assume the fused CUDA kernels transformers calls when they are installed (mamba_ssm, causal_conv1d, fla); without them its torch fallback saves more (training.mixer_kernels \"torch\")",
                hy.mixer.label()
            )
        });
    }
    let unmodelled = match training.serving.engine {
        Engine::Transformers => false,
        // vLLM's hybrid pool is modelled (`serving/vllm.rs` `hybrid_layout`) when there is
        // attention to pair the states with; a pure state-space model's pool is not.
        Engine::Vllm => hy.attention_layers == 0,
        _ => true,
    };
    unmodelled.then(|| {
        format!(
            "the engine's pool for the recurrent and conv states of the {} {} layers is not modelled: its KV-cache numbers count the {} attention layers only",
            hy.mixer_layers,
            hy.mixer.label(),
            hy.attention_layers
        )
    })
}
