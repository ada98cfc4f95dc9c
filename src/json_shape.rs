//! Objects where objects belong. serde reads a struct from a JSON array too (its fields by
//! position: `{"training": [1, 2]}` would be micro-batch 1, sequence 2), so every decoder of
//! our own types compares what it read with what that encodes back to, and refuses an array
//! where the encoding has an object.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::error::InputError;

/// An error naming the first place where `input` has an array and `decoded`, encoded again,
/// has an object. Keys the type does not know (ignored with a warning) are not compared.
pub fn objects_where_expected<T: Serialize>(input: &Value, decoded: &T) -> Result<(), InputError> {
    let canonical = serde_json::to_value(decoded).map_err(|e| InputError::new("", e.to_string()))?;
    compare(input, &canonical, &mut Vec::new())
}

/// `T` from a JSON value that must be an object wherever `T` has a struct.
pub fn from_object_value<T: DeserializeOwned + Serialize>(value: Value) -> Result<T, InputError> {
    let decoded = serde_json::from_value::<T>(value.clone()).map_err(|e| InputError::new("", e.to_string()))?;
    objects_where_expected(&value, &decoded)?;
    Ok(decoded)
}

fn compare(input: &Value, canonical: &Value, path: &mut Vec<String>) -> Result<(), InputError> {
    match (input, canonical) {
        (Value::Object(input), Value::Object(canonical)) => {
            for (key, value) in input {
                if let Some(expected) = canonical.get(key) {
                    path.push(key.clone());
                    compare(value, expected, path)?;
                    path.pop();
                }
            }
        }
        (Value::Array(input), Value::Array(canonical)) => {
            for (i, (value, expected)) in input.iter().zip(canonical).enumerate() {
                path.push(i.to_string());
                compare(value, expected, path)?;
                path.pop();
            }
        }
        (Value::Array(_), Value::Object(_)) => {
            return Err(InputError::new(path.join("."), "expected a JSON object ({\"name\": value, …}), got an array"));
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::inputs::Lora;

    #[test]
    fn an_array_for_a_struct_is_refused_with_its_path() {
        let err = from_object_value::<Lora>(serde_json::json!([8, ["q"], "nf4", false])).unwrap_err();
        assert_eq!(err.field, "");
        assert!(err.message.contains("expected a JSON object"), "{err}");
        let lora: Lora = from_object_value(serde_json::json!({"rank": 8, "targets": ["q", "v"]})).unwrap();
        assert_eq!(lora.rank, 8);
    }
}
