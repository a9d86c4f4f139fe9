// Two builds of the browser client side by side: the bench scenarios (client/web/src/bench.rs,
// the uncompressed ones) of both, timed alternately in one Node process, so that a change's
// cost is not lost in the noise between two runs or two pages (Chromium's timings of one build
// move with where its data sits: benches/RESULTS.md, "Toward 180 KB").
//
//   WEB_FEATURES=bench WASM_OPT=client/npm/node_modules/.bin/wasm-opt client/web/build.sh DIR
//   node client/npm/bench/compare.mjs DIR_A DIR_B [ROUNDS]
//
// Each DIR holds a bench build (wasm-bindgen's `--target web` output). Prints each scenario's
// median µs per build over the rounds (5 samples a round; the order of the two flips each
// round) and their ratio.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dirA, dirB, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 5);
async function load(dir) {
  const glue = await import(pathToFileURL(join(dir, "wasmod_client_web.js")).href);
  await glue.default({ module_or_path: readFileSync(join(dir, "wasmod_client_web_bg.wasm")) });
  return new glue.Bench();
}
const builds = [await load(dirA), await load(dirB)];
const names = builds[0].names();
const SAMPLE_MS = 25;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (let index = 0; index < names.length; index++) {
  if (names[index].includes("gzip")) continue;
  let iterations = 1;
  while (builds[0].time(index, iterations) < SAMPLE_MS && iterations < 1 << 24) iterations *= 2;
  const times = [[], []];
  for (let round = 0; round < rounds; round++) {
    for (const which of round % 2 ? [1, 0] : [0, 1]) {
      const samples = [];
      for (let s = 0; s < 5; s++) samples.push(builds[which].time(index, iterations) / iterations);
      times[which].push(median(samples) * 1000);
    }
  }
  const [a, b] = times.map(median);
  console.log(`${names[index]} (${builds[0].rows(index)} rows): A ${a.toFixed(2)} µs, B ${b.toFixed(2)} µs, B/A ${(b / a).toFixed(3)}`);
}
