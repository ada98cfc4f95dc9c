//! Files made from a plan for other programs to read: the launch configurations of the
//! training and serving frameworks (`launch/`). The page's own exports (Markdown, JSON, the
//! chart) live in `crate::report`.

pub mod launch;
