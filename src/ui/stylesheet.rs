//! The views' own stylesheets, loaded when a view first opens.
//!
//! The first paint needs only the shell's styles, inlined into the page (index.html:
//! main.css, share.css, shell.css); the Strategy and Compare views' sheet (strategy.css, with
//! compare.css for phones) is a file fetched the first time either view is shown, so it never
//! blocks the first chart (Lighthouse's render-blocking audit).

/// The sheets of the Strategy and Compare views, as Trunk copies them into dist/.
pub const VIEW_SHEETS: [&str; 2] = ["strategy.css", "compare.css"];

/// Adds a `<link rel="stylesheet">` for each sheet not yet on the page.
pub fn load(sheets: &[&str]) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(head) = document.head() else {
        return;
    };
    for href in sheets {
        if document.query_selector(&format!("link[rel=stylesheet][href=\"{href}\"]")).ok().flatten().is_some() {
            continue;
        }
        if let Ok(link) = document.create_element("link") {
            let _ = link.set_attribute("rel", "stylesheet");
            let _ = link.set_attribute("href", href);
            let _ = head.append_child(&link);
        }
    }
}
