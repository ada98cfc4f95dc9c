#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (default 60 s each) and prints libFuzzer's figures:
#   ./scripts/fuzz.sh [SECONDS] [TARGET…]   (targets: url_decode url_plan hf_config scenario_json measured link_limits saved_scenario pasted_config)
# FUZZ_RUNS=N stops a target after N executions instead (SECONDS stays the upper bound).
# Built without AddressSanitizer (`-s none`): the crate has no unsafe code, and ASan's
# allocator made the JSON-heavy decoders about 8× slower; overflow checks and debug
# assertions stay on (cargo-fuzz's release build), which is what finds this crate's bugs.
# Needs a nightly toolchain (or RUSTC_BOOTSTRAP=1) and cargo-fuzz: `cargo install cargo-fuzz --locked`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(url_decode url_plan hf_config scenario_json measured link_limits saved_scenario pasted_config)
runs=()
[ -z "${FUZZ_RUNS:-}" ] || runs=(-runs="$FUZZ_RUNS")
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
toolchain=()
if rustup toolchain list | grep -q nightly; then toolchain=(+nightly); else export RUSTC_BOOTSTRAP=1; fi
for target in "${targets[@]}"; do
  echo "== $target ($seconds s${FUZZ_RUNS:+, at most $FUZZ_RUNS runs})"
  mkdir -p "fuzz/work/$target"
  cargo "${toolchain[@]}" fuzz run -s none "$target" "fuzz/work/$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" "${runs[@]}" -max_len=8192 2>&1 \
    | grep -E "^#[0-9]+ +DONE|Done [0-9]+ runs|ERROR|panicked|SUMMARY|Test unit written" || true
done
