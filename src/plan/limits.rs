//! The Planner's limits: the largest micro-batch, the longest sequence (the largest image
//! side for vision models) and the fewest GPUs of the chosen type that fit the scenario,
//! each with the memory it leaves, so "what is the longest context that fits?" takes no
//! bisection by hand.
//!
//! Each is a search over the memory model, with the fits test of the verdict
//! (`Breakdown::fits`: the peak within the GPU's capacity), everything else as entered:
//!
//! - Memory grows monotonically with the micro-batch and with the sequence (a property test
//!   in `tests/properties.rs` checks the micro-batch; the sequence adds tokens to every
//!   saved tensor and to the KV cache), so the sizes that fit are a prefix: galloping
//!   (1, 2, 4, …) brackets the largest and bisection finds it, in about 2·log₂ of it
//!   estimates, each a [`Resolved::totals`] (no named terms).
//! - Sequences move in steps of 2·cp tokens under context parallelism (the load-balanced
//!   split needs them, `Scenario::validate`); image sides in steps of the ViT's patch (the
//!   patches of a side are `⌊side / patch⌋`, Dosovitskiy et al. 2021, §3.1, so sizes in
//!   between cost the same as the multiple below) or of ResNet's total stride of 32 (He et
//!   al. 2016, Table 1: 224 → 7).
//! - The fewest GPUs: the scenario laid out on n GPUs (its tp × pp × cp kept where they
//!   divide n, data parallelism around them, the global batch kept where n's data-parallel
//!   degree divides it) and the ladder a view starts from for n GPUs
//!   ([`Step::default_ladder`]) fit somewhere on it, less the steps that change what is
//!   trained or how it is computed (mixed or pure bf16, the 8-bit optimizer, LoRA and
//!   QLoRA): the question is how many GPUs *this* run needs, so only layout and memory
//!   placement may change (the batch split, checkpointing, the fused loss, sharding,
//!   pipelining, the optimizer step in backward, offloading). n runs over 1–8 (one server) and then
//!   whole servers of 8, doubling until a count fits, then bisecting down to the fewest;
//!   the plan at that count is the ladder's plan ([`escalate`]). More GPUs never need more
//!   memory per GPU along this ladder (every step shards over the budget it is given), so
//!   the first count found is the fewest; a test checks it against trying every count.

use serde_json::{json, Value};

use super::escalation::{apply, escalate, Plan, Step};
use super::resolved::Resolved;
use super::{headroom, split_global_batch};
use crate::model::arch::{Architecture, Stack};
use crate::model::breakdown::Totals;
use crate::scenario::{Scenario, LIMIT_BATCH, LIMIT_SEQ};

/// Most GPUs the fewest-GPUs search tries; beyond it `min_gpus` is `null`.
pub const MAX_GPUS: u64 = 4096;

/// GPUs in one server (DGX/HGX A100 and H100): above it, counts move in whole servers.
const SERVER: u64 = 8;

/// Largest image side tried (the scenario accepts no larger, `Scenario::validate`).
const MAX_IMAGE_SIDE: u64 = 65_536;

/// Most frames tried (the scenario accepts no more, `Scenario::validate`).
const MAX_FRAMES: u64 = 4096;

/// ResNet's total stride: 224-pixel images leave 7 × 7 features (He et al. 2016, Table 1).
const RESNET_STRIDE: u64 = 32;

/// One limit: the value and the bytes per GPU it leaves free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub value: u64,
    /// Capacity minus the peak at `value`, per GPU.
    pub memory_left: u64,
}

/// What the sequence limit is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Tokens per sequence (`training.seq_len`).
    Tokens,
    /// Image side in pixels (`training.image_size`), for vision models.
    ImageSide,
    /// A diffusion pipeline's picture width in pixels (`training.resolution`), its height
    /// following the entered aspect ratio.
    Resolution,
    /// A video pipeline's frames (`training.frames`).
    Frames,
}

impl Extent {
    /// `s` with this extent set to `value`.
    pub fn apply(self, s: &mut Scenario, value: u64) {
        match self {
            Extent::Tokens => s.training.seq_len = value,
            Extent::ImageSide => s.training.image_size = Some(value),
            Extent::Resolution => {
                let [w, h] = resolution(s);
                // The height keeps the entered aspect ratio, on the same pixel grid as the width.
                let step = pixel_step(s).max(1);
                let height = ((value as f64 * h as f64 / w.max(1) as f64 / step as f64).round() as u64).max(1) * step;
                s.training.resolution = Some([value, height]);
            }
            Extent::Frames => s.training.frames = Some(value),
        }
    }
}

