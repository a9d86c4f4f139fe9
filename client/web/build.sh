#!/usr/bin/env bash
# Builds the browser client as a JavaScript package into DIR (default: the quickstart's page,
# examples/quickstart/web/pkg): wasmod_client_web.js (an ES module, wasm-bindgen's `--target
# web` glue), its .d.ts types and wasmod_client_web_bg.wasm. The one build of the browser
# client: the npm package `@wasmod/client` (client/npm, `npm run build`) runs it into its
# wasm/ directory, the browser tests (cli/tests/browser) into the page's pkg/.
#
# Built in the `web` profile (Cargo.toml: for size), with the crate features WEB_FEATURES names
# (`bench`: the browser benchmark's, client/npm/bench/). With WASM_OPT set to a wasm-opt binary,
# the wasm also goes through `wasm-opt -Os --converge` (511 B smaller gzipped than `-Oz`, whose
# raw file is smaller but compresses less; no slower: benches/RESULTS.md, "Toward 180 KB"): the
# npm build passes npm's `binaryen`, a current one; Debian's binaryen (108) breaks the
# reference-types table wasm-bindgen sets up, so none is used by default.
#
# Needs the wasm32-unknown-unknown target and wasm-bindgen's CLI at the version of the
# wasm-bindgen crate in Cargo.lock (.ci/run installs both).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/examples/quickstart/web/pkg}"
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --manifest-path "$root/Cargo.toml" -p wasmod-client-web \
    --target wasm32-unknown-unknown --profile web --locked \
    ${WEB_FEATURES:+--features "$WEB_FEATURES"}
wasm-bindgen --target web --out-dir "$out" \
    "$target/wasm32-unknown-unknown/web/wasmod_client_web.wasm"
if [ -n "${WASM_OPT:-}" ]; then
    wasm="$out/wasmod_client_web_bg.wasm"
    "$WASM_OPT" -Os --converge --strip-debug --strip-producers "$wasm" -o "$wasm.opt"
    mv "$wasm.opt" "$wasm"
fi
