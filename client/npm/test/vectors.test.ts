/**
 * The package's decode, cache and callbacks over the shared test vectors (client/vectors/,
 * the Rust client's `vectors` test reads the same files): every step's frame goes through a
 * `Replay` in order, and each step is a test comparing what it decoded (the JSON protocol's
 * form, rows in the JSON mapping), the row callbacks it fired, in order, and the rows the
 * cache holds with what vectors.json expects. The browser runs the same checks
 * (client/web/tests/vectors.test.js); here they run in Node, through the package's typed API
 * as an app would use it.
 */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { Replay, inflateFrame, init, type Row } from "../dist/node.js";
import { canonical, sortedRows } from "./support/canonical.js";

const vectors = fileURLToPath(new URL("../../vectors/", import.meta.url));

interface Step {
  name: string;
  frame: string;
  /** The same message uncompressed, for a compressed step. */
  plain?: string;
  compression: string;
  decoded: unknown;
  events: unknown[];
  rows: Record<string, unknown[]>;
}

const manifest = JSON.parse(readFileSync(`${vectors}vectors.json`, "utf8")) as {
  module: string;
  steps: Step[];
};

describe("the shared vectors, applied in order to one Replay", () => {
  let replay: Replay;
  const events: unknown[] = [];

  beforeAll(async () => {
    await init();
    replay = new Replay(readFileSync(`${vectors}${manifest.module}`, "utf8"));
    for (const table of Object.keys(manifest.steps[0]!.rows)) {
      replay.onInsert(table, (row: Row) => events.push({ table, event: "insert", row }));
      replay.onDelete(table, (row: Row) => events.push({ table, event: "delete", row }));
      replay.onUpdate(table, (old: Row, now: Row) =>
        events.push({ table, event: "update", old, new: now }),
      );
    }
  });

  it("has the steps of every kind the README lists", () => {
    const kinds = new Set(manifest.steps.map((step) => step.compression));
    expect([...kinds].sort()).toEqual(["brotli", "gzip", "malformed", "none"]);
    expect(manifest.steps.length).toBeGreaterThanOrEqual(13);
  });

  for (const step of manifest.steps) {
    it(`step ${step.name} (${step.compression})`, async () => {
      let frame: Uint8Array = new Uint8Array(readFileSync(`${vectors}${step.frame}`));
      if (step.compression === "brotli" || step.compression === "gzip") {
        // The wasm reads neither (the package's size): it refuses the frame, saying so and
        // changing nothing. Brotli is not read at all: the same message uncompressed is
        // applied instead; gzip is inflated by the platform, to the same bytes.
        const refused = new RegExp(`${step.compression} frame, which this build does not read`);
        expect(() => replay.apply(frame)).toThrow(refused);
        expect(events).toEqual([]);
        const plain = new Uint8Array(readFileSync(`${vectors}${step.plain!}`));
        if (step.compression === "gzip") {
          frame = await inflateFrame(frame);
          expect(frame).toEqual(plain);
        } else {
          frame = plain;
        }
      }
      if (step.decoded === null) {
        expect(() => replay.apply(frame)).toThrow();
      } else {
        expect(canonical(replay.apply(frame))).toBe(canonical(step.decoded));
      }
      expect(canonical(events.splice(0))).toBe(canonical(step.events));
      for (const [table, rows] of Object.entries(step.rows)) {
        expect(canonical(sortedRows(replay.rows(table))), `rows of ${table}`).toBe(canonical(rows));
      }
    });
  }
});

describe("a Replay's API", () => {
  const module = () => readFileSync(`${vectors}${manifest.module}`, "utf8");
  const frame = (name: string) => new Uint8Array(readFileSync(`${vectors}${name}`));
  /** The steps up to and including the first that inserts rows into the cache. */
  const firstRows = manifest.steps.slice(
    0,
    manifest.steps.findIndex((step) => step.events.length > 0) + 1,
  );

  it("refuses a table the module does not have, naming it", async () => {
    await init();
    const replay = new Replay(module());
    expect(() => replay.rows("mesage")).toThrow(/mesage/);
    expect(() => replay.onInsert("mesage", () => {})).toThrow(/mesage/);
  });

  it("refuses a description that is not one", async () => {
    await init();
    expect(() => new Replay("{}")).toThrow(/description/);
  });

  it("stops calling a callback once it is removed, and keeps calling the others", async () => {
    await init();
    const replay = new Replay(module());
    const [kept, removed]: unknown[][] = [[], []];
    replay.onInsert("message", (row) => kept.push(row));
    const unlisten = replay.onInsert("message", (row) => removed.push(row));
    unlisten();
    unlisten(); // Idempotent.
    for (const step of firstRows) {
      replay.apply(frame(step.frame));
    }
    expect(kept.length).toBeGreaterThan(0);
    expect(removed).toEqual([]);
  });

  it("calls the other callbacks when one throws", async () => {
    await init();
    const replay = new Replay(module());
    const seen: unknown[] = [];
    const logged: unknown[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => logged.push(args);
    try {
      replay.onInsert("message", () => {
        throw new Error("a broken callback");
      });
      replay.onInsert("message", (row) => seen.push(row));
      for (const step of firstRows) {
        replay.apply(frame(step.frame));
      }
    } finally {
      console.error = error;
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(logged.length).toBe(seen.length);
  });

  it("calls the same function registered twice twice, and removes one registration at a time", async () => {
    await init();
    const replay = new Replay(module());
    let calls = 0;
    const count = () => {
      calls += 1;
    };
    replay.onInsert("message", count);
    const second = replay.onInsert("message", count);
    second();
    for (const step of firstRows) {
      replay.apply(frame(step.frame));
    }
    const inserted = firstRows.flatMap((step) => step.events).filter(
      (event) => (event as { table: string }).table === "message",
    ).length;
    expect(inserted).toBeGreaterThan(0);
    expect(calls).toBe(inserted);
  });
});