/// A diffusion pipeline's entered (or default) `[width, height]`.
fn resolution(s: &Scenario) -> [u64; 2] {
    let default = match s.model.architecture().as_deref() {
        Some(Architecture::Diffusion(d)) => d.resolution,
        _ => [1024, 1024],
    };
    s.training.resolution.unwrap_or(default)
}

/// Pixels between sizes a diffusion pipeline's denoiser can take.
fn pixel_step(s: &Scenario) -> u64 {
    match s.model.architecture().as_deref() {
        Some(Architecture::Diffusion(d)) => d.denoiser.as_ref().map_or(d.vae_factor(), |den| den.pixel_step(d.vae_factor())),
        _ => 1,
    }
}

/// Frames between clip lengths a video pipeline takes (`1 + 4k` for a VAE compressing 4
/// frames into one latent frame after the first).
fn frame_step(s: &Scenario) -> u64 {
    match s.model.architecture().as_deref() {
        Some(Architecture::Diffusion(d)) => d.vae.as_ref().map_or(1, |v| v.temporal_factor()).max(1),
        _ => 1,
    }
}

/// The scenario's limits; `None` where nothing fits (not even one sequence, one token or
/// one patch, or no count of GPUs up to [`MAX_GPUS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub max_micro_batch: Option<Limit>,
    /// The longest sequence, or the largest image side ([`Limits::extent`]).
    pub max_extent: Option<Limit>,
    pub extent: Extent,
    /// The fewest GPUs and the ladder's plan on them.
    pub min_gpus: Option<(Limit, Box<Plan>)>,
}

impl Limits {
    /// The contract of the estimate's JSON: `{"max_micro_batch", "max_seq_len" (or
    /// "max_image_size" for vision models), "min_gpus"}`, each a number or `null`, and
    /// `memory_left_bytes` with the bytes per GPU each leaves.
    pub fn to_json(&self) -> Value {
        let extent_key = self.extent_key();
        let value = |l: Option<Limit>| l.map(|l| l.value);
        let left = |l: Option<Limit>| l.map(|l| l.memory_left);
        let gpus = self.min_gpus.as_ref().map(|(l, _)| *l);
        json!({
            "max_micro_batch": value(self.max_micro_batch),
            extent_key: value(self.max_extent),
            "min_gpus": value(gpus),
            "memory_left_bytes": {
                "max_micro_batch": left(self.max_micro_batch),
                extent_key: left(self.max_extent),
                "min_gpus": left(gpus),
            },
        })
    }

    /// `max_seq_len` or `max_image_size`.
    pub fn extent_key(&self) -> &'static str {
        match self.extent {
            Extent::Tokens => "max_seq_len",
            Extent::ImageSide => "max_image_size",
            Extent::Resolution => "max_resolution",
            Extent::Frames => "max_frames",
        }
    }
}

/// The limits of `s` (which should be valid: an unknown model has none).
pub fn limits(s: &Scenario) -> Limits {
    let resolved = Resolved::new(s);
    let arch = s.model.architecture();
    let (extent, step) = match arch.as_deref() {
        Some(Architecture::Transformer(t)) if t.stack == Stack::Vision => (Extent::ImageSide, t.vision.patch.max(1)),
        Some(Architecture::Resnet(_)) => (Extent::ImageSide, RESNET_STRIDE),
        Some(Architecture::Diffusion(d)) if d.frames > 1 => (Extent::Frames, frame_step(s)),
        Some(Architecture::Diffusion(_)) => (Extent::Resolution, pixel_step(s)),
        _ => (Extent::Tokens, if s.parallel.cp > 1 { s.parallel.cp.saturating_mul(2) } else { 1 }),
    };
    let max_micro_batch = largest(1, LIMIT_BATCH, |m| {
        let mut v = s.clone();
        v.training.micro_batch = m;
        resolved.totals(&v)
    });
    let top = match extent {
        Extent::Tokens => LIMIT_SEQ,
        Extent::ImageSide | Extent::Resolution => MAX_IMAGE_SIDE,
        Extent::Frames => MAX_FRAMES,
    };
    let max_extent = largest(step, top, |n| {
        let mut v = s.clone();
        extent.apply(&mut v, if extent == Extent::Frames { 1 + n - step } else { n });
        resolved.totals(&v)
    });
    // Frames come as 1 + k·step: the search runs over k·step.
    let max_extent = if extent == Extent::Frames && step > 1 { max_extent.map(|l| Limit { value: 1 + l.value - step, ..l }) } else { max_extent };
    Limits { max_micro_batch, max_extent, extent, min_gpus: min_gpus(s) }
}

