//! Headroom: a GPU memory planner for deep-learning training.
//!
//! - [`model`]: the pure memory model (`estimate(&Scenario) -> Breakdown`).
//! - [`scenario`]: the one input type, its JSON decoding and validation.
//! - [`cli`]: the native command line (`headroom estimate`), not built for WASM.
//! - [`chart`]: pure chart builders (`memory_chart(&Breakdown, Units) -> charming::Chart`).
//! - `ui`: the Leptos page, built only for `wasm32`; [`first_paint`]: the static copy of its
//!   first screen in `index.html` (native, checked by a test).

pub mod address;
pub mod chart;
pub mod enum_id;
pub mod error;
pub mod export;
pub mod fields;
#[cfg(not(target_arch = "wasm32"))]
pub mod first_paint;
pub mod format;
pub mod import;
pub mod input_limits;
pub mod json_shape;
pub mod labels;
pub mod measured;
pub mod model;
pub mod page_query;
pub mod plan;
pub mod profiles;
pub mod report;
pub mod safe_text;
pub mod scenario;
pub mod url;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;

#[cfg(target_arch = "wasm32")]
pub mod ui;

pub use error::InputError;
pub use model::breakdown::{Breakdown, Component};
pub use scenario::estimate;
pub use scenario::Scenario;
