/**
 * `@wasmod/client/react` for browsers and bundlers: the hooks, with the browser entry's loader
 * of the wasm registered (importing the hooks alone must be enough for a provider given a
 * `url` to connect).
 */

import "./browser.js";

export * from "./react.js";
