//! `TrainingControls`: micro-batch, gradient accumulation, sequence length, precision,
//! optimizer, activation checkpointing and attention kernel.

use leptos::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::checkbox_field::CheckboxField;
use super::number_slider::NumberSlider;
use super::select_field::SelectField;
use super::state::{enum_from_id, enum_id, Planner};
use crate::labels::{optimizer_label, precision_label, CHECKPOINTING};
use crate::model::precision::Precision;
use crate::scenario::{Attention, Loss, Optimizer, Scenario};

const LOSS: [(Loss, &str); 3] =
    [(Loss::Standard, "standard (fp32 logits)"), (Loss::Chunked, "chunked cross-entropy"), (Loss::FusedLinear, "fused linear CE (Liger)")];

const ATTENTION: [(Attention, &str); 3] =
    [(Attention::Eager, "eager (materialised scores)"), (Attention::Sdpa, "SDPA"), (Attention::Flash, "FlashAttention-2")];

/// A select bound to one enum field of the scenario.
fn enum_select<T>(
    planner: Planner,
    label: &'static str,
    id: &'static str,
    field: &'static str,
    options: Vec<(T, &'static str)>,
    get: fn(&Scenario) -> T,
    set: fn(&mut Scenario, T),
) -> impl IntoView
where
    T: Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static,
{
    let current = planner.slice(get);
    let options = options.into_iter().map(|(v, l)| (enum_id(&v), l.to_string())).collect();
    view! {
        <SelectField
            label=label
            id=id
            field=field
            options=options
            value=Signal::derive(move || current.with(enum_id))
            on_change=move |v: String| {
                if let Some(x) = enum_from_id::<T>(&v) {
                    planner.set(|s| set(s, x));
                }
            }
        />
    }
}

/// The training fields users change most.
#[component]
pub fn TrainingControls() -> impl IntoView {
    let planner = Planner::get();
    let micro_batch = planner.slice(|s| s.training.micro_batch);
    let grad_accum = planner.slice(|s| s.training.grad_accum);
    let seq_len = planner.slice(|s| s.training.seq_len);
    let in_backward = planner.slice(|s| s.training.techniques.optimizer_in_backward);
    let offload = planner.slice(|s| s.training.techniques.activation_offload);
    view! {
        <fieldset class="group">
            <legend>"Training"</legend>
            <NumberSlider
                label="Micro-batch size"
                id="micro-batch"
                field="training.micro_batch"
                min=1
                max=1024
                log2=true
                value=micro_batch
                on_change=move |v| planner.set(|s| s.training.micro_batch = v)
            />
            <NumberSlider
                label="Gradient accumulation steps"
                id="grad-accum"
                field="training.grad_accum"
                min=1
                max=1024
                log2=true
                value=grad_accum
                on_change=move |v| planner.set(|s| s.training.grad_accum = v)
            />
            <NumberSlider
                label="Sequence length (tokens)"
                id="seq-len"
                field="training.seq_len"
                min=128
                max=1_048_576
                log2=true
                value=seq_len
                on_change=move |v| planner.set(|s| s.training.seq_len = v)
            />
            <div class="pair">
                {enum_select(
                    planner,
                    "Precision",
                    "precision",
                    "training.precision",
                    Precision::ALL.iter().map(|&p| (p, precision_label(p))).collect(),
                    |s| s.training.precision,
                    |s, v| s.training.precision = v,
                )}
                {enum_select(
                    planner,
                    "Optimizer",
                    "optimizer",
                    "training.optimizer",
                    Optimizer::ALL.iter().map(|&o| (o, optimizer_label(o))).collect(),
                    |s| s.training.optimizer,
                    |s, v| s.training.optimizer = v,
                )}
                {enum_select(
                    planner,
                    "Activation checkpointing",
                    "checkpointing",
                    "training.checkpointing",
                    CHECKPOINTING.to_vec(),
                    |s| s.training.checkpointing,
                    |s, v| s.training.checkpointing = v,
                )}
                {enum_select(
                    planner,
                    "Attention",
                    "attention",
                    "training.attention",
                    ATTENTION.to_vec(),
                    |s| s.training.attention,
                    |s, v| s.training.attention = v,
                )}
                {enum_select(
                    planner,
                    "Loss",
                    "loss",
                    "training.techniques.loss",
                    LOSS.to_vec(),
                    |s| s.training.techniques.loss,
                    |s, v| s.training.techniques.loss = v,
                )}
            </div>
            <CheckboxField label="Optimizer step in backward" id="optimizer-in-backward" field="training.techniques.optimizer_in_backward"
                value=in_backward on_change=move |on| planner.set(|s| s.training.techniques.optimizer_in_backward = on) />
            <CheckboxField label="Offload activations to host" id="activation-offload" field="training.techniques.activation_offload"
                value=offload on_change=move |on| planner.set(|s| s.training.techniques.activation_offload = on) />
        </fieldset>
    }
}
