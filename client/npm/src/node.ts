/**
 * The entry point of `@wasmod/client` for Node (the `node` condition of the package's
 * `exports`), Node 20 and later.
 *
 * The wasm is read from the package's own file (Node's `fetch` does not read `file:` URLs)
 * and compiled on the first `connect`/`init`. Node has a global `WebSocket` from version 22
 * (20 and 21 only behind `--experimental-websocket`); where it has none, the client uses the
 * `ws` package's, an optional peer dependency: install it (`npm install ws`), or give another
 * class to `setWebSocket`. Node has `fetch` (the module's description is fetched with it).
 */

import { readFile } from "node:fs/promises";
import { URL } from "node:url";
import loadWasm, { setWebSocket } from "../wasm/wasmod_client_web.js";
import { setLoader } from "./client.js";

export * from "./client.js";

/**
 * A loader of the wasm in these bytes, for `init`. (Typed with ECMAScript's types only, so that
 * a Node project needs no DOM library to type-check against the package.)
 */
export function wasmFrom(source: ArrayBuffer | ArrayBufferView): () => Promise<void> {
  return async () => {
    await loadWasm({ module_or_path: source });
    await useWsWithoutGlobal();
  };
}

/**
 * Where Node has no global `WebSocket`, sets the `ws` package's if it is installed. If it is
 * not, nothing fails yet (a `Replay` needs no socket): `connect` rejects, saying what to
 * install.
 */
async function useWsWithoutGlobal(): Promise<void> {
  if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === "function") {
    return;
  }
  let ws: { WebSocket: Function };
  try {
    ws = (await import("ws")) as { WebSocket: Function };
  } catch {
    return;
  }
  setWebSocket(ws.WebSocket);
}

// Not `new URL("…", import.meta.url)` written out: Vite (and Vitest in its jsdom and
// happy-dom environments, where test/react.test.tsx runs) rewrites that pattern into a URL
// served over HTTP, which `readFile` cannot read. Node's own `URL`, as those environments
// replace the global one.
const here = import.meta.url;
setLoader(async () => {
  const bytes = await readFile(new URL("../wasm/wasmod_client_web_bg.wasm", here));
  await wasmFrom(bytes)();
});
