//! What a LoRA plan says about adapters that do not do what their targets suggest: adapters on
//! a hybrid mixer's linears whose weight the fused kernel reads directly (made, never run), a
//! vision tower left frozen whose modules PEFT would match by name all the same, and PEFT on
//! transformers 5's fused experts (`arch/moe_peft.rs`): experts it does not reach, experts it
//! wraps, and MLP linears its conversion leaves without adapters; fused experts bitsandbytes'
//! QLoRA leaves unquantised; Gemma 4's tower linears, which PEFT reaches only inside their wrapper.

use super::arch::{Architecture, LinearKind, MoePart, ParamTensor, PeftConversion, Scope, TowerKind};
use super::inputs::{Lora, LoraBase, MixerKernels, Mode, Nf4Quantizer, Training};
use super::lora_reach::{all_linear, named};

/// Module names a Llama-style `target_modules` list carries that some towers use too: SigLIP's,
/// CLIP's and InternViT's q/k/v projections, Qwen2.5-VL's tower MLP.
const SHARED_NAMES: [&str; 6] = ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"];

/// The notes for a training run with LoRA, over the architecture's tensors (none otherwise).
pub fn lora_notes(training: &Training, arch: &Architecture, tensors: &[ParamTensor]) -> Vec<String> {
    let Some(l) = training.lora.as_ref().filter(|_| training.mode == Mode::Train) else { return Vec::new() };
    let targeted = |t: &&ParamTensor| named(t, l);
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
    let gemma4 = arch.transformer().and_then(|t| t.tower.as_ref()).is_some_and(|t| t.kind == TowerKind::Gemma4);
    if gemma4 && tensors.iter().filter(|t| t.scope == Scope::Tower).any(|t| targeted(&t)) {
        // Measured with PEFT 0.21 on transformers 5.25's Gemma4ForConditionalGeneration
        // (`modeling_gemma4.py` lines 167–193: `Gemma4ClippableLinear` holds the `nn.Linear`).
        notes.push(if all_linear(&l.targets) {
            "Gemma 4's vision tower: PEFT's \"all-linear\" adapts the tower's linears (inside each Gemma4ClippableLinear, `….linear`) and its patch embedder's input_proj whatever training.lora.vision_tower says; exclude them (exclude_modules) to keep the tower frozen".to_string()
        } else {
            "Gemma 4's vision tower wraps each linear in a Gemma4ClippableLinear (the nn.Linear is its `.linear`): PEFT 0.21 refuses a target_modules name that matches the wrapper (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj: \"Target module Gemma4ClippableLinear(…) is not supported\"); name the language model's modules by a regex, and the tower's as `….linear` with training.lora.vision_tower".to_string()
        });
    } else if !l.vision_tower {
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
    if let Some(moe) = arch.transformer().and_then(|t| t.moe.as_ref()).filter(|m| m.peft.fused) {
        notes.extend(expert_notes(moe, l));
    }
    notes
}

/// PEFT's LoRA on transformers 5's fused experts (`arch/moe_peft.rs`).
fn expert_notes(moe: &MoePart, l: &Lora) -> Vec<String> {
    use LinearKind::{Down, Gate, Up};
    let mut notes = Vec::new();
    if l.base == LoraBase::Nf4 && l.quantizer == Nf4Quantizer::Bitsandbytes {
        notes.push(format!(
            "QLoRA leaves the routed experts unquantised: transformers 5's bitsandbytes quantizer makes only Linear4bit modules 4-bit, and the fused experts are parameters; they stay in the load dtype{}",
            if l.fp32_unquantised { ", and PEFT's prepare_model_for_kbit_training casts them to fp32 (training.lora.fp32_unquantised)" } else { "" }
        ));
    }
    let mlp_named = [Gate, Up, Down].iter().any(|k| l.targets.contains(k));
    if !(mlp_named || all_linear(&l.targets)) {
        return notes;
    }
    match moe.peft.conversion {
        None => notes.push(
            "LoRA leaves the routed experts frozen: transformers 5 keeps them as fused 3-D parameters, which PEFT 0.21 reaches only through its config conversion for the Mixtral and Qwen2-MoE patterns of model types, not this one; no adapters are counted on them (PEFT's target_parameters, e.g. [\"experts.gate_up_proj\", \"experts.down_proj\"], would add them)"
                .into(),
        ),
        Some(conversion) => {
            let names = if conversion == PeftConversion::Mixtral { "w1, w3, w2" } else { "gate_proj, up_proj, down_proj" };
            notes.push(format!(
                "LoRA on the routed experts: PEFT 0.21 converts the names {names}{} to transformers 5's fused expert parameters and wraps each with ParamWrapper (rank {} per expert on gate_up_proj, {} on down_proj); every forward folds the adapters into a full copy of those weights, which backward keeps (\"LoRA merged expert weights\")",
                if all_linear(&l.targets) { " and the router's gate" } else { "" },
                2 * l.rank,
                l.rank
            ));
            if l.dropout > 0.0 {
                notes.push("PEFT 0.21's ParamWrapper refuses lora_dropout != 0 (peft/tuners/lora/layer.py 2366): with training.lora.dropout above 0, get_peft_model fails on these experts".into());
            }
            if l.targets.contains(&Gate) != l.targets.contains(&Up) {
                notes.push("PEFT refuses gate without up (or up without gate) on this model: they are fused into gate_up_proj; choose both".into());
            }
            if moe.peft.drops_linear("gate_proj") && (moe.shared_ffn > 0 || moe.first_dense > 0 || moe.every > 1) {
                notes.push("PEFT's conversion moves gate_proj, up_proj and down_proj from target_modules to the experts' fused parameters, so the shared experts' and dense layers' MLP linears get no adapters (counted so; every spelling of those names in target_modules, a regex or a module path, is converted the same way)".into());
            }
        }
    }
    notes
}
