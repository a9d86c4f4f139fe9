// The app's build-time settings (Vite's `import.meta.env`): set both to turn sign-in on
// (`src/auth.ts`), in `.env.local` or the environment of `npm run dev`/`npm run build`.
interface ImportMetaEnv {
  /** The OpenID Provider's issuer URL, e.g. `https://your-tenant.eu.auth0.com/`. */
  readonly VITE_OIDC_ISSUER?: string;
  /** The app's client id at that provider (a public client: no secret). */
  readonly VITE_OIDC_CLIENT_ID?: string;
}
