//! Communication volume per GPU per optimizer step, against the papers' counts, computed by
//! hand for Llama-3-8B (Ψ = 8,030,261,248 parameters; h = 4096, L = 32, 8 KV heads of 128).
//!
//! - Data parallel: a ring all-reduce sends 2(N − 1)/N of the buffer per rank (Patarasuk &
//!   Yuan 2009); the ZeRO paper counts it as 2Ψ per step for plain data parallelism and for
//!   ZeRO-1/2 (reduce-scatter + all-gather), 3Ψ for ZeRO-3 (Rajbhandari et al. 2020, §7.1,
//!   §7.2.1, §7.2.2). The buffer is the gradients in the dtype they are kept in.
//! - Tensor parallel: per block, two all-reduces of b·s·h in forward and two in backward
//!   (Shoeybi et al. 2019, §3 and Figure 4: "4 total communication operations"), plus one for
//!   the vocab-parallel input embedding (g) and one for the output layer's input (f in
//!   backward), also §3.
//! - Pipeline parallel: a stage sends each micro-batch's b·s·h activations forward and receives
//!   their gradients, sending its own input gradients back (Narayanan et al. 2021, §2.2), split
//!   over the t tensor-parallel ranks (§4.1, scatter/gather).
//! - Context parallel: ring attention passes each rank's K and V block around the cp ranks,
//!   cp − 1 sends per layer in forward (Liu et al. 2023, §3 and Algorithm 1); in backward the
//!   K/V blocks and their gradients circulate together (Transformer Engine
//!   `AttnFuncWithCPAndKVP2P.backward`: K/V at the first step, K/V + dK/dV in between, dK/dV
//!   at the last), twice the forward's bytes.

use headroom::model::communication::{communication, Communication};
use headroom::model::Inputs;
use headroom::plan::escalation::costs;
use headroom::{estimate, Scenario};

const PSI: f64 = 8_030_261_248.0;
const H: f64 = 4096.0;
const LAYERS: f64 = 32.0;
/// K and V widths per token: 8 KV heads × 128 each.
const KV: f64 = 2.0 * 8.0 * 128.0;
/// 16-bit activations and gradients.
const HALF: f64 = 2.0;

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("{json}: {e}")).scenario
}

/// Per-step bytes of one GPU as the strategy views report them (`escalation::costs`).
fn step_bytes(json: &str) -> f64 {
    let s = scenario(json);
    costs(&s, &estimate(&s)).communication_bytes
}

/// The collectives of one GPU for this layout, the gradient count being the whole model's
/// share of a tensor- and pipeline-parallel rank (what `costs` passes).
fn volumes(json: &str) -> Communication {
    let s = scenario(json);
    let arch = s.model.architecture().expect("known model");
    let (device, _) = s.device.resolve_or_default();
    let inputs = Inputs { arch: &arch, training: &s.training, parallel: &s.parallel, device: &device, runtime: &s.runtime };
    communication(&inputs, PSI / (s.parallel.tp.max(1) * s.parallel.pp.max(1)) as f64)
}

fn ring(n: f64) -> f64 {
    2.0 * (n - 1.0) / n
}

fn assert_close(got: f64, expected: f64, what: &str) {
    assert!((got - expected).abs() <= 1e-9 * expected.abs().max(1.0), "{what}: {got:.0} B vs {expected:.0} B (ratio {:.4})", got / expected);
}

