/**
 * One `@category` vocabulary for the house's doc comments: the one docs/design.md ("Layout") lists,
 * and no other word (two words for one thing, `model` beside `models`, is how it drifts).
 */
import { expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = new URL("../..", import.meta.url).pathname
const sources = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

it("every @category in src/ is a word of the vocabulary docs/design.md lists", () => {
  const design = readFileSync(join(root, "docs", "design.md"), "utf8")
  const paragraph = design.split("\n").find((line) => line.startsWith("Doc comments use one `@category` vocabulary"))
  expect(paragraph, "docs/design.md states the vocabulary").toBeDefined()
  const vocabulary = new Set([...paragraph!.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!))
  expect(vocabulary.size).toBeGreaterThan(10)
  const outside = sources("src").flatMap((file) =>
    [...readFileSync(join(root, file), "utf8").matchAll(/@category ([^\n]*)/g)]
      .map((m) => m[1]!.trim())
      .filter((word) => !vocabulary.has(word))
      .map((word) => `${file}: ${word}`)
  )
  expect(outside).toEqual([])
})
