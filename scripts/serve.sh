#!/usr/bin/env bash
# Serves the planner on http://127.0.0.1:8080/ (PORT and HOST override): sets up the web
# toolchain when missing, builds a release dist/ with Trunk, then serves it statically.
# The page opens with Scenario::default(): Llama-3-8B, bf16-mixed AdamW, micro-batch 1,
# sequence 4096, on one H100 80GB (which does not fit).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-web.sh
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
trunk build --release
exec node tests/e2e/static-server.mjs dist "${PORT:-8080}" "${HOST:-127.0.0.1}"
