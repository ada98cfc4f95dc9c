//! The serde name of a unit enum variant (`"bf16-mixed"`) as its id: the value of an
//! `<option>` on the page and of a step in a link (`ladder=`), and back.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The serde name of a unit enum variant.
pub fn enum_id<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// The variant whose serde name is `id`, if any.
pub fn enum_from_id<T: DeserializeOwned>(id: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(id.to_string())).ok()
}
