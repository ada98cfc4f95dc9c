//! The memory model: pure Rust, no UI or browser imports, no I/O.
//!
//! [`estimate`] turns resolved [`Inputs`] (architecture, training step, parallel layout,
//! device) into a [`Breakdown`] of per-GPU bytes. It never fails: a run that does not fit is
//! a result. Presets, pasted configs and device names are resolved outside the model
//! (`crate::scenario`, `crate::import`), so nothing here depends on them.
//! Each component is the sum of named terms, each term citing its formula.
//!
//! Architecture invariant: nothing under `src/model/` imports leptos, web-sys, js-sys,
//! wasm-bindgen or charming (checked by `tests/model_is_pure.rs`).

pub mod activations;
pub mod allocator;
pub mod arch;
pub mod breakdown;
pub mod communication;
pub mod device;
pub mod diffusion;
pub mod dtype;
pub mod gguf;
pub mod inference;
pub mod inputs;
pub mod layout;
pub mod ledger;
pub mod load;
pub mod lora_notes;
pub mod lora_reach;
pub mod mixer_notes;
pub mod nf4_load;
pub mod overhead;
pub mod precision;
pub mod reuse;
pub mod serving;
pub mod serving_inputs;
pub mod spill;
pub mod states;
pub mod step_inputs;
pub mod step_time;
pub mod temporary;
pub mod timeline;
pub mod torchao_nf4;

use activations::{add_activations, in_flight, in_flight_count, micro_batch, MicroBatch};
use arch::{Architecture, Tensors};
use breakdown::{Breakdown, Component, Lifetime, Phase, PhasePeaks, PhaseTotals, StepShape, Totals};
use layout::Layout;
use ledger::{to_bytes, Ledger, Tally};
use reuse::Reuse;
use temporary::{temporary_buffers, TemporaryInputs};

use inputs::{Mode, Training};
pub use step_inputs::Inputs;

/// Per-GPU memory of a run on its most loaded GPU, with the model's own warnings (the peak
/// phase, positions beyond what the model learned).
pub fn estimate(inputs: &Inputs) -> Breakdown {
    estimate_with(inputs, &Tensors::new(inputs.arch))
}

/// [`estimate`] with the architecture's tensors built by the caller, who estimates one
/// architecture many times.
pub fn estimate_with(inputs: &Inputs, tensors: &Tensors) -> Breakdown {
    let arch = inputs.arch.for_run(inputs.training);
    let inputs = &Inputs { arch: &arch, ..*inputs };
    let plan = peak_stage(inputs, tensors, &mut Reuse::default());
    let totals = plan_totals(inputs, tensors, &plan);
    finish(inputs, tensors, plan, totals)
}

/// The numbers of [`estimate_with`] without its named terms and warnings, from the same
/// code: for the layout search, which reads only the totals, the verdict and the step time
/// of most of the layouts it tries, and hands the model states of one estimate to the next
/// (`reuse`, one per architecture).
pub fn totals(inputs: &Inputs, tensors: &Tensors, reuse: &mut Reuse) -> Totals {
    let arch = inputs.arch.for_run(inputs.training);
    let inputs = &Inputs { arch: &arch, ..*inputs };
    plan_totals(inputs, tensors, &peak_stage(inputs, tensors, reuse))
}

/// The pipeline stage with the largest peak: the first (embedding, most micro-batches in
/// flight) or the last (head and loss). What a micro-batch saves is the same on every stage.
fn peak_stage(inputs: &Inputs, tensors: &Tensors, reuse: &mut Reuse) -> StagePlan {
    let pp = inputs.parallel.pp.max(1).min(inputs.arch.layers());
    let stages: &[u64] = if pp > 1 { &[0, pp - 1] } else { &[0] };
    let first = Layout::new(inputs.arch, inputs.parallel, 0);
    let compute = compute_training(inputs.training, &first);
    let mb = micro_batch(inputs.arch, &compute, first.cp);
    let mut best: Option<StagePlan> = None;
    for &stage in stages {
        let plan = stage_ledger(inputs, tensors, stage, &compute, &mb, reuse);
        if best.as_ref().is_none_or(|b| plan.tally.peak() > b.tally.peak()) {
            best = Some(plan);
        }
    }
    best.unwrap_or_default()
}

/// Terms a stage's ledger is sized for (a Llama step records about 30).
const TERMS: usize = 48;