/// Largest multiple of `step` up to `max` whose totals fit, with the bytes it leaves; `None`
/// when `step` itself does not (or the model is unknown). Gallops from `step` by doubling,
/// then bisects between the last size that fits and the first that does not.
fn largest(step: u64, max: u64, totals: impl Fn(u64) -> Option<Totals>) -> Option<Limit> {
    let step = step.max(1);
    let top = max / step;
    // A serving engine starts whatever the batch; the batch fits when the cache holds every
    // sequence asked at the full context at once.
    let serves_all = |t: &Totals| t.serving.as_ref().is_none_or(|r| r.requested as f64 <= r.max_concurrency);
    let fit = |k: u64| totals(k * step).filter(Totals::fits).filter(serves_all).map(|t| Limit { value: k * step, memory_left: t.capacity().saturating_sub(t.total()) });
    let mut best = fit(1)?;
    // Multiples k·step: `lo` fits, `hi` does not (or lies past the top).
    let (mut lo, mut hi) = (1u64, top.saturating_add(1));
    while lo < top {
        let next = lo.saturating_mul(2).min(top);
        match fit(next) {
            Some(l) => {
                best = l;
                lo = next;
            }
            None => {
                hi = next;
                break;
            }
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match fit(mid) {
            Some(l) => {
                best = l;
                lo = mid;
            }
            None => hi = mid,
        }
    }
    Some(best)
}

/// The GPU counts the fewest-GPUs search considers, in order: 1–8, then whole servers.
pub fn gpu_counts() -> impl Iterator<Item = u64> {
    (1..SERVER).chain((1..=MAX_GPUS / SERVER).map(|k| k * SERVER))
}

/// `s` laid out on `gpus` GPUs: its model-parallel degrees (tp × pp × cp) kept where they
/// divide `gpus`, else one GPU each; data parallelism over the rest, the global batch kept
/// where the new degree divides it (the micro-batch at most as entered, accumulation the
/// rest), else the micro-batch as entered on every replica.
pub fn laid_out(s: &Scenario, gpus: u64) -> Scenario {
    let mut n = s.clone();
    let global = super::global_batch(s);
    let p = &mut n.parallel;
    let mut model_parallel = p.tp.max(1).saturating_mul(p.pp.max(1)).saturating_mul(p.cp.max(1));
    if model_parallel > gpus || !gpus.is_multiple_of(model_parallel) {
        (p.tp, p.pp, p.cp, p.ep) = (1, 1, 1, 1);
        p.sp = false;
        model_parallel = 1;
    }
    p.dp = gpus / model_parallel;
    if p.ep > p.dp || !p.dp.is_multiple_of(p.ep.max(1)) {
        p.ep = 1;
    }
    let dp = p.dp;
    let micro = n.training.micro_batch;
    if !split_global_batch(&mut n.training, global, dp, micro) {
        n.training.grad_accum = s.training.grad_accum;
    }
    n
}

/// The ladder the fewest-GPUs search runs on `gpus` GPUs: the view's default less the steps
/// that change the model, its precision or its optimizer.
pub fn setup_keeping_ladder(gpus: u64) -> Vec<Step> {
    let changes_the_run = [Step::MixedPrecision, Step::PureBf16, Step::Optimizer8bit, Step::Lora, Step::Qlora];
    Step::default_ladder(gpus).iter().copied().filter(|s| !changes_the_run.contains(s)).collect()
}

/// Whether the ladder for `gpus` fits anywhere on `s` laid out on them: the start, or after
/// one of its steps (the test `escalate` uses for its first fit, without working out the
/// plan).
fn ladder_fits(resolved: &Resolved, s: &Scenario, gpus: u64) -> bool {
    let fits = |v: &Scenario| resolved.totals(v).is_some_and(|t| t.fits());
    let mut current = laid_out(s, gpus);
    if fits(&current) {
        return true;
    }
    for step in setup_keeping_ladder(gpus) {
        current = apply(step, &current, gpus).0;
        if fits(&current) {
            return true;
        }
    }
    false
}

/// The fewest GPUs (of [`gpu_counts`]) on which the ladder fits, with its plan there.
fn min_gpus(s: &Scenario) -> Option<(Limit, Box<Plan>)> {
    s.model.architecture()?;
    let resolved = Resolved::new(s);
    let counts: Vec<u64> = gpu_counts().collect();
    // Doubling over the counts' indices (1, 2, 4, 8, then 16, 24, 40, 72, … GPUs) until one
    // fits, then bisection between the last that did not and it.
    let (mut lo, mut i) = (0usize, 0usize);
    let mut hi = loop {
        if ladder_fits(&resolved, s, counts[i]) {
            break i;
        }
        lo = i + 1;
        if i == counts.len() - 1 {
            return None;
        }
        i = (i * 2 + 1).min(counts.len() - 1);
    };
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ladder_fits(&resolved, s, counts[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let gpus = counts[hi];
    let plan = escalate(&laid_out(s, gpus), &setup_keeping_ladder(gpus), gpus).plan?;
    let memory_left = headroom(&plan.result.breakdown);
    Some((Limit { value: gpus, memory_left }, Box::new(plan)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate;
    use crate::scenario::{DeviceSpec, Mode, ModelSpec};

    fn on(model: &str, device: &str) -> Scenario {
        Scenario { model: ModelSpec::Preset(model.into()), device: DeviceSpec::preset(device), ..Scenario::default() }
    }

    /// `s` with `f` applied, estimated in full (the page's and the CLI's estimate, not the
    /// search's totals).
    fn fits_with(s: &Scenario, f: impl FnOnce(&mut Scenario)) -> bool {
        let mut v = s.clone();
        f(&mut v);
        estimate(&v).fits
    }

    /// Checked against the brute-force definition: the estimate at the limit fits, one step
    /// past it does not, and the memory left is the estimate's.
    fn check_against_reference(s: &Scenario) -> Limits {
        let l = limits(s);
        match l.max_micro_batch {
            Some(m) => {
                let mut v = s.clone();
                v.training.micro_batch = m.value;
                let b = estimate(&v);
                assert!(b.fits, "micro-batch {} should fit", m.value);
                assert_eq!(m.memory_left, b.capacity - b.total);
                assert!(!fits_with(s, |v| v.training.micro_batch = m.value + 1), "micro-batch {} fits too", m.value + 1);
            }
            None => assert!(!fits_with(s, |v| v.training.micro_batch = 1), "micro-batch 1 fits"),
        }
        let step = if s.parallel.cp > 1 { 2 * s.parallel.cp } else { 1 };
        match (l.extent, l.max_extent) {
            (Extent::Tokens, Some(n)) => {
                assert!(fits_with(s, |v| v.training.seq_len = n.value), "{} tokens should fit", n.value);
                assert!(!fits_with(s, |v| v.training.seq_len = n.value + step), "{} tokens fit too", n.value + step);
                assert_eq!(n.value % step, 0);
            }
            (Extent::Tokens, None) => assert!(!fits_with(s, |v| v.training.seq_len = step)),
            (Extent::ImageSide, Some(n)) => {
                assert!(fits_with(s, |v| v.training.image_size = Some(n.value)));
                // Every side up to the next multiple of the step costs the same; the next
                // multiple does not fit.
                let patch = s.model.architecture().and_then(|a| a.transformer().map(|t| t.vision.patch)).unwrap_or(RESNET_STRIDE);
                assert!(!fits_with(s, |v| v.training.image_size = Some(n.value + patch)), "{} px fits too", n.value + patch);
            }
            (Extent::ImageSide, None) => {}
            (extent @ (Extent::Resolution | Extent::Frames), Some(n)) => {
                assert!(fits_with(s, |v| extent.apply(v, n.value)), "{} should fit", n.value);
                let next = n.value + if extent == Extent::Frames { frame_step(s) } else { pixel_step(s) };
                assert!(!fits_with(s, |v| extent.apply(v, next)), "{next} fits too");
            }
            (Extent::Resolution | Extent::Frames, None) => {}
        }
        l
    }

    #[test]
    fn limits_match_the_brute_force_reference() {
        let mut cases = vec![on("llama-3-8b", "h100-sxm-80gb"), on("gpt2", "rtx-4090-24gb"), on("meta-llama/Llama-3.2-1B", "a100-40gb"), on("Qwen/Qwen3-8B", "h200-141gb")];
        // LoRA on a consumer card, ZeRO-3 over eight GPUs, inference, context parallelism.
        let mut lora = on("llama-3-8b", "rtx-4090-24gb");
        lora.training.lora = Some(crate::scenario::Lora::default());
        lora.training.seq_len = 2048;
        cases.push(lora);
        let mut zero3 = on("llama-3-8b", "a100-80gb");
        zero3.parallel.dp = 8;
        zero3.parallel.zero = crate::scenario::Zero::Parameters;
        cases.push(zero3);
        let mut serve = on("llama-3-8b", "h100-sxm-80gb");
        serve.training.mode = Mode::Inference;
        cases.push(serve);
        let mut cp = on("llama-3-8b", "h100-sxm-80gb");
        cp.parallel.cp = 4;
        cp.training.seq_len = 65_536;
        cp.training.checkpointing = crate::scenario::Checkpointing::Full;
        cases.push(cp);
        for s in &cases {
            let l = check_against_reference(s);
            println!("{}: {:?}", s.model.label(), (l.max_micro_batch.map(|l| l.value), l.max_extent.map(|l| l.value), l.min_gpus.as_ref().map(|g| g.0.value)));
        }
        // The default scenario (Llama 3 8B, full fine-tuning, one H100) fits nothing: not even
        // one sequence of one token.
        let none = limits(&Scenario::default());
        assert_eq!((none.max_micro_batch, none.max_extent), (None, None));
        assert_eq!(none.to_json()["max_micro_batch"], Value::Null);
    }

    #[test]
    fn vision_models_answer_with_the_image_side() {
        for (model, step) in [("vit-base-16", 16), ("resnet-50", RESNET_STRIDE)] {
            let s = on(model, "rtx-4090-24gb");
            let l = check_against_reference(&s);
            assert_eq!(l.extent, Extent::ImageSide);
            let side = l.max_extent.expect("some image fits").value;
            assert_eq!(side % step, 0, "{model}: {side}");
            let json = l.to_json();
            assert!(json.get("max_seq_len").is_none() && json["max_image_size"] == side, "{json}");
        }
    }

    /// The user study's case: micro-batch 17 does not fit where 16 does, and the limit says
    /// 16 directly.
    #[test]
    fn the_largest_micro_batch_is_the_one_the_user_bisected_for() {
        // Find a setup whose limit is 16 (GPT-2 at some sequence length on a 24 GB card).
        let mut s = on("gpt2", "rtx-4090-24gb");
        s.training.seq_len = 1024;
        let m = limits(&s).max_micro_batch.expect("fits").value;
        assert!(m > 1);
        assert!(fits_with(&s, |v| v.training.micro_batch = m) && !fits_with(&s, |v| v.training.micro_batch = m + 1));
    }

    /// The fewest GPUs against trying every count in order, with the ladder's plan there.
    #[test]
    fn fewest_gpus_match_trying_every_count() {
        let mut mb4 = on("llama-3-8b", "a100-80gb");
        mb4.training.seq_len = 2048;
        mb4.training.micro_batch = 4;
        let mut big = on("llama-3-70b", "h100-sxm-80gb");
        big.training.seq_len = 8192;
        for s in [Scenario::default(), mb4, big, on("gpt2", "rtx-4090-24gb"), on("llama-3-8b", "rtx-4090-24gb")] {
            let found = min_gpus(&s).map(|(l, plan)| {
                assert!(plan.result.breakdown.fits);
                let (a, b) = (&s.training, &plan.result.scenario.training);
                assert_eq!((a.precision, a.optimizer, &a.lora), (b.precision, b.optimizer, &b.lora), "the run itself is kept");
                assert!(plan.result.scenario.parallel.world_size() <= l.value);
                assert_eq!(l.memory_left, headroom(&plan.result.breakdown));
                l.value
            });
            let resolved = Resolved::new(&s);
            let brute = gpu_counts().take_while(|&n| n <= 256).find(|&n| ladder_fits(&resolved, &s, n));
            assert_eq!(found.filter(|&n| n <= 256), brute, "{}", s.model.label());
            println!("{}: fewest GPUs {:?}", s.model.label(), found);
        }
    }

    #[test]
    fn nothing_up_to_4096_gpus_is_null() {
        // Llama 3.1 405B at a million tokens per sequence, full fine-tuning on 16 GB cards.
        let mut s = on("meta-llama/Llama-3.1-405B", "v100-16gb");
        s.training.seq_len = 1_048_576;
        let l = min_gpus(&s);
        assert!(l.is_none(), "{:?}", l.map(|l| l.0));
        assert!(!ladder_fits(&Resolved::new(&s), &s, MAX_GPUS));
    }

    #[test]
    fn laying_out_keeps_model_parallel_degrees_that_divide() {
        let mut s = on("llama-3-70b", "h100-sxm-80gb");
        s.parallel.tp = 4;
        s.training.micro_batch = 2;
        s.training.grad_accum = 8;
        let n = laid_out(&s, 16);
        assert_eq!((n.parallel.tp, n.parallel.dp), (4, 4));
        assert_eq!(crate::plan::global_batch(&n), 16);
        let n = laid_out(&s, 6);
        assert_eq!((n.parallel.tp, n.parallel.dp), (1, 6));
        let n = laid_out(&s, 2);
        assert_eq!((n.parallel.tp, n.parallel.dp, n.training.micro_batch, n.training.grad_accum), (1, 2, 2, 4));
    }
}
