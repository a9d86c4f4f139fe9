/**
 * The package through bundlers, unchanged: a page importing `@wasmod/client` (installed from
 * the packed tarball into a new project) is built by `vite build`, webpack 5 and Rspack, each with
 * no configuration about the wasm, then served by `wasmod serve --web` beside the quickstart
 * (or served by Vite's dev server, its API proxied to the module) and run in headless Chromium: it connects, subscribes and sends a message, and shows what
 * its cache holds. This checks what docs/client-web.md claims: that the bundlers find the
 * package's browser entry (not the Node one), emit its `.wasm` and rewrite the URL the
 * wasm-bindgen glue loads it from. (The first run of this test found the package's
 * `sideEffects: false` letting both bundlers drop the entry's registration of its loader.)
 */

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build as viteBuild, createServer as viteServer } from "vite";
import webpack from "webpack";
import { rspack } from "@rspack/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "./support/chromium.js";
import { Server, tempDir } from "./support/server.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

/** How long one bundler's build and page may take on a loaded machine. */
const BUNDLE_WITHIN = 150_000;

/** The page's script: what an app does first, its outcome written into the page. */
const APP = `
import { Client } from "@wasmod/client";

const out = document.getElementById("out");
const bundler = document.body.dataset.bundler;
try {
  const client = await Client.connect(location.origin);
  await client.subscribed(["SELECT * FROM message"]);
  await client.callReducer("send", ["hello from " + bundler]);
  const texts = client.rows("message").map((row) => row.text);
  out.textContent = JSON.stringify({ ok: true, identity: client.identity, texts });
} catch (error) {
  out.textContent = JSON.stringify({ ok: false, error: String(error?.stack ?? error) });
}
document.body.dataset.done = "true";
`;

