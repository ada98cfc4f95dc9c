//! The layout search's fast path gives the numbers of the full estimate, to the bit: for
//! hundreds of scenarios (pseudo-random over every switch the model has, and every layout
//! the search tries of a few bases at several micro-batches), `Resolved::totals` (the
//! model and device resolved once, the architecture's tensors built once, model states
//! handed from one estimate to the next, no named terms or warnings) equals
//! `headroom::estimate` field by field, and `Resolved::costs` equals
//! `escalation::costs` of the full breakdown. The search's ranked output against a search
//! that uses only the full path is checked in `plan::search`'s tests
//! (`the_fast_search_ranks_exactly_as_the_reference`).

use std::collections::HashMap;

use headroom::estimate;
use headroom::model::breakdown::{Breakdown, Totals};
use headroom::model::precision::Precision;
use headroom::plan::escalation::costs;
use headroom::plan::resolved::Resolved;
use headroom::plan::search::layouts;
use headroom::scenario::{
    Attention, Checkpointing, DeviceSpec, Frozen, Lora, LoraBase, Loss, Mode, ModelSpec, Offload, Optimizer, Platform, PpSchedule, Scenario, Zero, Zero3Impl,
};

const MODELS: [&str; 10] =
    ["llama-3-8b", "llama-3-70b", "gpt2", "mixtral-8x7b", "bert-base", "t5-small", "vit-base-16", "resnet-50", "deepseek-ai/DeepSeek-V3", "google/gemma-2-9b"];
const DEVICES: [&str; 5] = ["h100-sxm-80gb", "a100-40gb", "rtx-4090-24gb", "a100-80gb-mig-3g.40gb", "gh200-96gb"];

/// splitmix64: a fixed sequence, so a failure names a scenario that can be run again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn random_scenario(rng: &mut Rng) -> Scenario {
    let mut s = Scenario { model: ModelSpec::Preset(rng.pick(&MODELS).into()), ..Scenario::default() };
    s.device = DeviceSpec::preset(rng.pick(&DEVICES));
    let t = &mut s.training;
    t.micro_batch = rng.pick(&[1, 2, 3, 8, 64]);
    t.seq_len = rng.pick(&[128, 1000, 4096, 32_768, 131_072]);
    t.grad_accum = rng.pick(&[1, 2, 8, 512]);
    t.precision = rng.pick(&Precision::ALL);
    t.optimizer = rng.pick(&Optimizer::ALL);
    t.checkpointing = rng.pick(&[Checkpointing::None, Checkpointing::Selective, Checkpointing::Full]);
    t.attention = rng.pick(&[Attention::Eager, Attention::Sdpa, Attention::Flash]);
    t.dropout = rng.pick(&[0.0, 0.1]);
    if rng.chance(20) {
        t.lora = Some(Lora {
            rank: rng.pick(&[8, 64]),
            base: rng.pick(&[LoraBase::Bf16, LoraBase::Nf4]),
            dropout: rng.pick(&[0.0, 0.05]),
            fp32_unquantised: rng.chance(50),
            ..Lora::default()
        });
    }
    if rng.chance(10) {
        t.frozen = Frozen { embeddings: rng.chance(50), layers: rng.pick(&[1, 4]), ..Frozen::default() };
    }
    if rng.chance(10) {
        t.mode = Mode::Inference;
    }
    if rng.chance(30) {
        t.techniques.loss = rng.pick(&[Loss::Standard, Loss::Chunked, Loss::FusedLinear]);
        t.techniques.optimizer_in_backward = rng.chance(30);
        t.techniques.activation_offload = rng.chance(30);
        t.techniques.liger_kernels = rng.chance(30);
        t.techniques.compile = rng.chance(30);
    }
    let p = &mut s.parallel;
    p.dp = rng.pick(&[1, 2, 8, 64]);
    p.tp = rng.pick(&[1, 2, 8]);
    p.sp = p.tp > 1 && rng.chance(70);
    p.pp = rng.pick(&[1, 2, 4]);
    p.cp = rng.pick(&[1, 1, 2]);
    p.ep = rng.pick(&[1, 8]);
    p.zero = rng.pick(&Zero::ALL);
    p.zero3_impl = rng.pick(&[Zero3Impl::Fsdp2, Zero3Impl::Deepspeed]);
    p.fsdp_reshard_after_forward = rng.chance(70);
    p.offload = rng.pick(&[Offload::None, Offload::Optimizer, Offload::OptimizerAndParams]);
    p.pp_schedule = rng.pick(&[PpSchedule::OneFOneB, PpSchedule::Interleaved, PpSchedule::Gpipe]);
    p.virtual_stages = rng.pick(&[1, 2]);
    p.full_state_dict_on_save = rng.chance(20);
    let r = &mut s.runtime;
    r.platform = rng.pick(&Platform::ALL);
    r.memory_fraction = rng.pick(&[1.0, 1.0, 0.5]);
    r.other_processes_bytes = rng.pick(&[0, 0, 4 << 30]);
    r.expandable_segments = rng.chance(20);
    s
}

