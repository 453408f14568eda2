/**
 * The public API is a committed list (`docs/public-api.txt`, written by `npm run api` from the
 * entry points): a change of what `effect-city`, `effect-city/plugin` or `effect-city/testing`
 * exports fails here until the list is regenerated and committed with it. Every name of it is
 * declared in a public module, never under an `internal/` folder, however many re-exports lead
 * there (docs/design.md, "Layout").
 */
import { expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { declarations, listFile, publicApi } from "../../scripts/public-api.ts"

it("the committed list of the public API is what the entry points export now (npm run api)", () => {
  expect(publicApi(), "docs/public-api.txt is stale: run `npm run api` and commit it").toBe(readFileSync(listFile, "utf8"))
}, 60_000)

it("the testing entry point holds the test doubles, and the main one does not", () => {
  const lines = readFileSync(listFile, "utf8").split("\n")
  for (const kit of ["ScriptedHost", "CityTest", "PluginHarness", "MemoryFileSystem"]) {
    expect(lines).toContain(`effect-city/testing ${kit} namespace`)
    expect(lines.some((l) => l.startsWith(`effect-city ${kit} `) || l.startsWith(`effect-city ${kit}.`))).toBe(false)
  }
})

it("public modules declare, internal modules implement: no entry point re-exports an internal/ module, and no module an entry point re-exports whole exports a name for the house only", () => {
  const src = new URL("../../src/", import.meta.url)
  const reexported = ["index.ts", "plugin.ts", "testing.ts", "cluster.ts"].flatMap((entry) =>
    [...readFileSync(new URL(entry, src), "utf8").matchAll(/^export (\* as \w+|\{[^}]*\}|type \{[^}]*\}) from "\.\/([^"]+)"/gm)].map((m) => ({
      whole: m[1]!.startsWith("*"),
      path: m[2]!
    }))
  )
  expect(reexported.length).toBeGreaterThan(20)
  expect(reexported.filter((r) => r.path.split("/").includes("internal")).map((r) => r.path)).toEqual([])
  const houseOnly = reexported
    .filter((r) => r.whole)
    .filter((r) => /@category internals\b/.test(readFileSync(new URL(r.path, src), "utf8")))
    .map((r) => r.path)
  expect(houseOnly, "move names tagged `internals` to the subsystem's internal/ folder (docs/design.md, \"Layout\")").toEqual([])
})

/** Whether a file (from the root) is under an `internal/` folder. */
const inInternal = (file: string) => file.split("/").slice(0, -1).includes("internal")

/**
 * Public names whose declaration is under internal/ today, in a part of the house another change
 * is reshaping (docs/cluster.md: the SQL stores): each must go, and the test below fails once one
 * no longer is, so that the list only shrinks.
 */
const knownInInternal: ReadonlyArray<string> = []

it("every public name is declared in a public module: re-exports are followed to their end, and none ends under internal/", () => {
  const all = declarations()
  expect(all.filter((d) => d.files.some(inInternal)).map((d) => d.name), "declare it in the public module that re-exports it (docs/design.md, \"Layout\")")
    .toEqual(knownInInternal)
  expect(all.find((d) => d.name === "effect-city City.layer")?.files).toEqual(["src/City.ts"])
  expect(all.find((d) => d.name === "effect-city City.CityLayerOptionsFor")?.files).toEqual(["src/City.ts"])
}, 60_000)

it("the declaration check follows a name through a namespace and a chain of re-exports to its internal/ declaration", () => {
  const root = fileURLToPath(new URL("../fixtures/public-api/", import.meta.url))
  const found = declarations([{ specifier: "fixture", file: "entry.ts" }], root)
  expect(found.filter((d) => d.files.some(inInternal))).toEqual([
    { name: "fixture Hidden", files: ["internal/impl.ts"] },
    { name: "fixture Mid.Hidden", files: ["internal/impl.ts"] },
    { name: "fixture Mid.value", files: ["internal/impl.ts"] }
  ])
  expect(found.filter((d) => !d.files.some(inInternal)).map((d) => d.name)).toEqual(["fixture Mid", "fixture Mid.Shown", "fixture Shown"])
}, 60_000)
