#!/usr/bin/env bash
# Builds the browser client as a JavaScript package into DIR (default: the quickstart's page,
# examples/quickstart/web/pkg): wasmod_client_web.js (an ES module), its .d.ts types and
# wasmod_client_web_bg.wasm. Needs the wasm32-unknown-unknown target and wasm-bindgen's CLI at
# the version of the wasm-bindgen crate in Cargo.lock (.ci/run installs both); binaryen's
# wasm-opt, when present, shrinks the .wasm further.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/examples/quickstart/web/pkg}"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --manifest-path "$root/Cargo.toml" -p wasmod-client-web \
    --target wasm32-unknown-unknown --release --locked
wasm-bindgen --target web --out-dir "$out" \
    "$target/wasm32-unknown-unknown/release/wasmod_client_web.wasm"
if command -v wasm-opt >/dev/null; then
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals \
        -o "$out/wasmod_client_web_bg.wasm" "$out/wasmod_client_web_bg.wasm"
fi