/// ZeRO §7: over N = 8 ranks the all-reduce moves 2·(7/8)·Ψ gradient elements per rank for
/// plain data parallelism and ZeRO-1/2, and ZeRO-3 adds an all-gather of the 16-bit weights
/// in backward: 3·(7/8)·Ψ. The element width is the gradients' own: fp32 for fp32 training
/// and for autocast without ZeRO (the fp32 parameters get fp32 `.grad`s, which DDP all-reduces
/// bucket by bucket unless a compression hook is registered), 16-bit with ZeRO's 16-bit
/// gradients (ZeRO §3.1) and for pure bf16.
#[test]
fn data_parallel_volume_follows_the_zero_paper() {
    let cases = [
        (r#""precision": "bf16-mixed""#, 0, 2.0, 4.0),
        (r#""precision": "fp32""#, 0, 2.0, 4.0),
        (r#""precision": "bf16""#, 0, 2.0, HALF),
        (r#""precision": "bf16-mixed""#, 1, 2.0, HALF),
        (r#""precision": "bf16-mixed""#, 2, 2.0, HALF),
        (r#""precision": "bf16-mixed""#, 3, 3.0, HALF),
        (r#""precision": "fp32""#, 3, 3.0, 4.0),
    ];
    for (precision, zero, psis, width) in cases {
        let json = format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{{precision}, "seq_len": 1024}}, "parallel": {{"dp": 8, "zero": {zero}}}}}"#);
        let expected = psis * (7.0 / 8.0) * PSI * width;
        assert_close(step_bytes(&json), expected, &format!("{precision}, ZeRO-{zero}"));
    }
}

/// The all-reduce's ring factor: 2(N − 1)/N of the buffer, so two ranks send one buffer and
/// many ranks approach two (ZeRO-2, 16-bit gradients).
#[test]
fn data_parallel_volume_has_the_ring_factor() {
    for n in [2u64, 4, 64, 1024] {
        let json = format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 1024}}, "parallel": {{"dp": {n}, "zero": 2}}}}"#);
        assert_close(step_bytes(&json), ring(n as f64) * PSI * HALF, &format!("N = {n}"));
    }
}

/// Megatron's distributed optimizer reduces gradients over the data- and context-parallel
/// ranks together: dp = 2 × cp = 4 moves what dp = 8 moves.
#[test]
fn context_parallel_ranks_join_the_gradient_reduction() {
    let c = volumes(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 8192}, "parallel": {"dp": 2, "cp": 4, "zero": 1}}"#);
    assert_close(c.data_parallel_bytes, ring(8.0) * PSI * HALF, "dp 2 × cp 4");
}

/// Shoeybi §3: 4 all-reduces of b·s·h per block per micro-batch, plus the embedding's and the
/// output layer's one each. t = 8, b = 1, s = 1024, m = 2: (4·32 + 2) × 2·(7/8) × 1024·4096·2 B
/// × 2. Sequence parallelism turns each all-reduce into a reduce-scatter and an all-gather
/// of the same total (Korthikanti et al. 2022, §4.2.2).
#[test]
fn tensor_parallel_volume_follows_megatron() {
    let bsh = 1024.0 * H * HALF;
    let expected = (4.0 * LAYERS + 2.0) * ring(8.0) * bsh * 2.0;
    for sp in [false, true] {
        let c = volumes(&format!(r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 1024, "grad_accum": 2}}, "parallel": {{"tp": 8, "sp": {sp}}}}}"#));
        assert_eq!(c.data_parallel_bytes, 0.0);
        assert_close(c.bytes_per_step, expected, &format!("tp 8, sp {sp}"));
    }
}

/// One block more adds exactly four all-reduces (Shoeybi §3, Figure 4): Llama-3-8B shapes with
/// 31 and 32 blocks, t = 4, b = 2, s = 512, m = 1.
#[test]
fn each_block_adds_four_tensor_parallel_all_reduces() {
    let with = |layers: u64| {
        volumes(&format!(r#"{{"model": {{"arch": {{"family": "transformer", "layers": {layers}}}}}, "training": {{"micro_batch": 2, "seq_len": 512}}, "parallel": {{"tp": 4}}}}"#))
            .bytes_per_step
    };
    assert_close(with(32) - with(31), 4.0 * ring(4.0) * 2.0 * 512.0 * H * HALF, "one block");
}

/// Narayanan §2.2 / §4.1: a middle stage sends b·s·h activations forward and b·s·h gradients
/// back per micro-batch, each tensor-parallel rank 1/t of them. p = 4, t = 1, m = 8, b = 1,
/// s = 1024: 2·8·1024·4096·2 B. With t = 2 the same stage also all-reduces for its 8 blocks
/// and one edge layer (the embedding on the first stage, the head on the last).
#[test]
fn pipeline_volume_is_one_activation_each_way_per_micro_batch() {
    let bsh = 1024.0 * H * HALF;
    let c = volumes(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 1024, "grad_accum": 8}, "parallel": {"pp": 4}}"#);
    assert_close(c.bytes_per_step, 2.0 * 8.0 * bsh, "pp 4");
    let c = volumes(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 1024, "grad_accum": 8}, "parallel": {"pp": 4, "tp": 2}}"#);
    let tensor = (4.0 * LAYERS / 4.0 + 1.0) * ring(2.0) * bsh * 8.0;
    assert_close(c.bytes_per_step, 2.0 * 8.0 * bsh / 2.0 + tensor, "pp 4 × tp 2");
}

