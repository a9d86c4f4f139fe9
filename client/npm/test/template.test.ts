/**
 * `wasmod new --template react`, as a user runs it outside the repository: the module and its
 * web app are made with the package's tarball (`npm pack`) as the app's `@wasmod/client`
 * (`--client`); `npm install` and `npm run build` in `web/` write the module's bindings
 * (`wasmod generate`, building the module), type-check the app against them strictly (a
 * misspelt reducer argument must be a type error) and build it with Vite; then the two run as
 * the generated README says to ship them (`wasmod serve <dir> --web web/dist`), and headless
 * Chromium adds a task and completes it through the page, with real key presses and clicks.
 */

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "./support/chromium.js";
import { ROOT, Server, WASMOD_ENV, tempDir, wasmodBinary } from "./support/server.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

describe("wasmod new --template react", () => {
  const parent = tempDir();
  const data = tempDir();
  const profile = tempDir();
  const app = join(parent.path, "tasks");
  const web = join(app, "web");
  /** Runs `command` in `cwd` with the tests' environment (the `wasmod` under test as WASMOD). */
  const run = (command: string, args: string[], cwd: string) =>
    execFileSync(command, args, { cwd, stdio: "pipe", env: { ...WASMOD_ENV, WASMOD: wasmodBinary() } }).toString();

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
});
