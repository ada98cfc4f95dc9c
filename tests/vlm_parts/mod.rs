//! The check the vision-language tests share: a plan's `param_count_by_part` against what
//! transformers built (a fixture's `param_count_by_part`: `vision_tower`, `projector`,
//! `language_model`).

use serde_json::Value;

/// Each part of `b` equals `want`'s, named by the case.
pub fn assert_parts(b: &headroom::Breakdown, want: &Value, name: &str) {
    let parts = b.param_count_by_part.as_ref().unwrap_or_else(|| panic!("{name}: no param_count_by_part"));
    let part = |key: &str| want[key].as_u64().unwrap_or_else(|| panic!("{name}: fixture has no {key}"));
    assert_eq!(parts.vision_tower, part("vision_tower"), "{name}: vision_tower");
    assert_eq!(parts.projector, part("projector"), "{name}: projector");
    assert_eq!(parts.language_model, part("language_model"), "{name}: language_model");
}
