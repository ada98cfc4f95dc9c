//! Typed reading of a `config.json`'s keys, with transformers' defaults for missing ones
//! and a record of every key that was defaulted (shown to the user as a warning).

use std::cell::RefCell;

use serde_json::{Map, Value};

use crate::error::InputError;
use crate::model::arch::MAX_DIM;

/// The keys of one config object, and the defaults used so far.
pub struct Keys<'a> {
    map: &'a Map<String, Value>,
    defaulted: RefCell<Vec<String>>,
    notes: RefCell<Vec<String>>,
}

impl<'a> Keys<'a> {
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Keys { map, defaulted: RefCell::new(Vec::new()), notes: RefCell::new(Vec::new()) }
    }

    /// A reader's remark for the user (what it counts only approximately), shown as a warning.
    pub fn note(&self, message: impl Into<String>) {
        self.notes.borrow_mut().push(message.into());
    }

    /// Every remark made by the reader, in order.
    pub fn notes(&self) -> Vec<String> {
        self.notes.borrow().clone()
    }

    /// The keys of a nested object (`rope_parameters`), if the config has one.
    pub fn nested(&self, key: &str) -> Option<&'a Map<String, Value>> {
        self.get(key).and_then(Value::as_object)
    }

    /// The raw value of a key (absent and `null` read the same).
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Whether the config sets this key.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Record that `key` took its default, shown as `shown`.
    pub fn note_default(&self, key: &str, shown: String) {
        self.defaulted.borrow_mut().push(format!("{key} = {shown}"));
    }

    /// Every defaulted key as "key = value", in reading order.
    pub fn defaulted(&self) -> Vec<String> {
        self.defaulted.borrow().clone()
    }

    /// A positive dimension; when absent, `default` (recorded as a defaulted key).
    pub fn uint(&self, key: &str, default: u64) -> Result<u64, InputError> {
        match self.get(key) {
            None => {
                self.note_default(key, default.to_string());
                Ok(default)
            }
            Some(v) => positive(key, v),
        }
    }

    /// A positive dimension; when absent, a value derived from other keys as transformers
    /// derives it (not recorded: the config says it implicitly).
    pub fn uint_or(&self, key: &str, derived: u64) -> Result<u64, InputError> {
        match self.get(key) {
            None => Ok(derived),
            Some(v) => positive(key, v),
        }
    }

    /// A count that may be zero (dense layers, shared experts); absent → `default`, recorded.
    pub fn count(&self, key: &str, default: u64) -> Result<u64, InputError> {
        match self.get(key) {
            None => {
                self.note_default(key, default.to_string());
                Ok(default)
            }
            Some(v) => match v.as_u64() {
                Some(n) if n <= MAX_DIM => Ok(n),
                _ => Err(InputError::new(key, format!("must be a whole number between 0 and {MAX_DIM}, got {v}"))),
            },
        }
    }

    /// A dimension that may be absent on purpose (`q_lora_rank: null`): `None` then.
    pub fn optional_uint(&self, key: &str) -> Result<Option<u64>, InputError> {
        self.get(key).map(|v| positive(key, v)).transpose()
    }

    /// A true/false switch; absent → `default`, recorded.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, InputError> {
        match self.get(key) {
            None => {
                self.note_default(key, default.to_string());
                Ok(default)
            }
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(InputError::new(key, format!("must be true or false, got {v}"))),
        }
    }

    /// Whether the config writes this key as `null` (which may switch a part off).
    pub fn is_null(&self, key: &str) -> bool {
        matches!(self.map.get(key), Some(Value::Null))
    }

    /// A number (soft-capping values); `null` reads as 0 (off); absent → `default`, recorded.
    pub fn number(&self, key: &str, default: f64) -> Result<f64, InputError> {
        if self.is_null(key) {
            return Ok(0.0);
        }
        match self.get(key) {
            None => {
                self.note_default(key, default.to_string());
                Ok(default)
            }
            Some(v) => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| InputError::new(key, format!("must be a number, got {v}"))),
        }
    }

    /// A string; absent → `default`, recorded.
    pub fn text(&self, key: &str, default: &str) -> Result<String, InputError> {
        match self.get(key) {
            None => {
                self.note_default(key, format!("\"{default}\""));
                Ok(default.to_string())
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(InputError::new(key, format!("must be a string, got {v}"))),
        }
    }

    /// A list of positive numbers (ResNet stages); absent → `default`, recorded.
    pub fn uint_list(&self, key: &str, default: &[u64]) -> Result<Vec<u64>, InputError> {
        match self.get(key) {
            None => {
                self.note_default(key, format!("{default:?}"));
                Ok(default.to_vec())
            }
            Some(Value::Array(items)) if !items.is_empty() && items.len() <= 64 => items
                .iter()
                .map(|v| match v.as_u64() {
                    Some(n) if n > 0 && n <= MAX_DIM => Ok(n),
                    _ => Err(InputError::new(key, format!("every entry must be a positive whole number, got {v}"))),
                })
                .collect(),
            Some(v) => Err(InputError::new(key, format!("must be a list of 1 to 64 positive whole numbers, got {v}"))),
        }
    }

    /// A list of strings (`layer_types`), if present.
    pub fn strings(&self, key: &str) -> Result<Option<Vec<&'a str>>, InputError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().ok_or_else(|| InputError::new(key, format!("every entry must be a string, got {v}")))).collect::<Result<Vec<_>, _>>().map(Some)
            }
            Some(v) => Err(InputError::new(key, format!("must be a list of strings, got {v}"))),
        }
    }

    /// `num_labels`, else the size of `id2label`, else transformers' default of 2.
    pub fn labels(&self) -> Result<u64, InputError> {
        if self.has("num_labels") {
            return self.uint("num_labels", 2);
        }
        match self.get("id2label") {
            Some(Value::Object(m)) if !m.is_empty() => Ok(m.len() as u64),
            _ => self.uint("num_labels", 2),
        }
    }
}

fn positive(key: &str, v: &Value) -> Result<u64, InputError> {
    match v.as_u64() {
        Some(0) => Err(InputError::new(key, "must be at least 1")),
        Some(n) if n > MAX_DIM => Err(InputError::new(key, format!("{n} is too large (at most {MAX_DIM})"))),
        Some(n) => Ok(n),
        None => Err(InputError::new(key, format!("must be a positive whole number, got {v}"))),
    }
}
