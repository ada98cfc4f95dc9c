//! `ParallelControls`: data, tensor, pipeline, sequence, context and expert parallelism,
//! the ZeRO stage and CPU offload (with ZeRO-3: FSDP2 or DeepSpeed, resharding after forward,
//! a full state dict on save; with plain DDP: `gradient_as_bucket_view`), with the GPU count
//! they add up to.
//!
//! It is below the fold on load (under the chart on a phone, under the first control
//! groups on a laptop), so its code is in the `below_fold` WASM chunk, fetched once the
//! first chart has been painted ([`crate::ui::lazy_view`]); a box of about its size holds its
//! place until then.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use crate::enum_id::{enum_from_id, enum_id};
use crate::fields;
use crate::scenario::{Offload, Zero, Zero3Impl};
use crate::ui::fields::checkbox_field::CheckboxField;
use crate::ui::fields::field_error::FieldError;
use crate::ui::fields::number_slider::NumberSlider;
use crate::ui::fields::select_field::{enum_select, SelectField};
use crate::ui::lazy_view::{lazy_view_or, Build, Chunked};
use crate::ui::state::Planner;

const ZERO: [(&str, &str); 4] = [("0", "0 (off, DDP)"), ("1", "1 (optimizer)"), ("2", "2 (+ gradients)"), ("3", "3 / FSDP (+ params)")];

const OFFLOAD: [(Offload, &str); 3] = [(Offload::None, "none"), (Offload::Optimizer, "optimizer"), (Offload::OptimizerAndParams, "optimizer + params")];

/// The controls' builder, in the `below_fold` chunk.
#[wasm_split(below_fold, wasm_split_path = ::leptos::wasm_split, fallible)]
fn parallel_view() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <Controls /> }.into_any())
}
static CONTROLS: Chunked<Build> = Chunked::new();

/// The parallel layout controls, or their placeholder until the `below_fold` chunk has arrived.
#[component]
pub fn ParallelControls() -> impl IntoView {
    lazy_view_or(&CONTROLS, parallel_view, || view! { <fieldset class="group pending-part parallel" aria-busy="true"><legend>"Parallelism"</legend></fieldset> }.into_any())
}

