# shellcheck shell=bash
# Sourced by the build scripts: when setup fell back to Debian's toolchain (no rustup
# download of the wasm32 target), wasm builds use it and build std from source.
if [ -f "$(dirname "${BASH_SOURCE[0]}")/../.wasm-toolchain" ]; then
  export RUSTUP_TOOLCHAIN=debian RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort
fi
