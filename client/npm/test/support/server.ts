/**
 * A real `wasmod serve` of the quickstart module for the live tests: the built `wasmod` binary
 * (WASMOD_BIN, or the workspace's `target/debug/wasmod`, which `cargo test --workspace`
 * builds) on a loopback port, with a data directory of its own that goes when it stops.
 *
 * It serves the quickstart's crate, which `wasmod serve` builds for wasm32 (into
 * `target/wasm-tests`, where the Rust tests' nested builds go, so CI builds it once), or
 * another module given, to which new builds may be published ({@link Server.publish};
 * {@link notesBuilds} builds those of the tests of `wasmod publish`). A missing binary fails
 * the test, saying how to build it: the live tests never skip.
 */

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { URL as NodeURL, fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The repository's root. (Node's `URL`: the React tests run in jsdom, which replaces the global one.) */
export const ROOT = fileURLToPath(new NodeURL("../../../../", import.meta.url));

/** How long a server may take to start (the first start builds the module). */
const START_WITHIN_MS = 170_000;

/** A loopback port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The `wasmod` binary to run. */
export function wasmodBinary(): string {
  const binary = process.env.WASMOD_BIN ?? join(ROOT, "target", "debug", "wasmod");
  if (!existsSync(binary)) {
    throw new Error(
      `no wasmod binary at ${binary}: build it (cargo build -p wasmod-cli --bin wasmod) or ` +
        "set WASMOD_BIN to one",
    );
  }
  return binary;
}

/** Where `wasmod serve` and {@link notesBuilds} build modules: the Rust tests' directory. */
const MODULES_TARGET = join(ROOT, "target", "wasm-tests");

/** The operator token of the test servers (`wasmod publish` needs one). */
const OPERATOR_TOKEN = "operator-token-of-the-npm-tests";

/** The environment of the `wasmod` commands the tests run (and of the builds they start). */
export const WASMOD_ENV = {
  ...process.env,
  CARGO_TARGET_DIR: MODULES_TARGET,
  WASMOD_OPERATOR_TOKEN: OPERATOR_TOKEN,
};

/**
 * The builds of the notes module (`host/tests/modules/notes`), which the Rust tests of
 * `wasmod publish` use too, built by cargo if they are not already: build 1 (the library),
 * `notesFiltered` (build 1 with a visibility filter on notes: the same columns) and
 * `notesV2` (notes gained a column).
 */
export async function notesBuilds(): Promise<{ notes: string; notesFiltered: string; notesV2: string }> {
  await run(
    "cargo",
    ["build", "--quiet", "--release", "--target", "wasm32-unknown-unknown", "-p", "notes", "--lib", "--examples"],
    { cwd: ROOT, env: WASMOD_ENV },
  );
  const dir = join(MODULES_TARGET, "wasm32-unknown-unknown", "release");
  return {
    notes: join(dir, "notes.wasm"),
    notesFiltered: join(dir, "examples", "notes_filtered.wasm"),
    notesV2: join(dir, "examples", "notes_v2.wasm"),
  };
}

/** A running `wasmod serve`. */
export class Server {
  private constructor(
    private readonly child: ChildProcess,
    /** `http://127.0.0.1:PORT`. */
    readonly url: string,
    private readonly logs: string[],
  ) {}

  /**
   * Serves `module` (a crate's directory or a `.wasm`; the quickstart by default) on `port`
   * (a free one by default) with its data in the directory `data` (see {@link tempDir}), and
   * the static files of the directory `web` at `/` if given, and `args`, more options of
   * `wasmod serve` (`--oidc-issuer`), and waits until it listens.
   */
  static async start(options: {
    data: string;
    port?: number;
    web?: string;
    module?: string;
    args?: readonly string[];
  }): Promise<Server> {
    const port = options.port ?? (await freePort());
    const data = options.data;
    const web = options.web === undefined ? [] : ["--web", options.web];
    const module = options.module ?? join(ROOT, "examples", "quickstart");
    const child = spawn(
      wasmodBinary(),
      ["serve", module, "--listen", `127.0.0.1:${port}`, "--data", data, ...web, ...(options.args ?? [])],
      { stdio: ["ignore", "pipe", "pipe"], env: WASMOD_ENV },
    );
    // Should the test process end without stopping it (a crash, a time-out), it goes too.
    const orphaned = () => child.kill("SIGKILL");
    process.once("exit", orphaned);
    child.once("exit", () => process.removeListener("exit", orphaned));
    const logs: string[] = [];
    createInterface({ input: child.stderr! }).on("line", (line) => {
      logs.push(line);
      if (logs.length > 200) logs.shift();
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`wasmod serve did not listen within ${START_WITHIN_MS} ms:\n${logs.join("\n")}`));
      }, START_WITHIN_MS);
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const address = /^listening on (http:\/\/\S+)/.exec(line);
        if (address) {
          clearTimeout(timer);
          resolve(address[1]!);
        }
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`wasmod serve exited (${signal ?? code}) before listening:\n${logs.join("\n")}`));
      });
    });
    return new Server(child, url, logs);
  }

  /** Publishes the build `wasm` (a `.wasm` file) to the server: `wasmod publish`. */
  async publish(wasm: string): Promise<void> {
    await run(wasmodBinary(), ["publish", this.url, wasm], { env: WASMOD_ENV });
  }

  /** What the server logged lately, for failure messages. */
  recentLogs(): string {
    return this.logs.join("\n");
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and waits for its exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return;
    }
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** A new temporary directory, and the function that removes it. */
export function tempDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), "wasmod-npm-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Resolves once `check()` holds, polling; rejects with `what` after `withinMs`. */
export async function until(what: string, check: () => boolean, withinMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > withinMs) {
      throw new Error(`${what}: not within ${withinMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