/// The parallel layout controls.
#[component]
fn Controls() -> impl IntoView {
    let planner = Planner::get();
    let dp = planner.slice(|s| s.parallel.dp);
    let tp = planner.slice(|s| s.parallel.tp);
    let pp = planner.slice(|s| s.parallel.pp);
    let cp = planner.slice(|s| s.parallel.cp);
    let ep = planner.slice(|s| s.parallel.ep);
    let sp = planner.slice(|s| s.parallel.sp);
    let zero = planner.slice(|s| s.parallel.zero);
    let offload = planner.slice(|s| s.parallel.offload);
    let inference = planner.slice(|s| s.training.mode == crate::scenario::Mode::Inference);
    let stage3 = planner.slice(|s| s.parallel.zero == Zero::Parameters && s.training.mode != crate::scenario::Mode::Inference);
    let fsdp2 = planner.slice(|s| s.parallel.zero3_impl == Zero3Impl::Fsdp2);
    let reshard = planner.slice(|s| s.parallel.fsdp_reshard_after_forward);
    let full_state = planner.slice(|s| s.parallel.full_state_dict_on_save);
    // Plain DDP (data or context parallel, no ZeRO) in training: its bucket setting.
    let ddp = planner.slice(|s| s.parallel.dp.saturating_mul(s.parallel.cp) > 1 && s.parallel.zero == Zero::Off && s.training.mode != crate::scenario::Mode::Inference);
    let bucket_view = planner.slice(|s| s.parallel.gradient_as_bucket_view);
    let layout = planner.slice(|s| (s.parallel.dp, s.parallel.tp, s.parallel.pp, s.parallel.cp, s.parallel.world_size()));
    let gpu_count = move || {
        let (dp, tp, pp, cp, n) = layout.get();
        let plural = if n == 1 { "GPU" } else { "GPUs" };
        format!("dp × tp × pp × cp = {dp} × {tp} × {pp} × {cp} = {n} {plural}")
    };
    view! {
        <fieldset class="group">
            <legend>"Parallelism"</legend>
            <p class="gpu-count" id="gpu-count" aria-live="polite">{gpu_count}</p>
            <FieldError field="parallel" />
            <NumberSlider label=fields::label("parallel.dp") id="dp" field="parallel.dp" min=1 max=1024 log2=true value=dp
                on_change=move |v| planner.set(|s| s.parallel.dp = v) />
            <NumberSlider label=fields::label("parallel.tp") id="tp" field="parallel.tp" min=1 max=64 log2=true value=tp
                on_change=move |v| planner.set(|s| s.parallel.tp = v) />
            <NumberSlider label=fields::label("parallel.pp") id="pp" field="parallel.pp" min=1 max=128 log2=true value=pp
                on_change=move |v| planner.set(|s| s.parallel.pp = v) />
            <NumberSlider label=fields::label("parallel.cp") id="cp" field="parallel.cp" min=1 max=64 log2=true value=cp
                on_change=move |v| planner.set(|s| s.parallel.cp = v) />
            <NumberSlider label=fields::label("parallel.ep") id="ep" field="parallel.ep" min=1 max=64 log2=true value=ep
                on_change=move |v| planner.set(|s| s.parallel.ep = v) />
            <CheckboxField label=fields::label("parallel.sp") id="sp" field="parallel.sp" value=sp on_change=move |on| planner.set(|s| s.parallel.sp = on) />
            <div class="pair" hidden=move || inference.get()>
                <SelectField
                    label=fields::label("parallel.zero")
                    id="zero"
                    field="parallel.zero"
                    options=ZERO.iter().map(|(v, l)| (v.to_string(), l.to_string())).collect()
                    value=Signal::derive(move || zero.get().to_string())
                    on_change=move |v: String| {
                        if let Some(z) = v.parse::<u64>().ok().and_then(Zero::from_stage) {
                            planner.set(|s| s.parallel.zero = z);
                        }
                    }
                />
                <SelectField
                    label=fields::label("parallel.offload")
                    id="offload"
                    field="parallel.offload"
                    options=OFFLOAD.iter().map(|(v, l)| (enum_id(v), l.to_string())).collect()
                    value=Signal::derive(move || offload.with(enum_id))
                    on_change=move |v: String| {
                        if let Some(o) = enum_from_id::<Offload>(&v) {
                            planner.set(|s| s.parallel.offload = o);
                        }
                    }
                />
            </div>
            <div hidden=move || !ddp.get()>
                <CheckboxField label=fields::label("parallel.gradient_as_bucket_view") id="gradient-as-bucket-view" field="parallel.gradient_as_bucket_view"
                    value=bucket_view on_change=move |on| planner.set(|s| s.parallel.gradient_as_bucket_view = on) />
            </div>
            <div hidden=move || !stage3.get()>
                {enum_select(
                    planner,
                    fields::label("parallel.zero3_impl"),
                    "zero3-impl",
                    "parallel.zero3_impl",
                    vec![(Zero3Impl::Fsdp2, "PyTorch FSDP2"), (Zero3Impl::Deepspeed, "DeepSpeed ZeRO-3")],
                    |s| s.parallel.zero3_impl,
                    |s, v| s.parallel.zero3_impl = v,
                )}
                <div hidden=move || !fsdp2.get()>
                    <CheckboxField label=fields::label("parallel.fsdp_reshard_after_forward") id="reshard-after-forward" field="parallel.fsdp_reshard_after_forward"
                        value=reshard on_change=move |on| planner.set(|s| s.parallel.fsdp_reshard_after_forward = on) />
                </div>
                <CheckboxField label=fields::label("parallel.full_state_dict_on_save") id="full-state-dict" field="parallel.full_state_dict_on_save"
                    value=full_state on_change=move |on| planner.set(|s| s.parallel.full_state_dict_on_save = on) />
            </div>
        </fieldset>
    }
}
