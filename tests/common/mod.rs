//! Helpers shared by the integration tests that run the `headroom` binary.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `headroom` with `args` and `stdin`; returns the exit code, stdout and stderr.
pub fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom")).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn headroom");
    // The program may exit (on a bad option) before reading its input: a broken pipe is fine.
    let _ = child.stdin.take().expect("stdin").write_all(stdin.as_bytes());
    let out = child.wait_with_output().expect("wait");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}
