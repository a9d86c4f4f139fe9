// What the package weighs on the wire: its wasm and the JavaScript a page loads (the glue
// wasm-bindgen writes and dist/'s browser entry with what it imports), raw and gzipped at
// gzip's highest level, as a server would send them. The size budget (test/size.test.ts) and
// `npm run build` both read it.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";

/** The files a browser loads, relative to the package's directory (but the snippets). */
export const BROWSER_FILES = [
  "wasm/wasmod_client_web_bg.wasm",
  "wasm/wasmod_client_web.js",
  "dist/browser.js",
  "dist/client.js",
];

/** The JavaScript snippets the glue imports (wasm-bindgen's `inline_js`), under `wasm/snippets`. */
function snippets(dir) {
  return readdirSync(join(dir, "wasm", "snippets"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".js"))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** The size of each of those files and their sums, in bytes. */
export function packageSizes(dir) {
  const files = [...BROWSER_FILES, ...snippets(dir)].map((path) => {
    const bytes = readFileSync(join(dir, path));
    return { path, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  return {
    files,
    raw: files.reduce((sum, file) => sum + file.raw, 0),
    gzip: files.reduce((sum, file) => sum + file.gzip, 0),
  };
}
