#!/usr/bin/env bash
# Until the page lands: prints the breakdown of the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
echo '{}' | cargo run --quiet -- estimate --format markdown
