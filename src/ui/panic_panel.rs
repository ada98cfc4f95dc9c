//! The panic panel: if the WASM ever panics, the page says so instead of going dead, shows
//! the message, and offers the current link plus the message for a bug report.
//!
//! Built with plain DOM calls from the panic hook (the reactive runtime may be mid-update
//! when a panic happens, and the WASM stops right after). The "Copy scenario and report"
//! button is handled by `public/panic-panel.js`, plain JavaScript that works after the WASM
//! has stopped. Every text goes in with `textContent`, never as HTML.

use wasm_bindgen::prelude::*;

/// Installs the hook: the console message of `console_error_panic_hook`, then the panel.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show(&info.to_string());
    }));
}

/// Panics on purpose, so the end-to-end tests can check the panel (call
/// `wasmBindings.headroomSelfTestPanic()` from the console; the page stops).
#[wasm_bindgen(js_name = headroomSelfTestPanic)]
pub fn self_test_panic() {
    panic!("self-test panic requested from the console");
}

/// Adds the panel to the top of `<body>` (once).
fn show(message: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(document) = window.document() else {
        return;
    };
    if document.get_element_by_id("panic-panel").is_some() {
        return;
    }
    let Some(body) = document.body() else { return };
    let href = window.location().href().unwrap_or_default();
    let report = format!("Headroom stopped with an internal error.\nLink: {href}\nMessage: {message}\n");
    let build = || -> Result<web_sys::Element, JsValue> {
        let el = |tag: &str, id: Option<&str>, text: Option<&str>| -> Result<web_sys::Element, JsValue> {
            let e = document.create_element(tag)?;
            if let Some(id) = id {
                e.set_id(id);
            }
            if let Some(text) = text {
                e.set_text_content(Some(text));
            }
            Ok(e)
        };
        let panel = el("section", Some("panic-panel"), None)?;
        panel.set_attribute("role", "alert")?;
        panel.set_class_name("panic-panel");
        panel.append_child(el("h2", None, Some("Headroom stopped with an internal error"))?.as_ref())?;
        panel.append_child(
            el("p", None, Some("This is a bug, not your input. Reload the page to continue; your scenario is in the link. Please report it with the text below."))?.as_ref(),
        )?;
        panel.append_child(el("pre", Some("panic-message"), Some(message))?.as_ref())?;
        let area = el("textarea", Some("panic-report"), Some(&report))?;
        area.set_attribute("readonly", "")?;
        area.set_attribute("rows", "4")?;
        area.set_attribute("aria-label", "Report to copy")?;
        panel.append_child(&area)?;
        let row = el("p", None, None)?;
        let button = el("button", Some("panic-copy"), Some("Copy scenario and report"))?;
        button.set_attribute("type", "button")?;
        row.append_child(&button)?;
        let reload = el("a", Some("panic-reload"), Some("Reload"))?;
        reload.set_attribute("href", &href)?;
        row.append_child(&reload)?;
        row.append_child(el("span", Some("panic-copy-status"), None)?.as_ref())?;
        panel.append_child(&row)?;
        Ok(panel)
    };
    if let Ok(panel) = build() {
        let _ = body.insert_before(&panel, body.first_child().as_ref());
    }
}