/// The terms of one pipeline stage, with what `finish` needs besides them.
#[derive(Default)]
struct StagePlan {
    ledger: Ledger,
    /// What the phases count of `ledger`.
    tally: Tally,
    /// Bytes kept in host memory by offload.
    host: f64,
    /// Of those, activations offloaded in forward and brought back in backward.
    activation_host: f64,
    stage: u64,
    trainable_params: f64,
    /// The training step's shape (`None` in inference).
    step: Option<StepShape>,
    /// Bytes of paged optimizer states (CUDA managed memory) on the GPU.
    paged: f64,
    /// A serving engine's plan and startup report (`serving/`), when one is chosen.
    serving: Option<serving::ServingReport>,
}

/// The training step as the forward and backward compute it: under FSDP2, the 16-bit mixed
/// modes are `MixedPrecisionPolicy(param_dtype=…)`, which casts the gathered weights (and the
/// forward inputs) instead of running autocast, so the blocks compute in pure 16-bit and save
/// what a pure-bf16 model saves (torch `fsdp/_fully_shard/_fsdp_api.py` MixedPrecisionPolicy;
/// measured in `tests/fixtures/measured/fsdp.json`). FP8 keeps its own path.
fn compute_training<'a>(training: &'a Training, layout: &Layout) -> std::borrow::Cow<'a, Training> {
    use precision::Precision;
    if layout.fsdp2() && matches!(training.precision, Precision::Bf16Mixed | Precision::Fp16Mixed) {
        let mut t = training.clone();
        t.precision = Precision::Bf16;
        std::borrow::Cow::Owned(t)
    } else {
        std::borrow::Cow::Borrowed(training)
    }
}

/// All terms of one pipeline stage, and the bytes it keeps on the host: `compute` is the
/// step as the blocks compute it ([`compute_training`]), `mb` what one micro-batch saves.
fn stage_ledger(s: &Inputs, tensors: &Tensors, stage: u64, compute: &Training, mb: &MicroBatch, reuse: &mut Reuse) -> StagePlan {
    let (arch, device) = (s.arch, s.device);
    let layout = Layout::new(arch, s.parallel, stage);
    let sp = s.parallel.sp && s.parallel.tp > 1;
    let mut ledger = Ledger::with_capacity(TERMS);
    let training = s.training.mode == Mode::Train;
    let mut host = 0.0;
    let mut activation_host = 0.0;
    let mut trainable_params = 0.0;
    let mut step = None;
    let mut paged = 0.0;
    let mut engine = None;
    if training {
        // Each term carries its lifetime (`breakdown::Lifetime`), from which the phases follow:
        // activations and these temporaries exist only in forward/backward; the optimizer step
        // has its own intermediates; gradients are freed between steps unless something keeps
        // them (`states.rs`).
        let states = reuse.state_bytes(arch, &tensors.list, s.training, &layout, s.parallel.offload);
        states::add_states(&states, s.training, &layout, s.parallel.offload, &mut ledger);
        let summary = states.summary;
        host = states.host;
        trainable_params = summary.trainable_params;
        paged = summary.paged_state_bytes;
        let flight = in_flight(&layout, s.training.grad_accum, s.parallel.pp_schedule, s.parallel.virtual_stages);
        let offloaded_activations = add_activations(mb, compute, &layout, sp, flight, &mut ledger);
        if let Architecture::Diffusion(d) = arch {
            diffusion::backward::add_step_transients(d, s.training, ledger.tally().sum(Component::Activations), &mut ledger);
        }
        host += offloaded_activations;
        activation_host = offloaded_activations;
        let gradient_bytes = ledger.tally().sum(Component::Gradients);
        temporary_buffers(
            &TemporaryInputs {
                arch,
                tensors: &tensors.list,
                training: s.training,
                layout: &layout,
                micro_batch: mb,
                states: &summary,
                sp,
                offload: s.parallel.offload,
                gradient_bytes,
                flight,
                full_state_dict_on_save: s.parallel.full_state_dict_on_save,
            },
            &mut ledger,
        );
        load::load_transients(&tensors.list, s.training, s.parallel, &layout, &summary, &mut ledger);
        nf4_load::load_reserve(arch, &tensors.list, s.training, &layout, s.runtime.expandable_segments, &mut ledger);
        // Optimizer step fused into backward: no gradients persist and there is no
        // optimizer-step peak; one parameter's gradient and update are a backward transient
        // (temporary.rs).
        if !s.training.techniques.optimizer_in_backward {
            ledger.add(
                Component::Temporary,
                "optimizer step intermediates",
                states::optimizer_step_intermediates(&summary, s.training, &layout, s.parallel.offload),
                states::optimizer_step_formula(s.training),
                Lifetime::OptimizerStep,
            );
        }
        step = Some(step_shape(s, &layout, stage));
    } else {
        let engine_inputs = serving::EngineInputs {
            arch,
            tensors: &tensors.list,
            training: s.training,
            layout: &layout,
            device,
            runtime: s.runtime,
            model_parallel: s.parallel.tp.max(1).saturating_mul(s.parallel.pp.max(1)),
        };
        engine = match arch {
            Architecture::Diffusion(_) => None,
            _ => serving::engine_memory(&engine_inputs, &mut ledger),
        };
        if let Architecture::Diffusion(d) = arch {
            diffusion::generation::generation_memory(d, s.training, &mut ledger);
        } else if engine.is_none() {
            inference::inference_memory(arch, &tensors.list, s.training, &layout, mb, sp, &mut ledger);
        }
    }
    // An engine's plan carries its own overheads (its budget is measured around them).
    if engine.is_none() {
        let tally = ledger.tally();
        let dynamic = tally.sum(Component::Gradients) + tally.sum(Component::Activations) + tally.sum(Component::Temporary);
        overhead::overhead(device, s.parallel.world_size(), training, dynamic, s.runtime.expandable_segments, &mut ledger);
    }
    let tally = ledger.tally();
    StagePlan { ledger, tally, host, activation_host, stage, trainable_params, step, paged, serving: engine }
}

