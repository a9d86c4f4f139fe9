/**
 * `@wasmod/client/react` in Node (server rendering, tests under jsdom): the hooks, with the
 * Node entry's loader of the wasm registered.
 */

import "./node.js";

export * from "./react.js";
