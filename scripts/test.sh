#!/usr/bin/env bash
# Runs every test: formatting and lints, engine tests (incl. SimPy conformance),
# the wasm build, and the browser tests in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "format and lints"
shellcheck scripts/*.sh .ci/run
cargo fmt --all --check
# opal-peers-lab builds inference-lab from crates.io (with jemalloc's C sources): only the
# peer comparison needs it.
cargo clippy --workspace --exclude opal-web --exclude opal-peers-lab --all-targets --quiet -- -D warnings

step "engine tests"
cargo test --workspace --exclude opal-web --exclude opal-peers-lab

step "fidelity against real vLLM runs"
cargo run --release -q -p opal-fidelity --bin fidelity -- --check

step "web unit tests (native)"
cargo test -p opal-web

step "wasm build"
(
  source scripts/wasm-env.sh
  cargo clippy -p opal-web --target wasm32-unknown-unknown --quiet -- -D warnings
  trunk build --release
)
for wasm in dist/*.wasm; do
  printf 'shipped wasm: %s bytes, gzipped: %s bytes\n' "$(wc -c <"$wasm")" "$(gzip -9c "$wasm" | wc -c)"
done

step "browser tests"
node --test --test-reporter=spec tests/browser/
