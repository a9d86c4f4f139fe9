// The quickstart chat's Vite configuration.
//
// - `npm run dev` serves the app and proxies the module's API (`/v1`, its socket included) to
//   a `wasmod serve` of the quickstart (WASMOD_URL, http://127.0.0.1:3000 by default), so the
//   page connects to its own origin in development as in production.
// - `@wasmod/client` is a `file:` dependency (a link to client/npm): `dedupe` makes its React
//   hooks use the app's React, not the one installed for the package's own tests (two Reacts
//   break hooks).
// - The dev server may read files from the quickstart's directory (the generated bindings are
//   the quickstart page's, ../web/module_bindings.ts, which CI checks are not stale) and from
//   the linked package (it serves the package's .wasm from there: refused, the page fails
//   with "403 Forbidden fetching …wasm", as the browser test found).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  resolve: { dedupe: ["react", "react-dom"] },
  server: {
    fs: { allow: ["..", "../../../client/npm"] },
    proxy: { "/v1": { target: process.env.WASMOD_URL ?? "http://127.0.0.1:3000", ws: true } },
  },
  build: { target: "es2022" },
});
