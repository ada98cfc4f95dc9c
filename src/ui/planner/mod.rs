//! The Planner view: the scenario's controls (model, task, training, diffusion, parallel
//! layout, runtime, device, saved scenarios) and what they read from the plan (verdict,
//! chart, limits, serving, timeline, breakdown table, the whole run, a measured run).

pub(super) mod breakdown_table;
pub(super) mod device_picker;
pub(super) mod diffusion_controls;
pub(super) mod engine_controls;
pub(super) mod hub_fetch;
pub(super) mod limits_panel;
pub(super) mod measured_panel;
pub(super) mod memory_chart;
pub(super) mod model_picker;
pub(super) mod parallel_controls;
pub(super) mod run_panel;
pub(super) mod runtime_controls;
pub(super) mod saved_scenarios;
pub(super) mod serving_panel;
pub(super) mod spill_details;
pub(super) mod task_controls;
pub(super) mod timeline_chart;
pub(super) mod training_controls;
pub(super) mod unplaced_errors;
pub(super) mod verdict_banner;
