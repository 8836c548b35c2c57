#!/usr/bin/env bash
# Builds the app and serves it on http://127.0.0.1:8080 (rebuilds on change).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh serve
source scripts/wasm-env.sh
echo "Serving the app on http://127.0.0.1:${PORT:-8080} (Ctrl-C to stop)"
exec trunk serve --release --port "${PORT:-8080}"
