//! `index.html`'s first paint (`src/first_paint.rs`) is the default scenario's, as the model
//! words it now: the block between the markers must equal `first_paint::shell()`. After a
//! change to the model or the verdict's wording, `HEADROOM_BLESS=1 cargo test --test
//! first_paint` rewrites it.

use headroom::first_paint::{shell, END, START};

#[test]
fn index_html_first_paint_is_the_default_scenarios() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/index.html");
    let html = std::fs::read_to_string(path).expect("read index.html");
    let (start, end) = (html.find(START).expect("index.html has the first-paint start marker"), html.find(END).expect("index.html has the first-paint end marker"));
    assert!(start < end, "markers out of order");
    let block = &html[start..end + END.len()];
    let want = shell();
    if block != want && std::env::var_os("HEADROOM_BLESS").is_some() {
        std::fs::write(path, format!("{}{}{}", &html[..start], want, &html[end + END.len()..])).expect("write index.html");
        return;
    }
    assert_eq!(block, want, "index.html's first paint is out of date: HEADROOM_BLESS=1 cargo test --test first_paint");
}

#[test]
fn first_paint_states_the_default_verdict() {
    let s = shell();
    // The default scenario (Llama 3 8B, full fine-tune, one H100) does not fit: the banner
    // says so with the model's own numbers, which are in the block as text.
    let b = headroom::estimate(&headroom::Scenario::default());
    assert!(s.contains(r#"<div class="verdict oom">"#), "{s}");
    assert!(s.contains(&headroom::format::bytes(b.total, headroom::format::Units::Gib)), "{s}");
    assert!(s.contains("<p class=\"fix pending\">"), "{s}");
    // Nothing in it can take the focus or collide with the app's ids.
    assert!(s.contains("<div id=\"first-paint\" inert>") && s.matches(" id=").count() == 1, "{s}");
}
