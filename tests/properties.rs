//! Property tests over random scenarios: monotonicity of memory in batch and sequence,
//! model states never growing with ZeRO stage, TP or PP, JSON round trips, and lower bounds
//! every breakdown keeps (16-bit weights, each block's input — ZeRO §5, Korthikanti Table 2).

use headroom::import::presets::model_preset_ids;
use headroom::model::precision::Precision;
use headroom::scenario::DeviceSpec;
use headroom::scenario::{
    Attention, Checkpointing, Engine, KvCacheFormat, Loss, ModelSpec, Optimizer, Parallel, Platform, Runtime, Scenario, Serving, Techniques, WeightFormat, Zero,
};
use headroom::{estimate, url, Breakdown};
use proptest::prelude::*;

const MODELS: [&str; 6] = ["llama-3-8b", "gpt2", "mixtral-8x7b", "bert-base", "qwen2-0.5b", "llama-3.2-1b"];

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        0..MODELS.len(),
        1u64..64,
        7u32..14,
        prop::sample::select(Precision::ALL.to_vec()),
        prop::sample::select(Optimizer::ALL.to_vec()),
        prop::sample::select(vec![Checkpointing::None, Checkpointing::Selective, Checkpointing::Full]),
        prop::sample::select(vec![Attention::Eager, Attention::Sdpa, Attention::Flash]),
        (prop::sample::select(Zero::ALL.to_vec()), 1u64..9, prop::sample::select(vec!["h100-sxm-80gb", "a100-40gb", "rtx-4090-24gb", "a100-80gb-mig-3g.40gb"])),
    )
        .prop_map(|(m, batch, log_seq, precision, optimizer, checkpointing, attention, (zero, dp, device))| {
            let mut s = Scenario { model: ModelSpec::Preset(MODELS[m].into()), ..Scenario::default() };
            s.training.micro_batch = batch;
            s.training.seq_len = 1 << log_seq;
            s.training.precision = precision;
            s.training.optimizer = optimizer;
            s.training.checkpointing = checkpointing;
            s.training.attention = attention;
            s.parallel = Parallel { dp, zero, ..Parallel::default() };
            s.device = DeviceSpec::preset(device);
            s
        })
}

/// The switches the monotonicity properties leave alone: memory techniques, the runtime
/// (platform, GPU sharing, host RAM) and the serving engine's settings.
fn switches() -> impl Strategy<Value = (Techniques, Runtime, Serving)> {
    let techniques = (prop::sample::select(vec![Loss::Standard, Loss::Chunked, Loss::FusedLinear, Loss::ChunkedNoUpcast]), 1u64..64, any::<[bool; 6]>()).prop_map(
        |(loss, loss_chunks, [optimizer_in_backward, activation_offload, liger_kernels, compile, compile_loss, compile_model])| {
            let mut t = Techniques::default();
            (t.loss, t.loss_chunks, t.optimizer_in_backward, t.activation_offload) = (loss, loss_chunks, optimizer_in_backward, activation_offload);
            (t.liger_kernels, t.compile, t.compile_loss, t.compile_model) = (liger_kernels, compile, compile_loss, compile_model);
            t
        },
    );
    let runtime = (prop::sample::select(Platform::ALL.to_vec()), 1u32..=100, 0u64..(8 << 30), 1u64..8, any::<bool>(), prop::option::of(1u64..512)).prop_map(
        |(platform, percent, other_processes_bytes, jobs, expandable_segments, ram_gib)| Runtime {
            platform,
            memory_fraction: f64::from(percent) / 100.0,
            other_processes_bytes,
            jobs,
            expandable_segments,
            host_memory_bytes: ram_gib.map(|g| g << 30),
        },
    );
    let serving = (
        prop::sample::select(Engine::ALL.to_vec()),
        prop::option::of(prop::sample::select(WeightFormat::ALL.to_vec())),
        prop::option::of(prop::sample::select(vec![KvCacheFormat::Half, KvCacheFormat::Fp8])),
        (prop::option::of(1u32..=100), prop::option::of(1u32..=100)),
        (prop::option::of(1u64..131_072), prop::option::of(1u64..1024), prop::option::of(1u64..65_536), prop::option::of(1u64..256)),
        any::<[bool; 2]>(),
    )
        .prop_map(|(engine, weights, kv_cache, (gmu, mfs), (max_model_len, max_num_seqs, max_num_batched_tokens, block_size), [double_quant, enforce_eager])| Serving {
            engine,
            weights,
            kv_cache,
            double_quant,
            gpu_memory_utilization: gmu.map(|p| f64::from(p) / 100.0),
            mem_fraction_static: mfs.map(|p| f64::from(p) / 100.0),
            max_model_len,
            max_num_seqs,
            max_num_batched_tokens,
            enforce_eager,
            block_size,
        });
    (techniques, runtime, serving)
}

