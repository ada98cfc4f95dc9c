//! The one-line verdict that sits above the chart: fits with some headroom, spills (where,
//! what, and the slowdown range), or runs out of memory — in words that name the mechanism
//! (and the host-memory ceiling, when that is what stops it); the same run on each platform
//! a GeForce or workstation card may run under ([`platform_outcomes`]); and why a spill costs
//! what it costs ([`spill_explanation`]).
//!
//! Pure text from a [`Breakdown`]; the page only picks a colour for each [`Verdict`] kind.

use crate::format::{self, Units};
use crate::model::breakdown::{Breakdown, HostCeiling, KernelClass, Outcome};
use crate::model::inputs::Platform;

/// Whether a plan fits, and the sentence that says so.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Fits, with this many bytes to spare.
    Fits { headroom: u64, text: String },
    /// Runs with part of its memory in host memory, this many times slower (a range).
    Spills { spill: u64, slowdown: [f64; 2], text: String },
    /// Does not run: CUDA (or a per-process cap) refuses the allocation.
    OutOfMemory { over: u64, text: String },
    /// Nothing to judge (no capacity: the model is unknown).
    Unknown { text: String },
}

impl Verdict {
    /// The sentence shown in the banner.
    pub fn text(&self) -> &str {
        match self {
            Verdict::Fits { text, .. } | Verdict::Spills { text, .. } | Verdict::OutOfMemory { text, .. } | Verdict::Unknown { text } => text,
        }
    }

    /// `fits`, `spills`, `oom` or `unknown`: a stable class name for styling and tests.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Fits { .. } => "fits",
            Verdict::Spills { .. } => "spills",
            Verdict::OutOfMemory { .. } => "oom",
            Verdict::Unknown { .. } => "unknown",
        }
    }
}

/// The outcome in two or three words ("fits", "spills", "out of memory"): the one wording of
/// the verdict the exports, the embed, Compare's tables and the strategy table share.
pub fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Fits => "fits",
        Outcome::Spills => "spills",
        Outcome::OutOfMemory => "out of memory",
    }
}

/// Where spilled memory goes, in words.
fn destination(platform: Platform) -> &'static str {
    match platform {
        Platform::WindowsFallback => "into shared GPU memory (Windows sysmem fallback)",
        Platform::Managed => "into host memory (CUDA managed memory, migrated on demand)",
        Platform::Offload => "to host memory (deliberate offload)",
        Platform::C2c => "into CPU memory over NVLink-C2C",
        // Linux spills nothing of its own: only a paged optimizer's managed states.
        Platform::Linux => "into host memory (the paged optimizer's states, CUDA managed memory)",
        _ => "into host memory",
    }
}