/** A page for `bundler` loading `script`. */
function page(bundler: string, script: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${bundler}</title></head>` +
    `<body data-bundler="${bundler}"><pre id="out"></pre>${script}</body></html>\n`;
}

/** Every file under `dir`, relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

describe("the package through bundlers, in Chromium", () => {
  const project = tempDir();
  const data = tempDir();
  const profile = tempDir();
  let browser: Browser;

  beforeAll(async () => {
    const dir = project.path;
    execFileSync("npm", ["pack", "--pack-destination", dir], { cwd: PACKAGE, stdio: "pipe" });
    const { version } = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", join(dir, `wasmod-client-${version}.tgz`)], {
      cwd: dir,
      stdio: "pipe",
    });
    writeFileSync(join(dir, "app.js"), APP);
    browser = await Browser.start(profile.path);
  });

  afterAll(async () => {
    await browser?.stop();
    for (const dir of [project, data, profile]) dir.remove();
  });

  /** Serves `dist` with the quickstart, opens it, and returns what the page wrote. */
  async function run(dist: string): Promise<{ ok: boolean; texts?: string[]; error?: string }> {
    const server = await Server.start({ data: data.path, web: dist });
    try {
      await browser.goto(`${server.url}/index.html`);
      const text = await browser.waitFor(
        "the page's outcome",
        "return document.body.dataset.done === 'true' ? document.getElementById('out').textContent : null",
      );
      return JSON.parse(text as string);
    } finally {
      await server.stop();
    }
  }

  /** The bundle's JavaScript: the browser entry's, not the Node entry's. */
  function expectBrowserBundle(dist: string): void {
    const all = files(dist);
    expect(all.filter((file) => file.endsWith(".wasm")), "the emitted .wasm").toHaveLength(1);
    const scripts = all.filter((file) => file.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      expect(readFileSync(join(dist, script), "utf8")).not.toContain("node:fs");
    }
  }

  it("works when built by vite build", async () => {
    const dir = project.path;
    const dist = join(dir, "vite-dist");
    writeFileSync(join(dir, "index.html"), page("vite", `<script type="module" src="./app.js"></script>`));
    await viteBuild({
      root: dir,
      configFile: false,
      logLevel: "warn",
      build: { outDir: dist, emptyOutDir: true, target: "es2022" },
    });
    expectBrowserBundle(dist);
    const outcome = await run(dist);
    expect(outcome.error).toBeUndefined();
    expect(outcome.ok).toBe(true);
    expect(outcome.texts).toContain("hello from vite");
  }, BUNDLE_WITHIN);

  it("works when built by webpack 5", async () => {
    const dir = project.path;
    const dist = join(dir, "webpack-dist");
    const stats = await new Promise<webpack.Stats>((resolve, reject) => {
      webpack(
        {
          mode: "production",
          context: dir,
          entry: "./app.js",
          target: "web",
          output: { path: dist, filename: "app.js", publicPath: "/", clean: true },
        },
        (error, result) => (error || !result ? reject(error) : resolve(result)),
      );
    });
    expect(stats.hasErrors(), stats.toString("errors-only")).toBe(false);
    writeFileSync(join(dist, "index.html"), page("webpack", `<script src="/app.js"></script>`));
    expectBrowserBundle(dist);
    const outcome = await run(dist);
    expect(outcome.error).toBeUndefined();
    expect(outcome.ok).toBe(true);
    expect(outcome.texts).toContain("hello from webpack");
  }, BUNDLE_WITHIN);

  it("works when built by Rspack", async () => {
    const dir = project.path;
    const dist = join(dir, "rspack-dist");
    const stats = await new Promise<import("@rspack/core").Stats>(
      (resolve, reject) => {
        rspack(
          {
            mode: "production",
            context: dir,
            entry: "./app.js",
            target: "web",
            output: { path: dist, filename: "app.js", publicPath: "/", clean: true },
          },
          (error, result) => (error || !result ? reject(error) : resolve(result)),
        );
      },
    );
    expect(stats.hasErrors(), stats.toString({ preset: "errors-only" })).toBe(false);
    writeFileSync(join(dist, "index.html"), page("rspack", `<script src="/app.js"></script>`));
    expectBrowserBundle(dist);
    const outcome = await run(dist);
    expect(outcome.error).toBeUndefined();
    expect(outcome.ok).toBe(true);
    expect(outcome.texts).toContain("hello from rspack");
  }, BUNDLE_WITHIN);

  // Vite 8's dev server pre-bundles the package into node_modules/.vite/deps and still finds
  // its .wasm; older ones did not (docs/client-web.md), where leaving it out is the way.
  for (const [how, exclude] of [
    ["pre-bundled (unchanged)", []],
    ["left out of pre-bundling", ["@wasmod/client"]],
  ] as const) {
    it(`works from Vite's dev server, the package ${how}`, async () => {
      const dir = project.path;
      writeFileSync(join(dir, "index.html"), page("vite dev", `<script type="module" src="./app.js"></script>`));
      rmSync(join(dir, "node_modules", ".vite"), { recursive: true, force: true });
      const server = await Server.start({ data: data.path });
      const dev = await viteServer({
        root: dir,
        configFile: false,
        logLevel: "warn",
        optimizeDeps: { exclude: [...exclude] },
        // The page's origin is Vite's: the API and the socket go through to the served module.
        server: {
          host: "127.0.0.1",
          port: 0,
          proxy: { "/v1": { target: server.url, ws: true } },
        },
      });
      try {
        await dev.listen();
        const address = dev.httpServer!.address() as { port: number };
        await browser.goto(`http://127.0.0.1:${address.port}/index.html`);
        const text = await browser.waitFor(
          "the page's outcome",
          "return document.body.dataset.done === 'true' ? document.getElementById('out').textContent : null",
        );
        const outcome = JSON.parse(text as string);
        expect(outcome.error).toBeUndefined();
        expect(outcome.ok).toBe(true);
        expect(outcome.texts).toContain("hello from vite dev");
        const bundled = files(join(dir, "node_modules", ".vite")).some((file) => file.includes("wasmod_client"));
        expect(bundled, "pre-bundled").toBe(exclude.length === 0);
      } finally {
        await dev.close();
        await server.stop();
      }
    }, BUNDLE_WITHIN);
  }
});
