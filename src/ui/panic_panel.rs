//! The panic panel: if the WASM ever panics, the page says so instead of going dead, shows
//! the message, and offers the current link plus the message for a bug report.
//!
//! The panel itself is built by `public/panic-panel.js`, plain JavaScript that works after
//! the WASM has stopped (the reactive runtime may be mid-update when a panic happens) and
//! that also catches traps, which abort without a panic (the WASM memory exhausted). Every
//! text goes in with `textContent`, never as HTML.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

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

/// Shows the panel, built by `public/panic-panel.js` (`headroomPanicPanel`), the one builder
/// for panics and traps alike; before that script has run, the message waits for it in
/// `headroomPendingPanic`.
fn show(message: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let builder = js_sys::Reflect::get(&window, &"headroomPanicPanel".into()).ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    match builder {
        Some(build) => {
            let _ = build.call1(&JsValue::NULL, &message.into());
        }
        None => {
            let _ = js_sys::Reflect::set(&window, &"headroomPendingPanic".into(), &message.into());
        }
    }
}

/// Traps on purpose (an abort, as when the WASM memory is exhausted: no panic, no hook), so
/// the end-to-end tests can check that the panel catches traps too.
#[wasm_bindgen(js_name = headroomSelfTestTrap)]
pub fn self_test_trap() {
    std::process::abort();
}
