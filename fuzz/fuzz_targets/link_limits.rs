//! Fuzz the link decoder's bounds: a link made of the input repeated up to 256 times (so it
//! can pass the parameter count; at most 16 KB, or 600 KB past the length limit when the
//! first byte is 255) decodes with a bounded list of problems, each one line of bounded length, and never
//! panics.
#![no_main]

use headroom::input_limits::PROBLEMS_LISTED;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&repeat, rest)) = data.split_first() else { return };
    let unit = String::from_utf8_lossy(rest);
    // Past the length limit only when the first byte is 255 (long links are slow to fuzz).
    let cap = if repeat == 255 { 600_000 } else { 16_384 };
    let times = (usize::from(repeat) + 1).min(cap / unit.len().max(1)).max(1);
    let query = unit.repeat(times);
    let (_scenario, errors) = headroom::url::decode(&query);
    // The listed problems, the summary, the link-length and the parameter-count messages, and
    // the device check after them.
    assert!(errors.len() <= PROBLEMS_LISTED + 3, "{} problems", errors.len());
    for e in &errors {
        let line = e.to_string();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.chars().count() < 1000, "{} characters", line.chars().count());
    }
});