/// "2.3×", "12×", or "2.3–41×".
fn factor_range([low, high]: [f64; 2]) -> String {
    let one = |x: f64| {
        if !x.is_finite() {
            "∞".to_string()
        } else if x >= 10.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    if (high - low).abs() < 0.05 * low {
        format!("about {}×", one(low))
    } else {
        format!("{}–{}×", one(low), one(high))
    }
}

/// A serving engine's verdict: it starts and holds so many requests of the full context at
/// once, or it refuses to start, in its own words.
fn engine_verdict(b: &Breakdown, r: &crate::model::serving::ServingReport, units: Units) -> Verdict {
    let engine = r.engine.name();
    if let Some(error) = &r.error {
        let over = b.total.saturating_sub(b.capacity.min(r.ceiling()));
        return Verdict::OutOfMemory { over, text: format!("{engine} does not start: {error}") };
    }
    let headroom = b.capacity.saturating_sub(b.total);
    let served = match (r.requested, r.concurrency) {
        (0, _) | (_, 0) => String::new(),
        (asked, running) if running < asked => format!(" — {running} of the {asked} sequences asked run together, the rest queue"),
        (asked, _) => format!(" — all {asked} sequences asked run together"),
    };
    let text = format!(
        "{engine} starts: its KV cache holds {} tokens, {:.1} requests of {} tokens at once{served} ({} for the cache)",
        format::thousands(r.kv_cache_tokens),
        r.max_concurrency,
        format::thousands(r.max_model_len),
        format::bytes(r.kv_cache_bytes, units)
    );
    Verdict::Fits { headroom, text }
}

/// The banner sentence for a plan.
pub fn verdict(b: &Breakdown, units: Units) -> Verdict {
    if b.capacity == 0 {
        return Verdict::Unknown { text: "No estimate: choose a model".into() };
    }
    if let Some(r) = &b.serving {
        return engine_verdict(b, r, units);
    }
    let over = b.total.saturating_sub(b.capacity);
    match b.spill.outcome {
        Outcome::Fits => {
            let headroom = b.capacity.saturating_sub(b.total);
            Verdict::Fits { headroom, text: format!("Fits with {} headroom", format::bytes(headroom, units)) }
        }
        Outcome::Spills => {
            let what: Vec<String> = b.spill.by_component.iter().map(|(c, bytes)| format!("{} {}", c.label().to_ascii_lowercase(), format::bytes(*bytes, units))).collect();
            let slowdown = b.step_time.slowdown_range;
            let per = if b.step_time.decode_seconds_per_token > 0.0 { "per token" } else { "per step" };
            let text = format!("Spills {} {} — {} slower {per} ({})", format::bytes(over, units), destination(b.spill.platform), factor_range(slowdown), what.join(", "));
            Verdict::Spills { spill: over, slowdown, text }
        }
        Outcome::OutOfMemory if b.spill.past_ceiling => Verdict::OutOfMemory { over, text: b.spill.message.clone() },
        Outcome::OutOfMemory => {
            let why = match b.spill.platform {
                _ if b.spill.capped => "capped by the per-process memory fraction",
                Platform::WindowsNoFallback => "Windows, sysmem fallback off",
                _ => "Linux CUDA: torch.OutOfMemoryError",
            };
            let text =
                format!("Out of memory: needs {}, {} over the {} it can use ({why})", format::bytes(b.total, units), format::bytes(over, units), format::bytes(b.capacity, units));
            Verdict::OutOfMemory { over, text }
        }
    }
}

/// The line under the banner's sentence: the model's size, the GPU count and the step time
/// (or prefill and per-token time, or a generation's denoising step), the spill's slowdown
/// and what is kept in host memory, for the plan `b` of scenario `s`.
pub fn verdict_details(b: &Breakdown, s: &crate::scenario::Scenario, units: Units) -> String {
    let generation = s.training.mode == crate::scenario::Mode::Inference;
    // An engine serves the sequences its cache holds at once, not the whole batch.
    let batch = b.serving.as_ref().filter(|r| r.concurrency > 0).map_or(s.training.micro_batch.max(1), |r| r.concurrency);
    let gpus = if b.gpus == 1 { "1 GPU".to_string() } else { format!("{} GPUs", b.gpus) };
    let st = &b.step_time;
    let mut line = if st.decode_seconds_per_token > 0.0 {
        format!(
            "{} parameters · {gpus} · first token after ≈ {} (prefill) · then {} per token, {:.0} tokens/s for the batch of {}",
            format::count(b.param_count),
            format::seconds(st.prefill_seconds),
            format::seconds(st.decode_seconds_per_token),
            batch as f64 / st.decode_seconds_per_token,
            batch
        )
    } else if generation {
        // A diffusion pipeline's generation: one denoiser call per step.
        format!("{} parameters · {gpus} · denoising step ≈ {}", format::count(b.param_count), format::seconds(st.seconds))
    } else {
        format!("{} parameters ({} trainable) · {gpus} · step ≈ {}", format::count(b.param_count), format::count(b.trainable_params), format::seconds(st.seconds))
    };
    if b.spill.outcome == Outcome::Spills {
        let [low, high] = st.slowdown_range;
        let base = if st.decode_seconds_per_token > 0.0 { st.decode_seconds_per_token } else { st.seconds };
        line.push_str(&format!(", {}–{} with spill", format::seconds(base * low), format::seconds(base * high)));
    }
    if b.host_bytes > 0 {
        line.push_str(&format!(" · {} per GPU kept in host memory", format::bytes(b.host_bytes, units)));
    }
    line
}

/// A platform's name, as the side-by-side list shows it.
fn platform_name(platform: Platform) -> &'static str {
    match platform {
        Platform::Linux => "Linux",
        Platform::WindowsFallback => "Windows, sysmem fallback on",
        Platform::WindowsNoFallback => "Windows, sysmem fallback off",
        Platform::Managed => "CUDA managed memory",
        Platform::Offload => "deliberate offload",
        Platform::C2c => "NVLink-C2C",
        Platform::Auto => "auto",
    }
}

