#!/usr/bin/env bash
# Installs what building, serving and testing the app need, skipping whatever is already there.
#
#   scripts/setup.sh serve   # wasm target, trunk, wasm-bindgen CLI
#   scripts/setup.sh test    # the above, plus Chromium, Playwright's driver library and SimPy
#
# Every step that downloads has a time limit, so a machine without network fails fast
# with a message instead of hanging. Safe to run again: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
# The CLI must equal the wasm-bindgen crate in Cargo.lock (Trunk cannot download it here).
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[setup] %s\033[0m\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else die "need root for: $*"; fi; }

export CARGO_NET_RETRY=2 CARGO_HTTP_TIMEOUT=60

wasm_target() {
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then return; fi
  say "adding the wasm32-unknown-unknown target"
  if timeout 180 rustup target add wasm32-unknown-unknown; then return; fi
  # No rustup download: Debian's toolchain can build std for wasm32 from source.
  say "rustup could not download the target; falling back to Debian's rust-web toolchain"
  command -v apt-get >/dev/null || die "cannot add the wasm32 target: run 'rustup target add wasm32-unknown-unknown' with network access"
  timeout 600 as_root apt-get install -y -o Acquire::http::Timeout=30 rustc-web cargo-web rust-web-src rust-web-llvm lld-22 \
    || die "could not install Debian's rust-web toolchain"
  rustup toolchain link debian /usr
  echo debian > .wasm-toolchain
}

cargo_tool() { # name version binary
  local name=$1 version=$2 bin=$3
  if command -v "$bin" >/dev/null && "$bin" --version 2>/dev/null | grep -q " $version\b"; then return; fi
  say "installing $name $version (takes several minutes, once)"
  local locked=--locked
  [ "$name" = wasm-bindgen-cli ] && locked= # its lock file does not resolve here
  timeout 2400 cargo install "$name" --version "$version" $locked --quiet \
    || die "could not install $name $version from crates.io"
}

chromium() {
  if [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then return; fi
  command -v apt-get >/dev/null || die "install Chromium and set CHROMIUM=/path/to/chromium"
  say "installing Debian's Chromium"
  timeout 300 as_root apt-get update -o Acquire::http::Timeout=30 >/dev/null || die "apt-get update failed"
  timeout 900 as_root apt-get install -y -o Acquire::http::Timeout=30 chromium chromium-driver >/dev/null \
    || die "could not install chromium"
}

node_modules() {
  command -v npm >/dev/null || die "install Node.js 18+ and npm"
  if [ -d tests/node_modules/playwright-core ]; then return; fi
  say "installing playwright-core (driver library only; it never downloads a browser)"
  (cd tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 300 npm install --no-audit --no-fund --fetch-timeout=30000 --fetch-retries=1 >/dev/null) \
    || die "npm install failed in tests/"
}

simpy() {
  if python3 -c 'import simpy' 2>/dev/null; then return; fi
  say "installing SimPy (for the kernel conformance tests)"
  timeout 300 python3 -m pip install --quiet --timeout 30 --retries 1 simpy || die "pip install simpy failed"
}

case "${1:-test}" in
  serve) wasm_target; cargo_tool trunk "$TRUNK_VERSION" trunk; cargo_tool wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen ;;
  test) wasm_target; cargo_tool trunk "$TRUNK_VERSION" trunk; cargo_tool wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen
        chromium; node_modules; simpy ;;
  *) die "usage: scripts/setup.sh serve|test" ;;
esac
