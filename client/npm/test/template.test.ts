/**
 * `wasmod new --template react`, as a user runs it outside the repository: the module and its
 * web app are made with the package's tarball (`npm pack`) as the app's `@wasmod/client`
 * (`--client`); `npm install` and `npm run build` in `web/` write the module's bindings
 * (`wasmod generate`, building the module), type-check the app against them strictly (a
 * misspelt reducer argument must be a type error) and build it with Vite; then the two run as
 * the generated README says to ship them (`wasmod serve <dir> --web web/dist`), and headless
 * Chromium adds a task and completes it through the page, with real key presses and clicks.
 *
 * Then its optional sign-in, with a real OpenID Provider (npm's `oidc-provider`, the script of
 * `tools/oidc-provider`): the module made to require sign-in (`SIGN_IN_REQUIRED`) and the app
 * built again with the provider's issuer and client id, served by `wasmod serve
 * --oidc-issuer`; an anonymous visitor is refused, saying so; alice clicks "Sign in", signs in
 * on the provider's pages, comes back connected as her identity at that issuer, named by the
 * module from her token's `name` claim, and adds a task; bob, in another
 * browser, cancels a first sign-in (the app says so), then signs in: another identity; the server restarted with a new signing secret once alice's
 * ID token has expired, her page gets a new one by itself (the server refused the old one as
 * expired; the app's token provider renewed it silently, in a hidden frame) and is the same
 * identity, her task still hers; bob's page, whose session at the provider ended, sends him
 * to sign in again and comes back as him; and alice signing in again in a new browser is the
 * same identity too.
 */

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "./support/chromium.js";
import { oidcIdentity } from "./support/issuer.js";
import { OidcProvider } from "./support/oidc-provider.js";
import { ROOT, Server, WASMOD_ENV, freePort, tempDir, wasmodBinary } from "./support/server.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

