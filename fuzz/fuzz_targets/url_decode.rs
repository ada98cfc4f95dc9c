//! Fuzz the scenario URL decoder alone (no planning, so it runs fast): it may not panic, and a
//! decoded scenario must encode and decode to itself. `url_plan` plans what links decode to.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (scenario, _errors) = headroom::url::decode(&text);
    let (again, errors) = headroom::url::decode(&headroom::url::encode(&scenario));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(again, scenario);
});
