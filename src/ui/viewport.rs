//! The narrow-viewport test the views share: phone widths, where the Strategy tab's flowchart
//! turns to one column and the step timeline's legend wraps to a third row.

use leptos::prelude::window;

/// Viewports at which the wide flowchart (560 px at least) no longer fits its card.
pub const NARROW_QUERY: &str = "(max-width: 640px)";

/// True when the viewport matches [`NARROW_QUERY`].
pub fn narrow_viewport() -> bool {
    window().match_media(NARROW_QUERY).ok().flatten().is_some_and(|m| m.matches())
}
