//! The one-line verdict that sits above the chart: fits with some headroom, or spills.
//!
//! Pure text from a [`Breakdown`]; the page only picks a colour for each [`Verdict`] kind.

use crate::format::{self, Units};
use crate::model::breakdown::Breakdown;

/// Whether a plan fits, and the sentence that says so.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Fits, with this many bytes to spare.
    Fits { headroom: u64, text: String },
    /// Does not fit: the spilled bytes and the estimated slowdown when a driver spills to
    /// host memory instead of failing.
    Spills { spill: u64, slowdown: f64, text: String },
    /// Nothing to judge (no capacity: the model is unknown).
    Unknown { text: String },
}

impl Verdict {
    /// The sentence shown in the banner.
    pub fn text(&self) -> &str {
        match self {
            Verdict::Fits { text, .. } | Verdict::Spills { text, .. } | Verdict::Unknown { text } => text,
        }
    }

    /// `fits`, `spills` or `unknown`: a stable class name for styling and tests.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Fits { .. } => "fits",
            Verdict::Spills { .. } => "spills",
            Verdict::Unknown { .. } => "unknown",
        }
    }
}

/// "Fits with 12.3 GiB headroom" or "Spills 9.61 GiB into shared memory — about 3.4× slower
/// (Windows sysmem fallback); out of memory on Linux".
pub fn verdict(b: &Breakdown, units: Units) -> Verdict {
    if b.capacity == 0 {
        return Verdict::Unknown { text: "No estimate: choose a model".into() };
    }
    if b.fits && b.spill_bytes == 0 {
        let headroom = b.capacity.saturating_sub(b.total);
        return Verdict::Fits { headroom, text: format!("Fits with {} headroom", format::bytes(headroom, units)) };
    }
    let spill = if b.spill_bytes > 0 { b.spill_bytes } else { b.total.saturating_sub(b.capacity) };
    let slowdown = b.step_time.slowdown;
    let factor = if !slowdown.is_finite() || slowdown <= 0.0 {
        "much".to_string()
    } else if slowdown >= 10.0 {
        format!("about {slowdown:.0}×")
    } else {
        format!("about {slowdown:.1}×")
    };
    let text = format!(
        "Spills {} into shared memory — {factor} slower (Windows sysmem fallback); out of memory on Linux",
        format::bytes(spill, units)
    );
    Verdict::Spills { spill, slowdown, text }
}