/// Model states as they stand in the optimizer step, where all three are allocated.
fn states(b: &Breakdown) -> u64 {
    let o = &b.phases.optimizer_step;
    o.parameters + o.gradients + o.optimizer_states
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn more_batch_never_lowers_memory(s in scenario(), extra in 1u64..32) {
        let mut bigger = s.clone();
        bigger.training.micro_batch += extra;
        prop_assert!(estimate(&bigger).total >= estimate(&s).total);
    }

    #[test]
    fn longer_sequence_never_lowers_memory(s in scenario()) {
        let mut longer = s.clone();
        longer.training.seq_len *= 2;
        prop_assert!(estimate(&longer).total >= estimate(&s).total);
    }

    #[test]
    fn higher_zero_stage_never_raises_model_states(s in scenario()) {
        for pair in Zero::ALL.windows(2) {
            let (zero, next) = (pair[0], pair[1]);
            let mut lo = s.clone();
            lo.parallel.zero = zero;
            let mut hi = s.clone();
            hi.parallel.zero = next;
            // ZeRO ≥ 1 switches mixed precision to 16-bit weights + fp32 master (same 16 B/param
            // for Adam), so compare from stage 1 on for the autocast modes.
            if zero == Zero::Off && s.training.precision.is_mixed() { continue; }
            prop_assert!(states(&estimate(&hi)) <= states(&estimate(&lo)), "zero {} -> {}", zero, next);
        }
    }

    #[test]
    fn more_tensor_or_pipeline_parallelism_never_raises_model_states(s in scenario(), tp_log in 0u32..3, pp in 1u64..5) {
        let mut base = s.clone();
        base.parallel.dp = 1;
        let mut split = base.clone();
        split.parallel.tp = 1 << tp_log;
        split.parallel.pp = pp;
        prop_assert!(states(&estimate(&split)) <= states(&estimate(&base)));
    }

    /// More data-parallel GPUs never raise per-GPU memory once the job is distributed. (Going
    /// from one GPU to two does: NCCL's buffers and DDP's gradient buckets appear.)
    #[test]
    fn more_gpus_never_raise_per_gpu_memory(s in scenario(), factor in 2u64..5) {
        let mut two = s.clone();
        two.parallel.dp = s.parallel.dp.max(2);
        let mut more = two.clone();
        more.parallel.dp *= factor;
        prop_assert!(estimate(&more).total <= estimate(&two).total);
    }

    #[test]
    fn json_round_trip_is_identity(s in scenario()) {
        let back = Scenario::from_json(&s.to_json()).map(|d| d.scenario);
        prop_assert_eq!(back, Ok(s));
    }

    #[test]
    fn url_round_trip_is_identity(s in scenario(), (techniques, runtime, serving) in switches()) {
        let mut s = s;
        s.training.techniques = techniques;
        s.runtime = runtime;
        s.training.serving = serving;
        let query = url::encode(&s);
        let (back, errors) = url::decode(&query);
        prop_assert!(errors.is_empty(), "{:?}", errors);
        prop_assert_eq!(back, s);
    }

    /// Lower bounds no plan may undercut, from the papers rather than the code: a training step
    /// keeps every weight in at least 16 bits, sharded only by ZeRO-3 (Rajbhandari et al. 2020,
    /// §5: P_os+g+p divides the 2Ψ of fp16 weights by N_d; nothing here offloads or
    /// quantises), and whatever the recomputation it keeps each block's input for backward,
    /// at least s·b·h 16-bit elements per block (Korthikanti et al. 2022, Table 2, full
    /// recomputation row: 2sbh bytes per layer). And a step takes a positive, finite time.
    #[test]
    fn every_plan_keeps_its_weights_and_block_inputs(s in scenario()) {
        let b = estimate(&s);
        let arch = s.model.architecture().expect("preset");
        let shards = if s.parallel.zero == Zero::Parameters { s.parallel.dp as f64 } else { 1.0 };
        let weights = 2.0 * arch.param_count() / shards;
        prop_assert!(b.phases.optimizer_step.parameters as f64 >= weights - 1.0, "{} < {weights}", b.phases.optimizer_step.parameters);
        let t = arch.transformer().expect("transformer presets");
        let inputs = 2.0 * (t.layers * s.training.micro_batch * s.training.seq_len * t.hidden) as f64;
        prop_assert!(b.phases.forward_backward.activations as f64 >= inputs, "{} < {inputs}", b.phases.forward_backward.activations);
        prop_assert!(b.step_time.seconds.is_finite() && b.step_time.seconds > 0.0);
    }

    #[test]
    fn checkpointing_never_raises_activations(s in scenario()) {
        let mut none = s.clone();
        none.training.checkpointing = Checkpointing::None;
        let mut full = s.clone();
        full.training.checkpointing = Checkpointing::Full;
        prop_assert!(estimate(&full).phases.forward_backward.activations <= estimate(&none).phases.forward_backward.activations);
    }
}

