//! Fuzz a saved scenario as the page reads it back from storage: `{name, query}` JSON whose
//! name is cleaned by the typed-name rule and whose query is decoded as a link. The name comes
//! out short and free of control and bidirectional formatting characters; nothing panics.
#![no_main]

use headroom::safe_text::{clean_name, NAME_CHARS};
use libfuzzer_sys::fuzz_target;

#[derive(serde::Deserialize)]
struct Saved {
    name: String,
    query: String,
}

fuzz_target!(|data: &[u8]| {
    let Ok(saved) = serde_json::from_slice::<Saved>(data) else { return };
    let name = clean_name(&saved.name);
    assert!(name.chars().count() <= NAME_CHARS);
    assert!(!name.chars().any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c)), "{name:?}");
    assert_eq!(name, name.trim());
    let _ = headroom::url::decode(&saved.query);
});
