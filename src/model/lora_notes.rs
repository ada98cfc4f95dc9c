//! What a LoRA plan says about adapters that do not do what their targets suggest: adapters on
//! a hybrid mixer's linears whose weight the fused kernel reads directly (made, never run), and
//! a vision tower left frozen whose modules PEFT would match by name all the same.

use super::arch::{Architecture, ParamTensor, Scope};
use super::inputs::{MixerKernels, Mode, Training};

/// Module names a Llama-style `target_modules` list carries that some towers use too: SigLIP's,
/// CLIP's and InternViT's q/k/v projections, Qwen2.5-VL's tower MLP.
const SHARED_NAMES: [&str; 6] = ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"];

/// The notes for a training run with LoRA, over the architecture's tensors (none otherwise).
pub fn lora_notes(training: &Training, arch: &Architecture, tensors: &[ParamTensor]) -> Vec<String> {
    let Some(l) = training.lora.as_ref().filter(|_| training.mode == Mode::Train) else { return Vec::new() };
    let targeted = |t: &&ParamTensor| t.linear.is_some_and(|k| k.iter().any(|k| l.targets.contains(k)));
    let mut notes = Vec::new();
    if let Some(hy) = arch.transformer().and_then(|t| t.hybrid.as_ref()) {
        let torch = training.mixer_kernels == MixerKernels::Torch;
        let idle: Vec<&str> = tensors.iter().filter(|t| t.adapter_idle(torch)).filter(targeted).map(|t| t.name).collect();
        if !idle.is_empty() {
            notes.push(format!(
                "LoRA on {}: transformers' {} forward reads these weights directly ({}), so PEFT's adapters on them are made but never run: their weights are counted, with no gradients, optimizer states or saved tensors. PEFT 0.21 refuses `out_proj` outright for mamba, mamba2, falcon_mamba, falcon_h1 and nemotron_h",
                idle.join(", "),
                hy.mixer.label(),
                if torch { "Δ as `dt_proj.weight @ time_step`, on the torch fallback too" } else { "the fused kernel's arguments" }
            ));
        }
    }
    if !l.vision_tower {
        // PEFT matches `target_modules` by the module's last name.
        let mut names: Vec<&str> = Vec::new();
        for name in tensors.iter().filter(|t| t.scope == Scope::Tower).filter(targeted).filter_map(|t| t.name.rsplit('.').next()) {
            if SHARED_NAMES.contains(&name) && !names.contains(&name) {
                names.push(name);
            }
        }
        if !names.is_empty() {
            notes.push(format!(
                "LoRA leaves the vision tower frozen here (training.lora.vision_tower is off), but PEFT's target_modules match module names and the tower's {} carry the language model's names: exclude them (exclude_modules, or a regex naming the language model) or set training.lora.vision_tower",
                names.join(", ")
            ));
        }
    }
    notes
}
