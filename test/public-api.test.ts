/**
 * The public API is a committed list (`docs/public-api.txt`, written by `npm run api` from the
 * entry points): a change of what `effect-city`, `effect-city/plugin` or `effect-city/testing`
 * exports fails here until the list is regenerated and committed with it.
 */
import { expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { listFile, publicApi } from "../scripts/public-api.ts"

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
  const src = new URL("../src/", import.meta.url)
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
