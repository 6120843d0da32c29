import { defineConfig } from "vitest/config";

// Unit tests of the TS layer (pkg/test); the wasm core is scripted there, the browser suites
// cover the real one.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
});
