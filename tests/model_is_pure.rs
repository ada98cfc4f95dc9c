//! Architecture invariants: `src/model/` is pure Rust. It never imports the UI, the browser
//! or the chart library, so it builds and tests natively and stays portable; and it takes
//! resolved inputs, so it imports neither the scenario type, the config importer nor the
//! planners built on it (no import cycle).

#[test]
fn model_imports_no_ui_or_browser_crate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model");
    let mut stack = vec![root];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src/model") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
                let text = std::fs::read_to_string(&path).expect("read");
                // Doc comments may name other modules; code may not use them.
                let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
                for banned in [
                    "leptos::", "web_sys::", "js_sys::", "wasm_bindgen::", "charming::", "gloo::", "crate::ui", "crate::chart", "crate::scenario", "crate::import", "crate::plan",
                    "crate::url", "crate::estimate",
                ] {
                    assert!(!code.contains(banned), "{} uses {banned}", path.display());
                }
            }
        }
    }
    assert!(files > 10);
}
