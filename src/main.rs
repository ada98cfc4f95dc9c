//! Entry point: the native CLI, or on `wasm32` the page.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(headroom::cli::run(std::env::args_os()));
}

#[cfg(target_arch = "wasm32")]
fn main() {
    headroom::ui::mount();
}
