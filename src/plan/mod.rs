//! Planning over scenarios: the strategy ladder (`escalation.rs`: mixed precision →
//! checkpointing → ZeRO → pipeline → …, each step's memory, time and communication) and the
//! automatic layout search (`search.rs`). Both evaluate whole scenarios with
//! [`crate::estimate`]; the memory model itself lives in `crate::model`.

pub mod escalation;
pub mod search;
