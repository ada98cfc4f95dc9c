//! What one measured run reported (`Measured`, in bytes, with the tool that printed it) and
//! why a measurement could not be read (`MeasureError`): the types every parser returns.

use serde::{Deserialize, Serialize};

/// Which tool printed the measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `torch.cuda.memory_summary()`.
    MemorySummary,
    /// `nvidia-smi --query-gpu=memory.used,memory.total --format=csv`.
    NvidiaSmi,
    /// `{"max_memory_allocated": …, "max_memory_reserved": …, "used": …, "total": …}`.
    Json,
}

/// What one run reported, in bytes; `None` where the format does not say.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measured {
    pub format: Format,
    /// `torch.cuda.max_memory_allocated()`: the most bytes held by live tensors (and the
    /// workspaces PyTorch allocates through its caching allocator).
    pub allocated_peak: Option<u64>,
    /// `torch.cuda.max_memory_reserved()`: the most bytes the caching allocator held from CUDA.
    pub reserved_peak: Option<u64>,
    /// Device memory in use (nvidia-smi `memory.used`, or `total - free` from
    /// `torch.cuda.mem_get_info`): every process on the GPU, at the moment of reading.
    pub used: Option<u64>,
    /// Device memory in all (nvidia-smi `memory.total`, `mem_get_info`'s total).
    pub total: Option<u64>,
    /// memory_summary's "Non-releasable memory" peak: free space inside blocks in use (the
    /// allocator's fragmentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_releasable_peak: Option<u64>,
    /// What the parser had to choose or round (which GPU row, the unit a value was rounded to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Measured {
    pub(super) fn new(format: Format) -> Measured {
        Measured { format, allocated_peak: None, reserved_peak: None, used: None, total: None, non_releasable_peak: None, notes: Vec::new() }
    }
}

/// Why a measurement could not be read: the 1-based line (0 when no line is to blame) and a
/// one-line sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasureError {
    pub line: usize,
    pub message: String,
}

impl MeasureError {
    pub(crate) fn at(line: usize, message: impl Into<String>) -> MeasureError {
        MeasureError { line, message: message.into() }
    }
}

impl std::fmt::Display for MeasureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for MeasureError {}
