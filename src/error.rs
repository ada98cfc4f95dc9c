//! The one error type of Headroom: a problem with some input, named by the field it is in.
//!
//! Only decoding fails (scenario JSON, a Hugging Face `config.json`, a URL); the memory
//! model itself never does: a run that does not fit is a result, not an error.

use std::fmt;

/// An input that could not be used, with the dotted path of the offending field
/// (`training.micro_batch`, `model.hf_config.hidden_size`) and a message a user can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub field: String,
    pub message: String,
}

impl InputError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        InputError { field: field.into(), message: message.into() }
    }

    /// The same error, one level deeper: `prefix.field`.
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = if self.field.is_empty() { prefix.to_string() } else { format!("{prefix}.{}", self.field) };
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for InputError {}