/// The blocks and micro-batches of one stage's training step: stages hold ⌈L/p⌉ blocks each
/// (layout.rs); the last holds what is left.
fn step_shape(s: &Inputs, layout: &Layout, stage: u64) -> StepShape {
    let (per_stage, model_layers) = (layout.layers_on_stage as u64, s.arch.layers());
    let first_layer = stage.saturating_mul(per_stage).min(model_layers - 1);
    StepShape {
        layers: (model_layers - first_layer).clamp(1, per_stage.max(1)),
        first_layer,
        model_layers,
        micro_batches: s.training.grad_accum.max(1),
        in_flight: in_flight_count(layout, s.training.grad_accum, s.parallel.pp_schedule),
        stages: layout.pp as u64,
    }
}

/// The six components as they stand during `phase`.
fn phase_totals(tally: &Tally, phase: Phase) -> PhaseTotals {
    let part = |c| to_bytes(tally.sum_in(c, phase));
    let mut t = PhaseTotals {
        parameters: part(Component::Parameters),
        gradients: part(Component::Gradients),
        optimizer_states: part(Component::OptimizerStates),
        activations: part(Component::Activations),
        temporary: part(Component::Temporary),
        overhead: part(Component::Overhead),
        total: 0,
    };
    t.total = [t.parameters, t.gradients, t.optimizer_states, t.activations, t.temporary, t.overhead].iter().fold(0u64, |a, &b| a.saturating_add(b));
    t
}

