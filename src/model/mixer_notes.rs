//! What a plan says when a hybrid's token mixers run transformers' torch fallback
//! (`training.mixer_kernels: "torch"`): which packages would enable the fused kernels, and
//! where the fallback is not modelled yet (the fused-kernel terms are kept, an underestimate).

use super::activations::torch_fallback_modelled;
use super::arch::{Architecture, Mixer};
use super::inputs::{MixerKernels, Mode, Training};

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
    if torch_fallback_modelled(&hy.mixer) {
        vec![format!(
            "Mixer kernels: torch fallback. Without {packages} (or the hub's kernels), transformers runs its torch implementation of the {} mixers, which materialises the scan's intermediates in fp32 and saves several times what the fused kernels keep; installing {packages} lowers the activations",
            hy.mixer.label()
        )]
    } else {
        // Measured in hybrid_activations.json (tests/hybrids.rs) for Gated DeltaNet only.
        let measured = if matches!(hy.mixer, Mixer::GatedDeltaNet { .. }) {
            " (on the tiny configs of hybrid_activations.json the fallback saved 3.7× the fused model per block)"
        } else {
            ""
        };
        vec![format!(
            "approximate: the torch fallback of the {} mixers is not modelled yet, so the activations keep the fused kernels' terms, an underestimate{measured}; installing {packages} runs the fused kernels",
            hy.mixer.label()
        )]
    }
}
