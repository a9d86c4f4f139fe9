/**
 * `npm run bench:browser`: the client's decode and cache apply timed in headless Chromium by
 * the browser's own clock (`performance.now()`), over the scenarios of the native benches
 * (`cargo bench -p wasmod-protocol --bench decode`, `cargo bench -p wasmod-client --bench
 * cache`; issue 12's "seed 000" table), so that the two sets of figures sit side by side in
 * benches/RESULTS.md.
 *
 * It builds the browser client with its `bench` feature (client/web/src/bench.rs: the same
 * scenario files as the native benches), optimised as the package is (`web` profile,
 * `wasm-opt -Os --converge`), into a temporary directory, serves it with a page that times each scenario
 * (iterations doubled until one sample takes at least 25 ms, then 15 samples; the median and
 * the fastest, per run), drives Chromium to it, and prints the table. Gzip stands in for the
 * native benches' brotli: the browser build reads no brotli. Gzip is timed twice: inflated by
 * flate2 in wasm (this build's, as the package did before) with the decode, and inflated by the
 * platform's DecompressionStream (the package's way) alone.
 */

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "../test/support/chromium.js";
import { ROOT, tempDir } from "../test/support/server.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

/** The page's script: every scenario timed, the results in `window.benchResults`. */
const PAGE_SCRIPT = `
import init, { Bench, inflateFrame } from "./wasmod_client_web.js";

const SAMPLE_MS = 25;
const SAMPLES = 15;
try {
  await init();
  const bench = new Bench();
  const results = [];
  bench.names().forEach((name, index) => {
    let iterations = 1;
    while (bench.time(index, iterations) < SAMPLE_MS && iterations < 1 << 24) iterations *= 2;
    const perRun = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      perRun.push(bench.time(index, iterations) / iterations);
    }
    perRun.sort((a, b) => a - b);
    results.push({
      name,
      rows: bench.rows(index),
      iterations,
      medianMicros: perRun[SAMPLES >> 1] * 1000,
      fastestMicros: perRun[0] * 1000,
    });
  });
  // The package's gzip: inflated by the platform's DecompressionStream (asynchronous, so timed
  // here, one inflate awaited after the other), then decoded uncompressed in wasm.
  const names = bench.names();
  for (let index = 0; index < names.length; index++) {
    if (names[index] !== "decode transaction_update gzip") continue;
    const frame = bench.frame(index);
    const sample = async (iterations) => {
      const start = performance.now();
      for (let run = 0; run < iterations; run++) await inflateFrame(frame);
      return performance.now() - start;
    };
    let iterations = 1;
    while ((await sample(iterations)) < SAMPLE_MS && iterations < 1 << 20) iterations *= 2;
    const perRun = [];
    for (let s = 0; s < SAMPLES; s++) perRun.push((await sample(iterations)) / iterations);
    perRun.sort((a, b) => a - b);
    results.push({
      name: "inflate transaction_update gzip (DecompressionStream)",
      rows: bench.rows(index),
      iterations,
      medianMicros: perRun[SAMPLES >> 1] * 1000,
      fastestMicros: perRun[0] * 1000,
    });
  }
  window.benchResults = { results, userAgent: navigator.userAgent, isolated: crossOriginIsolated };
} catch (error) {
  window.benchResults = { error: String(error?.stack ?? error) };
}
`;

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".wasm": "application/wasm",
};

interface Result {
  name: string;
  rows: number;
  iterations: number;
  medianMicros: number;
  fastestMicros: number;
}

/** A duration in µs as the tables of RESULTS.md write it. */
function micros(value: number): string {
  if (value >= 1000) return `${(value / 1000).toFixed(2)} ms`;
  if (value >= 10) return `${value.toFixed(1)} µs`;
  return `${value.toFixed(2)} µs`;
}

describe("the client in Chromium, timed by performance.now()", () => {
  const dir = tempDir();
  const profile = tempDir();
  let http: HttpServer;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    const built = spawnSync("bash", [join(ROOT, "client", "web", "build.sh"), dir.path], {
      stdio: "inherit",
      env: { ...process.env, WEB_FEATURES: "bench", WASM_OPT: join(PACKAGE, "node_modules", ".bin", "wasm-opt") },
    });
    expect(built.status, "the bench build").toBe(0);
    writeFileSync(join(dir.path, "bench.js"), PAGE_SCRIPT);
    writeFileSync(
      join(dir.path, "index.html"),
      '<!doctype html><meta charset="utf-8"><title>bench</title><script type="module" src="bench.js"></script>\n',
    );
    http = createServer((request, response) => {
      const file = new URL(request.url ?? "/", "http://x").pathname.slice(1) || "index.html";
      try {
        const body = readFileSync(join(dir.path, file));
        response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
        response.end(body);
      } catch {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((listening) => http.listen(0, "127.0.0.1", listening));
    const address = http.address();
    url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/`;
    browser = await Browser.start(profile.path);
  });

  afterAll(async () => {
    await browser?.stop();
    http?.close();
    dir.remove();
    profile.remove();
  });

  it("decodes and applies the scenarios, and prints how long each run took", async () => {
    await browser.goto(url);
    const outcome = (await browser.waitFor(
      "the benchmarks",
      "return window.benchResults ?? null",
      300_000,
    )) as { results?: Result[]; error?: string; userAgent?: string; isolated?: boolean };
    expect(outcome.error).toBeUndefined();
    const results = outcome.results!;
    expect(results.length, "the identity token, 4 decodes, 2 cache applies and 1 inflate at 3 sizes").toBe(22);
    for (const result of results) {
      expect(Number.isFinite(result.medianMicros) && result.medianMicros > 0, result.name).toBe(true);
    }
    const lines = [
      `${outcome.userAgent} (cross-origin isolated: ${outcome.isolated})`,
      "| scenario | rows | median per run | fastest | iterations per sample |",
      "|---|---:|---:|---:|---:|",
      ...results.map(
        (r) => `| ${r.name} | ${r.rows} | ${micros(r.medianMicros)} | ${micros(r.fastestMicros)} | ${r.iterations} |`,
      ),
    ];
    console.log(lines.join("\n"));
  });
});
