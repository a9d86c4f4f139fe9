import { defineConfig } from "vitest/config";

// `npm run bench:browser`: the client's decode and cache apply timed in headless Chromium
// (bench/browser.test.ts). Not part of `npm test`: a measurement, not a check.
export default defineConfig({
  test: {
    include: ["bench/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
