//! Fuzz the Scenario JSON reader (the CLI's input) and plan what it accepts, including the
//! escalation ladder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(decoded) = headroom::Scenario::from_json(&text) {
        let s = decoded.scenario;
        let _ = s.validate();
        let b = headroom::estimate(&s);
        assert!(b.step_time.seconds.is_finite());
        let _ = headroom::plan::escalation::escalate(&s, &headroom::plan::escalation::Step::DEFAULT_LADDER, 8);
    }
});
