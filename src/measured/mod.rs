//! A measured run beside the plan: what PyTorch and the driver reported for a real training
//! step, read from the text a user pastes, and compared with the `Breakdown` (`compare`).
//!
//! Three inputs are recognised (`parse_measurement` tells them apart):
//! - `torch.cuda.memory_summary()` printouts (`memory_summary.rs`): the Peak Usage column of the
//!   "Allocated memory", "GPU reserved memory" and "Non-releasable memory" rows;
//! - `nvidia-smi --query-gpu=memory.used,memory.total --format=csv[,noheader][,nounits]`
//!   (`nvidia_smi.rs`);
//! - the small JSON `docs/measure-your-run.py` prints (`json.rs`):
//!   `{"max_memory_allocated": N, "max_memory_reserved": N, "used": N, "total": N}` in bytes.
//!
//! A serving engine's startup log is read apart (`engine_log.rs`): its numbers are the KV
//! cache's size and the concurrency, compared with the engine's report.
//!
//! Pure Rust (std, serde, serde_json): no I/O, no UI; it builds for wasm32 as well. Bad input
//! returns a `MeasureError` naming the 1-based line; nothing panics.

mod compare;
mod engine_log;
mod json;
mod markdown;
mod measurement;
mod memory_summary;
mod nvidia_smi;
mod units;

pub use compare::{compare, predicted, side_of, Category, Comparison, Difference, OverheadSide, Predicted};
pub use engine_log::{compare_engine, parse as parse_engine_log, EngineComparison, EngineLog};
pub use markdown::comparison_markdown;
pub use measurement::{Format, MeasureError, Measured};

/// The Python snippet the page offers: put the training step in `step()`; it runs a warm-up and
/// one measured step and prints the JSON `parse_measurement` reads.
pub const PYTHON_SNIPPET: &str = include_str!("../../docs/measure-your-run.py");

const EXPECTED: &str =
    "expected torch.cuda.memory_summary() output, nvidia-smi --query-gpu=memory.used,memory.total --format=csv output, or the JSON docs/measure-your-run.py prints";

/// Read a measurement in any of the three formats.
pub fn parse_measurement(text: &str) -> Result<Measured, MeasureError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(n) = text.lines().position(|l| l.contains('\0')) {
        return Err(MeasureError::at(n + 1, "binary data (a NUL byte), not text"));
    }
    let Some((n, first)) = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).find(|(_, l)| !l.is_empty()) else {
        return Err(MeasureError::at(1, format!("the input is empty; {EXPECTED}")));
    };
    if first.starts_with('{') || first.starts_with('[') {
        json::parse(text)
    } else if memory_summary::looks_like(text) {
        memory_summary::parse(text)
    } else if nvidia_smi::looks_like(first) {
        nvidia_smi::parse(text)
    } else {
        Err(MeasureError::at(n, format!("not a measurement ({} …); {EXPECTED}", units::quote(first))))
    }
}

/// `parse_measurement` for raw file contents: invalid UTF-8 is an error naming its line.
pub fn parse_measurement_bytes(bytes: &[u8]) -> Result<Measured, MeasureError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_measurement(text),
        Err(e) => {
            let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
            Err(MeasureError::at(line, "not text (invalid UTF-8): a binary file?"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_format() {
        assert_eq!(parse_measurement("{\"max_memory_allocated\": 1}").unwrap().format, Format::Json);
        assert_eq!(parse_measurement("memory.used [MiB], memory.total [MiB]\n1 MiB, 2 MiB\n").unwrap().format, Format::NvidiaSmi);
        assert_eq!(parse_measurement("\n10, 20\n").unwrap().format, Format::NvidiaSmi);
        let e = parse_measurement("\n\nhello world\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().starts_with("line 3: not a measurement"), "{e}");
    }

    #[test]
    fn empty_and_binary_inputs_name_a_line() {
        assert_eq!(parse_measurement("").unwrap_err().line, 1);
        assert_eq!(parse_measurement("  \n\t\n").unwrap_err().line, 1);
        assert_eq!(parse_measurement("a\nb\0c").unwrap_err().line, 2);
        assert_eq!(parse_measurement_bytes(b"10, 20\n\xff\xfe").unwrap_err().line, 2);
    }
}
