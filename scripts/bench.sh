#!/usr/bin/env bash
# Runs the benchmarks and prints their figures; nothing here asserts a speed, which is why
# they are not part of `make test`. Record what they print in docs/performance.md.
#
#   scripts/bench.sh            # all of them, in the order below
#   scripts/bench.sh engine     # the engine's cargo benches (kernel vs SimPy, scheduler,
#                               # routing, workload, end_to_end vs the original Opal)
#   scripts/bench.sh peers      # CPU and memory against inference-lab 1.0.0 (peers/)
#   scripts/bench.sh sweep      # a 24-point sweep's wall time: the app in headless
#                               # Chromium, and `opal sweep` natively (tests/bench/)
#   scripts/bench.sh memory     # a run's time and peak memory natively by its size
#                               # (1M, 4M and 10M requests on 256 workers)
set -euo pipefail
cd "$(dirname "$0")/.."
# Chromium and Playwright for the sweep in the tab, SimPy for the kernel's comparison.
scripts/setup.sh test

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
export CARGO_INCREMENTAL=0
TARGET=${CARGO_TARGET_DIR:-target}

engine() {
  step "engine benches (cargo bench -p opal-engine)"
  cargo bench -p opal-engine --benches
}

peers() {
  step "against inference-lab (peers/)"
  cargo build --release -q -p opal-peers -p opal-peers-lab
  "$TARGET/release/peers" --reps 3 --requests 1000,10000,100000 --workers 4,16,64
}

sweep() {
  step "a 24-point sweep's wall time, in Chromium and natively"
  (
    source scripts/wasm-env.sh
    trunk build --release
  )
  node --test --test-timeout=600000 --test-reporter=spec tests/bench/
}

memory() {
  step "a run's time and peak memory by its size (opal run, /usr/bin/time)"
  cargo build --release -q -p opal-cli
  local dir n
  dir=$(mktemp -d)
  for n in 1000000 4000000 10000000; do
    printf '{"simulation": {"num_workers": 256}, "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 2560, "total_requests": %s}]}}\n' \
      "$n" >"$dir/run.json"
    if [ -x /usr/bin/time ]; then
      /usr/bin/time -f "$n requests: %e s, peak %M KB" "$TARGET/release/opal" run -q "$dir/run.json"
    else
      printf '%s requests: ' "$n"
      bash -c 'time "$0" run -q "$1"' "$TARGET/release/opal" "$dir/run.json"
    fi
  done
  rm -r "$dir"
}

if [ $# = 0 ]; then set -- engine peers sweep memory; fi
for part in "$@"; do
  case "$part" in
    engine | peers | sweep | memory) "$part" ;;
    *) printf 'usage: scripts/bench.sh [engine] [peers] [sweep] [memory]\n' >&2; exit 2 ;;
  esac
done
