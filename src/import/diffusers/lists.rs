//! Per-level list keys of the video VAEs' configs that [`Keys`] has no reader for: lists of
//! true/false (`spatio_temporal_scaling`), of counts that may be 0 (DC-AE's
//! `*_layers_per_block`), a string or one string per level (DC-AE's `*_block_types`), and
//! lists of lists (`*_qkv_multiscales`). Absent keys take the class default; a wrong type is
//! refused naming the key.

use serde_json::Value;

use crate::error::InputError;
use crate::import::keys::Keys;
use crate::model::arch::param::MAX_DIM;

/// A list of true/false.
pub fn bools(c: &Keys, key: &str, default: &[bool]) -> Result<Vec<bool>, InputError> {
    match c.get(key) {
        None => Ok(default.to_vec()),
        Some(Value::Array(items)) if items.len() <= 64 => {
            items.iter().map(|v| v.as_bool().ok_or_else(|| InputError::new(key, format!("every entry must be true or false, got {v}")))).collect()
        }
        Some(v) => Err(InputError::new(key, format!("must be a list of true/false, got {v}"))),
    }
}

/// A list of whole numbers, 0 allowed (a level without blocks).
pub fn counts(c: &Keys, key: &str, default: &[u64]) -> Result<Vec<u64>, InputError> {
    match c.get(key) {
        None => Ok(default.to_vec()),
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= 64 => items
            .iter()
            .map(|v| match v.as_u64() {
                Some(n) if n <= MAX_DIM => Ok(n),
                _ => Err(InputError::new(key, format!("every entry must be a whole number, got {v}"))),
            })
            .collect(),
        Some(v) => Err(InputError::new(key, format!("must be a list of 1 to 64 whole numbers, got {v}"))),
    }
}

/// A string for every level, or one string per level.
pub fn per_level(c: &Keys, key: &str, default: &str, levels: usize) -> Result<Vec<String>, InputError> {
    match c.get(key) {
        None => Ok(vec![default.to_string(); levels]),
        Some(Value::String(s)) => Ok(vec![s.clone(); levels]),
        Some(Value::Array(_)) => Ok(c.strings(key)?.unwrap_or_default().into_iter().map(str::to_string).collect()),
        Some(v) => Err(InputError::new(key, format!("must be a string or a list of strings, got {v}"))),
    }
}

/// A list of lists of positive whole numbers (`[[], [], [5]]`).
pub fn nested(c: &Keys, key: &str, default: &[&[u64]]) -> Result<Vec<Vec<u64>>, InputError> {
    let bad = |v: &Value| InputError::new(key, format!("must be a list of lists of kernel sizes, got {v}"));
    match c.get(key) {
        None => Ok(default.iter().map(|l| l.to_vec()).collect()),
        Some(Value::Array(items)) if items.len() <= 64 => items
            .iter()
            .map(|inner| match inner {
                Value::Array(ks) if ks.len() <= 8 => ks.iter().map(|k| k.as_u64().filter(|&k| k > 0 && k <= 64).ok_or_else(|| bad(k))).collect(),
                v => Err(bad(v)),
            })
            .collect(),
        Some(v) => Err(bad(v)),
    }
}
