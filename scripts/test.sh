#!/usr/bin/env bash
# Sets up a fresh machine and runs every test: the native model and CLI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (rustup)" >&2; exit 1; }
cargo test --locked --all-targets
