/**
 * The README's code is the examples' code: every TypeScript block of the README and of the guides
 * (`CONTRIBUTING.md`, `docs/*.md`) (```ts,
 * ```typescript, ```tsx) follows an `<!-- example: <file> -->` marker, and equals the
 * `#region readme` part of that file, exactly: the shipped examples import the package by its name
 * (`effect-city`, resolved to the sources in a checkout: tsconfig `paths`, the vitest alias), as a
 * user's copy of them does, and no other module (a user has only the entry points). The examples
 * compile (they are typechecked with the tests, and against the installed package by
 * scripts/pack-check.mjs) and run (here, in test/services/Observability.test.ts, and examples/testing.test.ts,
 * the README's test example, as a test file of its own). A TypeScript block without a marker fails:
 * the rule has no exceptions.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Layer from "effect/Layer"
import { owed } from "../../examples/cluster.ts"
import { main as dependencies } from "../../examples/dependencies.ts"
import { addTwice, callMissing } from "../../examples/errors.ts"
import { main } from "../../examples/library.ts"

// The README and the guides it links: their TypeScript is the examples' code.
const guides = ["README.md", "CONTRIBUTING.md", ...readdirSync(new URL("../../docs/", import.meta.url)).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
const readme = guides.map((file) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8")).join("\n")

it("every TypeScript block of the README and the guides is marked with the example file it comes from", () => {
  const blocks = [...readme.matchAll(/^```(ts|typescript|tsx)\s*$/gm)]
  const marked = [...readme.matchAll(/<!-- example: \S+ -->\s*```ts\n/g)]
  expect(blocks.length).toBeGreaterThanOrEqual(2)
  expect(marked.length, "TypeScript blocks without an <!-- example: <file> --> marker").toBe(blocks.length)
})

it("every README and guide snippet marked with an example file is that file's readme region", () => {
  const marked = [...readme.matchAll(/<!-- example: (\S+) -->\s*```ts\n([\s\S]*?)```/g)]
  expect(marked.length).toBeGreaterThan(0)
  for (const [, file, snippet] of marked) {
    const source = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8")
    const region = /\/\/ #region readme\n([\s\S]*?)\/\/ #endregion readme/.exec(source)
    expect(region, `${file} has a readme region`).not.toBeNull()
    expect(snippet, `the README snippet of ${file}`).toBe(region![1])
    // Only the package's entry points: a user cannot import anything else.
    expect(region![1], `${file} imports a module that is not an entry point`).not.toMatch(/from "\.\.?\/src\//)
  }
})

it("the README shows a library example and a test example, both on the package's entry points only", () => {
  const own = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  expect(own).toContain("<!-- example: examples/library.ts -->")
  expect(own).toContain("<!-- example: examples/testing.test.ts -->")
  expect(own).toMatch(/from "effect-city\/testing"/)
})

it.effect("the README library example runs a Turn of two Steps", () =>
  Effect.gen(function*() {
    const result = yield* main(mkdtempSync(join(tmpdir(), "city-example-")))
    expect(result.system).toEqual([{ name: "greeter", content: "Greet people by name." }])
    expect(result.reply).toBe("Hello Grace, from ada in notes")
  }))

it.effect("the guide's dependencies example: a dependent reaches its sibling's typed service", () =>
  Effect.gen(function*() {
    expect(yield* dependencies(mkdtempSync(join(tmpdir(), "city-example-")))).toBe("Hello Grace")
  }))

it.effect("the guide's errors example: a family's tag, then its reason, reaches each failure", () =>
  Effect.gen(function*() {
    expect(yield* addTwice(mkdtempSync(join(tmpdir(), "city-example-")))).toBe(
      "PluginAlreadyRegistered: Plugin already exists in City: notes"
    )
    expect(yield* callMissing(mkdtempSync(join(tmpdir(), "city-example-")))).toBe("no plugin nobody")
  }))

it.effect("the cluster guide's example builds one host's stores on a fresh SQLite database and lists its owed work: none", () =>
  Effect.gen(function*() {
    const folder = mkdtempSync(join(tmpdir(), "city-example-"))
    const client = Layer.merge(SqliteClient.layer({ filename: join(folder, "city.db") }), NodeFileSystem.layer)
    expect(yield* owed(join(folder, "root")).pipe(Effect.provide(client))).toEqual([])
  }))
