import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const source = (entry: string) => fileURLToPath(new URL(`./src/${entry}.ts`, import.meta.url))

export default defineConfig({
  resolve: {
    // The package's own names resolve to the sources in a checkout (no build needed; tsc and tsx:
    // tsconfig `paths`): the shipped examples import `effect-city` as a user's code does, and
    // plugin folders written by the tests import `effect-city/plugin` as real plugins do.
    alias: [
      { find: /^effect-city$/, replacement: source("index") },
      { find: /^effect-city\/plugin$/, replacement: source("plugin") },
      { find: /^effect-city\/testing$/, replacement: source("testing") },
      { find: /^effect-city\/cluster$/, replacement: source("cluster") }
    ]
  },
  test: {
    // The examples' tests too: examples/testing.test.ts is the README's test example.
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The bundle, then one PostgreSQL server for the whole run (its URL: `inject("postgresUrl")`).
    globalSetup: ["test/globalSetup.ts", "test/support/postgres.ts"],
    // Two test files at a time on a 2-core machine (vitest's default is one fewer than the cores):
    // many files wait on real processes, signals and timers, and the other file uses that time.
    maxWorkers: 2,
    minWorkers: 1,
    // The files of one worker share its module graph instead of importing Effect and the sources
    // afresh for each (that import was about a third of the suite's time). A test therefore never
    // assumes it is the first to touch a process-wide thing (the global Metric registry, the
    // module memo of a plugin entry): it measures what changed.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 20_000
  }
})