/// The phases, the spill and the step time of the peak stage.
fn plan_totals(s: &Inputs, tensors: &Tensors, plan: &StagePlan) -> Totals {
    let forward_backward = phase_totals(&plan.tally, Phase::ForwardBackward);
    let training = s.training.mode == Mode::Train;
    let optimizer_step = if training { phase_totals(&plan.tally, Phase::OptimizerStep) } else { PhaseTotals::default() };
    let load = if training { phase_totals(&plan.tally, Phase::Load) } else { PhaseTotals::default() };
    // The step's phases win ties: the load is the peak only when it holds strictly more.
    let peak_phase = if optimizer_step.total > forward_backward.total { Phase::OptimizerStep } else { Phase::ForwardBackward };
    let peak_phase = if load.total > forward_backward.total.max(optimizer_step.total) { Phase::Load } else { peak_phase };
    let phases = PhasePeaks { forward_backward, optimizer_step, load, peak_phase };
    let at_peak = phases.at_peak();
    // The machine's RAM is shared by the GPUs of a node in use and the jobs on each GPU.
    let on_node = s.parallel.world_size().clamp(1, s.device.gpus_per_node.max(1));
    let host = spill::HostUse { processes: on_node.saturating_mul(s.runtime.jobs.max(1)), kept: plan.host };
    let mut spill = spill::spill_report(at_peak, s.device, s.runtime, s.training, plan.paged, host);
    if let Some(engine) = &plan.serving {
        // An engine sizes its pools to its budget: it starts, or refuses to; it never spills.
        spill.outcome = if engine.starts() && at_peak.total as f64 <= spill.capacity_bytes as f64 { breakdown::Outcome::Fits } else { breakdown::Outcome::OutOfMemory };
        spill.by_component.clear();
    }
    let offloaded = if s.parallel.offload == crate::model::inputs::Offload::None { 0.0 } else { plan.trainable_params / s.parallel.world_size() as f64 };
    let (mut step_time, ctx) = step_time::priced_step_time(s, tensors, &mut spill, at_peak, offloaded, plan.activation_host);
    if plan.serving.is_none() {
        spill.by_platform = spill::other_platforms(at_peak, s.device, s.runtime, s.training, plan.paged, host, &ctx);
    }
    let mut serving = plan.serving.clone();
    if let Some(report) = serving.as_mut() {
        serving_speed(s, tensors, at_peak, report, &mut step_time);
    }
    Totals { trainable_params: to_bytes(plan.trainable_params), host_bytes: to_bytes(plan.host), stage: plan.stage, step_time, spill, phases, serving }
}

/// An engine's decode and prefill speed at the concurrency its cache allows (`serving/speed.rs`),
/// which is also the inference step time the page shows.
fn serving_speed(s: &Inputs, tensors: &Tensors, at_peak: &PhaseTotals, report: &mut serving::ServingReport, step_time: &mut breakdown::StepTime) {
    let model_parallel = s.parallel.tp.max(1) as f64 * s.parallel.pp.max(1) as f64;
    let mut context = s.training.clone();
    context.seq_len = report.max_model_len;
    let flops_per_token = step_time::forward_flops_per_token(s.arch, tensors, &Inputs { training: &context, ..*s }) / model_parallel;
    let per_sequence = if report.kv_cache_tokens > 0 { report.kv_cache_bytes as f64 / report.kv_cache_tokens as f64 * report.max_model_len as f64 } else { 0.0 };
    let inputs = serving::speed::SpeedInputs {
        weights_bytes: at_peak.parameters as f64,
        kv_bytes_per_sequence: per_sequence,
        flops_per_token,
        hbm_bandwidth: s.device.hbm_bandwidth,
        flops_per_second: s.device.bf16_tflops * 1e12 * step_time::UTILISATION,
        requested: s.training.micro_batch,
    };
    serving::speed::fill(report, &inputs);
    if report.starts() {
        step_time.decode_seconds_per_token = report.decode_step_seconds;
        step_time.prefill_seconds = report.time_to_first_token_seconds;
        step_time.seconds_with_spill = report.decode_step_seconds;
    }
}

/// A vision-language model's parameter count split into its tower, projector and language
/// model (`arch/tower.rs`); `None` without a tower.
fn part_counts(arch: &Architecture, tensors: &Tensors) -> Option<breakdown::PartCounts> {
    arch.transformer()?.tower.as_ref()?;
    let (mut tower, mut projector) = (0.0, 0.0);
    for t in tensors.list.iter().filter(|t| t.scope == arch::Scope::Tower) {
        if arch::tower::is_projector(t) {
            projector += t.numel();
        } else {
            tower += t.numel();
        }
    }
    Some(breakdown::PartCounts { vision_tower: to_bytes(tower), projector: to_bytes(projector), language_model: to_bytes(tensors.param_count - tower - projector) })
}

