#!/usr/bin/env bash
# Trunk's post-build hook: shrinks the release wasm with binaryen's wasm-opt (the npm
# `binaryen` package pinned in tests/package.json; Debian's is too old to read this wasm);
# strips wasm-bindgen's JS glue and the worker script of indentation and comments
# (scripts/strip-glue.mjs: Trunk's minifier cannot parse the one and copies the other as
# written; 10.2 -> 8.9 and 0.8 -> 0.4 KB gzipped); renames the wasm's imports from the glue
# to short names in both (scripts/short-imports.mjs: 6.8 KB gzipped); and updates the wasm's
# and the glue's integrity hashes in index.html, which Trunk computed before.
set -euo pipefail
[ "${TRUNK_PROFILE:-}" = release ] || exit 0
cd "$(dirname "$0")/.."
opt=tests/node_modules/.bin/wasm-opt
[ -x "$opt" ] || { echo "wasm-opt missing: run scripts/setup.sh serve" >&2; exit 1; }
# (A failed openssl must fail the build, not yield a bare "sha384-" that matches nothing.)
digest() {
  local h
  h=$(openssl dgst -sha384 -binary "$1" | base64 -w0) && [ -n "$h" ] || return 1
  printf 'sha384-%s' "$h"
}
for wasm in "$TRUNK_STAGING_DIR"/*.wasm; do
  glue="${wasm%_bg.wasm}.js"
  before=$(digest "$wasm")
  before_glue=$(digest "$glue")
  # -O3 keeps the engine's hot loops fast; the names section goes (a quarter of the size;
  # the panic banner needs none). Measured on this wasm (gzipped): -Oz 1.3 KB smaller but
  # the Opal reference 7 % slower; -O3 --converge 0.5 KB smaller in 10 min instead of 1.5;
  # --gufa-optimizing no smaller. --low-memory-unused (4 KB smaller): the wasm's data
  # starts at 1 MiB with the stack below it (rustc links wasm32 stack-first), so the low
  # 1 KiB is only the stack's last KiB, which a run never comes near; binaryen then folds
  # constant address offsets into the loads and stores.
  "$opt" -O3 --low-memory-unused --strip-debug --strip-producers "$wasm" -o "$wasm.opt"
  mv "$wasm.opt" "$wasm"
  node scripts/strip-glue.mjs "$glue"
  node scripts/short-imports.mjs "$wasm" "$glue"
  after=$(digest "$wasm")
  after_glue=$(digest "$glue")
  sed -i "s|$before|$after|; s|$before_glue|$after_glue|" "$TRUNK_STAGING_DIR/index.html"
  # A page whose hashes do not match its files loads nothing: fail here instead.
  for h in "$after" "$after_glue"; do
    grep -qF "$h" "$TRUNK_STAGING_DIR/index.html" || { echo "wasm-opt.sh: index.html lacks $h" >&2; exit 1; }
  done
done
# The worker script has no integrity hash (the page starts it by URL).
[ ! -f "$TRUNK_STAGING_DIR/worker.js" ] || node scripts/strip-glue.mjs "$TRUNK_STAGING_DIR/worker.js"
