/**
 * One name per thing: the CLI's `--json` speaks the glossary's snake_case, the library's
 * `LoadReport` keeps camelCase, and docs/cli.md ("The library's names") is the one place that maps
 * the two. This holds that table to every field of `LoadReport`, `LoadedPlugin` and
 * `SkippedPlugin` and to the `plugins list` document, so a new field cannot drift silently.
 */
import { expect, it } from "@effect/vitest"
import type * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { LoadedPlugin, LoadReport, SkippedPlugin } from "../../src/schema/LoadReport.ts"
import { documents } from "../../src/programs/jsonOutput.ts"

const cli = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8")

/** The table under "The library's names": library field → `--json` field. */
const mapping = (() => {
  const start = cli.indexOf("**The library's names.**")
  expect(start, "docs/cli.md has the paragraph \"The library's names\"").toBeGreaterThan(-1)
  const table = cli.slice(start).split("\n\n")[1] ?? ""
  return new Map([...table.matchAll(/^\| `([\w.[\]]+)` \| `([\w.[\]]+)` \|$/gm)].map((m) => [m[1]!, m[2]!]))
})()

/** The keys of a Struct schema (the JSON documents are Structs, and arrays of Structs). */
const keysOf = (schema: Schema.Schema.All): Array<string> => Object.keys((schema as unknown as { fields: object }).fields)
const elementOf = (schema: Schema.Schema.All): Schema.Schema.All => (schema as unknown as { value: Schema.Schema.All }).value

// The daemon's form of the document: it has every field of the other one and `dispose_failures`.
const [daemonList] = (documents["plugins list"] as unknown as { members: ReadonlyArray<Schema.Schema.All & { fields: Record<string, Schema.Schema.All> }> }).members
const json = {
  top: keysOf(daemonList!),
  loaded: keysOf(elementOf(daemonList!.fields["loaded"]!)),
  skipped: keysOf(elementOf(daemonList!.fields["skipped"]!))
}

/** Every library field, as the table writes it (`loaded[].configUnset`), with where its JSON name must be. */
const libraryFields: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ...keysOf(LoadReport).map((k) => [k, json.top] as const),
  ...keysOf(LoadedPlugin).map((k) => [`loaded[].${k}`, json.loaded] as const),
  ...keysOf(SkippedPlugin).map((k) => [`skipped[].${k}`, json.skipped] as const)
]

const last = (path: string) => path.split(".").at(-1)!

it("every camelCase field of LoadReport is in docs/cli.md's table, and each maps to the glossary's snake_case", () => {
  expect(mapping.size).toBeGreaterThan(0)
  const unmapped = libraryFields.map(([field]) => field).filter((field) => /[A-Z]/.test(last(field)) && !mapping.has(field))
  expect(unmapped, "camelCase fields without a row in docs/cli.md's \"The library's names\"").toEqual([])
  for (const [field, cliName] of mapping) {
    expect(libraryFields.map(([f]) => f), `the table's ${field} is a field of the library`).toContain(field)
    expect(last(cliName)).toBe(last(field).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
  }
})

it("every LoadReport field reaches the plugins list document under its mapped name, which the glossary lists", () => {
  const glossary = cli.slice(cli.indexOf("### `--json` fields"), cli.indexOf("**The library's names.**"))
  for (const [field, where] of libraryFields) {
    const name = last(mapping.get(field) ?? field)
    expect(where, `${field} is printed as ${name}`).toContain(name)
    expect(glossary, `the glossary lists ${name}`).toContain(`\`${name}\``)
  }
})
