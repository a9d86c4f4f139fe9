// The browser package's tests of decode and cache behaviour, over the vectors the Rust client
// is tested with too (client/vectors/README.md): each step's frame goes through a
// WasmodReplay, the package's cache fed frames without a socket, in order, and the page
// compares, step by step, what it decoded, the callbacks it fired (in order) and the rows it
// holds with what vectors.json expects. Results land in window.vectorResults, one
// {name, passed, failures} a step, and body[data-done] says they are all there.

import init, { WasmodReplay, inflateFrame } from "/pkg/wasmod_client_web.js";

/** `value` as JSON text with every object's keys in order, so that equal values compare equal. */
function canonical(value) {
  if (Array.isArray(value)) {
    return `[${value.map(canonical).join(",")}]`;
  }
  if (value !== null && typeof value === "object") {
    const fields = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Adds a failure to `failures` unless `actual` is `expected`. */
function compare(failures, what, expected, actual) {
  const [want, got] = [canonical(expected), canonical(actual)];
  if (want !== got) {
    failures.push(`${what}: expected ${want}, got ${got}`);
  }
}

/** A table's rows in the vectors' order: sorted by their canonical JSON text. */
function sortedRows(rows) {
  return rows
    .map((row) => [canonical(row), row])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row);
}

async function fetched(path, as) {
  const response = await fetch(path);
  if (!response.ok) {
    throw new Error(`${path} answered ${response.status}`);
  }
  return response[as]();
}

async function run() {
  await init();
  const manifest = await fetched("/vectors/vectors.json", "json");
  const replay = new WasmodReplay(await fetched(`/vectors/${manifest.module}`, "text"));
  const events = [];
  for (const table of Object.keys(manifest.steps[0].rows)) {
    replay.onInsert(table, (row) => events.push({ table, event: "insert", row }));
    replay.onDelete(table, (row) => events.push({ table, event: "delete", row }));
    replay.onUpdate(table, (old, now) => events.push({ table, event: "update", old, new: now }));
  }
  const results = [];
  for (const step of manifest.steps) {
    const failures = [];
    let frame = new Uint8Array(await fetched(`/vectors/${step.frame}`, "arrayBuffer"));
    if (step.compression === "brotli" || step.compression === "gzip") {
      // The browser build's wasm reads neither (its size): it must refuse the frame, changing
      // nothing. Brotli is not read at all (the same message uncompressed is applied); gzip
      // is inflated by the browser's DecompressionStream (inflateFrame), to the same bytes.
      try {
        replay.apply(frame);
        failures.push(`a ${step.compression} frame was read by the wasm`);
      } catch (error) {
        if (!String(error.message ?? error).includes(`${step.compression} frame`)) {
          failures.push(`refused without saying ${step.compression}: ${error.message ?? error}`);
        }
      }
      if (events.length > 0) failures.push(`the refused ${step.compression} frame called back`);
      const plain = new Uint8Array(await fetched(`/vectors/${step.plain}`, "arrayBuffer"));
      if (step.compression === "gzip") {
        frame = await inflateFrame(frame);
        if (canonical([...frame]) !== canonical([...plain])) {
          failures.push("the gzip frame inflated to other bytes than the plain one");
        }
      } else {
        frame = plain;
      }
    }
    let decoded = null;
    try {
      decoded = replay.apply(frame);
    } catch (error) {
      if (step.decoded !== null) {
        failures.push(`refused: ${error.message ?? error}`);
      }
    }
    compare(failures, "decoded", step.decoded, decoded);
    compare(failures, "callbacks", step.events, events.splice(0));
    for (const [table, rows] of Object.entries(step.rows)) {
      compare(failures, `rows of ${table}`, rows, sortedRows(replay.rows(table)));
    }
    results.push({ name: step.name, passed: failures.length === 0, failures });
  }
  return results;
}

function show(results) {
  window.vectorResults = results;
  const list = document.getElementById("results");
  for (const { name, passed, failures } of results) {
    const item = document.createElement("li");
    item.textContent = passed ? `${name}: passed` : `${name}: FAILED: ${failures.join("; ")}`;
    list.append(item);
  }
  const passed = results.filter((result) => result.passed).length;
  document.getElementById("summary").textContent = `${passed} of ${results.length} passed`;
  document.body.dataset.done = "true";
}

run().then(show, (error) =>
  show([{ name: "(the page)", passed: false, failures: [String(error?.stack ?? error)] }]),
);
