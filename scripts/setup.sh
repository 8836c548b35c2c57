#!/usr/bin/env bash
# Installs what building, serving and testing the app need, skipping whatever is already there.
#
#   scripts/setup.sh serve   # wasm target, trunk, wasm-bindgen CLI, binaryen's wasm-opt
#   scripts/setup.sh test    # the above, plus Chromium, shellcheck, Playwright's driver library
#                            # and SimPy (pinned in tests/simpy/requirements.txt)
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
# A prefix, not a function: `timeout` runs programs and cannot run a shell function.
ROOT=()
if [ "$(id -u)" != 0 ]; then ROOT=(sudo); fi

export CARGO_NET_RETRY=2 CARGO_HTTP_TIMEOUT=60

toolchain() {
  command -v rustup >/dev/null || die "install rustup (https://rustup.rs): the toolchain is pinned in rust-toolchain.toml"
  # Installs the channel rust-toolchain.toml pins (with clippy and rustfmt) when it is missing.
  if rustup toolchain list | grep -q "^$(toolchain_channel)-"; then return; fi
  say "installing the Rust toolchain pinned in rust-toolchain.toml ($(toolchain_channel))"
  timeout 600 rustup toolchain install || die "could not install the pinned Rust toolchain"
}
toolchain_channel() { sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml; }

wasm_target() {
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then return; fi
  say "adding the wasm32-unknown-unknown target"
  if timeout 180 rustup target add wasm32-unknown-unknown; then return; fi
  # No rustup download: Debian's toolchain can build std for wasm32 from source.
  say "rustup could not download the target; falling back to Debian's rust-web toolchain"
  command -v apt-get >/dev/null || die "cannot add the wasm32 target: run 'rustup target add wasm32-unknown-unknown' with network access"
  apt_update
  timeout 600 "${ROOT[@]}" apt-get install -y -o Acquire::http::Timeout=30 rustc-web cargo-web rust-web-src rust-web-llvm lld-22 \
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

APT_UPDATED=
apt_update() {
  [ -n "$APT_UPDATED" ] && return
  say "apt-get update"
  timeout 300 "${ROOT[@]}" apt-get update -o Acquire::http::Timeout=30 >/dev/null || die "apt-get update failed"
  APT_UPDATED=1
}

# Debian packages the tests need: Chromium (browser tests) and shellcheck (lints).
debian_packages() {
  local missing=()
  [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
  command -v shellcheck >/dev/null || missing+=(shellcheck)
  [ ${#missing[@]} = 0 ] && return
  command -v apt-get >/dev/null || die "install ${missing[*]} (for Chromium elsewhere, set CHROMIUM=/path/to/chromium)"
  apt_update
  say "installing Debian's ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive timeout 900 "${ROOT[@]}" apt-get install -y -o Acquire::http::Timeout=30 "${missing[@]}" >/dev/null \
    || die "could not install ${missing[*]}"
}

# Node packages pinned in tests/package.json: binaryen (wasm-opt for release builds),
# playwright-core (the browser tests' driver library; it never downloads a browser) and
# axe-core (the accessibility audit the browser tests run in the page).
node_modules() {
  command -v npm >/dev/null || die "install Node.js 20.11+ and npm"
  # The browser tests' per-test time limit (node --test-timeout) came in Node.js 20.11.
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 11) ? 0 : 1)' \
    || die "Node.js $(node --version) is too old: the tests need 20.11+"
  if [ -d tests/node_modules/playwright-core ] && [ -x tests/node_modules/.bin/wasm-opt ] \
    && [ -d tests/node_modules/axe-core ]; then return; fi
  say "installing binaryen, playwright-core and axe-core under tests/"
  (cd tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 300 npm install --no-audit --no-fund --fetch-timeout=30000 --fetch-retries=1 >/dev/null) \
    || die "npm install failed in tests/"
}

simpy() {
  local want
  want=$(sed -n 's/^simpy==//p' tests/simpy/requirements.txt)
  if [ "$(python3 -c 'import simpy; print(simpy.__version__)' 2>/dev/null)" = "$want" ]; then return; fi
  say "installing SimPy $want (for the kernel conformance tests)"
  timeout 300 python3 -m pip install --quiet --timeout 30 --retries 1 -r tests/simpy/requirements.txt \
    || die "pip install -r tests/simpy/requirements.txt failed"
}

case "${1:-test}" in
  serve) toolchain; wasm_target; cargo_tool trunk "$TRUNK_VERSION" trunk; cargo_tool wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen
         node_modules ;;
  test) toolchain; wasm_target; cargo_tool trunk "$TRUNK_VERSION" trunk; cargo_tool wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen
        debian_packages; node_modules; simpy ;;
  *) die "usage: scripts/setup.sh serve|test" ;;
esac
