//! An architecture's parameter tensors built once, with the counts derived from them. The
//! model reads the tensor list several times per estimate (model states, step time, the
//! parameter count of the breakdown), and the layout search estimates one architecture
//! thousands of times: both take it from here instead of rebuilding it for every read.

use super::architecture::Architecture;
use super::param::ParamTensor;

/// The tensor list of one architecture ([`Architecture::param_tensors`]) and its counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensors {
    pub list: Vec<ParamTensor>,
    /// [`Architecture::param_count`].
    pub param_count: f64,
    /// [`Architecture::active_param_count`].
    pub active_param_count: f64,
}

impl Tensors {
    pub fn new(arch: &Architecture) -> Tensors {
        let list = arch.param_tensors();
        let param_count = arch.count_params(&list);
        let active_param_count = arch.count_active_params(&list, param_count);
        Tensors { list, param_count, active_param_count }
    }
}
