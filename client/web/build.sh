#!/usr/bin/env bash
# Builds the browser client as a JavaScript package into DIR (default: the quickstart's page,
# examples/quickstart/web/pkg): wasmod_client_web.js (an ES module), its .d.ts types and
# wasmod_client_web_bg.wasm. Needs the wasm32-unknown-unknown target and wasm-bindgen's CLI at
# the version of the wasm-bindgen crate in Cargo.lock (.ci/run installs both). No wasm-opt pass:
# Debian's binaryen (108) breaks the reference-types table wasm-bindgen sets up, for 7% less
# gzip.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/examples/quickstart/web/pkg}"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --manifest-path "$root/Cargo.toml" -p wasmod-client-web \
    --target wasm32-unknown-unknown --release --locked
wasm-bindgen --target web --out-dir "$out" \
    "$target/wasm32-unknown-unknown/release/wasmod_client_web.wasm"
