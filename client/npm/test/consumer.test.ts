/**
 * The package as a user gets it: `npm pack` makes the tarball, a new project outside the
 * repository installs it (with `ws`, its optional peer, for Node 20), `tsc --noEmit --strict`
 * type-checks a TypeScript program over the package and the quickstart's generated bindings
 * (examples/quickstart/web/module_bindings.ts, as `wasmod generate --lang typescript` wrote
 * them), with a misspelt table, column, field and argument that must each be a type error
 * (`@ts-expect-error` fails the check where there is none), then `tsc` compiles it and Node runs
 * it against a served quickstart: it connects, subscribes, sends a message through the
 * bindings and prints what its cache holds; once over `ws` (Node 20 has no global WebSocket),
 * once over Node's own (`--experimental-websocket`).
 */

import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, Server, tempDir } from "./support/server.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const TSC = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");

/** The version of `dependency` the package's lock file pins. */
function locked(dependency: string): string {
  const lock = JSON.parse(readFileSync(join(PACKAGE, "package-lock.json"), "utf8"));
  return lock.packages[`node_modules/${dependency}`].version;
}

/** The consumer's program: it must type-check under --strict and run. */
const MAIN = `
import { Client, type ConnectionState } from "@wasmod/client";
import { DbConnection, type Message, type Tables, type User } from "./module_bindings.js";

/** A misspelt table is a type error (tsc fails if this line is not one). */
export function misspelt(client: Client<Tables>): unknown[] {
  // @ts-expect-error: the module has no table \`mesage\`.
  return client.rows("mesage");
}

/** The generated bindings are typed: a misspelt column, field or argument is a type error. */
export function misspeltColumn(connection: DbConnection): unknown {
  // @ts-expect-error: users have no column \`nmae\` to find by.
  return connection.db.user.findByNmae("alice");
}
export function misspeltField(message: Message): unknown {
  // @ts-expect-error: a message has no field \`txt\`.
  return message.txt;
}
export function wrongArgument(connection: DbConnection): unknown {
  // @ts-expect-error: \`send\`'s \`text\` is a string.
  return connection.reducers.send({ text: 42 });
}
export function misspeltArgument(connection: DbConnection): unknown {
  // @ts-expect-error: \`send\` has no argument \`txt\` (and misses \`text\`).
  return connection.reducers.send({ txt: "hello" });
}
export function wrongCallback(connection: DbConnection): void {
  // @ts-expect-error: an insert callback gets a Message, which has no \`name\`.
  connection.db.message.onInsert((message) => message.name);
}

/** Lookups by column name: an indexed column (unique for a find), a value of its type. */
export function lookups(connection: DbConnection, identity: string): unknown[] {
  const me: User | undefined = connection.db.user.find("identity", identity);
  const alice: User | undefined = connection.db.user.find("name", "alice");
  const mine: Message[] = connection.db.message.filter("sender", identity);
  const first: Message[] = connection.db.message.filter("id", 1);
  // @ts-expect-error: users have no column \`nmae\`.
  connection.db.user.find("nmae", "alice");
  // @ts-expect-error: a message's \`text\` is not indexed: nothing finds or filters by it.
  connection.db.message.filter("text", "hello");
  // @ts-expect-error: a message's \`sender\` is not unique: filter by it, not find.
  connection.db.message.find("sender", identity);
  // @ts-expect-error: an \`id\` is a number or its digits, not a boolean.
  connection.db.message.find("id", true);
  return [me, alice, mine, first];
}

/** Row callbacks return the function that removes them. */
export function removable(connection: DbConnection): () => void {
  return connection.db.message.onInsert(() => {});
}

const client = await Client.connect<Tables>(process.argv[2]!);
const states: ConnectionState[] = [];
client.onConnectionState((state) => states.push(state));
const connection = new DbConnection(client);
await client.subscribed(["SELECT * FROM message", "SELECT * FROM user"]);
let inserts = 0;
const stop = connection.db.message.onInsert(() => inserts++);
await connection.reducers.send({ text: "hello from a consumer" });
stop();
await connection.reducers.send({ text: "unheard" });
const texts: string[] = connection.db.message.rows().map((message: Message) => message.text);
const me: User | undefined = connection.db.user.findByIdentity(client.identity);
// Rows are read anew at each call: the same row, not the same object.
const found = me !== undefined && JSON.stringify(connection.db.user.find("identity", client.identity)) === JSON.stringify(me);
const filtered = connection.db.message.filter("sender", client.identity).length;
const drafts: Tables["draft"][] = client.rows("draft");
await client.disconnect();
console.log(JSON.stringify({ identity: client.identity, texts, online: me?.online, states, drafts, inserts, found, filtered }));
`;

