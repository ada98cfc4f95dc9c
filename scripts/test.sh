#!/usr/bin/env bash
# Sets up a fresh machine and runs every test: the native model and CLI tests, then the
# page end-to-end tests (release dist/ in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (rustup)" >&2; exit 1; }
# Formatting (rustfmt.toml), where rustfmt is installed: it is not needed to build or test.
if cargo fmt --version >/dev/null 2>&1; then cargo fmt --check; fi
cargo test --locked --all-targets

# The page: set up the web toolchain (idempotent), build a release dist/ and run the
# end-to-end tests in headless Chromium.
./scripts/setup-web.sh
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
trunk build --release
node --test tests/e2e/
