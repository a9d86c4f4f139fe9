// `npm run build`: the package from the Rust sources, in three steps.
//
// 1. `client/web/build.sh` (the one build of the browser client, which the quickstart page
//    and the browser tests use too) builds `wasmod-client-web` for wasm32 in the `web` profile
//    (for size) and runs wasm-bindgen's CLI (`--target web`) into wasm/; here it also runs
//    `wasm-opt -Os --converge` from npm's `binaryen` package (WASM_OPT), a current one: Debian's
//    binaryen 108 breaks the reference-types table wasm-bindgen sets up.
// 2. `tsc` compiles src/ (the typed API and the entry points) into dist/.
// 3. It prints the sizes the budget (test/size.test.ts) is about.
//
// Needs cargo with the wasm32-unknown-unknown target and wasm-bindgen's CLI at the version of
// the wasm-bindgen crate in Cargo.lock (.ci/run installs both).

import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { packageSizes } from "./sizes.mjs";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const root = join(here, "..", "..");

/** Runs `command` with `args`, output shown; exits with its status if it fails. */
function run(command, args, env = {}) {
  console.log(`> ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (result.error) {
    console.error(`could not run ${command}: ${result.error.message}`);
    process.exit(1);
  }
  if (result.status !== 0) {
    console.error(`${command} failed (${result.signal ?? `exit ${result.status}`})`);
    process.exit(result.status ?? 1);
  }
}

rmSync(join(here, "wasm"), { recursive: true, force: true });
rmSync(join(here, "dist"), { recursive: true, force: true });
run("bash", [join(root, "client", "web", "build.sh"), join(here, "wasm")], {
  WASM_OPT: join(here, "node_modules", ".bin", "wasm-opt"),
});
run(process.execPath, [join(here, "node_modules", "typescript", "bin", "tsc"), "-p", join(here, "tsconfig.json")]);

const sizes = packageSizes(here);
for (const file of sizes.files) {
  console.log(`${file.path}: ${file.raw} B, ${file.gzip} B gzipped`);
}
console.log(`wasm + JS: ${sizes.raw} B, ${sizes.gzip} B gzipped`);
