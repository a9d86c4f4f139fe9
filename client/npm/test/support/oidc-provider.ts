/**
 * A real OpenID Provider for the browser sign-in tests: the script of the Rust harness
 * `wasmod-oidc-provider` (`tools/oidc-provider/provider/server.mjs`, npm's `oidc-provider`),
 * started as that crate starts it: `node server.mjs '<settings>'`, then one line
 * `listening <issuer>` once it accepts connections. Its users are alice ("Alice") and bob
 * ("Bob"), as the crate's default settings; its one client is the browser app's. It exits when
 * its standard input closes, so it never outlives the test process. Its packages are installed
 * by `.ci/run` (by hand: `npm ci --prefix tools/oidc-provider/provider`).
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ROOT, tempDir } from "./server.js";

/** The provider's directory in the repository. */
const PROVIDER = join(ROOT, "tools", "oidc-provider", "provider");

/** How long it may take to listen (1 to 1.7 s measured; the bound is for a busy machine). */
const START_WITHIN_MS = 60_000;

/** A running provider. */
export class OidcProvider {
  private constructor(
    private readonly child: ChildProcess,
    /** Its issuer identifier: `http://127.0.0.1:PORT`. */
    readonly issuer: string,
    private readonly keys: { remove: () => void },
  ) {}

  /**
   * Starts one whose public client `clientId` (PKCE, ID tokens signed RS256) sends the browser
   * back to `redirectUri`, and whose ID tokens are valid for `idTokenTtlS` seconds.
   */
  static async start(clientId: string, redirectUri: string, idTokenTtlS: number): Promise<OidcProvider> {
    if (!existsSync(join(PROVIDER, "node_modules", "oidc-provider"))) {
      throw new Error(`the OpenID Provider's packages are not installed: npm ci --prefix ${PROVIDER}`);
    }
    const keys = tempDir();
    const settings = {
      port: 0,
      keys: join(keys.path, "keys.json"),
      users: [
        { sub: "alice", name: "Alice", email: "alice@example.com" },
        { sub: "bob", name: "Bob", email: "bob@example.com" },
      ],
      clients: [
        { client_id: clientId, client_secret: null, redirect_uri: redirectUri, id_token_signed_response_alg: "RS256" },
      ],
      id_token_ttl: idTokenTtlS,
      access_token_ttl: 300,
    };
    const child = spawn(process.execPath, [join(PROVIDER, "server.mjs"), JSON.stringify(settings)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const log: string[] = [];
    createInterface({ input: child.stderr! }).on("line", (line) => log.push(line));
    const issuer = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`the OpenID Provider did not listen within ${START_WITHIN_MS} ms:\n${log.join("\n")}`));
      }, START_WITHIN_MS);
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line.startsWith("listening ")) {
          clearTimeout(timer);
          resolve(line.slice("listening ".length));
        } else {
          log.push(line);
        }
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the OpenID Provider exited (${signal ?? code}):\n${log.join("\n")}`));
      });
    });
    return new OidcProvider(child, issuer, keys);
  }

  /** Stops it (closing its standard input ends it) and removes its keys. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
      this.child.stdin!.end();
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    this.keys.remove();
  }
}
