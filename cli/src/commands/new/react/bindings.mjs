// Writes src/module_bindings.ts, the module's typed bindings, from the module in the directory
// above (`wasmod generate --lang typescript`, which builds it first): `npm run bindings`, and
// the first step of `dev` and `build`, so that the app is always checked against the module
// as it is. The `wasmod` command is the one on the PATH, or the one WASMOD names.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const web = fileURLToPath(new URL("..", import.meta.url));
const wasmod = process.env.WASMOD ?? "wasmod";
const generated = spawnSync(wasmod, ["generate", "--lang", "typescript", "..", "--out", "src"], {
  cwd: web,
  stdio: "inherit",
});
if (generated.error !== undefined) {
  console.error(`could not run \`${wasmod}\` (${generated.error.message}): put wasmod on the PATH, or set WASMOD to it`);
  process.exit(1);
}
process.exit(generated.status ?? 1);
