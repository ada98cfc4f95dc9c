//! `Root`: picks the page for the address — the compact [`super::share::embed_view::EmbedView`]
//! for `?embed=1`, the full [`super::App`] otherwise.

use leptos::prelude::*;

use super::app::App;
use super::share::embed_view::EmbedView;
use super::url_sync::{is_embed, location_query};

/// The mounted component.
#[component]
pub fn Root() -> impl IntoView {
    if is_embed(&location_query()) {
        view! { <EmbedView /> }.into_any()
    } else {
        view! { <App /> }.into_any()
    }
}
