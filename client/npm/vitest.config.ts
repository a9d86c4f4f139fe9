import { defineConfig } from "vitest/config";

// The tests import the built package (dist/ and wasm/, `npm run build`), as its users do.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    // The live test starts a server and waits on a network: generous, but bounded.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // One file at a time: the live test's server and builds share two cores with the rest.
    fileParallelism: false,
  },
});