#[test]
fn absurd_inputs_stay_finite() {
    let mut s = Scenario::default();
    s.training.micro_batch = 100_000;
    s.training.seq_len = 10_000_000;
    s.training.attention = Attention::Eager;
    let b = estimate(&s);
    assert!(b.total > 0 && !b.fits);
    assert!(b.step_time.seconds.is_finite());
}

#[test]
fn preset_urls_stay_short() {
    for id in model_preset_ids() {
        let mut s = Scenario { model: ModelSpec::Preset(id.into()), ..Scenario::default() };
        s.training.micro_batch = 64;
        s.parallel = Parallel { dp: 64, tp: 8, pp: 4, sp: true, zero: Zero::Parameters, ..Parallel::default() };
        let q = url::encode(&s);
        assert!(q.len() < 2000, "{id}: {} characters", q.len());
    }
}

fn extreme_arch() -> impl Strategy<Value = headroom::model::arch::Architecture> {
    use headroom::model::arch::{Architecture, AttentionPart, MlpPart, MoePart, TransformerArch};
    (1u64..=24, 0u32..=24, 1u64..=16, 1u64..=16, 0u32..=24, 1u64..=64).prop_map(|(heads_log, layers_log, head_dim_log, kv_div, vocab_log, experts)| {
        let heads = 1 << (heads_log % 12);
        let head_dim = 1 << (head_dim_log % 12);
        let kv_heads = (heads / (1 << (kv_div % 4))).max(1);
        Architecture::Transformer(TransformerArch {
            hidden: (heads * head_dim).min(1 << 24),
            layers: 1 << layers_log,
            vocab: 1 << vocab_log,
            attention: AttentionPart { heads, kv_heads, head_dim, rotary_dim: head_dim, ..AttentionPart::default() },
            mlp: MlpPart { ffn: (4 * heads * head_dim).min(1 << 24), ..MlpPart::default() },
            moe: (experts > 1).then(|| MoePart { experts, top_k: experts.min(2), expert_ffn: (4 * heads * head_dim).min(1 << 24), ..MoePart::default() }),
            ..TransformerArch::default()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Issue 6: any accepted input — up to 2^24-wide layers, 2^24 layers, batch 10^6,
    /// sequence 10^8, huge parallel degrees — gives finite numbers and never panics.
    #[test]
    fn extreme_scenarios_stay_finite(
        arch in extreme_arch(),
        batch in 1u64..=1_000_000,
        seq in 1u64..=100_000_000,
        degrees in (1u64..=1_000_000, 1u64..=1_000_000, 1u64..=1_000_000, 1u64..=1_000_000),
        zero in prop::sample::select(Zero::ALL.to_vec()),
        inference in any::<bool>(),
    ) {
        let mut s = Scenario { model: ModelSpec::Arch(arch), ..Scenario::default() };
        s.training.micro_batch = batch;
        s.training.seq_len = seq;
        s.training.grad_accum = batch;
        s.training.attention = Attention::Eager;
        if inference { s.training.mode = headroom::scenario::Mode::Inference; }
        s.parallel = Parallel { dp: degrees.0, tp: degrees.1, pp: degrees.2, cp: degrees.3, zero, ..Parallel::default() };
        let _ = s.validate();
        let b = estimate(&s);
        for x in [b.step_time.seconds, b.step_time.seconds_with_spill, b.step_time.slowdown, b.step_time.tokens_per_second] {
            prop_assert!(x.is_finite() && x >= 0.0, "{:?}", b.step_time);
        }
    }
}
