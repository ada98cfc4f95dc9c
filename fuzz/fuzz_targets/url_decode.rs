//! Fuzz the scenario URL decoder, then plan whatever it decodes: neither may panic, and a
//! decoded scenario must encode and decode to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (scenario, _errors) = headroom::url::decode(&text);
    let _ = scenario.validate();
    let b = headroom::estimate(&scenario);
    assert_eq!(b.spill_bytes == 0, b.fits);
    let (again, errors) = headroom::url::decode(&headroom::url::encode(&scenario));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(again, scenario);
});
