//! `Inputs`: what one estimate reads, resolved (the architecture, the training step, the
//! parallel layout, the device, the runtime). Its own module: the architecture reads the
//! training types of `inputs.rs`, so the struct that holds both lives beside them.

use super::arch::architecture::Architecture;
use super::device::Device;
use super::inputs::{Parallel, Runtime, Training};

/// What the model needs, already resolved: the architecture, the training step, the parallel
/// layout and the device. (`crate::scenario` resolves presets, pasted configs and device
/// names into this; the model never sees them.)
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub arch: &'a Architecture,
    pub training: &'a Training,
    pub parallel: &'a Parallel,
    pub device: &'a Device,
    /// Platform and GPU sharing.
    pub runtime: &'a Runtime,
}
