/**
 * The quickstart chat's entry: one connection for the page, to the origin that served it
 * (`wasmod serve --web dist`, or Vite's dev server proxying `/v1` to the module), signed in
 * with the token kept in localStorage (a new identity the first time, kept once connected).
 */

import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { WasmodProvider } from "@wasmod/client/react";
import { App } from "./App.tsx";
import { TOKEN_KEY, type Tables } from "./chat.ts";
import "./chat.css";

// Read once: the provider connects again when its token changes, and storing the new token
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
