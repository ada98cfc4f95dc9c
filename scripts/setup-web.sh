#!/usr/bin/env bash
# Installs, idempotently, what the page needs to build and be tested on a fresh machine:
# the wasm32 target, Trunk 0.21.14, wasm-bindgen-cli 0.2.130, wasm-split-cli 0.2.4 (crate
# wasm_split_cli_support: cuts the lazily loaded views into chunks, see
# scripts/trunk-split-wasm.mjs), the npm tools (binaryen 132 for wasm-opt, ECharts 5.6.0 and
# esbuild 0.28.2 for the custom ECharts build, playwright-core)
# and Debian's Chromium. Each step is skipped when the right version is already there
# (building Trunk takes about 12 minutes on 2 cores).
# Callers put "$HOME/.cargo/bin" and node_modules/.bin on PATH afterwards (wasm-opt comes from
# there). Versions and pitfalls: /work/shared/reference/toolchain.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130
WASM_SPLIT_VERSION=0.2.4

export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
say() { echo "setup-web: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

command -v cargo >/dev/null || { say "cargo is required (rustup)"; exit 1; }

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (about 12 minutes on 2 cores)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # Not --locked: its lockfile pins a webpki-roots version the registry no longer has.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# wasm-split-cli has no --version: cargo's own list of installed crates says which one it is
# (grep reads the whole list: with -q, an early exit could fail the pipe under pipefail).
if ! cargo install --list | grep -x "wasm_split_cli_support v$WASM_SPLIT_VERSION:" >/dev/null || ! command -v wasm-split-cli >/dev/null; then
  say "installing wasm-split-cli $WASM_SPLIT_VERSION (wasm_split_cli_support, about 2 minutes)"
  cargo install wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --features build-binary --locked
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  say "installing node and npm"
  as_root apt-get update
  as_root apt-get install -y nodejs npm
fi

# npm ci again whenever package-lock.json changed since the last install (stamp file).
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat node_modules/.headroom-lock 2>/dev/null)" != "$lock_sum" ] || [ ! -x node_modules/.bin/wasm-opt ]; then
  say "npm ci (binaryen, echarts, esbuild, playwright-core)"
  npm ci --no-audit --no-fund
  echo "$lock_sum" > node_modules/.headroom-lock
fi

# public/echarts/ is a custom ECharts build (only the modules the page uses), committed;
# rebuild it (esbuild, about a second) when it differs from what the pinned packages give.
if ! node scripts/build-echarts.mjs --check; then
  say "rebuilding public/echarts/ (scripts/build-echarts.mjs)"
  node scripts/build-echarts.mjs
fi

if [ ! -x /usr/bin/chromium ] && [ -z "${CHROMIUM:-}" ]; then
  say "installing chromium"
  as_root apt-get update
  as_root apt-get install -y chromium chromium-driver
fi

say "ready: $(trunk --version), $(wasm-bindgen --version), wasm-split-cli $WASM_SPLIT_VERSION, wasm-opt $(wasm-opt --version | awk '{print $3}'), node $(node --version)"
