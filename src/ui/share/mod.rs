//! Sharing a plan: the toolbar (link, image, Markdown, JSON), its exports (loaded on first
//! use) and the compact embed view (`?embed=1`).

pub(super) mod embed_view;
pub(super) mod share_export;
pub(super) mod share_toolbar;
