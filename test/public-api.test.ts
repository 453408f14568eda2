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