/// The same run on each platform the card may run under (GeForce and workstation cards on
/// `auto`), one line each: its verdict kind (`fits`, `spills`, `oom`), the platform's name and
/// what happens there; empty otherwise.
pub fn platform_outcomes(b: &Breakdown, units: Units) -> Vec<(&'static str, &'static str, String)> {
    let per = if b.step_time.decode_seconds_per_token > 0.0 { "per token" } else { "per step" };
    let over = format::bytes(b.total.saturating_sub(b.capacity), units);
    b.spill
        .by_platform
        .iter()
        .map(|p| {
            let name = platform_name(p.platform);
            match p.outcome {
                Outcome::Fits => ("fits", name, "fits".to_string()),
                Outcome::Spills => {
                    ("spills", name, format!("spills {} into {} — {} slower {per}", format::bytes(p.spill_bytes, units), spilled_to(p.platform), factor_range(p.slowdown_range)))
                }
                Outcome::OutOfMemory if p.message.contains("ceiling") => ("oom", name, p.message.replacen("Out of memory: ", "out of memory: ", 1)),
                Outcome::OutOfMemory => ("oom", name, format!("out of memory, {over} over the GPU (torch.OutOfMemoryError)")),
            }
        })
        .collect()
}

/// Where a platform puts what does not fit, in a few words.
fn spilled_to(platform: Platform) -> &'static str {
    match platform {
        Platform::WindowsFallback => "shared GPU memory",
        Platform::C2c => "CPU memory over NVLink-C2C",
        _ => "host memory",
    }
}

/// Why a spill costs what it costs: where it goes and the ceiling there, the hot and cold
/// bytes, then per component and kernel the bytes over the link per step, the link's
/// bandwidth, what the kernels' arithmetic hides and what stalls, and the time added; last,
/// what the two ends of the range assume. Empty unless the plan spills.
pub fn spill_explanation(b: &Breakdown, units: Units) -> Vec<String> {
    let s = &b.spill;
    if s.outcome != Outcome::Spills {
        return Vec::new();
    }
    let gb_s = s.link_bandwidth / 1e9;
    let per = if b.step_time.decode_seconds_per_token > 0.0 { "token" } else { "step" };
    let ceiling = match s.ceiling {
        HostCeiling::SharedGpuMemory => "shared GPU memory (half of the system RAM)",
        HostCeiling::HostMemory => "host memory (the RAM less the OS's share)",
        HostCeiling::PinnedMemory => "pinned host memory",
        HostCeiling::GraceMemory => "the Grace CPU's memory",
        HostCeiling::None => "host memory",
    };
    let mut lines =
        vec![format!("Room for it: {} of {ceiling}, {} of system RAM for this GPU.", format::bytes(s.host_ceiling_bytes, units), format::bytes(s.host_memory_bytes, units))];
    if s.hot_bytes + s.cold_bytes > 0 {
        lines.push(format!(
            "Hot (read every micro-batch): {}; cold (optimizer states, read once per step): {}.",
            format::bytes(s.hot_bytes, units),
            format::bytes(s.cold_bytes, units)
        ));
    }
    for c in &s.costs {
        let how = match c.kernel {
            KernelClass::Matmul if c.overlap_seconds > 0.0 => format!("matmuls hide up to {} behind their arithmetic", format::seconds(c.overlap_seconds)),
            KernelClass::Matmul => "each access waits for the link".to_string(),
            KernelClass::MemoryBound => "memory-bound: nothing hides it".to_string(),
        };
        let [low, high] = c.added_seconds;
        let added = if (high - low).abs() <= 0.05 * high.max(1e-12) { format::seconds(low) } else { format!("{}–{}", format::seconds(low), format::seconds(high)) };
        lines.push(format!(
            "{} {}: {} — {} per {per} over the link at {gb_s:.0} GB/s ({how}): +{added}.",
            c.component.label(),
            format::bytes(c.spilled_bytes, units),
            c.touched_by,
            format::bytes(c.link_bytes.min(u64::MAX as f64) as u64, units),
        ));
    }
    let base = if b.step_time.decode_seconds_per_token > 0.0 { b.step_time.decode_seconds_per_token } else { b.step_time.seconds };
    let [low, high] = b.step_time.slowdown_range;
    let ends = match s.platform {
        Platform::WindowsFallback => "low end: read in place over PCIe, matmuls overlapping; high end: VidMm paging every byte the step touches in and out (or, in place, matmuls re-reading a spilled operand for each 128-wide output tile)",
        Platform::Managed => "low end: pages migrated at the link's bandwidth; high end: thrashing at one 64 KiB fault per 50 µs",
        Platform::Linux => "low end: the update's prefetches stream the paged states; high end: migrated on fault",
        Platform::Offload => "low end: prefetches overlap the compute; high end: they do not",
        Platform::C2c => "low end: read in place over NVLink-C2C, matmuls overlapping; high end: nothing reused or hidden",
        _ => "",
    };
    lines.push(format!("The {per}: {} in GPU memory, {}–{} with the spill ({ends}).", format::seconds(base), format::seconds(base * low), format::seconds(base * high)));
    lines
}
