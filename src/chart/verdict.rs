//! The one-line verdict that sits above the chart: fits with some headroom, spills (where,
//! what, and the slowdown range), or runs out of memory — in words that name the mechanism.
//!
//! Pure text from a [`Breakdown`]; the page only picks a colour for each [`Verdict`] kind.

use crate::format::{self, Units};
use crate::model::breakdown::{Breakdown, Outcome};
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
    let engine = crate::enum_id::enum_id(&r.engine);
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
