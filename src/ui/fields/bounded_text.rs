//! The text of a paste box, read only when it is within the limit for what it holds
//! ([`crate::input_limits`]).
//!
//! The box's length is asked of the browser first (`textLength`, UTF-16 code units, which
//! never exceed the UTF-8 bytes), so a 50 MB paste is refused without copying it into the
//! WASM memory, which never shrinks once grown.

use wasm_bindgen::JsCast;

use crate::input_limits::check_size;

/// The text of the text area an input event came from, or the message refusing it.
pub fn textarea_text(ev: &leptos::ev::Event, field: &str, what: &str, max: usize) -> Result<String, String> {
    let Some(area) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlTextAreaElement>().ok()) else {
        return Err(format!("{field}: not a text box"));
    };
    let units = usize::try_from(area.text_length()).unwrap_or(usize::MAX);
    check_size(field, what, units, max).map_err(|e| e.to_string())?;
    Ok(area.value())
}
