#!/usr/bin/env bash
# Runs every test: formatting and lints, engine tests (incl. SimPy conformance),
# the wasm build, and the browser tests in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test

# A step's heading, with the disk space left: a build that runs out of disk fails far from
# the cause (a linker's bus error), so the log shows where the space went.
step() { printf '\n\033[1m== %s\033[0m (%s free)\n' "$*" "$(df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' ')"; }

# One full build, not an edit loop: incremental caches would add as much again to the disk.
export CARGO_INCREMENTAL=0

# inference-lab's side of the peer comparison (peers/lab) is a bench tool with a C allocator
# to build; the tests never need it.
NOT_TESTED=(--exclude opal-web --exclude opal-peers-lab)

step "format and lints"
shellcheck scripts/*.sh .ci/run
cargo fmt --all --check
cargo clippy --workspace "${NOT_TESTED[@]}" --all-targets --quiet -- -D warnings

step "engine tests"
cargo test --workspace "${NOT_TESTED[@]}"

step "fidelity against real vLLM runs"
cargo run --release -q -p opal-fidelity --bin fidelity -- --check

step "preset gallery: its pictures are what the presets give"
cargo run --release -q -p opal --bin gallery -- --check

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
# A test that hangs fails after 10 minutes instead of holding CI until it is killed.
node --test --test-timeout=600000 --test-reporter=spec tests/browser/
