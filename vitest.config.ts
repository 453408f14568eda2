import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    // Plugin folders written by the tests import the plugin-author entry point by its package
    // name, as real plugins do; in a checkout it resolves to the sources (tsx: tsconfig `paths`).
    alias: { "effect-city/plugin": fileURLToPath(new URL("./src/plugin.ts", import.meta.url)) }
  },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // many files wait on real processes, signals and timers, and the other file uses that time.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 20_000,
    hookTimeout: 20_000
  }
})
