//! What a fix or an applied layout changes, one phrase per setting: "micro-batch 4 → 1",
//! "accumulation 1 → 4", "global batch kept at 32", "ZeRO off → 2". The cheapest fix on the
//! Planner, the Strategy plan, the layout search's Apply and the exports all list them, so
//! no plan changes the batch (or anything else) without saying so.

use crate::labels::{checkpointing_label, fine_tuning_label, optimizer_label, precision_label};
use crate::model::inputs::{Loss, Offload, Zero};
use crate::scenario::Scenario;

use super::global_batch;

/// Each setting that differs from `before` to `after`, in the order a reader checks them
/// (the batch first, then the layout, then the training techniques), with the global batch
/// said kept or changed whenever micro-batch, accumulation or data parallelism moved.
pub fn changes(before: &Scenario, after: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    let (a, b) = (&before.training, &after.training);
    let (p, q) = (&before.parallel, &after.parallel);
    let mut number = |name: &str, x: u64, y: u64| {
        if x != y {
            out.push(format!("{name} {x} → {y}"));
        }
    };
    number("micro-batch", a.micro_batch, b.micro_batch);
    number("accumulation", a.grad_accum, b.grad_accum);
    number("dp", p.dp, q.dp);
    number("tp", p.tp, q.tp);
    number("pp", p.pp, q.pp);
    number("cp", p.cp, q.cp);
    number("ep", p.ep, q.ep);
    number("sequence", a.seq_len, b.seq_len);
    if (a.micro_batch, a.grad_accum, p.dp) != (b.micro_batch, b.grad_accum, q.dp) {
        let (g, h) = (global_batch(before), global_batch(after));
        out.push(if g == h { format!("global batch kept at {g}") } else { format!("global batch {g} → {h}") });
    }
    let mut text = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name} {x} → {y}"));
        }
    };
    text("ZeRO", zero(p.zero), zero(q.zero));
    text("offload", offload(p.offload).into(), offload(q.offload).into());
    text("sequence parallelism", on_off(p.sp && p.tp > 1).into(), on_off(q.sp && q.tp > 1).into());
    text("image side", a.image_size.map_or("default".into(), |s| format!("{s} px")), b.image_size.map_or("default".into(), |s| format!("{s} px")));
    text("precision", precision_label(a.precision).into(), precision_label(b.precision).into());
    text("optimizer", optimizer_label(a.optimizer).into(), optimizer_label(b.optimizer).into());
    text("checkpointing", checkpointing_label(a.checkpointing).into(), checkpointing_label(b.checkpointing).into());
    text("attention", id(&a.attention), id(&b.attention));
    text("fine-tuning", fine_tuning_label(a.lora.as_ref()), fine_tuning_label(b.lora.as_ref()));
    text("loss", loss(a.techniques.loss).into(), loss(b.techniques.loss).into());
    let (s, t) = (&a.techniques, &b.techniques);
    text("optimizer step in backward", on_off(s.optimizer_in_backward).into(), on_off(t.optimizer_in_backward).into());
    text("activation offloading", on_off(s.activation_offload).into(), on_off(t.activation_offload).into());
    text("weights", a.serving.weights.as_ref().map_or("as trained".into(), id), b.serving.weights.as_ref().map_or("as trained".into(), id));
    text("KV cache", a.serving.kv_cache.as_ref().map_or("as the weights".into(), id), b.serving.kv_cache.as_ref().map_or("as the weights".into(), id));
    // A diffusion pipeline's own settings.
    let size = |r: Option<[u64; 2]>| r.map_or("default".into(), |[w, h]| format!("{w} × {h} px"));
    text("picture", size(a.resolution), size(b.resolution));
    text("frames", a.frames.map_or("default".into(), |f| f.to_string()), b.frames.map_or("default".into(), |f| f.to_string()));
    let (d, e) = (&a.diffusion, &b.diffusion);
    text("cached latents", on_off(d.cache_latents).into(), on_off(e.cache_latents).into());
    text("cached prompt embeddings", on_off(d.cache_text_embeddings).into(), on_off(e.cache_text_embeddings).into());
    text("text encoders in host memory", on_off(d.offload_text_encoders).into(), on_off(e.offload_text_encoders).into());
    text("CPU offload", id(&d.offload), id(&e.offload));
    text("VAE tiling", on_off(d.vae_tiling).into(), on_off(e.vae_tiling).into());
    out
}

/// [`changes`] as one phrase: "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at
/// 32"; "no change" when there is none.
pub fn changes_text(before: &Scenario, after: &Scenario) -> String {
    let list = changes(before, after);
    if list.is_empty() {
        "no change".into()
    } else {
        list.join(", ")
    }
}

/// A setting's id as the scenario JSON writes it (`"flash"`, `"fp8"`).
fn id<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn zero(z: Zero) -> String {
    if z == Zero::Off {
        "off".into()
    } else {
        z.to_string()
    }
}

fn offload(o: Offload) -> &'static str {
    match o {
        Offload::None => "none",
        Offload::Optimizer => "optimizer",
        Offload::OptimizerAndParams => "optimizer and parameters",
    }
}

fn loss(l: Loss) -> &'static str {
    match l {
        Loss::Standard => "standard",
        Loss::Chunked => "chunked",
        Loss::FusedLinear => "fused linear",
        Loss::ChunkedNoUpcast => "chunked, no upcast",
    }
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Checkpointing;

    #[test]
    fn the_batch_trade_is_spelt_out() {
        let mut before = Scenario::default();
        before.training.micro_batch = 4;
        before.parallel.dp = 8;
        let mut after = before.clone();
        after.training.micro_batch = 1;
        after.training.grad_accum = 4;
        after.parallel.zero = Zero::Gradients;
        assert_eq!(changes_text(&before, &after), "micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2");
        after.parallel.dp = 4;
        after.training.checkpointing = Checkpointing::Full;
        assert_eq!(
            changes(&before, &after),
            ["micro-batch 4 → 1", "accumulation 1 → 4", "dp 8 → 4", "global batch 32 → 16", "ZeRO off → 2", "checkpointing none → full (every block)"]
        );
        assert_eq!(changes_text(&before, &before), "no change");
    }
}
