/**
 * The quickstart module for this app: the generated bindings (the quickstart page's, which
 * `wasmod generate --lang typescript examples/quickstart --out examples/quickstart/web` writes
 * and CI keeps fresh) and the hooks typed by its table map, so that `useTable("message")` is
 * `Message[]` in every component and a misspelt table does not compile.
 */

import { bindHooks } from "@wasmod/client/react";
import type { Tables } from "../../web/module_bindings.ts";

export { DbConnection, type Message, type Tables, type User } from "../../web/module_bindings.ts";

export const { useTable, useConnection } = bindHooks<Tables>();

/** The queries the app subscribes to: every message and every user. */
export const QUERIES = ["SELECT * FROM message", "SELECT * FROM user"];

/** Where the app keeps its identity's token: a reload (or the next visit) signs in as it again. */
export const TOKEN_KEY = "wasmod.quickstart.token";