/// The breakdown: the totals with the named terms and the warnings.
fn finish(s: &Inputs, tensors: &Tensors, plan: StagePlan, totals: Totals) -> Breakdown {
    let arch = s.arch;
    let mut warnings = Vec::new();
    let StagePlan { ledger, tally, step, .. } = plan;
    let Totals { trainable_params, host_bytes, stage, step_time, spill, phases, serving } = totals;
    let PhaseTotals { parameters, gradients, optimizer_states, activations, temporary, overhead, total } = phases.at_peak().clone();
    let capacity = spill.capacity_bytes;
    let spill_bytes = total.saturating_sub(capacity);
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    if s.training.mode == Mode::Train {
        warnings.push(match phases.peak_phase {
            Phase::OptimizerStep if tally.save_counted => format!(
                "the peak is the checkpoint save: the full state dict gathered on the GPU after the optimizer step (the forward/backward peak is {:.1} GiB)",
                gib(phases.forward_backward.total)
            ),
            Phase::OptimizerStep => format!(
                "the peak is the optimizer step: activations are freed by then (the forward/backward peak is {:.1} GiB), and the optimizer's own buffers are counted instead",
                gib(phases.forward_backward.total)
            ),
            Phase::ForwardBackward if phases.forward_backward.gradients == 0 && phases.optimizer_step.gradients > 0 => format!(
                "the peak is the start of backward; gradients are not allocated yet (zero_grad(set_to_none=True) freed them); the optimizer step peaks at {:.1} GiB",
                gib(phases.optimizer_step.total)
            ),
            Phase::ForwardBackward => format!("the peak is the start of backward; the optimizer step peaks at {:.1} GiB", gib(phases.optimizer_step.total)),
            Phase::Load => format!(
                "the peak is loading the model, before the first step (the training step peaks at {:.1} GiB)",
                gib(phases.forward_backward.total.max(phases.optimizer_step.total))
            ),
        });
    }
    if let Some(tower) = arch.transformer().and_then(|t| t.tower.as_ref()) {
        let visual = s.training.visual();
        let (w, h) = visual.resolution.unwrap_or_else(|| tower.default_size());
        let (patches, tokens) = tower.tokens(w, h, visual.frames);
        let assumed = if visual.resolution.is_none() { " (training.resolution not set: the tower's default)" } else { "" };
        let reads = if tower.kind == arch::TowerKind::Mllama {
            // mllama's processor pads every image to max_num_tiles tiles (`mllama_vision.rs`).
            format!("{patches} tokens ({} tiles, padding tiles included, whatever the image's size) that the language model's cross-attention layers read as keys and values; training.seq_len holds one <|image|> token per image", tower.max_tiles)
        } else {
            format!("{patches} patches in the vision tower and {tokens} tokens in the language model, after the text's training.seq_len")
        };
        warnings.push(format!("vision input: {} image(s) per sample of {w} × {h} px{assumed}, each {reads}", visual.images));
    }
    warnings.extend(arch.transformer().and_then(|t| t.hybrid.as_ref()).and_then(|hy| mixer_notes::kernel_or_pool_note(s.training, hy)));
    warnings.extend(lora_notes::lora_notes(s.training, arch, &tensors.list));
    warnings.extend(mixer_notes::mixer_notes(s.training, arch));
    if let Architecture::Transformer(t) = arch {
        // Gemma 4's two cache shapes and Gemma 3n's and 4's shared-KV layers in an engine's
        // paged cache (`serving/kv.rs`): the bytes are the model's, the grouping is not.
        let kinds = t.attention.full_layers.is_some() || t.per_layer.as_ref().is_some_and(|pl| pl.kv_shared_layers > 0);
        if s.training.mode == Mode::Inference && s.training.serving.engine != inputs::Engine::Transformers && kinds {
            warnings.push(format!(
                "approximate: {}'s paged KV cache holds this model's bytes per token (each attention kind's head width and KV heads, no cache in shared-KV layers), but how the engine groups layers of different page sizes into blocks is not modelled",
                s.training.serving.engine.name()
            ));
        }
        let max_positions = t.embedding.max_positions;
        if max_positions > 0 && s.training.seq_len > max_positions && t.stack != arch::Stack::Vision {
            warnings.push(format!(
                "training.seq_len: {} tokens exceed the model's {} learned positions; transformers would fail to index them (memory is still estimated for {} tokens)",
                s.training.seq_len, max_positions, s.training.seq_len
            ));
        }
    }
    let (terms, uncounted_transients) = ledger.into_terms();
    Breakdown {
        parameters,
        gradients,
        optimizer_states,
        activations,
        temporary,
        overhead,
        total,
        param_count: to_bytes(tensors.param_count),
        param_count_by_part: part_counts(arch, tensors),
        trainable_params,
        capacity,
        fits: spill_bytes == 0 && serving.as_ref().is_none_or(|r| r.starts()),
        spill_bytes,
        host_bytes,
        gpus: s.parallel.world_size(),
        stage,
        step_time,
        spill,
        phases,
        terms,
        uncounted_transients,
        step,
        serving,
        warnings,
    }
}
