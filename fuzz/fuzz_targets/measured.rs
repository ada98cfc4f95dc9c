//! Fuzz the measurement parsers (memory_summary() text, nvidia-smi CSV, measurement JSON) and
//! compare what they accept with a plan: nothing may panic, an error names a line of the input
//! in one line of text, and the comparison's quantities nest.
#![no_main]

use std::sync::OnceLock;

use headroom::measured::{compare, parse_measurement_bytes};
use libfuzzer_sys::fuzz_target;

fn plan() -> &'static headroom::Breakdown {
    static PLAN: OnceLock<headroom::Breakdown> = OnceLock::new();
    PLAN.get_or_init(|| headroom::estimate(&headroom::Scenario::default()))
}

fuzz_target!(|data: &[u8]| {
    match parse_measurement_bytes(data) {
        Ok(m) => {
            let c = compare(&m, plan());
            assert!(c.predicted.allocated_peak <= c.predicted.reserved_peak && c.predicted.reserved_peak <= c.predicted.used);
            for d in &c.differences {
                assert_eq!(d.difference as i128, d.measured as i128 - d.predicted as i128);
            }
            serde_json::to_string(&c).expect("serialize");
            let _ = headroom::measured::comparison_markdown(&c);
        }
        Err(e) => {
            let lines = data.split(|&b| b == b'\n').count();
            assert!(e.line >= 1 && e.line <= lines.max(1), "line {} of {lines}: {e}", e.line);
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
});
