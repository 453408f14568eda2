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
    testTimeout: 20_000,
    hookTimeout: 20_000
  }
})
