//! User text made safe where it is shown: in a terminal, in Markdown and on the page.
//!
//! Whatever a user typed or pasted (a preset id, a saved scenario's name, a `model_type`, a
//! link's parameter) can reach a message. Three rules keep it from doing harm there:
//! - control characters (C0, DEL, C1) are written as escapes (`\u{1b}`), so ESC sequences
//!   cannot recolour or rewrite a terminal and a newline cannot split a one-line error;
//! - bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C) are
//!   escaped too, so a `model_type` starting with U+202E cannot reverse the text around it
//!   (Unicode TR #9, §2 "explicit formatting characters"; the page also isolates user text
//!   with `dir="auto"`, the CLI has no such isolation);
//! - long text is cut to a bounded number of characters with an ellipsis, so a 1 MB id gives a
//!   short message.

/// At most this many characters of one piece of user text in a message.
pub const MESSAGE_TEXT_CHARS: usize = 60;

/// At most this many characters in a saved scenario's name (the name field's `maxlength`).
pub const NAME_CHARS: usize = 120;

/// Whether a character is a bidirectional formatting character (embedding, override,
/// isolate, mark) that would reorder the text around it.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Whether a character must not reach a terminal or a message as it is.
fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// The text with every control and bidirectional formatting character written as a Rust-style
/// escape (`\u{1b}`); everything else as it is.
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(is_unsafe) {
        return text.to_string();
    }
    text.chars().map(|c| if is_unsafe(c) { format!("\\u{{{:x}}}", c as u32) } else { c.to_string() }).collect()
}

/// At most `max` characters of the text, with `…` in place of the rest.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// User text as a message shows it: clipped to [`MESSAGE_TEXT_CHARS`] and with its control
/// characters escaped (clipped first, so the escapes cannot push it past the bound by much).
pub fn quoted(text: &str) -> String {
    escape_controls(&clip(text, MESSAGE_TEXT_CHARS))
}

/// A name as it is kept and shown: control and bidirectional formatting characters removed,
/// runs of white space made one space, trimmed, at most [`NAME_CHARS`] characters. The same
/// rule for a typed name and one read back from storage.
pub fn clean_name(name: &str) -> String {
    let kept: String = name.chars().map(|c| if c.is_whitespace() { ' ' } else { c }).filter(|&c| !is_unsafe(c)).collect();
    let words: Vec<&str> = kept.split(' ').filter(|w| !w.is_empty()).collect();
    let cut: String = words.join(" ").chars().take(NAME_CHARS).collect();
    cut.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_controls("a\u{1b}[31mred\u{7}"), "a\\u{1b}[31mred\\u{7}");
        assert_eq!(escape_controls("one\ntwo\0"), "one\\u{a}two\\u{0}");
        assert_eq!(escape_controls("\u{202e}nosj.gifnoc"), "\\u{202e}nosj.gifnoc");
        assert_eq!(escape_controls("Qwen/Qwen3-8B — ü"), "Qwen/Qwen3-8B — ü");
    }

    #[test]
    fn long_text_is_clipped_on_a_character_boundary() {
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("ééé", 2), "éé…");
        assert_eq!(quoted(&"x".repeat(1 << 20)).chars().count(), MESSAGE_TEXT_CHARS + 1);
    }

    #[test]
    fn names_are_cleaned_as_typed_names_are() {
        assert_eq!(clean_name("  my\tplan\n\u{202e}A\u{1b} "), "my plan A");
        assert_eq!(clean_name(&"n".repeat(4 << 20)).len(), NAME_CHARS);
        assert_eq!(clean_name("\u{7}\u{202e}"), "");
        // Cut at the limit, a space there is not kept (found by the saved_scenario fuzzer).
        assert_eq!(clean_name(&format!("{} tail", "n".repeat(NAME_CHARS - 1))), "n".repeat(NAME_CHARS - 1));
    }
}
