// What the package weighs on the wire: its wasm and the JavaScript a page loads (the glue
// wasm-bindgen writes and dist/'s browser entry with what it imports), raw and gzipped at
// gzip's highest level, as a server would send them. The size budget (test/size.test.ts) and
// `npm run build` both read it.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** The files a browser loads, relative to the package's directory. */
export const BROWSER_FILES = [
  "wasm/wasmod_client_web_bg.wasm",
  "wasm/wasmod_client_web.js",
  "dist/browser.js",
  "dist/client.js",
];

/** The size of each of those files and their sums, in bytes. */
export function packageSizes(dir) {
  const files = BROWSER_FILES.map((path) => {
    const bytes = readFileSync(join(dir, path));
    return { path, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  return {
    files,
    raw: files.reduce((sum, file) => sum + file.raw, 0),
    gzip: files.reduce((sum, file) => sum + file.gzip, 0),
  };
}
