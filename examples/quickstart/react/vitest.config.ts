import { defineConfig } from "vitest/config";

// The app's browser test (test/chat.test.ts): it builds the app with Vite, serves it with the
// module by `wasmod serve --web` and drives two headless Chromiums; bounded, for a loaded CI
// machine (the first server start may build the module).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
});
