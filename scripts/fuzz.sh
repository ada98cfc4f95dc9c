#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (default 60 s each) and prints libFuzzer's figures.
# Needs a nightly toolchain (or RUSTC_BOOTSTRAP=1) and cargo-fuzz: `cargo install cargo-fuzz --locked`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
toolchain=()
if rustup toolchain list | grep -q nightly; then toolchain=(+nightly); else export RUSTC_BOOTSTRAP=1; fi
for target in url_decode hf_config scenario_json measured; do
  echo "== $target ($seconds s)"
  mkdir -p "fuzz/work/$target"
  cargo "${toolchain[@]}" fuzz run "$target" "fuzz/work/$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" -max_len=8192 2>&1 \
    | grep -E "^#[0-9]+ +DONE|Done [0-9]+ runs|ERROR|panicked|SUMMARY" || true
done
