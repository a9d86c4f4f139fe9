/**
 * The entry point of `@wasmod/client` for browsers and bundlers (the `default` condition of
 * the package's `exports`).
 *
 * The wasm is fetched and compiled on the first `connect`/`init`, from the URL wasm-bindgen's
 * glue writes as `new URL("wasmod_client_web_bg.wasm", import.meta.url)`: browsers resolve it
 * next to the module, and webpack 5, Rspack, `vite build` and Vite 8's dev server recognise
 * the pattern, serve or emit the file and rewrite the URL (test/bundlers.test.ts). Where a
 * bundler cannot follow it (older Vite dev servers pre-bundled dependencies away from their
 * files), pass the URL yourself: `await init(wasmFrom(url))` with the URL of
 * `@wasmod/client/wasm` (`import url from "@wasmod/client/wasm?url"` in Vite).
 */

import loadWasm from "../wasm/wasmod_client_web.js";
import { setLoader } from "./client.js";

export * from "./client.js";

/** A loader of the wasm at `url` (or of these bytes, or this compiled module), for `init`. */
export function wasmFrom(
  source: string | URL | Response | BufferSource | WebAssembly.Module,
): () => Promise<void> {
  return async () => {
    await loadWasm({ module_or_path: source });
  };
}

setLoader(async () => {
  await loadWasm();
});
