/**
 * Optional sign-in with an OpenID Provider (Auth0, Keycloak, Google, a company's SSO), with
 * `oidc-client-ts`: the authorization code flow with PKCE, for a public client (no secret in
 * the page). On only when the app is built with `VITE_OIDC_ISSUER` and `VITE_OIDC_CLIENT_ID`
 * (in `.env.local`, or the environment of `npm run dev`/`npm run build`); without them the app
 * connects as an anonymous identity the server makes (its token kept in `localStorage`).
 *
 * Signed in, the app connects with the provider's ID token, which the server verifies against
 * the issuer's keys (`wasmod serve --oidc-issuer <issuer>=<client id>`): the identity is the
 * user's at that issuer, the same on every server and after every sign-in.
 */

import { UserManager, WebStorageStateStore, type User } from "oidc-client-ts";

/** The sign-in of a configured app. */
export class SignIn {
  private readonly manager: UserManager;
  /** Whether the token provider has been asked once on this page. */
  private asked = false;
  /** Why the provider's last answer did not sign the user in (they declined, say), if so. */
  failure: string | undefined;

  constructor(issuer: string, clientId: string) {
    // The provider sends the browser back to the app's page (the redirect URI to register at
    // the provider), for a sign-in and for a silent renewal in a hidden frame alike.
    const back = new URL("/", location.href).href;
    this.manager = new UserManager({
      authority: issuer,
      client_id: clientId,
      redirect_uri: back,
      silent_redirect_uri: back,
      scope: "openid profile email",
      // Renewed when the server asks for a new token (`tokenProvider`), not on a timer.
      automaticSilentRenew: false,
      // Signed in across tabs and visits until the user signs out.
      userStore: new WebStorageStateStore({ store: localStorage }),
    });
  }

  /** Whether this page is the provider's answer in the hidden frame of a silent renewal. */
  get inRenewalFrame(): boolean {
    return window.parent !== window && isAnswer();
  }

  /**
   * Completes a sign-in (or a silent renewal) if this page is the provider's answer, removing
   * the answer from the address bar; then the signed-in user, if any. An answer that signs
   * nobody in (an error from the provider) is kept in {@link failure}.
   */
  async user(): Promise<User | null> {
    if (isAnswer()) {
      try {
        const signedIn = await this.manager.signinCallback();
        if (signedIn !== undefined) return signedIn;
      } catch (error) {
        this.failure = `the sign-in failed: ${error instanceof Error ? error.message : String(error)}`;
      } finally {
        history.replaceState(null, "", location.pathname);
      }
    }
    return this.manager.getUser();
  }

  /** Sends the browser to the provider's sign-in page; it comes back to the app signed in. */
  signIn(): Promise<void> {
    return this.manager.signinRedirect();
  }

  /** Signs out of the app (not of the provider) and reloads it, anonymous. */
  async signOut(): Promise<void> {
    await this.manager.removeUser();
    location.reload();
  }

  /**
   * The token provider of the connection: the ID token kept from the sign-in the first time;
   * when the server refused that one as expired, a new one from a silent renewal (the
   * provider's session, in a hidden frame), or, when that fails, a new sign-in (which leaves
   * the page, and connects again when it comes back).
   */
  readonly tokenProvider = async (): Promise<string> => {
    const first = !this.asked;
    this.asked = true;
    const user = first ? await this.manager.getUser() : await this.manager.signinSilent().catch(() => null);
    if (user?.id_token !== undefined) return user.id_token;
    await this.manager.signinRedirect();
    throw new Error("signing in again");
  };
}

/** Whether the address is the provider's answer: a code (or an error) and the request's state. */
function isAnswer(): boolean {
  const query = new URLSearchParams(location.search);
  return query.has("state") && (query.has("code") || query.has("error"));
}

/** The app's sign-in, if it is configured. */
export const signIn: SignIn | undefined =
  import.meta.env.VITE_OIDC_ISSUER && import.meta.env.VITE_OIDC_CLIENT_ID
    ? new SignIn(import.meta.env.VITE_OIDC_ISSUER, import.meta.env.VITE_OIDC_CLIENT_ID)
    : undefined;