describe("the packed package in a clean consumer project", () => {
  const consumer = tempDir();
  const data = tempDir();
  let server: Server;

  beforeAll(async () => {
    execFileSync("npm", ["pack", "--pack-destination", consumer.path], { cwd: PACKAGE, stdio: "pipe" });
    server = await Server.start({ data: data.path });
  });

  afterAll(async () => {
    await server?.stop();
    consumer.remove();
    data.remove();
  });

  it("installs from the tarball, type-checks strictly, and runs against a served module", () => {
    const dir = consumer.path;
    const { version } = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    run("npm", [
      "install", "--no-audit", "--no-fund",
      join(dir, `wasmod-client-${version}.tgz`),
      `ws@${locked("ws")}`,
      `@types/node@${locked("@types/node")}`,
    ], dir);
    copyFileSync(join(ROOT, "examples", "quickstart", "web", "module_bindings.ts"), join(dir, "module_bindings.ts"));
    writeFileSync(join(dir, "main.ts"), MAIN);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          // A Node project's: no DOM library (the Node entry's types need none).
          lib: ["ES2022"],
          types: ["node"],
          strict: true,
          skipLibCheck: false,
          outDir: "out",
        },
        files: ["main.ts", "module_bindings.ts"],
      }),
    );
    run(process.execPath, [TSC, "--noEmit", "--strict", "-p", dir], dir);
    run(process.execPath, [TSC, "-p", dir], dir);

    const printed = run(process.execPath, [join(dir, "out", "main.js"), server.url], dir);
    const result = JSON.parse(printed.trim().split("\n").at(-1)!);
    expect(result.identity).toMatch(/^[0-9a-f]{64}$/);
    expect(result.texts).toContain("hello from a consumer");
    expect(result.online).toBe(true);
    expect(result.states).toEqual(["disconnected"]);
    expect(result.drafts).toEqual([]);
    expect(result.inserts).toBe(1); // removed before "unheard"
    expect(result.found).toBe(true);
    expect(result.filtered).toBe(2); // the client's own two messages

    // Node's own WebSocket (20 has it behind a flag, 22 without): the client uses the global
    // one where there is one, whose events are not `ws`'s.
    const flagged = run(process.execPath, ["--experimental-websocket", join(dir, "out", "main.js"), server.url], dir);
    const second = JSON.parse(flagged.trim().split("\n").at(-1)!);
    expect(second.identity).not.toBe(result.identity);
    expect(second.texts.filter((text: string) => text === "hello from a consumer")).toHaveLength(2);
    expect(second.filtered).toBe(2);
  }, 300_000); // An install from the registry, two compilations and two runs, on a loaded machine.

  it("installed only what a user gets: the entry points, their types and the wasm", () => {
    const installed = join(consumer.path, "node_modules", "@wasmod", "client");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    expect(Object.keys(manifest.exports)).toEqual([".", "./react", "./wasm", "./package.json"]);
    const entries = ["node", "browser", "react-node", "react-browser", "react"].flatMap((name) => [
      `dist/${name}.js`,
      `dist/${name}.d.ts`,
    ]);
    for (const file of [...entries, "wasm/wasmod_client_web_bg.wasm"]) {
      expect(readFileSync(join(installed, file)).length, file).toBeGreaterThan(0);
    }
    // React is an optional peer: the consumer (which does not use the hooks) did not get it,
    // and type-checked and ran without it (above).
    expect(manifest.peerDependenciesMeta.react.optional).toBe(true);
    expect(() => readFileSync(join(consumer.path, "node_modules", "react", "package.json"))).toThrow();
    // Nothing of the build or the tests.
    expect(() => readFileSync(join(installed, "src", "client.ts"))).toThrow();
    expect(() => readFileSync(join(installed, "test", "live.test.ts"))).toThrow();
  });
});

/** Runs `command`; its stdout, or an error with everything it printed. */
function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: "pipe", timeout: 170_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed: ${failed.message}\n${failed.stdout ?? ""}\n${failed.stderr ?? ""}`);
  }
}