describe("wasmod new --template react", () => {
  const parent = tempDir();
  const data = tempDir();
  const profile = tempDir();
  const app = join(parent.path, "tasks");
  const web = join(app, "web");
  /**
   * Runs `command` in `cwd` with the tests' environment (the `wasmod` under test as WASMOD),
   * and `env` too.
   */
  const run = (command: string, args: string[], cwd: string, env: Record<string, string> = {}) =>
    execFileSync(command, args, { cwd, stdio: "pipe", env: { ...WASMOD_ENV, WASMOD: wasmodBinary(), ...env } }).toString();

  beforeAll(() => {
    execFileSync("npm", ["pack", "--pack-destination", parent.path], { cwd: PACKAGE, stdio: "pipe" });
    const { version } = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
    const tarball = join(parent.path, `wasmod-client-${version}.tgz`);
    const said = run(wasmodBinary(), ["new", "--template", "react", "tasks", "--client", tarball], parent.path);
    expect(said).toContain(`the app's @wasmod/client: file:${tarball}`);
    expect(said).toContain("wasmod serve tasks");
    // The workspace's lock file: the module's crates at the versions of the rest of the run.
    copyFileSync(join(ROOT, "Cargo.lock"), join(app, "Cargo.lock"));
  });

  afterAll(() => {
    for (const dir of [parent, data, profile]) dir.remove();
  });

  it("makes a web app that installs, type-checks against the module's bindings and builds", () => {
    const manifest = JSON.parse(readFileSync(join(web, "package.json"), "utf8"));
    expect(manifest.dependencies["@wasmod/client"]).toMatch(/^file:.*wasmod-client-.*\.tgz$/);
    run("npm", ["install", "--no-audit", "--no-fund"], web);
    run("npm", ["run", "build"], web);
    expect(readFileSync(join(web, "src", "module_bindings.ts"), "utf8")).toContain("export class DbConnection");
    expect(existsSync(join(web, "dist", "index.html"))).toBe(true);
    // The app is checked against the module: what does not fit it is a type error
    // (`@ts-expect-error` fails the check where there is none).
    writeFileSync(
      join(web, "src", "misspelt.ts"),
      `import type { DbConnection, Task } from "./module_bindings.ts";
export function misspeltArgument(db: DbConnection): unknown {
  // @ts-expect-error: \`add\` takes a \`title\`.
  return db.reducers.add({ titel: "x" });
}
export function misspeltColumn(task: Task): unknown {
  // @ts-expect-error: a task has no \`name\`.
  return task.name;
}
`,
    );
    run("npm", ["run", "typecheck"], web);
  }, 400_000); // npm install, a module built for wasm32, tsc and Vite, on a loaded machine

  it("runs: served with its module, a task is added and completed in Chromium", async () => {
    const server = await Server.start({ data: data.path, module: app, web: join(web, "dist") });
    const browser = await Browser.start(profile.path);
    try {
      await browser.goto(`${server.url}/index.html`);
      await browser.waitFor(
        "the app connected and subscribed",
        "return document.getElementById('status')?.textContent === 'connected' ? true : null",
      );
      await browser.type("#title", "water the plants");
      await browser.click("button[type=submit]");
      await browser.waitFor(
        "the task listed",
        "return document.querySelector('#tasks li span')?.textContent === 'water the plants' ? true : null",
      );
      await browser.click("#tasks li button");
      await browser.waitFor("the task done", "return document.querySelector('#tasks li.done') ? true : null");
      await browser.type("#title", "   ");
      await browser.click("button[type=submit]");
      const error = await browser.waitFor(
        "the module's refusal shown",
        "return document.getElementById('error')?.textContent || null",
      );
      expect(error).toContain("a task needs a title");
    } finally {
      await browser.stop();
      await server.stop();
    }
  }, 300_000);

  it("signs in with an OpenID Provider: the user's identity at the issuer, the same under a new secret", async () => {
    // The app's address is the redirect URI the provider knows, so its port is chosen first.
    const port = await freePort();
    const appUrl = `http://127.0.0.1:${port}/`;
    // ID tokens valid for 1 s: accepted for the server's 30 s of leeway past that, then
    // refused as expired.
    const provider = await OidcProvider.start("spa", appUrl, 1);
    const LEEWAY_MS = 30_000;
    const signInData = tempDir();
    const profiles = [tempDir(), tempDir(), tempDir()];
    const browsers: Browser[] = [];
    let server: Server | undefined;
    const serve = async () => {
      server = await Server.start({
        port,
        data: signInData.path,
        module: app,
        web: join(web, "dist-signin"),
        args: ["--oidc-issuer", `${provider.issuer}=spa`, "--oidc-allow-http-loopback"],
      });
    };
    /**
     * Signs in as `user` on the provider's login page (open in `browser`), then consents, and
     * waits until the app is back and connected.
     */
    const onProviderPages = async (browser: Browser, user: string) => {
      await browser.type("input[name=login]", user);
      await browser.type("input[name=password]", "any password");
      await browser.click("button[type=submit]");
      await browser.waitFor(
        "the provider's consent page",
        "return document.querySelector('input[name=prompt]')?.value === 'consent' ? true : null",
      );
      await browser.click("button[type=submit]");
      await browser.waitFor(
        "back in the app, connected",
        "return document.getElementById('status')?.textContent === 'connected' ? true : null",
      );
    };
    /** A new browser that opens the app and signs in as `user` on the provider's pages. */
    const signIn = async (profile: string, user: string, cancelFirst = false): Promise<Browser> => {
      const browser = await Browser.start(profile);
      browsers.push(browser);
      await browser.goto(appUrl);
      // Anonymous, the module refuses the connection, and the page says why.
      const refused = await browser.waitFor(
        "the module's refusal of an anonymous visitor",
        "return document.getElementById('error')?.textContent || null",
      );
      expect(refused).toContain("sign in to use this app");
      const loginPage = async () => {
        await browser.waitFor("the app's sign-in button", "return document.getElementById('sign-in') ? true : null");
        await browser.click("#sign-in");
        await browser.waitFor(
          "the provider's login page",
          "return document.querySelector('input[name=prompt]')?.value === 'login' ? true : null",
        );
      };
      await loginPage();
      if (cancelFirst) {
        // The provider's "[ Cancel ]": back in the app, which says so, still anonymous.
        await browser.click("a[href*='/abort']");
        const said = await browser.waitFor(
          "the app saying the sign-in failed",
          "return document.getElementById('account')?.textContent.includes('failed') ? document.getElementById('account').textContent : null",
        );
        expect(said).toContain("the sign-in failed: End-User aborted interaction");
        expect(await browser.execute("return location.search")).toBe("");
        await loginPage();
      }
      await onProviderPages(browser, user);
      return browser;
    };
    /** The ID token the app keeps of its signed-in user (oidc-client-ts's `oidc.user:…` entry). */
    const storedIdToken = (browser: Browser) =>
      browser.execute(
        "return JSON.parse(localStorage.getItem(Object.keys(localStorage).find((key) => key.startsWith('oidc.user:')))).id_token",
      );
    /** The tasks as `GET /v1/tables/task` has them: title and owner. */
    const tasks = async () => {
      const answer = await fetch(`${server!.url}/v1/tables/task`);
      const { rows } = (await answer.json()) as { rows: { title: string; owner: string }[] };
      return rows.map(({ title, owner }) => ({ title, owner }));
    };
    const listed = (title: string) =>
      `return [...document.querySelectorAll('#tasks li span')].some((span) => span.textContent === ${JSON.stringify(title)}) ? true : null`;
    try {
      // Sign-in required, as the module's README says to: anonymous callers refused.
      const lib = join(app, "src", "lib.rs");
      const module = readFileSync(lib, "utf8");
      const required = module.replace(
        "pub const SIGN_IN_REQUIRED: bool = false;",
        "pub const SIGN_IN_REQUIRED: bool = true;",
      );
      expect(required).not.toBe(module);
      writeFileSync(lib, required);
      run("npx", ["vite", "build", "--outDir", "dist-signin"], web, {
        VITE_OIDC_ISSUER: provider.issuer,
        VITE_OIDC_CLIENT_ID: "spa",
      });
      await serve();
      const alice = oidcIdentity(provider.issuer, "alice");
      const bob = oidcIdentity(provider.issuer, "bob");

      const first = await signIn(profiles[0]!.path, "alice");
      const aliceSignedIn = Date.now();
      // The name the module kept from her token's `name` claim.
      await first.waitFor("alice's name", "return document.getElementById('name')?.textContent === 'Alice' ? true : null");
      const signedInToken = await storedIdToken(first);
      expect(signedInToken).toMatch(/^ey/);
      await first.type("#title", "alice's task");
      await first.click("button[type=submit]");
      await first.waitFor("alice's task listed", listed("alice's task"));
      expect(await tasks()).toEqual([{ title: "alice's task", owner: alice }]);

      const second = await signIn(profiles[1]!.path, "bob", true);
      const bobSignedIn = Date.now();
      await second.waitFor("bob's name", "return document.getElementById('name')?.textContent === 'Bob' ? true : null");
      await second.type("#title", "bob's task");
      await second.click("button[type=submit]");
      await second.waitFor("bob's task listed", listed("bob's task"));
      expect(await second.execute("return document.querySelectorAll('#tasks li').length")).toBe(1);
      expect(await tasks()).toContainEqual({ title: "bob's task", owner: bob });

      // A new signing secret: server-signed tokens are void, OpenID Connect identities are not.
      // The server comes back once both ID tokens have expired: the pages must get new ones.
      // Bob's session at the provider ends meanwhile (its cookies, on the app's host too, are
      // deleted), so his page cannot renew silently: it must send him to sign in again.
      await server!.stop();
      const secretFile = join(signInData.path, "identity-secret");
      const secret = readFileSync(secretFile, "utf8");
      rmSync(secretFile);
      await second.deleteCookies();
      const expired = Math.max(aliceSignedIn, bobSignedIn) + 1_000 + LEEWAY_MS + 1_000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expired - Date.now())));
      await serve();
      expect(readFileSync(secretFile, "utf8")).not.toBe(secret);
      await first.waitFor(
        "alice's page back, with a renewed token",
        "return document.getElementById('status')?.textContent === 'connected' ? true : null",
      );
      await first.waitFor("alice's task, still hers, in her page", listed("alice's task"));
      const renewed = await storedIdToken(first);
      expect(renewed).not.toBe(signedInToken);
      await second.waitFor(
        "bob sent to the provider's login page",
        "return document.querySelector('input[name=prompt]')?.value === 'login' ? true : null",
      );
      await onProviderPages(second, "bob");
      await second.waitFor("bob's task, still his", listed("bob's task"));
      const again = await signIn(profiles[2]!.path, "alice");
      await again.waitFor("alice's task, still hers", listed("alice's task"));
      expect(await again.execute("return document.querySelectorAll('#tasks li').length")).toBe(1);
    } finally {
      for (const browser of browsers) await browser.stop();
      await server?.stop();
      await provider.stop();
      for (const dir of [signInData, ...profiles]) dir.remove();
    }
  }, 400_000); // a second Vite build, a provider, three browsers, a token left to expire, a restart
});
