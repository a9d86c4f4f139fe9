/**
 * The app's entry: one connection for the page, to the origin that served it (`wasmod serve
 * --web dist`, or Vite's dev server proxying `/v1` to the module), as the identity whose token
 * is kept in localStorage (a new one the first time, kept once connected).
 */

import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { WasmodProvider } from "@wasmod/client/react";
import { App } from "./App.tsx";
import type { Tables } from "./module_bindings.ts";

const TOKEN_KEY = "wasmod-token";
// Read once: the provider connects again when its token changes, and keeping the new token
// must not do that.
const token = localStorage.getItem(TOKEN_KEY);

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <WasmodProvider<Tables>
      url={location.origin}
      token={token}
      onConnect={(client) => localStorage.setItem(TOKEN_KEY, client.token)}
    >
      <App />
    </WasmodProvider>
  </StrictMode>,
);