/// Ring attention, cp = 4, s = 8192: each rank holds 2048 tokens, whose K and V (2 × 1024
/// wide, 16-bit) it passes on cp − 1 = 3 times per layer in forward, and K/V with dK/dV in
/// backward (twice that): 3 × 3 × 2048 × 2048 × 2 B per layer, × 32 layers. With t = 2 each
/// rank holds half the KV heads, and the blocks' all-reduces come on top for s/cp tokens.
#[test]
fn context_parallel_volume_passes_the_kv_blocks_around_the_ring() {
    let kv_block = 2048.0 * KV * HALF;
    let ring_attention = 3.0 * 3.0 * kv_block * LAYERS;
    let c = volumes(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 8192}, "parallel": {"cp": 4}}"#);
    assert_close(c.bytes_per_step - c.data_parallel_bytes, ring_attention, "cp 4");
    let c = volumes(r#"{"model": {"preset": "llama-3-8b"}, "training": {"seq_len": 8192}, "parallel": {"cp": 4, "tp": 2}}"#);
    let tensor = (4.0 * LAYERS + 2.0) * ring(2.0) * 2048.0 * H * HALF;
    assert_close(c.bytes_per_step - c.data_parallel_bytes, ring_attention / 2.0 + tensor, "cp 4 × tp 2");
}

/// Data-parallel traffic hides behind backward, whose gradients DDP all-reduces bucket by
/// bucket as they appear (Li et al. 2020, "PyTorch Distributed", §3.2.3); only what outlasts
/// backward is exposed. Backward is twice the forward (Kaplan et al. 2020, §2.1): 2F of a 3F
/// step; full recomputation runs its extra forward of the blocks, B, inside backward:
/// (2F + B) of 3F + B. Llama-3-8B in bf16-mixed on 8 L40S (32 GB/s PCIe between GPUs): DDP
/// moves 2·(7/8)·Ψ fp32 gradients, 1.76 s, longer than either backward.
#[test]
fn data_parallel_time_hides_behind_backward() {
    let (v, l, s) = (128_256.0, LAYERS, 1024.0);
    let forward = 2.0 * (PSI - v * H) + 2.0 * l * s * H;
    let blocks = 2.0 * (PSI - 2.0 * v * H - H) + 2.0 * l * s * H;
    let dp_seconds = 2.0 * (7.0 / 8.0) * PSI * 4.0 / 32e9;
    for (checkpointing, backward_share) in [("none", 2.0 / 3.0), ("full", (2.0 * forward + blocks) / (3.0 * forward + blocks))] {
        let sc = scenario(&format!(
            r#"{{"model": {{"preset": "llama-3-8b"}}, "training": {{"seq_len": 1024, "checkpointing": "{checkpointing}"}}, "parallel": {{"dp": 8}}, "device": {{"preset": "l40s-48gb"}}}}"#
        ));
        let b = estimate(&sc);
        let compute = b.step_time.seconds;
        assert!(dp_seconds > compute * backward_share, "{checkpointing}: the case must expose some traffic");
        let got = costs(&sc, &b).communication_seconds;
        assert_close(got, dp_seconds - compute * backward_share, checkpointing);
    }
}
