//! Fuzz planning what a scenario URL decodes to: validation and the memory model may not
//! panic, and the plan's fit agrees with its spill. Slower than `url_decode` (a full estimate
//! per input), so it gets its own target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (scenario, _errors) = headroom::url::decode(&text);
    let _ = scenario.validate();
    let b = headroom::estimate(&scenario);
    assert_eq!(b.spill_bytes == 0, b.fits);
});
