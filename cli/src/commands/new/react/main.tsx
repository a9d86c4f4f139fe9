/**
 * The app's entry: one connection for the page, to the origin that served it (`wasmod serve
 * --web dist`, or Vite's dev server proxying `/v1` to the module), as the signed-in user (with
 * the OpenID Provider's ID token, when sign-in is configured: `src/auth.ts`) or else as the
 * anonymous identity whose token is kept in localStorage (a new one the first time, kept once
 * connected).
 */

import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { WasmodProvider } from "@wasmod/client/react";
import { App } from "./App.tsx";
import { signIn } from "./auth.ts";
import type { Tables } from "./module_bindings.ts";

const TOKEN_KEY = "wasmod-token";

// In the hidden frame of a silent renewal, the page only hands the provider's answer over.
if (signIn?.inRenewalFrame) {
  await signIn.user();
} else {
  const user = await signIn?.user();
  // Read once: the provider connects again when its token changes, and keeping the new token
  // must not do that. Signed in, the token provider renews the ID token when it expires.
  const token = user ? signIn!.tokenProvider : localStorage.getItem(TOKEN_KEY);
  createRoot(document.getElementById("root")!).render(
    <StrictMode>
      <WasmodProvider<Tables>
        url={location.origin}
        token={token}
        onConnect={(client) => {
          if (!user) localStorage.setItem(TOKEN_KEY, client.token);
        }}
      >
        <App signIn={signIn} signedIn={Boolean(user)} />
      </WasmodProvider>
    </StrictMode>,
  );
}
