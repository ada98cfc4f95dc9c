//! The one error type of Headroom: a problem with some input, named by the field it is in.
//!
//! Only decoding fails (scenario JSON, a Hugging Face `config.json`, a URL); the memory
//! model itself never does: a run that does not fit is a result, not an error.

use std::fmt;

use crate::safe_text::{clip, escape_controls};

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

/// At most this many characters of a message are shown; the field path is always shown whole
/// up to [`FIELD_CHARS`].
const MESSAGE_CHARS: usize = 600;
const FIELD_CHARS: usize = 200;

/// One line, however the input was written: control and bidirectional formatting characters
/// escaped, the message cut at [`MESSAGE_CHARS`] ([`crate::safe_text`]).
impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Clipped before escaping (a huge message is never copied whole) and after it (an
        // escape is up to 8 characters).
        let shown = |text: &str, max: usize| clip(&escape_controls(&clip(text, max)), max);
        let message = shown(&self.message, MESSAGE_CHARS);
        if self.field.is_empty() {
            write!(f, "{message}")
        } else {
            write!(f, "{}: {message}", shown(&self.field, FIELD_CHARS))
        }
    }
}

impl std::error::Error for InputError {}