/// Every field of the breakdown that the totals carry, bit for bit (through `Debug`, which
/// writes each f64 exactly and tells -0.0 from 0.0).
fn assert_totals_match(s: &Scenario, t: &Totals, b: &Breakdown) {
    let what = || serde_json::to_string(s).unwrap();
    assert_eq!(format!("{:?}", t.phases), format!("{:?}", b.phases), "phases: {}", what());
    assert_eq!(format!("{:?}", t.spill), format!("{:?}", b.spill), "spill: {}", what());
    assert_eq!(format!("{:?}", t.step_time), format!("{:?}", b.step_time), "step time: {}", what());
    assert_eq!((t.total(), t.capacity(), t.fits()), (b.total, b.capacity, b.fits), "verdict: {}", what());
    assert_eq!((t.trainable_params, t.host_bytes, t.stage), (b.trainable_params, b.host_bytes, b.stage), "{}", what());
}

fn assert_fast_path_matches(s: &Scenario, resolved: &Resolved) {
    let full = estimate(s);
    let totals = resolved.totals(s).expect("a known model");
    assert_totals_match(s, &totals, &full);
    assert_eq!(format!("{:?}", resolved.costs(s, &totals)), format!("{:?}", costs(s, &full)), "costs: {}", serde_json::to_string(s).unwrap());
}

/// `s` with one switch changed: the next estimate of a search, or of a user.
fn sibling(s: &Scenario, rng: &mut Rng) -> Scenario {
    let mut s = s.clone();
    let other = random_scenario(rng);
    match rng.next() % 12 {
        0 => s.training.micro_batch = other.training.micro_batch,
        1 => s.training.grad_accum = other.training.grad_accum,
        2 => s.training.checkpointing = other.training.checkpointing,
        3 => s.training.precision = other.training.precision,
        4 => s.training.optimizer = other.training.optimizer,
        5 => s.training.frozen = other.training.frozen,
        6 => s.training.lora = other.training.lora,
        7 => s.training.techniques = other.training.techniques,
        8 => s.parallel.offload = other.parallel.offload,
        9 => s.parallel.zero = other.parallel.zero,
        10 => s.parallel.dp = other.parallel.dp,
        _ => s.runtime = other.runtime,
    }
    s
}

/// One `Resolved` per model and device, as a search holds one, and each random scenario
/// followed by siblings that differ in one switch, so that most model states come from an
/// earlier estimate's (`model::reuse`): an input they depend on that the reuse did not
/// tell apart would show here.
#[test]
fn totals_equal_the_full_estimate_on_random_scenarios() {
    let mut rng = Rng(13);
    let mut resolved: HashMap<(String, Option<String>), Resolved> = HashMap::new();
    let mut fitting = 0;
    for _ in 0..600 {
        let s = random_scenario(&mut rng);
        let r = resolved.entry((s.model.label(), s.device.preset.clone())).or_insert_with(|| Resolved::new(&s));
        assert_fast_path_matches(&s, r);
        for _ in 0..4 {
            assert_fast_path_matches(&sibling(&s, &mut rng), r);
        }
        fitting += estimate(&s).fits as u32;
    }
    assert!((100..500).contains(&fitting), "both verdicts are covered: {fitting} of 600 fit");
}

/// Exactly what a search estimates: every layout of a base, each at several micro-batches
/// with and without accumulation, against the totals of the base's one `Resolved`.
#[test]
fn totals_equal_the_full_estimate_on_every_layout_the_search_tries() {
    for (model, seq, gpus) in [("llama-3-8b", 4096, 64), ("llama-3-70b", 131_072, 512), ("mixtral-8x7b", 4096, 16), ("gpt2", 1024, 8)] {
        let mut base = Scenario { model: ModelSpec::Preset(model.into()), ..Scenario::default() };
        base.training.seq_len = seq;
        let resolved = Resolved::new(&base);
        for mut layout in layouts(&base, gpus) {
            for (micro_batch, grad_accum) in [(1, 1), (3, 1), (16, 1), (2, 8)] {
                layout.training.micro_batch = micro_batch;
                layout.training.grad_accum = grad_accum;
                assert_fast_path_matches(&layout, &resolved);
            }
        }
    }
}

#[test]
fn an_unknown_model_has_no_totals() {
    let s = Scenario { model: ModelSpec::Preset("no-such-model".into()), ..Scenario::default() };
    let resolved = Resolved::new(&s);
    assert!(resolved.totals(&s).is_none());
    let b = estimate(&s);
    assert!(!b.fits && b.total == 0 && b.capacity == 0, "the search treats both alike: nothing fits");
}
